/*
 * One tracepoint program for ksym_bpf_program_expand over tracefs
 * (c-tests/test_tool_objects.c): every syscalls/sys_enter_* event has the
 * same record (the common fields, then `int __syscall_nr` at offset 8), so
 * one body serves them all; it counts the test process's syscalls in
 * hits[nr & 7]. The section's own target is one of them.
 */
#include "tool_style.h"

struct sys_enter {
    __u64 common;
    int nr;
};

SEC("tp/syscalls/sys_enter_getppid")
int count_syscalls(struct sys_enter *ctx)
{
    if (!mine())
        return 0;
    __sync_fetch_and_add(&state.hits[ctx->nr & 7], 1);
    return 0;
}
