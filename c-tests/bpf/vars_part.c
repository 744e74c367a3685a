/*
 * Linked into vars.bpf.o by `make bpf-objects` (bpftool gen object): a file
 * with a `static` global of the same name as vars.bpf.c's, so that the
 * linked object's .bss holds two variables named `calls`, which only their
 * offsets tell apart.
 */
#include "mini_bpf.h"

static __u32 calls;

__noinline int part(int x)
{
    calls += x;
    return calls;
}
