/*
 * One trivial program per kind of section libksym reads the program type
 * and attach target of (libbpf's names, and the module-qualified forms):
 * checked field by field against libbpf's section table.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PROG(name, sec) SEC(sec) int name(void *ctx) { return 0; }

PROG(p_socket, "socket")
PROG(p_fexit_mod, "fexit/xfs:xfs_file_open")
PROG(p_fentry_dtrace, "fentry/xfs`xfs_file_fsync")
PROG(p_fmod_ret, "fmod_ret/vfs_read")
PROG(p_fentry_s, "fentry.s/vfs_write")
PROG(p_tp_btf, "tp_btf/sched_switch")
PROG(p_raw_tp, "raw_tp/sched_switch")
PROG(p_lsm_s, "lsm.s/bprm_check_security")
PROG(p_iter, "iter/task")
PROG(p_kretprobe, "kretprobe/vfs_read")
PROG(p_tracepoint, "tracepoint/syscalls/sys_enter_openat")
PROG(p_xdp_frags, "xdp.frags")
PROG(p_tc, "tc")
PROG(p_cgroup, "cgroup_skb/ingress")
PROG(p_unknown, "my_own_section/thing")
