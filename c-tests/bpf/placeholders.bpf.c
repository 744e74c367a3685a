/* Placeholders retargeted before load, as retsnoop's and libbpf-tools'
 * loaders do: sections name targets no kernel has, and the loader sets
 * the real one with ksym_bpf_program_set_attach_target. */
#include "tool_style.h"

SEC("tp_btf/dummy_tracepoint")
int tp_placeholder(__u64 *ctx)
{
    if (mine())
        state.hits[0]++;
    return 0;
}

SEC("raw_tp/dummy_raw_tracepoint")
int raw_placeholder(void *ctx)
{
    if (mine())
        state.hits[1]++;
    return 0;
}

SEC("fentry/dummy_fentry")
int fentry_placeholder(__u64 *ctx)
{
    if (mine())
        state.hits[2]++;
    return 0;
}
