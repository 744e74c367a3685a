/*
 * The object examples/aliases.c loads: one function, `count`, and two
 * aliases of it (symbols at its address) that the loader attaches
 * elsewhere:
 *   count          tp_btf/sched_process_fork (its section)
 *   count_newtask  -> task_newtask
 *   count_rename   -> task_rename
 * Each run adds one to counts[0] when the current process is
 * `target_tgid`, an option the loader writes into .rodata before it
 * creates (and freezes) that map. The three tracepoints are in every
 * kernel built with BTF, and each fires in the process that forks or
 * renames itself: a fork runs two of the programs, a rename one.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} counts SEC(".maps");

const volatile __u32 target_tgid = 0;

static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;

SEC("tp_btf/sched_process_fork")
int count(void *ctx)
{
    __u32 key = 0;
    __u64 *n;

    if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
        return 0;
    n = bpf_map_lookup_elem(&counts, &key);
    if (n)
        __sync_fetch_and_add(n, 1);
    return 0;
}
int count_newtask(void *ctx) __attribute__((alias("count")));
int count_rename(void *ctx) __attribute__((alias("count")));
