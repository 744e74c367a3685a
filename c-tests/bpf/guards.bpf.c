/* bpf_ksym_exists() guards on weak kfuncs: one every kernel from 6.2 has
 * (bpf_task_from_pid), one none has. The missing one's call is poisoned,
 * and the verifier prunes it because the guard's address is 0. */
#include "tool_style.h"

struct task_struct {
    int pid;
};

extern struct task_struct *bpf_task_from_pid(__s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;
extern void bpf_kfunc_no_kernel_has(__u64 x) __ksym __weak;

SEC("tp_btf/sys_enter")
int guarded(__u64 *ctx)
{
    if (!mine())
        return 0;
    if (bpf_ksym_exists(bpf_task_from_pid) && bpf_ksym_exists(bpf_task_release)) {
        struct task_struct *t = bpf_task_from_pid(state.tgid);
        if (t) {
            state.hits[0]++;
            bpf_task_release(t);
        }
    }
    if (bpf_ksym_exists(bpf_kfunc_no_kernel_has)) {
        bpf_kfunc_no_kernel_has(1);
        state.hits[1]++;
    } else {
        state.hits[2]++;
    }
    return 0;
}
