/*
 * A minimal BPF loader on top of libksym, without libbpf: what a C loader
 * does with a struct ksym_bpf_object. Used by the `ksym obj --load` and
 * `ksym trace` commands and by the kernel tests (c-tests/test_*_kernel.c).
 * Internal to this project: not installed, no API promise (a loader of
 * one's own starts from examples/aliases.c; docs/bpf-objects.md).
 *
 * Steps: kl_prepare (the object's BTF loaded; untyped externs, then the
 * kernel's BTF, resolved before the maps so that `.kconfig` has its
 * values; each map created with its initial value, `.rodata` and
 * `.kconfig` frozen, its fd given to the object; maps of maps' slots
 * filled; relocation), then kl_load_prog for each program wanted (its
 * type, attach type and target from ksym_bpf_program_attach_info),
 * kl_fill_slots(KSYM_BPF_SLOT_PROGRAM) for program arrays, kl_attach to
 * attach it (kl_attach_struct_ops for a struct_ops map); kl_load does the
 * first three for every program.
 *
 * <linux/bpf.h> declares union bpf_attr with anonymous members, which
 * -std=c99 -pedantic refuses, so the few layouts used here are spelled out
 * (they are the kernel's ABI and never change).
 *
 * Include after defining _GNU_SOURCE (for syscall()).
 */
#ifndef KSYM_BPF_LOADER_H
#define KSYM_BPF_LOADER_H

#include <ksym.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static inline long kl_bpf(int cmd, void *attr, unsigned int size)
{
    return syscall(SYS_bpf, cmd, attr, size);
}

static inline uint64_t kl_ptr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* Possible CPUs (/sys/devices/system/cpu/possible, "0-3,8-11"), as
 * libbpf counts them; 1 if unreadable. */
static inline int kl_possible_cpus(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
    int n = 0, a, b;
    char sep;
    if (!f)
        return 1;
    while (fscanf(f, "%d", &a) == 1) {
        b = a;
        if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
            if (fscanf(f, "%d", &b) != 1)
                break;
            if (fscanf(f, "%c", &sep) != 1)
                sep = 0;
        }
        n += b - a + 1;
        if (sep != ',')
            break;
    }
    fclose(f);
    return n > 0 ? n : 1;
}

/* Map types the kernel creates without BTF key/value types: libbpf clears
 * them for these (perf event, cgroup and stack trace arrays, maps of maps,
 * dev/cpu/xsk maps, sockmaps, queues, stacks). */
static inline int kl_map_takes_btf(uint32_t type)
{
    switch (type) {
    case 4: case 7: case 8: case 12: case 13: case 14: case 15: case 16: case 17: case 18: case 22: case 23: case 25:
        return 0;
    default:
        return 1;
    }
}

/* Can this process load BPF programs? 0 if so, else -errno. */
static inline int kl_bpf_available(void)
{
    /* r0 = 0; exit */
    static const struct ksym_bpf_insn prog[2] = { { 0xb7, 0, 0, 0 }, { 0x95, 0, 0, 0 } };
    struct kl_prog_load a;
    memset(&a, 0, sizeof(a));
    a.prog_type = KL_PROG_SOCKET_FILTER;
    a.insn_cnt = 2;
    a.insns = kl_ptr(prog);
    a.license = kl_ptr("GPL");
    long fd = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
    if (fd < 0)
        return -errno;
    close((int)fd);
    return 0;
}

static inline int kl_map_update(int fd, const void *key, const void *value)
{
    struct kl_map_elem a;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)fd;
    a.key = kl_ptr(key);
    a.value = kl_ptr(value);
    return kl_bpf(KL_MAP_UPDATE_ELEM, &a, sizeof(a)) < 0 ? -errno : 0;
}

static inline int kl_map_lookup(int fd, const void *key, void *value)
{
    struct kl_map_elem a;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)fd;
    a.key = kl_ptr(key);
    a.value = kl_ptr(value);
    return kl_bpf(KL_MAP_LOOKUP_ELEM, &a, sizeof(a)) < 0 ? -errno : 0;
}

/* Runs a socket filter once on a zeroed 64-byte packet; its return value in *ret. */
static inline int kl_test_run(int prog_fd, uint32_t *ret)
{
    unsigned char pkt[64], out[64];
    struct kl_test_run a;
    memset(pkt, 0, sizeof(pkt));
    memset(&a, 0, sizeof(a));
    a.prog_fd = (uint32_t)prog_fd;
    a.data_in = kl_ptr(pkt);
    a.data_size_in = sizeof(pkt);
    /* The kernel accepts no output buffer; valgrind's model of bpf() does not. */
    a.data_out = kl_ptr(out);
    a.data_size_out = sizeof(out);
    a.repeat = 1;
    if (kl_bpf(KL_PROG_TEST_RUN, &a, sizeof(a)) < 0)
        return -errno;
    *ret = a.retval;
    return 0;
}

/* What was loaded for an object. */
struct kl_loaded {
    int btf_fd;
    size_t nmaps, nprogs;
    int *map_fds;
    int *prog_fds; /* -errno for a program that did not load, -ENOENT if not asked */
    int *link_fds; /* -1 when not attached */
    /* struct_ops maps: -1 not registered, KL_REGISTERED (deleted at
     * unload), or the fd of the link that registered it (closed at unload). */
    int *map_link_fds;
};

#define KL_REGISTERED (-2)

static inline void kl_unload(struct kl_loaded *l)
{
    for (size_t i = 0; i < l->nprogs; i++) {
        if (l->link_fds && l->link_fds[i] >= 0)
            close(l->link_fds[i]);
        if (l->prog_fds && l->prog_fds[i] >= 0)
            close(l->prog_fds[i]);
    }
    for (size_t i = 0; i < l->nmaps; i++) {
        if (l->map_link_fds && l->map_link_fds[i] >= 0)
            close(l->map_link_fds[i]);
        if (l->map_link_fds && l->map_link_fds[i] == KL_REGISTERED) {
            /* Unregister, as libbpf's struct_ops link detach does: a
             * registered struct_ops outlives its map fd otherwise. */
            struct kl_map_elem a;
            uint32_t zero = 0;
            memset(&a, 0, sizeof(a));
            a.map_fd = (uint32_t)l->map_fds[i];
            a.key = kl_ptr(&zero);
            kl_bpf(KL_MAP_DELETE_ELEM, &a, sizeof(a));
        }
        if (l->map_fds[i] >= 0)
            close(l->map_fds[i]);
    }
    if (l->btf_fd >= 0)
        close(l->btf_fd);
    free(l->map_fds);
    free(l->prog_fds);
    free(l->link_fds);
    free(l->map_link_fds);
    memset(l, 0, sizeof(*l));
    l->btf_fd = -1;
}

/* The kernel allows [A-Za-z0-9_.] in object names, 15 of them. */
static inline void kl_object_name(char out[16], const char *name)
{
    size_t j = 0;
    memset(out, 0, 16);
    for (size_t k = 0; name[k] && j < 15; k++) {
        char c = name[k];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')
            out[j++] = c;
    }
}

/*
 * Writes the initial slots of `kind` the object gives its maps of maps
 * (KSYM_BPF_SLOT_MAP: after the maps are created) or program arrays
 * (KSYM_BPF_SLOT_PROGRAM: after the programs are loaded), as libbpf does;
 * a program that did not load leaves its slot empty. Returns 0 or the
 * negative code of the first failure (a message in `why`).
 */
static inline int kl_fill_slots(struct ksym_bpf_object *obj, struct kl_loaded *l, enum ksym_bpf_slot_kind kind,
                                char *why, size_t why_size)
{
    for (size_t i = 0; i < l->nmaps; i++) {
        struct ksym_bpf_map_info m = { .sz = sizeof(m) };
        if (l->map_fds[i] < 0)
            continue; /* not created (left out, or a struct_ops map without kernel BTF) */
        if (ksym_bpf_map_info(obj, i, &m) != 0) {
            snprintf(why, why_size, "map %zu: %s", i, ksym_last_error_message());
            return ksym_last_error();
        }
        for (size_t j = 0; j < m.slot_count; j++) {
            struct ksym_bpf_map_slot s = { .sz = sizeof(s) };
            if (ksym_bpf_map_slot(obj, i, j, &s) != 0) {
                snprintf(why, why_size, "map `%s` slot %zu: %s", m.name, j, ksym_last_error_message());
                return ksym_last_error();
            }
            if (s.kind != kind)
                continue;
            int fd = kind == KSYM_BPF_SLOT_MAP ? l->map_fds[s.target] : l->prog_fds[s.target];
            if (fd < 0)
                continue;
            int err = kl_map_update(l->map_fds[i], &s.index, &fd);
            if (err) {
                snprintf(why, why_size, "map `%s`: slot [%u]: %s", m.name, s.index, strerror(-err));
                return err;
            }
        }
    }
    return 0;
}

/*
 * Loads the object's BTF, resolves its externs through `cache` (may be
 * NULL) and, when `btf` is not NULL, everything that needs kernel BTF
 * (attach targets, CO-RE, typed ksyms, kfuncs, .kconfig), creates its maps
 * (data sections and .kconfig get their initial values; kl_prepare_opts
 * leaves out the maps opts->skip_maps names), then relocates. Returns 0, or the negative libksym/-errno code
 * of the step that failed (a message in `why`). `l` is set up for
 * kl_load_prog either way: kl_unload it.
 */
/* What kl_prepare_opts may leave out, as a libbpf loader does with
 * bpf_map__set_autocreate(map, false): maps this kernel cannot create
 * (e.g. `.struct_ops.link` maps before Linux 6.4). Their fds stay -1. */
struct kl_prepare_opts {
    const char *const *skip_maps; /* map names, NULL-terminated; NULL: none */
};

static inline int kl_skips_map(const struct kl_prepare_opts *opts, const char *name)
{
    for (const char *const *s = opts ? opts->skip_maps : NULL; s && *s; s++)
        if (!strcmp(*s, name))
            return 1;
    return 0;
}

/* Kernels before 5.11 charge BPF maps and programs to RLIMIT_MEMLOCK
 * (later ones to the memory cgroup): as libbpf does when the kernel lacks
 * memcg accounting, raise it, here to the hard limit (unlimited for root),
 * before the first map. A failure leaves the limit as it was: the kernel
 * then says EPERM at BPF_MAP_CREATE, which names the map. */
static inline void kl_raise_memlock(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_MEMLOCK, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
        struct rlimit want = { RLIM_INFINITY, RLIM_INFINITY };
        if (setrlimit(RLIMIT_MEMLOCK, &want) != 0 && r.rlim_cur < r.rlim_max) {
            r.rlim_cur = r.rlim_max;
            (void)setrlimit(RLIMIT_MEMLOCK, &r);
        }
    }
}

static inline int kl_prepare_opts(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct ksym_btf *btf,
                                  struct kl_loaded *l, char *why, size_t why_size,
                                  const struct kl_prepare_opts *opts)
{
    static char log[1 << 16];
    size_t btf_size = 0;
    /* The BTF this kernel takes, as libbpf rewrites it (without bpf() the
     * features stay all, and BPF_BTF_LOAD below says why). */
    uint32_t btf_feats = KSYM_BTF_FEAT_ALL;
    ksym_btf_probe_features(&btf_feats);
    const void *obj_btf = ksym_bpf_object_btf_for(obj, btf_feats, &btf_size);
    int err = 0;

    if (why_size)
        why[0] = 0;
    kl_raise_memlock();
    memset(l, 0, sizeof(*l));
    l->btf_fd = -1;
    l->nmaps = ksym_bpf_object_map_count(obj);
    l->nprogs = ksym_bpf_object_program_count(obj);
    l->map_fds = calloc(l->nmaps ? l->nmaps : 1, sizeof(int));
    l->prog_fds = calloc(l->nprogs ? l->nprogs : 1, sizeof(int));
    l->link_fds = calloc(l->nprogs ? l->nprogs : 1, sizeof(int));
    l->map_link_fds = calloc(l->nmaps ? l->nmaps : 1, sizeof(int));
    if (!l->map_fds || !l->prog_fds || !l->link_fds || !l->map_link_fds) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < l->nmaps; i++)
        l->map_fds[i] = l->map_link_fds[i] = -1;
    for (size_t i = 0; i < l->nprogs; i++)
        l->prog_fds[i] = -ENOENT, l->link_fds[i] = -1;

    if (obj_btf) {
        struct kl_btf_load a;
        memset(&a, 0, sizeof(a));
        a.btf = kl_ptr(obj_btf);
        a.btf_size = (uint32_t)btf_size;
        log[0] = 0;
        long fd = kl_bpf(KL_BTF_LOAD, &a, sizeof(a));
        if (fd < 0) {
            err = -errno;
            /* Again with the kernel's log, to say why. */
            a.btf_log_buf = kl_ptr(log);
            a.btf_log_size = sizeof(log);
            a.btf_log_level = 1;
            if (kl_bpf(KL_BTF_LOAD, &a, sizeof(a)) >= 0)
                log[0] = 0;
            snprintf(why, why_size, "BPF_BTF_LOAD: %s\n%.4000s", strerror(errno), log);
            return err;
        }
        l->btf_fd = (int)fd;
    }
    /* Externs and kernel BTF before the maps: resolve_btf fills in the
     * .kconfig map's initial value. A program whose attach target is not
     * in this kernel does not fail resolve_btf (as with libbpf, it fails
     * when loaded: kl_load_prog); what does fail it (a strong extern
     * missing...) is kept in `why`, and relocate reports what stops
     * relocation. */
    if ((err = ksym_bpf_object_resolve_ksyms(obj, cache)) != 0) {
        snprintf(why, why_size, "%s", ksym_last_error_message());
        return err;
    }
    if (btf && ksym_bpf_object_resolve_btf(obj, btf) != 0)
        snprintf(why, why_size, "%s", ksym_last_error_message());
    for (size_t i = 0; i < l->nmaps; i++) {
        struct ksym_bpf_map_info m = { .sz = sizeof(m) };
        struct kl_map_create a;
        if (ksym_bpf_map_info(obj, i, &m) != 0) {
            snprintf(why, why_size, "map %zu: %s", i, ksym_last_error_message());
            return ksym_last_error();
        }
        if (kl_skips_map(opts, m.name))
            continue;
        memset(&a, 0, sizeof(a));
        a.map_type = m.type;
        a.key_size = m.key_size;
        a.value_size = m.value_size;
        a.max_entries = m.max_entries;
        a.map_flags = m.map_flags;
        a.map_extra = m.map_extra;
        a.numa_node = m.numa_node;
        /* A perf event array sized 0 gets one slot per possible CPU, as libbpf does. */
        if (m.type == KL_MAP_PERF_EVENT_ARRAY && !a.max_entries)
            a.max_entries = (uint32_t)kl_possible_cpus();
        kl_object_name(a.map_name, m.name);
        if (m.type == KL_MAP_STRUCT_OPS) {
            /* Its value type is the kernel's: known after resolve_btf
             * only. Without it, the map is not created (kl_attach_struct_ops
             * says why); its programs cannot load either. */
            if (!m.btf_vmlinux_value_type_id)
                continue;
            a.btf_vmlinux_value_type_id = m.btf_vmlinux_value_type_id;
        }
        if (l->btf_fd >= 0 && kl_map_takes_btf(m.type)) {
            a.btf_fd = (uint32_t)l->btf_fd;
            a.btf_key_type_id = m.btf_key_type_id;
            a.btf_value_type_id = m.btf_value_type_id;
        }
        int inner_fd = -1;
        if (m.inner_type) {
            /* A map of maps: the kernel takes the inner maps' shape from a
             * template map, created, passed and closed, as libbpf does. */
            struct kl_map_create t;
            memset(&t, 0, sizeof(t));
            t.map_type = m.inner_type;
            t.key_size = m.inner_key_size;
            t.value_size = m.inner_value_size;
            t.max_entries = m.inner_max_entries;
            t.map_flags = m.inner_map_flags;
            /* With its BTF, as libbpf: the kernel compares an inner map's
             * timers and kptrs with the template's, and storage maps
             * (task, inode, sk) are not created without BTF. */
            if (l->btf_fd >= 0 && kl_map_takes_btf(m.inner_type) &&
                (m.inner_btf_key_type_id || m.inner_btf_value_type_id)) {
                t.btf_fd = (uint32_t)l->btf_fd;
                t.btf_key_type_id = m.inner_btf_key_type_id;
                t.btf_value_type_id = m.inner_btf_value_type_id;
            }
            long tfd = kl_bpf(KL_MAP_CREATE, &t, sizeof(t));
            if (tfd < 0 && (t.btf_key_type_id || t.btf_value_type_id)) {
                t.btf_fd = t.btf_key_type_id = t.btf_value_type_id = 0;
                tfd = kl_bpf(KL_MAP_CREATE, &t, sizeof(t));
            }
            if (tfd < 0) {
                err = -errno;
                snprintf(why, why_size, "BPF_MAP_CREATE `%s`'s inner map template: %s", m.name, strerror(errno));
                return err;
            }
            inner_fd = (int)tfd;
            a.inner_map_fd = (uint32_t)inner_fd;
        }
        long fd = kl_bpf(KL_MAP_CREATE, &a, sizeof(a));
        if (fd < 0 && (a.btf_key_type_id || a.btf_value_type_id)) {
            /* Retry without BTF, as libbpf does. */
            a.btf_fd = a.btf_key_type_id = a.btf_value_type_id = 0;
            fd = kl_bpf(KL_MAP_CREATE, &a, sizeof(a));
        }
        if (fd < 0)
            err = -errno;
        if (inner_fd >= 0)
            close(inner_fd);
        if (fd < 0) {
            snprintf(why, why_size, "BPF_MAP_CREATE `%s`: %s", m.name, strerror(-err));
            return err;
        }
        l->map_fds[i] = (int)fd;
        if (m.initial_value) {
            uint32_t zero = 0;
            if ((err = kl_map_update((int)fd, &zero, m.initial_value)) != 0) {
                snprintf(why, why_size, "initial value of `%s`: %s", m.name, strerror(-err));
                return err;
            }
            /* .rodata and .kconfig (read-only to programs) are frozen, as
             * libbpf does: the verifier then knows their values. */
            if (m.map_flags & KL_F_RDONLY_PROG) {
                uint32_t freeze[1] = { (uint32_t)fd };
                if (kl_bpf(KL_MAP_FREEZE, freeze, sizeof(freeze)) < 0) {
                    err = -errno;
                    snprintf(why, why_size, "BPF_MAP_FREEZE `%s`: %s", m.name, strerror(errno));
                    return err;
                }
            }
        }
        if ((err = ksym_bpf_object_set_map_fd(obj, i, (int)fd)) != 0) {
            snprintf(why, why_size, "%s", ksym_last_error_message());
            return err;
        }
    }
    if ((err = kl_fill_slots(obj, l, KSYM_BPF_SLOT_MAP, why, why_size)) != 0)
        return err;
    if ((err = ksym_bpf_object_relocate(obj)) != 0) {
        snprintf(why, why_size, "%s", ksym_last_error_message());
        return err;
    }
    return 0;
}

static inline int kl_prepare(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct ksym_btf *btf,
                             struct kl_loaded *l, char *why, size_t why_size)
{
    return kl_prepare_opts(obj, cache, btf, l, why, why_size, NULL);
}

/*
 * Loads program `i` (after kl_prepare) with its type, expected attach
 * type and attach target as ksym_bpf_program_attach_info gives them (a
 * section libbpf does not know loads as a socket filter), its func_info
 * and line_info. Stores its fd (or -errno) in l->prog_fds[i] and returns
 * it; the verifier's verdict goes to `report` (may be NULL). A program
 * whose target did not resolve is not loaded when the kernel needs the
 * target to load it (KSYM_ATTACH_TARGET_AT_LOAD: its error is returned);
 * otherwise (a kprobe, a raw_tp) it loads, as with libbpf, and only
 * attaching it fails.
 */
/* kl_load_prog_btf's btf_obj_fd: the one attach info gives. */
#define KL_ATTACH_INFO_FD (-2)

/* kl_load_prog, loaded with attach_btf_obj_fd `btf_obj_fd` (0: vmlinux)
 * instead of attach info's unless KL_ATTACH_INFO_FD: a multi program
 * loads once per link, each with its BTF object (tools/bpf_multi.h). */
static inline int kl_load_prog_btf(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, FILE *report,
                                   int btf_obj_fd)
{
    static char log[1 << 16];
    struct ksym_bpf_program_info p = { .sz = sizeof(p) };
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    size_t cnt = 0, frs = 0, fcnt = 0, lrs = 0, lcnt = 0;
    struct kl_prog_load a;
    if (ksym_bpf_program_info(obj, i, &p) != 0)
        return l->prog_fds[i] = ksym_last_error();
    /* Written even when it returns the program's own error (at.error). */
    if (ksym_bpf_program_attach_info(obj, i, &at) != 0 && !at.error)
        return l->prog_fds[i] = ksym_last_error();
    if (at.error && (at.flags & KSYM_ATTACH_TARGET_AT_LOAD)) {
        if (report)
            fprintf(report, "  %-24s NOT LOADED: %s\n", p.name, at.error_message);
        return l->prog_fds[i] = at.error;
    }
    const struct ksym_bpf_insn *insns = ksym_bpf_program_insns(obj, i, &cnt);
    if (!insns)
        return l->prog_fds[i] = ksym_last_error();
    memset(&a, 0, sizeof(a));
    a.prog_type = at.prog_type ? at.prog_type : KL_PROG_SOCKET_FILTER;
    a.expected_attach_type = at.expected_attach_type;
    a.attach_btf_id = at.attach_btf_id;
    if (btf_obj_fd != KL_ATTACH_INFO_FD)
        at.attach_btf_obj_fd = btf_obj_fd;
    a.attach_prog_fd = at.attach_btf_obj_fd > 0 ? (uint32_t)at.attach_btf_obj_fd : 0;
    if (at.flags & KSYM_ATTACH_SLEEPABLE)
        a.prog_flags |= KL_F_SLEEPABLE;
    if (at.flags & KSYM_ATTACH_XDP_FRAGS)
        a.prog_flags |= KL_F_XDP_HAS_FRAGS;
    a.insns = kl_ptr(insns);
    a.insn_cnt = (uint32_t)cnt;
    size_t nfds = 0;
    const int *fds = ksym_bpf_program_fd_array(obj, i, &nfds);
    a.fd_array = kl_ptr(fds); /* module BTF fds of kfunc calls, NULL if none */
    a.license = kl_ptr(ksym_bpf_object_license(obj));
    kl_object_name(a.prog_name, p.name);
    uint32_t btf_feats = KSYM_BTF_FEAT_ALL;
    ksym_btf_probe_features(&btf_feats); /* cached: no syscall */
    if (l->btf_fd >= 0 && (btf_feats & KSYM_BTF_FEAT_FUNC)) {
        const void *fi = ksym_bpf_program_func_info(obj, i, &frs, &fcnt);
        const void *li = ksym_bpf_program_line_info(obj, i, &lrs, &lcnt);
        a.prog_btf_fd = (uint32_t)l->btf_fd;
        a.func_info = kl_ptr(fi);
        a.func_info_rec_size = (uint32_t)frs;
        a.func_info_cnt = (uint32_t)fcnt;
        a.line_info = kl_ptr(li);
        a.line_info_rec_size = (uint32_t)lrs;
        a.line_info_cnt = (uint32_t)lcnt;
    }
    /* No verifier log first, as libbpf: a big program's log overflows any
     * buffer (ENOSPC). The log only to say why, when asked. */
    long fd = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
    l->prog_fds[i] = fd < 0 ? -errno : (int)fd;
    log[0] = 0;
    if (fd < 0 && report) {
        a.log_buf = kl_ptr(log);
        a.log_size = sizeof(log);
        a.log_level = 1;
        long again = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
        if (again >= 0)
            close((int)again);
    }
    if (report) {
        if (fd >= 0)
            fprintf(report, "  %-24s loaded: %zu insns, %zu func_info, %zu line_info, verifier OK\n", p.name, cnt,
                    fcnt, lcnt);
        else
            fprintf(report, "  %-24s REJECTED: %s\n%s\n", p.name, strerror(-l->prog_fds[i]), log);
    }
    return l->prog_fds[i];
}

static inline int kl_load_prog(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, FILE *report)
{
    return kl_load_prog_btf(obj, l, i, report, KL_ATTACH_INFO_FD);
}

/*
 * Loads (kl_load_prog) every program whose autoload is on
 * (ksym_bpf_program_autoload: off for `?` sections and where the loader
 * turned it off), aliases included; the others keep -ENOENT in
 * l->prog_fds and are reported as skipped. Returns how many did not load.
 */
static inline size_t kl_load_autoload(struct ksym_bpf_object *obj, struct kl_loaded *l, FILE *report)
{
    size_t failed = 0;
    for (size_t i = 0; i < l->nprogs; i++) {
        if (!ksym_bpf_program_autoload(obj, i)) {
            struct ksym_bpf_program_info p = { .sz = sizeof(p) };
            if (report && ksym_bpf_program_info(obj, i, &p) == 0)
                fprintf(report, "  %-24s skipped: autoload is off\n", p.name);
            continue;
        }
        failed += kl_load_prog(obj, l, i, report) < 0;
    }
    return failed;
}

/*
 * Loads the object (kl_prepare, without kernel BTF) and every program
 * whose autoload is on, aliases included, with func_info and line_info.
 * Each program's verifier verdict goes to `report` (may be NULL). Returns
 * 0 when all of them loaded, 1 when some did not (see l->prog_fds), or
 * the negative code of the first step that failed (a message in `why`).
 */
static inline int kl_load(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct kl_loaded *l,
                          FILE *report, char *why, size_t why_size)
{
    int err = kl_prepare(obj, cache, NULL, l, why, why_size);
    if (err)
        return err;
    size_t failed = kl_load_autoload(obj, l, report);
    if ((err = kl_fill_slots(obj, l, KSYM_BPF_SLOT_PROGRAM, why, why_size)) != 0)
        return err;
    return failed ? 1 : 0;
}

/* The first number of a sysfs or tracefs file read with `fmt` (one
 * conversion); -1 if unreadable. */
static inline int kl_read_int(const char *path, const char *fmt)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, fmt, &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* The tracefs directory that has events/ (/sys/kernel/tracing, else
 * debugfs' tracing/), or NULL when neither is mounted. */
static inline const char *kl_tracefs(void)
{
    static const char *const roots[2] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
    char path[64];
    for (int r = 0; r < 2; r++) {
        snprintf(path, sizeof(path), "%s/events", roots[r]);
        if (access(path, F_OK) == 0)
            return roots[r];
    }
    return NULL;
}

/* A perf event of `type` and `config`s (config1, config2: a kprobe's
 * function name and offset) with BPF program `prog_fd` on it,
 * enabled: the attachment lives as long as the returned fd. -errno if not. */
static inline int kl_perf_attach(uint32_t type, uint64_t config, uint64_t config1, uint64_t config2, int prog_fd)
{
    struct kl_perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = type;
    a.size = sizeof(a);
    a.config = config;
    a.config1 = config1;
    a.config2 = config2;
    long fd = syscall(SYS_perf_event_open, &a, -1, 0, -1, KL_PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (ioctl((int)fd, KL_PERF_EVENT_IOC_SET_BPF, prog_fd) != 0 || ioctl((int)fd, KL_PERF_EVENT_IOC_ENABLE, 0) != 0) {
        int err = -errno;
        close((int)fd);
        return err;
    }
    return (int)fd;
}

/* A kprobe (a kretprobe when `ret`) on kernel function `func` at
 * `offset` through the kprobe PMU (/sys/bus/event_source/devices/kprobe,
 * Linux 4.17+), as libbpf's bpf_program__attach_kprobe; -errno if not. */
static inline int kl_attach_kprobe(const char *func, uint64_t offset, int ret, int prog_fd)
{
    int pmu = kl_read_int("/sys/bus/event_source/devices/kprobe/type", "%d");
    int bit = ret ? kl_read_int("/sys/bus/event_source/devices/kprobe/format/retprobe", "config:%d") : 0;
    if (pmu < 0 || bit < 0 || bit > 63)
        return -EOPNOTSUPP;
    return kl_perf_attach((uint32_t)pmu, ret ? 1ull << bit : 0, (uint64_t)(uintptr_t)func, offset, prog_fd);
}

/* Tracepoint `category/name` (its tracefs id); -errno if not. */
static inline int kl_attach_tracepoint(const char *category, const char *name, int prog_fd)
{
    const char *root = kl_tracefs();
    char path[512];
    if (!root)
        return -ENOENT;
    snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, category, name);
    int id = kl_read_int(path, "%d");
    if (id < 0)
        return -ENOENT;
    return kl_perf_attach(KL_PERF_TYPE_TRACEPOINT, (uint64_t)id, 0, 0, prog_fd);
}

/*
 * Attaches loaded program `i` where its attach info says: raw tracepoints
 * by name, BTF-attached programs (fentry, fexit, tp_btf, lsm...) to their
 * BTF target (BPF_RAW_TRACEPOINT_OPEN with no name, which every kernel
 * with BTF attach has; BPF_LINK_CREATE as a second try), kprobes and
 * kretprobes to their function by name and offset (the kprobe PMU),
 * tracepoints to their category and name (ksym_bpf_attach.tp_category and
 * target: tracefs' events/<category>/<name>/id, as libbpf attaches them;
 * tracefs must be mounted; -EINVAL for a section that names no category,
 * as libbpf). Stores the link (or perf event) fd in l->link_fds[i] and
 * returns it, or -errno (-EOPNOTSUPP for types this loader does not
 * attach).
 */
static inline int kl_attach(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i)
{
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    if (l->prog_fds[i] < 0)
        return -EBADF;
    if (ksym_bpf_program_attach_info(obj, i, &at) != 0)
        return ksym_last_error();
    long fd;
    if (at.prog_type == KL_PROG_KPROBE && at.target) {
        return l->link_fds[i] =
                   kl_attach_kprobe(at.target, at.target_offset, (at.flags & KSYM_ATTACH_RETPROBE) != 0, l->prog_fds[i]);
    } else if (at.prog_type == KL_PROG_TRACEPOINT) {
        if (!at.target)
            return l->link_fds[i] = -EOPNOTSUPP; /* `SEC("tracepoint")`: no target */
        if (!at.tp_category)
            return l->link_fds[i] = -EINVAL;
        return l->link_fds[i] = kl_attach_tracepoint(at.tp_category, at.target, l->prog_fds[i]);
    } else if (at.prog_type == KL_PROG_RAW_TRACEPOINT || at.prog_type == KL_PROG_RAW_TRACEPOINT_WRITABLE) {
        struct kl_raw_tp_open a;
        memset(&a, 0, sizeof(a));
        a.name = kl_ptr(at.target);
        a.prog_fd = (uint32_t)l->prog_fds[i];
        fd = kl_bpf(KL_RAW_TRACEPOINT_OPEN, &a, sizeof(a));
    } else if (at.prog_type == KL_PROG_TRACING || at.prog_type == KL_PROG_LSM || at.prog_type == KL_PROG_EXT) {
        struct kl_raw_tp_open a;
        memset(&a, 0, sizeof(a));
        a.prog_fd = (uint32_t)l->prog_fds[i];
        fd = kl_bpf(KL_RAW_TRACEPOINT_OPEN, &a, sizeof(a));
        if (fd < 0) {
            struct kl_link_create c;
            memset(&c, 0, sizeof(c));
            c.prog_fd = (uint32_t)l->prog_fds[i];
            c.attach_type = at.expected_attach_type;
            fd = kl_bpf(KL_LINK_CREATE, &c, sizeof(c));
        }
    } else {
        return l->link_fds[i] = -EOPNOTSUPP;
    }
    return l->link_fds[i] = fd < 0 ? -errno : (int)fd;
}

/*
 * Registers struct_ops map `i` (after kl_prepare with kernel BTF and
 * kl_load_prog of its programs): its value with each program's fd at the
 * offset its KSYM_BPF_SLOT_STRUCT_OPS slot gives, written at key 0 (and,
 * for a `.struct_ops.link` map, attached through BPF_LINK_CREATE), as
 * libbpf's bpf_map__attach_struct_ops does. kl_unload unregisters it.
 * Returns 0 or a negative code (a message in `why`).
 */
static inline int kl_attach_struct_ops(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, char *why,
                                       size_t why_size)
{
    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    if (ksym_bpf_map_info(obj, i, &m) != 0) {
        snprintf(why, why_size, "map %zu: %s", i, ksym_last_error_message());
        return ksym_last_error();
    }
    if (m.type != KL_MAP_STRUCT_OPS || !m.struct_ops_value) {
        snprintf(why, why_size, "map `%s`: %s", m.name,
                 m.type != KL_MAP_STRUCT_OPS ? "not a struct_ops map"
                                             : "its kernel value is unknown: call kl_prepare with kernel BTF");
        return -EINVAL;
    }
    if (l->map_fds[i] < 0) {
        snprintf(why, why_size, "struct_ops map `%s` was not created", m.name);
        return -EBADF;
    }
    unsigned char *value = malloc(m.struct_ops_value_size);
    if (!value) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    memcpy(value, m.struct_ops_value, m.struct_ops_value_size);
    int err = 0;
    for (size_t j = 0; j < m.slot_count && !err; j++) {
        struct ksym_bpf_map_slot s = { .sz = sizeof(s) };
        if (ksym_bpf_map_slot(obj, i, j, &s) != 0) {
            snprintf(why, why_size, "map `%s` slot %zu: %s", m.name, j, ksym_last_error_message());
            err = ksym_last_error();
        } else if (s.kind == KSYM_BPF_SLOT_STRUCT_OPS) {
            if (l->prog_fds[s.target] < 0) {
                struct ksym_bpf_program_info p = { .sz = sizeof(p) };
                ksym_bpf_program_info(obj, s.target, &p);
                snprintf(why, why_size, "struct_ops `%s`: program `%s` is not loaded", m.name, p.name);
                err = -EBADF;
            } else {
                uint64_t fd = (uint64_t)l->prog_fds[s.target];
                memcpy(value + s.index, &fd, sizeof(fd));
            }
        }
    }
    uint32_t zero = 0;
    if (!err && (err = kl_map_update(l->map_fds[i], &zero, value)) != 0)
        snprintf(why, why_size, "registering struct_ops `%s` (BPF_MAP_UPDATE_ELEM): %s", m.name, strerror(-err));
    free(value);
    if (err)
        return err;
    if (!(m.map_flags & KL_F_LINK)) {
        l->map_link_fds[i] = KL_REGISTERED;
        return 0;
    }
    struct kl_link_create c;
    memset(&c, 0, sizeof(c));
    c.prog_fd = (uint32_t)l->map_fds[i]; /* the map, for a struct_ops link */
    c.attach_type = KL_ATTACH_STRUCT_OPS;
    long fd = kl_bpf(KL_LINK_CREATE, &c, sizeof(c));
    if (fd < 0) {
        err = -errno;
        snprintf(why, why_size, "attaching struct_ops `%s` (BPF_LINK_CREATE): %s", m.name, strerror(errno));
        return err;
    }
    l->map_link_fds[i] = (int)fd;
    return 0;
}

/* Turns on the kernel's per-program run counters while the returned fd is
 * open (BPF_ENABLE_STATS); -errno if it cannot. */
static inline int kl_enable_stats(void)
{
    struct kl_enable_stats a = { 0 }; /* BPF_STATS_RUN_TIME */
    long fd = kl_bpf(KL_ENABLE_STATS, &a, sizeof(a));
    return fd < 0 ? -errno : (int)fd;
}

/* How many times the kernel ran a program (with stats enabled). */
static inline int kl_run_count(int prog_fd, uint64_t *cnt)
{
    struct kl_prog_info info;
    struct kl_obj_info a;
    memset(&info, 0, sizeof(info));
    memset(&a, 0, sizeof(a));
    a.bpf_fd = (uint32_t)prog_fd;
    a.info_len = sizeof(info);
    a.info = kl_ptr(&info);
    if (kl_bpf(KL_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0)
        return -errno;
    *cnt = info.run_cnt;
    return 0;
}

#endif
