/* CO-RE relocations of each family: field offset (ALU and load), size,
 * existence through a flavor, bitfield shift, type size, enum value. The
 * unit tests resolve them against hand-made kernel BTF. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct task_like {
    int pid;
    int tgid;
    unsigned int flags:3;
} __attribute__((preserve_access_index));

struct task_like___old {
    int pid;
    long gone;
} __attribute__((preserve_access_index));

enum color { RED = 0, GREEN = 1 };

__u64 sink;
__u64 out[8];

SEC("socket")
int core_prog(struct __sk_buff *skb)
{
    struct task_like *t = (void *)(long)skb->len;
    struct task_like___old *o = (void *)t;

    sink = __builtin_preserve_access_index(&t->tgid) != 0;
    out[0] = __builtin_preserve_field_info(t->tgid, 1 /* byte size */);
    out[1] = __builtin_preserve_field_info(o->gone, 2 /* exists */);
    out[2] = __builtin_preserve_field_info(t->flags, 4 /* lshift_u64 */);
    out[3] = __builtin_preserve_type_info(*(struct task_like *)0, 1 /* size */);
    out[4] = __builtin_preserve_enum_value(*(enum color *)GREEN, 1 /* value */);
    out[5] = t->tgid;
    return 0;
}
