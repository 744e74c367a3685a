/*
 * Per-alias constants (ksym_bpf_program_alias_insns; test_alias_values_kernel.c):
 * one body per section, each alias loading its own `ksym_alias_value`
 * and `ksym_alias_addr`, both weak untyped externs (libbpf gives them 0).
 *   on_task        tp_btf/sched_process_fork, and its aliases on_newtask
 *                  and on_rename, which the loader sets to task_newtask and
 *                  task_rename: counts[value] += 1 in the process
 *                  `target_tgid`.
 *   on_func        fentry, expanded by the loader over a few syscalls:
 *                  counts[value] += 1 and addrs[value] = ksym_alias_addr,
 *                  with no helper a 5.10 fentry program lacks.
 *   on_func_ip     the same, and ips[value] = bpf_get_func_ip() (5.15),
 *                  the kernel's own answer to "which function".
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern const void ksym_alias_value __ksym __weak;
extern const void ksym_alias_addr __ksym __weak;

#define HASH_U64(name)                                                                                                 \
    struct {                                                                                                           \
        __uint(type, BPF_MAP_TYPE_HASH);                                                                               \
        __uint(max_entries, 256);                                                                                      \
        __type(key, __u64);                                                                                            \
        __type(value, __u64);                                                                                          \
    } name SEC(".maps")

HASH_U64(counts);
HASH_U64(addrs);
HASH_U64(ips);

const volatile __u32 target_tgid = 0;

static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static __u64 (*bpf_get_func_ip)(void *ctx) = (void *)173;

static __always_inline void count(__u64 key)
{
    __u64 one = 1, *n = bpf_map_lookup_elem(&counts, &key);
    if (n)
        __sync_fetch_and_add(n, 1);
    else
        bpf_map_update_elem(&counts, &key, &one, 0);
}

static __always_inline int mine(void)
{
    return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

SEC("tp_btf/sched_process_fork")
int on_task(void *ctx)
{
    if (mine())
        count((__u64)&ksym_alias_value);
    return 0;
}
int on_newtask(void *ctx) __attribute__((alias("on_task")));
int on_rename(void *ctx) __attribute__((alias("on_task")));

SEC("fentry")
int on_func(void *ctx)
{
    __u64 key = (__u64)&ksym_alias_value, addr = (__u64)&ksym_alias_addr;
    if (!mine())
        return 0;
    count(key);
    bpf_map_update_elem(&addrs, &key, &addr, 0);
    return 0;
}

SEC("fentry")
int on_func_ip(void *ctx)
{
    __u64 key = (__u64)&ksym_alias_value, addr = (__u64)&ksym_alias_addr, ip = bpf_get_func_ip(ctx);
    if (!mine())
        return 0;
    count(key);
    bpf_map_update_elem(&addrs, &key, &addr, 0);
    bpf_map_update_elem(&ips, &key, &ip, 0);
    return 0;
}
