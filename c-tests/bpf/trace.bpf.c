/*
 * Tracing programs whose aliases attach to targets of their own: the
 * shape a bpftrace-style tracer emits for `fentry:bpf_fentry_test*` and
 * for a list of tracepoints. Every attach point in this object exists in
 * every kernel built with BTF (bpf_fentry_test1..8 are net/bpf/test_run.c's
 * targets, which BPF_PROG_TEST_RUN of any fentry program calls).
 *
 * - on_tp (tp_btf/sched_process_fork) with aliases on_exec, on_exit,
 *   on_enter: the loader gives each its own tracepoint; each adds one to
 *   `tp_total`, and the test tells them apart by the kernel's run_cnt of
 *   each program.
 * - on_fentry (fentry/bpf_fentry_test1) with aliases on_fentry2..8: each
 *   records bpf_get_func_ip() in `ips`, which must end up holding exactly
 *   the address of every alias's own function.
 * - count (fentry, no target) and count_tp (tp_btf, no target): bodies for
 *   ksym_bpf_program_expand.
 * - on_raw (raw_tp/sys_enter), on_lsm (lsm/file_open), on_kprobe
 *   (kprobe/do_nanosleep+0x4): more section kinds.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 64);
    __type(key, __u64);
    __type(value, __u64);
} ips SEC(".maps");

__u64 tp_total;
__u64 count_total;

static __u64 (*bpf_get_func_ip)(void *ctx) = (void *)173;

SEC("tp_btf/sched_process_fork")
int on_tp(void *ctx)
{
    __sync_fetch_and_add(&tp_total, 1);
    return 0;
}
int on_exec(void *ctx) __attribute__((alias("on_tp")));
int on_exit(void *ctx) __attribute__((alias("on_tp")));
int on_enter(void *ctx) __attribute__((alias("on_tp")));

SEC("fentry/bpf_fentry_test1")
int on_fentry(void *ctx)
{
    __u64 ip = bpf_get_func_ip(ctx), one = 1;
    __u64 *v = bpf_map_lookup_elem(&ips, &ip);
    if (v)
        __sync_fetch_and_add(v, 1);
    else
        bpf_map_update_elem(&ips, &ip, &one, 0);
    return 0;
}
int on_fentry2(void *ctx) __attribute__((alias("on_fentry")));
int on_fentry3(void *ctx) __attribute__((alias("on_fentry")));
int on_fentry4(void *ctx) __attribute__((alias("on_fentry")));
int on_fentry5(void *ctx) __attribute__((alias("on_fentry")));
int on_fentry6(void *ctx) __attribute__((alias("on_fentry")));
int on_fentry7(void *ctx) __attribute__((alias("on_fentry")));
int on_fentry8(void *ctx) __attribute__((alias("on_fentry")));

SEC("fentry")
int count(void *ctx)
{
    __sync_fetch_and_add(&count_total, 1);
    return 0;
}

SEC("tp_btf")
int count_tp(void *ctx)
{
    __sync_fetch_and_add(&count_total, 1);
    return 0;
}

SEC("raw_tp/sys_enter")
int on_raw(void *ctx)
{
    return 0;
}

SEC("lsm/file_open")
int on_lsm(void *ctx)
{
    return 0;
}

SEC("kprobe/do_nanosleep+0x4")
int on_kprobe(void *ctx)
{
    return 0;
}
