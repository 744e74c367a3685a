/* A CO-RE field access: opens fine, relocate says CO-RE is not supported yet. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct task_like {
    int pid;
    int tgid;
} __attribute__((preserve_access_index));

__u64 sink;

SEC("socket")
int core_prog(struct __sk_buff *skb)
{
    struct task_like *t = (void *)(long)skb->len;
    sink = __builtin_preserve_access_index(&t->tgid) != 0;
    return 0;
}
