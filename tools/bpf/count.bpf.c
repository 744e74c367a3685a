/*
 * The counting program of `ksym trace`: one body per kind of attach point,
 * which `ksym trace` expands into one alias per kernel function (fentry)
 * or BTF tracepoint (tp_btf) matching the pattern. Each alias adds one to
 * `hits`; per-target counts come from the kernel's run counter of each
 * alias (BPF_ENABLE_STATS), the total from `hits`. On a kernel with
 * multi links (Linux 7.3), `count_multi` is one program on every function
 * instead: its cookie is the function's index, and `multi_hits` counts
 * per function.
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

/* Per-function counts of count_multi, by cookie (the function's index in
 * ksym_bpf_program_multi_attach's list); functions past the array count
 * only in `hits`. */
#define MULTI_MAX 65536
__u64 multi_hits[MULTI_MAX];

SEC("fentry.multi")
int count_multi(void *ctx)
{
    __u64 k = bpf_get_attach_cookie(ctx);
    __sync_fetch_and_add(&hits, 1);
    if (k < MULTI_MAX)
        __sync_fetch_and_add(&multi_hits[k], 1);
    return 0;
}
