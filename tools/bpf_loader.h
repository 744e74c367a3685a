/*
 * A minimal BPF loader on top of libksym, without libbpf: what a C loader
 * does with a struct ksym_bpf_object. Used by the `ksym obj --load` command
 * and by the kernel test (c-tests/test_bpf_kernel.c).
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
#include <sys/syscall.h>
#include <unistd.h>

enum {
    KL_MAP_CREATE = 0,
    KL_MAP_LOOKUP_ELEM = 1,
    KL_MAP_UPDATE_ELEM = 2,
    KL_PROG_LOAD = 5,
    KL_PROG_TEST_RUN = 10,
    KL_BTF_LOAD = 18,
};

/* BPF_PROG_TYPE_SOCKET_FILTER */
#define KL_PROG_SOCKET_FILTER 1

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
    int *prog_fds; /* -errno for a program that did not load */
};

static inline void kl_unload(struct kl_loaded *l)
{
    for (size_t i = 0; i < l->nmaps; i++)
        if (l->map_fds[i] >= 0)
            close(l->map_fds[i]);
    for (size_t i = 0; i < l->nprogs; i++)
        if (l->prog_fds[i] >= 0)
            close(l->prog_fds[i]);
    if (l->btf_fd >= 0)
        close(l->btf_fd);
    free(l->map_fds);
    free(l->prog_fds);
    memset(l, 0, sizeof(*l));
    l->btf_fd = -1;
}

/*
 * Loads the object's BTF, creates its maps (data sections get their
 * initial values), resolves its externs through `cache` (may be NULL),
 * relocates, and loads every program, aliases included, as socket filters
 * with their func_info and line_info. Each program's verifier verdict goes
 * to `report` (may be NULL). Returns 0 when everything loaded, 1 when some
 * program did not (see l->prog_fds), or the negative libksym/-errno code of
 * the first step that failed (a message in `why`).
 */
static inline int kl_load(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct kl_loaded *l,
                          FILE *report, char *why, size_t why_size)
{
    static char log[1 << 16];
    size_t btf_size = 0;
    const void *btf = ksym_bpf_object_btf(obj, &btf_size);
    int err = 0;

    if (why_size)
        why[0] = 0;
    memset(l, 0, sizeof(*l));
    l->btf_fd = -1;
    l->nmaps = ksym_bpf_object_map_count(obj);
    l->nprogs = ksym_bpf_object_program_count(obj);
    l->map_fds = calloc(l->nmaps ? l->nmaps : 1, sizeof(int));
    l->prog_fds = calloc(l->nprogs ? l->nprogs : 1, sizeof(int));
    if (!l->map_fds || !l->prog_fds) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < l->nmaps; i++)
        l->map_fds[i] = -1;
    for (size_t i = 0; i < l->nprogs; i++)
        l->prog_fds[i] = -1;

    if (btf) {
        struct kl_btf_load a;
        memset(&a, 0, sizeof(a));
        a.btf = kl_ptr(btf);
        a.btf_size = (uint32_t)btf_size;
        a.btf_log_buf = kl_ptr(log);
        a.btf_log_size = sizeof(log);
        a.btf_log_level = 1;
        log[0] = 0;
        long fd = kl_bpf(KL_BTF_LOAD, &a, sizeof(a));
        if (fd < 0) {
            err = -errno;
            snprintf(why, why_size, "BPF_BTF_LOAD: %s\n%s", strerror(errno), log);
            return err;
        }
        l->btf_fd = (int)fd;
    }
    for (size_t i = 0; i < l->nmaps; i++) {
        struct ksym_bpf_map_info m = { .sz = sizeof(m) };
        struct kl_map_create a;
        if (ksym_bpf_map_info(obj, i, &m) != 0) {
            snprintf(why, why_size, "map %zu: %s", i, ksym_last_error_message());
            return ksym_last_error();
        }
        memset(&a, 0, sizeof(a));
        a.map_type = m.type;
        a.key_size = m.key_size;
        a.value_size = m.value_size;
        a.max_entries = m.max_entries;
        a.map_flags = m.map_flags;
        /* The kernel allows [A-Za-z0-9_.] in map names. */
        for (size_t k = 0, j = 0; m.name[k] && j < sizeof(a.map_name) - 1; k++) {
            char c = m.name[k];
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')
                a.map_name[j++] = c;
        }
        long fd = kl_bpf(KL_MAP_CREATE, &a, sizeof(a));
        if (fd < 0) {
            err = -errno;
            snprintf(why, why_size, "BPF_MAP_CREATE `%s`: %s", m.name, strerror(errno));
            return err;
        }
        l->map_fds[i] = (int)fd;
        if (m.initial_value) {
            uint32_t zero = 0;
            if ((err = kl_map_update((int)fd, &zero, m.initial_value)) != 0) {
                snprintf(why, why_size, "initial value of `%s`: %s", m.name, strerror(-err));
                return err;
            }
        }
        if ((err = ksym_bpf_object_set_map_fd(obj, i, (int)fd)) != 0) {
            snprintf(why, why_size, "%s", ksym_last_error_message());
            return err;
        }
    }
    if ((err = ksym_bpf_object_resolve_ksyms(obj, cache)) != 0 || (err = ksym_bpf_object_relocate(obj)) != 0) {
        snprintf(why, why_size, "%s", ksym_last_error_message());
        return err;
    }
    int failed = 0;
    for (size_t i = 0; i < l->nprogs; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        size_t cnt = 0, frs = 0, fcnt = 0, lrs = 0, lcnt = 0;
        struct kl_prog_load a;
        ksym_bpf_program_info(obj, i, &p);
        const struct ksym_bpf_insn *insns = ksym_bpf_program_insns(obj, i, &cnt);
        memset(&a, 0, sizeof(a));
        a.prog_type = KL_PROG_SOCKET_FILTER;
        a.insns = kl_ptr(insns);
        a.insn_cnt = (uint32_t)cnt;
        a.license = kl_ptr(ksym_bpf_object_license(obj));
        a.log_buf = kl_ptr(log);
        a.log_size = sizeof(log);
        a.log_level = 1;
        snprintf(a.prog_name, sizeof(a.prog_name), "%s", p.name);
        if (btf) {
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
        log[0] = 0;
        long fd = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
        l->prog_fds[i] = fd < 0 ? -errno : (int)fd;
        if (fd < 0)
            failed = 1;
        if (report) {
            if (fd >= 0)
                fprintf(report, "  %-24s loaded: %zu insns, %zu func_info, %zu line_info, verifier OK\n", p.name,
                        cnt, fcnt, lcnt);
            else
                fprintf(report, "  %-24s REJECTED: %s\n%s\n", p.name, strerror(-l->prog_fds[i]), log);
        }
    }
    return failed ? 1 : 0;
}

#endif
