/*
 * Built without -g: no .BTF, so no BTF-defined maps and no func_info. The
 * results go to a .bss struct: the kernel address of _text (an extern that
 * only the ELF symbol table describes), a static subprogram's result and a
 * .data value.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern const void _text __ksym;

struct {
    __u64 text;
    __u64 sub;
    __u64 data;
} out;

__u64 base = 100;

static __noinline __u64 triple(__u64 x)
{
    return 3 * x + base;
}

SEC("socket")
int nobtf_prog(struct __sk_buff *skb)
{
    out.text = (__u64)&_text;
    out.sub = triple(5);
    out.data = base;
    return 0;
}
