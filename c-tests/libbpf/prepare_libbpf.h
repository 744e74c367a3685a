/*
 * libbpf's side of test_libbpf_prepare.c: the kernel's BTF features,
 * probed or played (KSYM_BTF_FEATURES), every BPF_PROG_LOAD libbpf makes
 * recorded through the wrapped syscall() (-Wl,--wrap=syscall), and an
 * object prepared by libbpf as a loader prepares it.
 */
#ifndef KSYM_CTEST_PREPARE_LIBBPF_H
#define KSYM_CTEST_PREPARE_LIBBPF_H

#include "../check.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

static int verbose;

/* ---- the kernel's BTF features: probed, or played ----------------- */

static const struct {
    const char *name;
    uint32_t bit;
} feature_names[] = {
    { "btf", KSYM_BTF_FEAT_BTF },
    { "func", KSYM_BTF_FEAT_FUNC },
    { "global_func", KSYM_BTF_FEAT_GLOBAL_FUNC },
    { "datasec", KSYM_BTF_FEAT_DATASEC },
    { "float", KSYM_BTF_FEAT_FLOAT },
    { "decl_tag", KSYM_BTF_FEAT_DECL_TAG },
    { "type_tag", KSYM_BTF_FEAT_TYPE_TAG },
    { "enum64", KSYM_BTF_FEAT_ENUM64 },
    { "qmark_datasec", KSYM_BTF_FEAT_QMARK_DATASEC },
};
#define N_FEATURES (sizeof(feature_names) / sizeof(feature_names[0]))

/* The BTF features libksym is given; played (not the kernel's) when
 * KSYM_BTF_FEATURES is set. */
static uint32_t btf_feats;
static int btf_played;

/* "name,name": the bits; -1 for an unknown name. */
static long parse_features(const char *list)
{
    long bits = 0;
    while (*list) {
        size_t n = strcspn(list, ","), k;
        for (k = 0; k < N_FEATURES; k++)
            if (strlen(feature_names[k].name) == n && !strncmp(feature_names[k].name, list, n))
                break;
        if (n && k == N_FEATURES)
            return -1;
        if (n)
            bits |= feature_names[k].bit;
        list += n + (list[n] == ',');
    }
    return bits;
}

static const char *feature_text(uint32_t bits)
{
    static char out[160];
    out[0] = 0;
    for (size_t k = 0; k < N_FEATURES; k++)
        if (bits & feature_names[k].bit)
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? "," : "",
                     feature_names[k].name);
    return out[0] ? out : "none";
}

/* Whether a kernel of the played features takes this BTF: what its BTF
 * checker refuses, kind by kind (no FUNC: FUNC and FUNC_PROTO; no global
 * FUNC: a FUNC not static; no DATASEC: VAR and DATASEC; no ENUM64: ENUM64
 * and a signed ENUM; FLOAT, DECL_TAG, TYPE_TAG; a DATASEC named "?..."). */
static int played_kernel_takes(const void *data, uint32_t size)
{
    if (!(btf_feats & KSYM_BTF_FEAT_BTF))
        return 0;
    struct btf *b = btf__new(data, size);
    if (!b)
        return 0;
    int ok = 1;
    for (uint32_t id = 1; ok && id < btf__type_cnt(b); id++) {
        const struct btf_type *t = btf__type_by_id(b, id);
        uint32_t need = 0;
        switch (btf_kind(t)) {
        case BTF_KIND_FUNC:
            need = KSYM_BTF_FEAT_FUNC | (btf_vlen(t) ? KSYM_BTF_FEAT_GLOBAL_FUNC : 0);
            break;
        case BTF_KIND_FUNC_PROTO: need = KSYM_BTF_FEAT_FUNC; break;
        case BTF_KIND_VAR: need = KSYM_BTF_FEAT_DATASEC; break;
        case BTF_KIND_DATASEC:
            need = KSYM_BTF_FEAT_DATASEC |
                   (btf__name_by_offset(b, t->name_off)[0] == '?' ? KSYM_BTF_FEAT_QMARK_DATASEC : 0);
            break;
        case BTF_KIND_FLOAT: need = KSYM_BTF_FEAT_FLOAT; break;
        case BTF_KIND_DECL_TAG: need = KSYM_BTF_FEAT_DECL_TAG; break;
        case BTF_KIND_TYPE_TAG: need = KSYM_BTF_FEAT_TYPE_TAG; break;
        case BTF_KIND_ENUM64: need = KSYM_BTF_FEAT_ENUM64; break;
        case BTF_KIND_ENUM: need = btf_kflag(t) ? KSYM_BTF_FEAT_ENUM64 : 0; break;
        default: break;
        }
        ok = (btf_feats & need) == need;
    }
    btf__free(b);
    return ok;
}

/* ---- BPF_PROG_LOAD as libbpf makes it ------------------------------- */

#define MAX_WATCH 512
struct seen_load {
    const void *insns; /* the program's bpf_program__insns(), to match */
    int got;
    uint32_t prog_type, expected_attach_type, attach_btf_id, attach_btf_obj_fd, prog_flags, insn_cnt;
    uint32_t attach_btf_obj_id; /* the kernel's id of the BTF object behind attach_btf_obj_fd */
};
static struct seen_load watch[MAX_WATCH];
static size_t n_watch;
static int capturing, fake_fd = -1;

long __real_syscall(long nr, ...);
long __wrap_syscall(long nr, ...);

/* The kernel's id of BTF object `fd` (0 for none: vmlinux); UINT32_MAX
 * when `fd` is no BTF object (or -1: libksym knows no fd for it). libbpf
 * closes a
 * module's BTF fd after its load, so its id is read when the load is
 * seen. */
static uint32_t btf_obj_id(int fd)
{
    struct bpf_btf_info info;
    uint32_t len = sizeof(info);
    if (fd == 0)
        return 0;
    memset(&info, 0, sizeof(info));
    if (fd < 0)
        return UINT32_MAX;
    return bpf_btf_get_info_by_fd(fd, &info, &len) == 0 ? info.id : UINT32_MAX;
}

long __wrap_syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long),
         e = va_arg(ap, long);
    va_end(ap);
    if (btf_played && nr == __NR_bpf && a == BPF_BTF_LOAD) {
        const union bpf_attr *attr = (const void *)b;
        if (!played_kernel_takes((const void *)(uintptr_t)attr->btf, attr->btf_size)) {
            errno = EINVAL;
            return -1;
        }
    }
    if (capturing && nr == __NR_bpf && a == BPF_PROG_LOAD) {
        const union bpf_attr *attr = (const void *)b;
        for (size_t i = 0; i < n_watch; i++) {
            if ((uintptr_t)watch[i].insns != (uintptr_t)attr->insns)
                continue;
            watch[i].got = 1;
            watch[i].prog_type = attr->prog_type;
            watch[i].expected_attach_type = attr->expected_attach_type;
            watch[i].attach_btf_id = attr->attach_btf_id;
            watch[i].attach_btf_obj_fd = attr->attach_btf_obj_fd;
            /* freplace's attach_prog_fd shares the field: a program's fd. */
            watch[i].attach_btf_obj_id =
                attr->prog_type == BPF_PROG_TYPE_EXT ? UINT32_MAX - 1 : btf_obj_id((int)attr->attach_btf_obj_fd);
            watch[i].prog_flags = attr->prog_flags;
            watch[i].insn_cnt = attr->insn_cnt;
            return dup(fake_fd);
        }
    }
    return __real_syscall(nr, a, b, c, d, e);
}

/* libbpf's last warning: why prepare failed. */
static char last_warn[512];

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    if (level == LIBBPF_WARN) {
        va_list copy;
        va_copy(copy, ap);
        vsnprintf(last_warn, sizeof(last_warn), fmt, copy);
        va_end(copy);
    }
    if (verbose && level != LIBBPF_DEBUG)
        return vfprintf(stderr, fmt, ap);
    return 0;
}

/* The maps the loader sizes at run time, as real tools do before their
 * load: a map declared with max_entries 0 (other than a perf event
 * array, which gets one entry per CPU) gets 10240 entries (a ring buffer
 * 256 KiB), a stack trace map with a value size of 0 gets 127 frames
 * (bcc's libbpf-tools: bpf_map__set_max_entries(obj->maps.start,
 * pid_max), bpf_map__set_value_size(obj->maps.stackmap,
 * perf_max_stack_depth * sizeof(unsigned long)), ...). libbpf cannot
 * create them otherwise; libksym leaves sizing to the loader and reports
 * what the object declares (compare_maps checks that). */
/* The max_entries a loader gives a map declared with none, or 0 where
 * none is given: a perf event array (libbpf gives it one entry per CPU)
 * and the storage maps, whose max_entries must be 0. */
static uint32_t loader_max_entries(uint32_t type)
{
    switch (type) {
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
    case BPF_MAP_TYPE_CGROUP_STORAGE:
    case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
    case BPF_MAP_TYPE_SK_STORAGE:
    case BPF_MAP_TYPE_INODE_STORAGE:
    case BPF_MAP_TYPE_TASK_STORAGE:
    case BPF_MAP_TYPE_CGRP_STORAGE:
        return 0;
    case BPF_MAP_TYPE_RINGBUF:
    case BPF_MAP_TYPE_USER_RINGBUF:
        return 256 * 1024;
    default:
        return 10240;
    }
}

static void size_as_a_loader(struct bpf_object *lb)
{
    struct bpf_map *m;
    bpf_object__for_each_map(m, lb)
    {
        enum bpf_map_type t = bpf_map__type(m);
        if (bpf_map__max_entries(m) == 0 && !bpf_map__is_internal(m) && loader_max_entries(t))
            bpf_map__set_max_entries(m, loader_max_entries(t));
        if (t == BPF_MAP_TYPE_STACK_TRACE && bpf_map__value_size(m) == 0)
            bpf_map__set_value_size(m, 127 * sizeof(uint64_t));
    }
}

/* libbpf's object for `path`, every program autoloaded except those in
 * `off` (names, NULL-terminated list of `n_off`), its maps sized as a
 * loader would, prepared; NULL when open or prepare fails (`*err`
 * says). */
static struct bpf_object *libbpf_prepared(const char *path, char **off, size_t n_off, int *err)
{
    struct bpf_object *lb = bpf_object__open_file(path, NULL);
    *err = 0;
    if (!lb) {
        *err = -errno;
        return NULL;
    }
    size_as_a_loader(lb);
    struct bpf_program *p;
    bpf_object__for_each_program(p, lb)
    {
        int on = 1;
        for (size_t k = 0; k < n_off; k++)
            on &= strcmp(off[k], bpf_program__name(p)) != 0;
        bpf_program__set_autoload(p, on);
    }
    if ((*err = bpf_object__prepare(lb)) != 0) {
        bpf_object__close(lb);
        return NULL;
    }
    return lb;
}

#endif
