/* A tp_btf program with its raw_tp twin, as tools that also run on
 * kernels without BTF tracepoints carry them: the loader keeps the tp_btf
 * one where the kernel's BTF has the tracepoint, the raw_tp one else. */
#include "tool_style.h"

SEC("tp_btf/sched_process_exec")
int exec_btf(__u64 *ctx)
{
    if (mine())
        state.hits[0]++;
    return 0;
}

SEC("raw_tp/sched_process_exec")
int exec_raw(void *ctx)
{
    if (mine())
        state.hits[1]++;
    return 0;
}
