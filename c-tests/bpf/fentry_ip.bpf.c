/*
 * One fentry body for ksym_bpf_program_expand (test_fentry_kernel.c):
 * every alias made from `ip_count` records bpf_get_func_ip() in `ips`, so
 * the map ends up holding exactly the functions the aliases fired on, to
 * be checked against /proc/kallsyms and each alias's own target.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u64);
    __type(value, __u64);
} ips SEC(".maps");

static __u64 (*bpf_get_func_ip)(void *ctx) = (void *)173;

SEC("fentry")
int ip_count(void *ctx)
{
    __u64 ip = bpf_get_func_ip(ctx), one = 1;
    __u64 *v = bpf_map_lookup_elem(&ips, &ip);
    if (v)
        __sync_fetch_and_add(v, 1);
    else
        bpf_map_update_elem(&ips, &ip, &one, 0);
    return 0;
}
