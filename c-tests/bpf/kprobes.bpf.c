/*
 * kprobe sections for c-tests/test_modules_kernel.c: one on a core
 * function (do_nanosleep, run by nanosleep(2)) and one on a module's
 * (dummy's dummy_get_stats64, run by reading a dummy device's
 * statistics), and a return probe on the module's (a kretprobe section,
 * which attach_info flags KSYM_ATTACH_RETPROBE). Each counts its runs in
 * `.bss`.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 core_hits;
__u64 module_hits;
__u64 module_returns;

SEC("kprobe/do_nanosleep")
int on_nanosleep(void *ctx)
{
    __sync_fetch_and_add(&core_hits, 1);
    return 0;
}

SEC("kprobe/dummy:dummy_get_stats64")
int on_dummy_stats(void *ctx)
{
    __sync_fetch_and_add(&module_hits, 1);
    return 0;
}

SEC("kretprobe/dummy:dummy_get_stats64")
int on_dummy_stats_return(void *ctx)
{
    __sync_fetch_and_add(&module_returns, 1);
    return 0;
}
