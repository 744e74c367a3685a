/* struct_ops maps as libbpf reads them (SEC(".struct_ops") variables):
 *   ksym_cc       a TCP congestion control, registered by
 *                 BPF_MAP_UPDATE_ELEM: name "ksym_cc", flags
 *                 TCP_CONG_NON_RESTRICTED (so it is also in
 *                 tcp_allowed_congestion_control), init counts calls in
 *                 `init_calls` (.bss), ssthresh, undo_cwnd, cong_avoid;
 *   ksym_cc_link  the same as "ksym_cc_link", in `.struct_ops.link`:
 *                 registered by BPF_LINK_CREATE, gone when the link closes;
 *   ksym_dummy    a bpf_dummy_ops (not registrable; its programs run with
 *                 BPF_PROG_TEST_RUN): test_1 returns 0x4b53594d, test_2
 *                 returns its second argument plus its fifth.
 * The local structs hold a few of the kernel's members, in another order
 * and at other offsets: libbpf matches them by name, and so must libksym. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct sock;
struct bpf_dummy_ops_state;

struct tcp_congestion_ops {
    void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
    __u32 flags;
    void (*init)(struct sock *sk);
    char name[16];
    __u32 (*undo_cwnd)(struct sock *sk);
    __u32 (*ssthresh)(struct sock *sk);
};

struct bpf_dummy_ops {
    int (*test_2)(struct bpf_dummy_ops_state *cb, int a1, unsigned short a2, char a3, unsigned long a4);
    int (*test_1)(struct bpf_dummy_ops_state *cb);
};

__u64 init_calls;

SEC("struct_ops/ksym_init")
void ksym_init(__u64 *ctx)
{
    __sync_fetch_and_add(&init_calls, 1);
}

SEC("struct_ops/ksym_ssthresh")
__u32 ksym_ssthresh(__u64 *ctx)
{
    return 2;
}

SEC("struct_ops/ksym_undo_cwnd")
__u32 ksym_undo_cwnd(__u64 *ctx)
{
    return 10;
}

SEC("struct_ops/ksym_cong_avoid")
void ksym_cong_avoid(__u64 *ctx)
{
}

SEC("struct_ops/ksym_test_1")
int ksym_test_1(__u64 *ctx)
{
    return 0x4b53594d;
}

SEC("struct_ops/ksym_test_2")
int ksym_test_2(__u64 *ctx)
{
    return (int)(ctx[1] + ctx[4]);
}

SEC(".struct_ops")
struct tcp_congestion_ops ksym_cc = {
    .cong_avoid = (void *)ksym_cong_avoid,
    .flags = 0x1, /* TCP_CONG_NON_RESTRICTED */
    .init = (void *)ksym_init,
    .name = "ksym_cc",
    .undo_cwnd = (void *)ksym_undo_cwnd,
    .ssthresh = (void *)ksym_ssthresh,
};

SEC(".struct_ops.link")
struct tcp_congestion_ops ksym_cc_link = {
    .cong_avoid = (void *)ksym_cong_avoid,
    .init = (void *)ksym_init,
    .name = "ksym_cc_link",
    .undo_cwnd = (void *)ksym_undo_cwnd,
    .ssthresh = (void *)ksym_ssthresh,
};

SEC(".struct_ops")
struct bpf_dummy_ops ksym_dummy = {
    .test_1 = (void *)ksym_test_1,
    .test_2 = (void *)ksym_test_2,
};
