/*
 * The kernel's ABI as the bundled loader (tools/bpf_loader.h) uses it: the
 * bpf() commands, program, map and attach types, flags, and the few
 * union bpf_attr and perf_event_attr layouts it fills in.
 *
 * <linux/bpf.h> declares union bpf_attr with anonymous members, which
 * -std=c99 -pedantic refuses, so the few layouts used here are spelled out
 * (they are the kernel's ABI and never change; c-tests/bpf_layout_check.c
 * checks them against the kernel's headers).
 */
#ifndef KSYM_BPF_ABI_H
#define KSYM_BPF_ABI_H

#include <stdint.h>

enum {
    KL_MAP_CREATE = 0,
    KL_MAP_LOOKUP_ELEM = 1,
    KL_MAP_UPDATE_ELEM = 2,
    KL_MAP_DELETE_ELEM = 3,
    KL_PROG_LOAD = 5,
    KL_PROG_TEST_RUN = 10,
    KL_OBJ_GET_INFO_BY_FD = 15,
    KL_RAW_TRACEPOINT_OPEN = 17,
    KL_BTF_LOAD = 18,
    KL_MAP_FREEZE = 22,
    KL_LINK_CREATE = 28,
    KL_ENABLE_STATS = 32,
};

/* enum bpf_prog_type values the loader treats specially. */
#define KL_PROG_SOCKET_FILTER 1
#define KL_PROG_KPROBE 2
#define KL_PROG_TRACEPOINT 5
#define KL_PROG_RAW_TRACEPOINT 17
#define KL_PROG_RAW_TRACEPOINT_WRITABLE 24
#define KL_PROG_TRACING 26
#define KL_PROG_EXT 28
#define KL_PROG_LSM 29
/* enum bpf_map_type values the loader treats specially. */
#define KL_MAP_PERF_EVENT_ARRAY 4
#define KL_MAP_STRUCT_OPS 26
/* enum bpf_attach_type BPF_STRUCT_OPS (a struct_ops link) */
#define KL_ATTACH_STRUCT_OPS 44

/* map_flags: BPF_F_RDONLY_PROG, BPF_F_LINK */
#define KL_F_RDONLY_PROG (1U << 7)
#define KL_F_LINK (1U << 13)

/* prog_flags */
#define KL_F_SLEEPABLE (1U << 4)
#define KL_F_XDP_HAS_FRAGS (1U << 5)

/* struct perf_event_attr up to config2 (PERF_ATTR_SIZE_VER1), for the
 * kprobe and tracepoint events programs attach to; its bit fields are one
 * u64 here (c-tests/bpf_layout_check.c checks the offsets). */
struct kl_perf_event_attr {
    uint32_t type, size;
    uint64_t config, sample_period, sample_type, read_format, flags;
    uint32_t wakeup_events, bp_type;
    uint64_t config1, config2;
};
#define KL_PERF_TYPE_TRACEPOINT 2
#define KL_PERF_FLAG_FD_CLOEXEC (1UL << 3)
#define KL_PERF_EVENT_IOC_ENABLE 0x2400u      /* _IO('$', 0) */
#define KL_PERF_EVENT_IOC_SET_BPF 0x40042408u /* _IOW('$', 8, __u32) */

struct kl_map_create {
    uint32_t map_type, key_size, value_size, max_entries, map_flags, inner_map_fd, numa_node;
    char map_name[16];
    uint32_t map_ifindex, btf_fd, btf_key_type_id, btf_value_type_id, btf_vmlinux_value_type_id;
    uint64_t map_extra;
};

struct kl_map_elem {
    uint32_t map_fd, pad;
    uint64_t key, value, flags;
};

struct kl_prog_load {
    uint32_t prog_type, insn_cnt;
    uint64_t insns, license;
    uint32_t log_level, log_size;
    uint64_t log_buf;
    uint32_t kern_version, prog_flags;
    char prog_name[16];
    uint32_t prog_ifindex, expected_attach_type, prog_btf_fd, func_info_rec_size;
    uint64_t func_info;
    uint32_t func_info_cnt, line_info_rec_size;
    uint64_t line_info;
    uint32_t line_info_cnt, attach_btf_id, attach_prog_fd, core_relo_cnt;
    uint64_t fd_array, core_relos;
    uint32_t core_relo_rec_size, log_true_size;
};

struct kl_btf_load {
    uint64_t btf, btf_log_buf;
    uint32_t btf_size, btf_log_size, btf_log_level, btf_log_true_size;
};

struct kl_raw_tp_open {
    uint64_t name;
    uint32_t prog_fd, pad;
    uint64_t cookie;
};

struct kl_link_create {
    uint32_t prog_fd, target_fd, attach_type, flags;
    uint32_t target_btf_id, pad;
    uint64_t cookie;
};

struct kl_enable_stats {
    uint32_t type;
};

struct kl_obj_info {
    uint32_t bpf_fd, info_len;
    uint64_t info;
};

/* struct bpf_prog_info up to the run counters. */
struct kl_prog_info {
    uint32_t type, id;
    uint8_t tag[8];
    uint32_t jited_prog_len, xlated_prog_len;
    uint64_t jited_prog_insns, xlated_prog_insns, load_time;
    uint32_t created_by_uid, nr_map_ids;
    uint64_t map_ids;
    char name[16];
    uint32_t ifindex, gpl_compatible;
    uint64_t netns_dev, netns_ino;
    uint32_t nr_jited_ksyms, nr_jited_func_lens;
    uint64_t jited_ksyms, jited_func_lens;
    uint32_t btf_id, func_info_rec_size;
    uint64_t func_info;
    uint32_t nr_func_info, nr_line_info;
    uint64_t line_info, jited_line_info;
    uint32_t nr_jited_line_info, line_info_rec_size, jited_line_info_rec_size, nr_prog_tags;
    uint64_t prog_tags, run_time_ns, run_cnt;
};

struct kl_test_run {
    uint32_t prog_fd, retval, data_size_in, data_size_out;
    uint64_t data_in, data_out;
    uint32_t repeat, duration, ctx_size_in, ctx_size_out;
    uint64_t ctx_in, ctx_out;
    uint32_t flags, cpu, batch_size, pad;
};

#endif
