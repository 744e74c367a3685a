/* The few BPF definitions the test programs need, so that building them
 * depends on nothing but clang (no libbpf headers). */
#ifndef MINI_BPF_H
#define MINI_BPF_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef long long __s64;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __ksym __attribute__((section(".ksyms")))
#define __weak __attribute__((weak))
#define __noinline __attribute__((noinline))
#define __always_inline inline __attribute__((always_inline))

enum { BPF_MAP_TYPE_HASH = 1, BPF_MAP_TYPE_ARRAY = 2 };

struct __sk_buff {
    __u32 len;
};

static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, __u64 flags) = (void *)2;
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_get_attach_cookie)(void *ctx) = (void *)174;
static long (*bpf_loop)(__u32 nr_loops, void *callback_fn, void *callback_ctx, __u64 flags) = (void *)181;

#endif
