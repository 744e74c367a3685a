/* Maps of maps and a program array with initial slots (`.values = {...}`),
 * as libbpf's BTF-defined maps spell them:
 *   outer_arr (array of maps, 4 slots): [0] = inner_a, [2] = inner_b;
 *   outer_hash (hash of maps, 8 entries): [1] = inner_b;
 *   jmp (program array, 4 slots): [1] = tail_one, [3] = tail_three.
 * `entry` reads inner_a[0] through outer_arr[0] and inner_b[0] through
 * outer_hash[1], stores them in `seen`, then tail-calls jmp[key] where key
 * is inner_a[1]: the tail programs return 101 and 103; with no program in
 * the slot the call falls through and `entry` returns 7. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

enum { BPF_MAP_TYPE_PROG_ARRAY = 3, BPF_MAP_TYPE_ARRAY_OF_MAPS = 12, BPF_MAP_TYPE_HASH_OF_MAPS = 13 };
#define __array(name, val) typeof(val) *name[]

static long (*bpf_tail_call)(void *ctx, void *map, __u32 index) = (void *)12;

struct inner {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 2);
    __type(key, __u32);
    __type(value, __u64);
};

struct inner inner_a SEC(".maps"), inner_b SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
    __uint(max_entries, 4);
    __type(key, __u32);
    __array(values, struct inner);
} outer_arr SEC(".maps") = {
    .values = { [0] = &inner_a, [2] = &inner_b },
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
    __uint(max_entries, 8);
    __type(key, __u32);
    __array(values, struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 2);
        __type(key, __u32);
        __type(value, __u64);
    });
} outer_hash SEC(".maps") = {
    .values = { [1] = (void *)&inner_b },
};

SEC("socket")
int tail_one(struct __sk_buff *skb)
{
    return 101;
}

SEC("socket")
int tail_three(struct __sk_buff *skb)
{
    return 103;
}

struct {
    __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
    __uint(max_entries, 4);
    __uint(key_size, sizeof(__u32));
    __array(values, int(struct __sk_buff *));
} jmp SEC(".maps") = {
    .values = { [1] = (void *)&tail_one, [3] = (void *)&tail_three },
};

__u64 seen[2];

SEC("socket")
int entry(struct __sk_buff *skb)
{
    __u32 zero = 0, one = 1;
    __u64 *v;
    void *m = bpf_map_lookup_elem(&outer_arr, &zero);
    if (!m)
        return 1;
    v = bpf_map_lookup_elem(m, &zero);
    if (!v)
        return 2;
    seen[0] = *v;
    m = bpf_map_lookup_elem(&outer_hash, &one);
    if (!m)
        return 3;
    v = bpf_map_lookup_elem(m, &zero);
    if (!v)
        return 4;
    seen[1] = *v;
    v = bpf_map_lookup_elem(&inner_a, &one);
    if (!v)
        return 5;
    bpf_tail_call(skb, &jmp, (__u32)*v);
    return 7;
}
