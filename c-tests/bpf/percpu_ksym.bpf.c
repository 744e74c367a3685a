/*
 * Typed __ksym variables read as libbpf's users read them, for
 * c-tests/test_percpu_ksym_kernel.c: the per-CPU `runqueues` (struct rq,
 * its `cpu` field relocated by CO-RE) through bpf_per_cpu_ptr for CPUs 0..7
 * and bpf_this_cpu_ptr, and the per-CPU int `bpf_prog_active`. The kernel's
 * own answer is the oracle: CPU i's run queue says it is CPU i.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct rq {
    int cpu;
} __attribute__((preserve_access_index));

extern struct rq runqueues __ksym;
extern const int bpf_prog_active __ksym;

static void *(*bpf_per_cpu_ptr)(const void *ptr, __u32 cpu) = (void *)153;
static void *(*bpf_this_cpu_ptr)(const void *ptr) = (void *)154;

/* All in .bss (zero before the run): the values are stored plus one and
 * plus 100 so that a store that did not happen cannot pass. */
__s32 rq_cpu[8];
__s32 this_rq_cpu_plus1;
__s32 prog_active_plus100;

SEC("socket")
int read_percpu(void *ctx)
{
#pragma unroll
    for (int i = 0; i < 8; i++) {
        struct rq *rq = bpf_per_cpu_ptr(&runqueues, i);
        rq_cpu[i] = rq ? rq->cpu : -1;
    }
    struct rq *me = bpf_this_cpu_ptr(&runqueues);
    this_rq_cpu_plus1 = me->cpu + 1;
    const int *active = bpf_this_cpu_ptr(&bpf_prog_active);
    prog_active_plus100 = *active + 100;
    return 0;
}
