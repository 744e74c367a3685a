/*
 * One socket-filter program with two aliases, another program section,
 * every kind of relocation libksym handles: a BTF-defined array map, .bss,
 * .data and .rodata globals, a strong untyped ksym that every kernel has, a
 * weak one that none has, a static subprogram, a global subprogram and a
 * callback passed to bpf_loop.
 *
 * Each program writes into `results`: [0] &_text, [1] the weak missing
 * ksym (0), [2] add_seed(1), [3] the bpf_loop sum, [4] the .rodata
 * constant, [5] the .bss value set here, [6] the global subprogram's result,
 * [8] &_text again, through an extern whose asm label names the symbol
 * module-qualified (clang leaves such an extern out of the BTF).
 * `second` writes [7] = add_seed(2) + magic.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 16);
    __type(key, __u32);
    __type(value, __u64);
} results SEC(".maps");

__u64 counter;                        /* .bss */
__u64 seed = 0x1234;                  /* .data */
const volatile __u64 magic = 0xfeedbeef; /* .rodata */

extern const void _text __ksym;
extern const void libksym_no_such_symbol __ksym __weak;
extern const void text_by_label __asm__("vmlinux`_text") __ksym;

static __noinline __u64 add_seed(__u64 x)
{
    return x + seed;
}

__noinline int global_double(int x)
{
    return x * 2 + (int)(seed & 1);
}

static long sum_cb(__u32 idx, void *ctx)
{
    __u64 *acc = ctx;
    *acc += idx;
    return 0;
}

static __always_inline void put(__u32 k, __u64 v)
{
    bpf_map_update_elem(&results, &k, &v, 0);
}

SEC("socket")
int prog(struct __sk_buff *skb)
{
    __u64 acc = 0;

    put(0, (__u64)&_text);
    put(1, (__u64)&libksym_no_such_symbol);
    put(2, add_seed(1));
    bpf_loop(5, sum_cb, &acc, 0);
    put(3, acc);
    put(4, magic);
    counter = 7;
    put(5, counter);
    put(6, global_double(20));
    put(8, (__u64)&text_by_label);
    return 0;
}

int prog_alias_one(struct __sk_buff *skb) __attribute__((alias("prog")));
int prog_alias_two(struct __sk_buff *skb) __attribute__((alias("prog")));

SEC("socket/second")
int second(struct __sk_buff *skb)
{
    put(7, add_seed(2) + magic);
    return 0;
}
