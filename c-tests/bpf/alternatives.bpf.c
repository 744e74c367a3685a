/* Alternatives for two kernel versions, one chosen at run time: exec is
 * traced at sched_prepare_exec where the kernel has it (6.10 on) and at
 * sched_process_exec before; the loader turns off the one whose target
 * this kernel lacks. */
#include "tool_style.h"

SEC("tp_btf/sched_prepare_exec")
int exec_new(__u64 *ctx)
{
    if (mine())
        state.hits[0]++;
    return 0;
}

SEC("tp_btf/sched_process_exec")
int exec_old(__u64 *ctx)
{
    if (mine())
        state.hits[1]++;
    return 0;
}
