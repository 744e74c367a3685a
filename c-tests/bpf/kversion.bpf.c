/* LINUX_KERNEL_VERSION branches: the .kconfig map is frozen, so the
 * verifier knows the version and prunes the branches this kernel does not
 * take; the one for kernels before 5.0 calls a kfunc no kernel has (a
 * poisoned call), which it would reject if it could be reached. */
#include "tool_style.h"

extern unsigned int LINUX_KERNEL_VERSION __kconfig;
extern void bpf_kfunc_no_kernel_has(__u64 x) __ksym __weak;

SEC("tp_btf/sys_enter")
int by_version(__u64 *ctx)
{
    if (!mine())
        return 0;
    state.version = LINUX_KERNEL_VERSION;
    if (LINUX_KERNEL_VERSION < KERNEL_VERSION(5, 0, 0)) {
        bpf_kfunc_no_kernel_has(0);
        state.hits[0]++;
    }
    if (LINUX_KERNEL_VERSION >= KERNEL_VERSION(6, 10, 0))
        state.hits[1]++;
    else
        state.hits[2]++;
    return 0;
}
