/*
 * Variables of data sections, for ksym_bpf_object_find_var and
 * ksym_bpf_object_set_var (c-tests/test_bpf.c): a tool's options in
 * .rodata, globals in .data and .bss, an array in a section of its own
 * (.data.limits), function-local statics (clang names them `one.calls`),
 * and a file-level `static` `calls` that vars_part.c, linked in by
 * `make bpf-objects` (bpftool gen object), has too: two variables of one
 * name, which a name alone cannot tell apart.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 targ_pid = 0;
const volatile __u8 verbose = 1;
__u64 hits;
__u64 seed = 7;
__u32 limits[4] SEC(".data.limits") = { 1, 2, 3, 4 };

static __u32 calls;
extern int part(int x);

static __noinline int one(int x)
{
    static __u32 calls;
    calls += x;
    return calls;
}

static __noinline int two(int x)
{
    calls += 2 * x;
    return calls + part(x);
}

SEC("socket")
int prog(struct __sk_buff *skb)
{
    if (targ_pid && skb->len == targ_pid)
        return 0;
    hits += one(skb->len) + two(seed) + limits[skb->len & 3] + verbose;
    return 0;
}
