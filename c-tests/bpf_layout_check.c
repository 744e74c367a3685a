/*
 * tools/bpf_abi.h (which tools/bpf_loader.h includes) spells out the
 * bpf_attr layouts the bundled loader uses (so that it compiles as strict
 * C99); this checks them against <linux/bpf.h> at compile time. Built with -std=gnu11: the kernel header needs it.
 *
 * Fields newer than the installed <linux/bpf.h> (linux-libc-dev) are not
 * checked, and the program says which were left out.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <linux/version.h>
#include "../tools/bpf_loader.h"

#define CHK(ours, f, theirs) \
    _Static_assert(offsetof(struct ours, f) == offsetof(union bpf_attr, theirs), #ours "." #f)
#define CHK_INFO(f) \
    _Static_assert(offsetof(struct kl_prog_info, f) == offsetof(struct bpf_prog_info, f), "kl_prog_info." #f)
#define HEADERS_AT_LEAST(a, b) (LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, 0))

static const char *unchecked[16];
static int n_unchecked;

CHK(kl_map_create, map_name, map_name);
CHK(kl_map_create, btf_vmlinux_value_type_id, btf_vmlinux_value_type_id);
CHK(kl_map_elem, key, key);
CHK(kl_map_elem, value, value);
CHK(kl_map_elem, flags, flags);
CHK(kl_prog_load, log_buf, log_buf);
CHK(kl_prog_load, prog_name, prog_name);
CHK(kl_prog_load, expected_attach_type, expected_attach_type);
CHK(kl_prog_load, prog_btf_fd, prog_btf_fd);
CHK(kl_prog_load, func_info, func_info);
CHK(kl_prog_load, line_info_cnt, line_info_cnt);
CHK(kl_prog_load, attach_btf_id, attach_btf_id);
CHK(kl_prog_load, attach_prog_fd, attach_prog_fd);
CHK(kl_btf_load, btf_size, btf_size);
CHK(kl_btf_load, btf_log_level, btf_log_level);
CHK(kl_test_run, data_out, test.data_out);
CHK(kl_test_run, ctx_out, test.ctx_out);
CHK(kl_raw_tp_open, name, raw_tracepoint.name);
CHK(kl_raw_tp_open, prog_fd, raw_tracepoint.prog_fd);
CHK(kl_link_create, prog_fd, link_create.prog_fd);
CHK(kl_link_create, target_fd, link_create.target_fd);
CHK(kl_link_create, attach_type, link_create.attach_type);
CHK(kl_link_create, flags, link_create.flags);
CHK(kl_link_create, target_btf_id, link_create.target_btf_id);
CHK(kl_enable_stats, type, enable_stats.type);
CHK(kl_obj_info, info_len, info.info_len);
CHK(kl_obj_info, info, info.info);
CHK_INFO(name);
CHK_INFO(btf_id);
CHK_INFO(run_time_ns);
CHK_INFO(run_cnt);
_Static_assert(sizeof(struct ksym_bpf_insn) == sizeof(struct bpf_insn), "struct bpf_insn");
#define CHK_PERF(f) \
    _Static_assert(offsetof(struct kl_perf_event_attr, f) == offsetof(struct perf_event_attr, f), "kl_perf_event_attr." #f)
CHK_PERF(config);
CHK_PERF(read_format);
CHK_PERF(wakeup_events);
CHK_PERF(bp_type);
CHK_PERF(config1);
CHK_PERF(config2);
_Static_assert(sizeof(struct kl_perf_event_attr) == PERF_ATTR_SIZE_VER1, "kl_perf_event_attr size");
_Static_assert(PERF_TYPE_TRACEPOINT == KL_PERF_TYPE_TRACEPOINT && PERF_FLAG_FD_CLOEXEC == KL_PERF_FLAG_FD_CLOEXEC,
               "perf constants");
_Static_assert(PERF_EVENT_IOC_ENABLE == KL_PERF_EVENT_IOC_ENABLE && PERF_EVENT_IOC_SET_BPF == KL_PERF_EVENT_IOC_SET_BPF,
               "perf ioctls");
_Static_assert(BPF_PROG_TYPE_KPROBE == KL_PROG_KPROBE && BPF_PROG_TYPE_TRACEPOINT == KL_PROG_TRACEPOINT, "prog types");
_Static_assert(BPF_PROG_TYPE_SOCKET_FILTER == KL_PROG_SOCKET_FILTER, "prog type");
_Static_assert(BPF_PROG_TYPE_TRACING == KL_PROG_TRACING && BPF_PROG_TYPE_LSM == KL_PROG_LSM, "prog types");
_Static_assert(BPF_PROG_TYPE_RAW_TRACEPOINT == KL_PROG_RAW_TRACEPOINT, "prog type");
_Static_assert(BPF_F_SLEEPABLE == KL_F_SLEEPABLE, "prog flags");
_Static_assert((int)BPF_BTF_LOAD == (int)KL_BTF_LOAD && (int)BPF_PROG_TEST_RUN == (int)KL_PROG_TEST_RUN, "commands");
_Static_assert((int)BPF_RAW_TRACEPOINT_OPEN == (int)KL_RAW_TRACEPOINT_OPEN && (int)BPF_LINK_CREATE == (int)KL_LINK_CREATE,
               "commands");
_Static_assert((int)BPF_ENABLE_STATS == (int)KL_ENABLE_STATS && (int)BPF_OBJ_GET_INFO_BY_FD == (int)KL_OBJ_GET_INFO_BY_FD,
               "commands");

/* Newer fields: checked when the installed headers have them. */
#if HEADERS_AT_LEAST(5, 16)
CHK(kl_map_create, map_extra, map_extra);
CHK(kl_prog_load, fd_array, fd_array);
#else
#define NO_5_16 "map_extra, fd_array (Linux 5.16)"
#endif
#if HEADERS_AT_LEAST(5, 17)
CHK(kl_prog_load, core_relo_rec_size, core_relo_rec_size);
#else
#define NO_5_17 "core_relo_rec_size (Linux 5.17)"
#endif
#if HEADERS_AT_LEAST(5, 18)
CHK(kl_test_run, batch_size, test.batch_size);
#else
#define NO_5_18 "test.batch_size (Linux 5.18)"
#endif
#if HEADERS_AT_LEAST(6, 10)
CHK(kl_raw_tp_open, cookie, raw_tracepoint.cookie);
#else
#define NO_6_10 "raw_tracepoint.cookie (Linux 6.10)"
#endif

int main(void)
{
#ifdef NO_5_16
    unchecked[n_unchecked++] = NO_5_16;
#endif
#ifdef NO_5_17
    unchecked[n_unchecked++] = NO_5_17;
#endif
#ifdef NO_5_18
    unchecked[n_unchecked++] = NO_5_18;
#endif
#ifdef NO_6_10
    unchecked[n_unchecked++] = NO_6_10;
#endif
    for (int i = 0; i < n_unchecked; i++)
        printf("not checked (the installed <linux/bpf.h> is older): %s\n", unchecked[i]);
    puts("bpf_attr and perf_event_attr layouts match <linux/bpf.h> and <linux/perf_event.h>");
    return 0;
}
