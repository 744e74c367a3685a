/* A typed __ksym (its type would come from kernel BTF): not supported yet. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern const int bpf_prog_active __ksym;

SEC("socket")
int typed(struct __sk_buff *skb)
{
    return *(const int *)&bpf_prog_active ? 1 : 0;
}
