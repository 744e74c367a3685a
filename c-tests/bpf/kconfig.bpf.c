/* An extern in .kconfig (libbpf fills these from the kernel config): refused. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern unsigned int LINUX_KERNEL_VERSION __attribute__((section(".kconfig")));

SEC("socket")
int uses_kconfig(struct __sk_buff *skb)
{
    return LINUX_KERNEL_VERSION > 0;
}
