/* A kfunc call (an extern function with __ksym): not supported yet. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern void bpf_rcu_read_lock(void) __ksym;

SEC("socket")
int calls_kfunc(struct __sk_buff *skb)
{
    bpf_rcu_read_lock();
    return 0;
}
