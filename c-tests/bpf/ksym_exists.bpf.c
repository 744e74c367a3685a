/* ld_imm64 of kfuncs (bpf_ksym_exists() and a plain address) and calls to
 * weak kfuncs that may be missing, for the unit tests on hand-made kernel
 * BTF (src/bpf/tests_kernel.rs), which say what each relocates to. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define bpf_ksym_exists(sym) (!!(sym))

/* Strong, in vmlinux. */
extern void bpf_rcu_read_lock(void) __ksym;
/* Weak, in module `mymod`. */
extern void bpf_mod_kfunc(void) __ksym __weak;
/* Weak, in no kernel. */
extern void bpf_absent(int x) __ksym __weak;
/* Weak, with a prototype the kernel's does not match. */
extern void bpf_incompat(void) __ksym __weak;
/* Weak, a flavor of bpf_rcu_read_lock: looked up by its essential name. */
extern void bpf_rcu_read_lock___flavor(void) __ksym __weak;

__u64 seen;

SEC("socket")
int loads_kfuncs(struct __sk_buff *skb)
{
    long strong = (long)&bpf_rcu_read_lock;
    asm volatile("" : "+r"(strong));
    if (strong)
        seen |= 1;
    if (bpf_ksym_exists(bpf_mod_kfunc))
        seen |= 2;
    if (bpf_ksym_exists(bpf_absent)) {
        bpf_absent(1);
        seen |= 4;
    }
    if (bpf_ksym_exists(bpf_incompat)) {
        bpf_incompat();
        seen |= 8;
    }
    if (bpf_ksym_exists(bpf_rcu_read_lock___flavor))
        seen |= 16;
    return 0;
}
