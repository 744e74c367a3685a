/* What the objects written in the style of real tracing tools share
 * (alternatives, placeholders, guards, optional sections: see
 * c-tests/test_tool_objects.c, their loader): one `.bss` state whose
 * `tgid` the loader sets, so that only the test's own process (or the
 * child it execs) counts, and a counter per program. */
#ifndef TOOL_STYLE_H
#define TOOL_STYLE_H

#include "mini_bpf.h"

#define KERNEL_VERSION(a, b, c) (((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
/* libbpf's bpf_ksym_exists(), without its _Static_assert. */
#define bpf_ksym_exists(sym) (!!(sym))
#define __kconfig __attribute__((section(".kconfig")))

static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;

/* The only .bss variable: at offset 0 of the `.bss` map's value. */
struct tool_state {
    __u32 tgid;
    __u32 version; /* what the program read of LINUX_KERNEL_VERSION */
    __u64 hits[8];
};
struct tool_state state;

static __always_inline int mine(void)
{
    return (bpf_get_current_pid_tgid() >> 32) == state.tgid;
}

char LICENSE[] SEC("license") = "GPL";

#endif
