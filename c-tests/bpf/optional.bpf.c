/* Optional programs in `?` sections (autoload off until the loader turns
 * it on): one the loader wants, one this kernel cannot load (fentry is
 * refused here), one whose target no kernel has; and one always loaded. */
#include "tool_style.h"

SEC("tp_btf/sched_process_exec")
int always(__u64 *ctx)
{
    if (mine())
        state.hits[0]++;
    return 0;
}

SEC("?tp_btf/sys_enter")
int opt_enter(__u64 *ctx)
{
    if (mine())
        state.hits[1]++;
    return 0;
}

SEC("?fentry/vfs_read")
int opt_fentry(__u64 *ctx)
{
    if (mine())
        state.hits[2]++;
    return 0;
}

SEC("?tp_btf/no_kernel_has_this_tracepoint")
int opt_missing(__u64 *ctx)
{
    if (mine())
        state.hits[3]++;
    return 0;
}
