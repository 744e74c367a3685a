/*
 * The counting program of `ksym trace`: one body per kind of attach point,
 * which `ksym trace` expands into one alias per kernel function (fentry)
 * or BTF tracepoint (tp_btf) matching the pattern. Each alias adds one to
 * `hits`; per-target counts come from the kernel's run counter of each
 * alias (BPF_ENABLE_STATS), the total from `hits`.
 */
#include "../../c-tests/bpf/mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 hits;

SEC("fentry")
int count_fentry(void *ctx)
{
    __sync_fetch_and_add(&hits, 1);
    return 0;
}

SEC("tp_btf")
int count_tp_btf(void *ctx)
{
    __sync_fetch_and_add(&hits, 1);
    return 0;
}
