/*
 * Multi programs (Linux 7.3's tracing_multi links) and the plain bodies
 * that load as one: every section libbpf's newest source defines for
 * them, one naming a module, one naming nothing. The counting bodies
 * record, by cookie (the function's index in libksym's list), how often
 * each function ran in the process `target_tgid` and what
 * bpf_get_func_ip() said there, so a test can check them against the
 * functions it drove and their kallsyms addresses.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __u64 (*bpf_get_func_ip)(void *ctx) = (void *)173;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;

#define MAX 8192
__u32 target_tgid;
__u64 runs[MAX];
__u64 ips[MAX];

static __always_inline int record(void *ctx)
{
    if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
        return 0;
    __u64 k = bpf_get_attach_cookie(ctx);
    if (k < MAX) {
        __sync_fetch_and_add(&runs[k], 1);
        ips[k] = bpf_get_func_ip(ctx);
    }
    return 0;
}

SEC("fentry.multi/vfs_*")
int on_entry(void *ctx)
{
    return record(ctx);
}

SEC("fexit.multi/tcp_*")
int on_exit(void *ctx)
{
    return record(ctx);
}

SEC("fentry.multi.s/vfs_*")
int on_entry_s(void *ctx)
{
    return record(ctx);
}

SEC("fexit.multi.s/tcp_*")
int on_exit_s(void *ctx)
{
    return record(ctx);
}

SEC("fsession.multi/x*")
int on_session(void *ctx)
{
    return record(ctx);
}

SEC("fsession.multi.s/x*")
int on_session_s(void *ctx)
{
    return record(ctx);
}

SEC("fentry.multi/9p:v9fs_*")
int in_module(void *ctx)
{
    return record(ctx);
}

SEC("fentry.multi")
int no_target(void *ctx)
{
    return record(ctx);
}

/* A plain fentry body that reads no argument: it loads as a multi
 * program (ksym_bpf_program_multi_attach) or as aliases. */
SEC("fentry")
int plain(void *ctx)
{
    return record(ctx);
}

/* A plain fentry body that reads its first argument from the context:
 * the multi prototype (`bpf_multi_func`) has none, so the verifier
 * refuses it as a multi program, and it attaches as aliases. */
__u64 first_arg;

SEC("fentry")
int typed(__u64 *ctx)
{
    if ((bpf_get_current_pid_tgid() >> 32) == target_tgid)
        first_arg = ctx[0];
    return 0;
}
