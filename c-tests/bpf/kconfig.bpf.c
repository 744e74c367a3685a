/* Externs in .kconfig of every type libbpf fills in: bool, tristate, char,
 * integers, a char array; a weak one the config lacks; LINUX_ values. */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define __kconfig __attribute__((section(".kconfig")))
enum libbpf_tristate { TRI_NO = 0, TRI_YES = 1, TRI_MODULE = 2 };

extern unsigned int LINUX_KERNEL_VERSION __kconfig;
extern _Bool CONFIG_BPF __kconfig;
extern enum libbpf_tristate CONFIG_MOD __kconfig;
extern int CONFIG_HZ __kconfig;
extern char CONFIG_LOCALVERSION[8] __kconfig;
extern char CONFIG_CHAR __kconfig;
extern unsigned long long CONFIG_MISSING __kconfig __weak;

__u64 out[8];

SEC("socket")
int uses_kconfig(struct __sk_buff *skb)
{
    out[0] = LINUX_KERNEL_VERSION;
    out[1] = CONFIG_BPF;
    out[2] = CONFIG_MOD;
    out[3] = CONFIG_HZ;
    out[4] = CONFIG_LOCALVERSION[1];
    out[5] = CONFIG_CHAR;
    out[6] = CONFIG_MISSING;
    return 0;
}
