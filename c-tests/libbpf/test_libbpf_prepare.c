/*
 * libbpf 1.7 as the oracle of every program of the corpus, loaded by this
 * kernel or not (tests/data/bpf-selftests-6.1, and the c-tests/bpf
 * objects): libbpf opens each object with every program's autoload on
 * and runs bpf_object__prepare(), which resolves externs, CO-RE, .kconfig
 * and relocates, then creates the maps; libksym does the same (autoload
 * on, resolve_ksyms, resolve_btf, relocate with libbpf's map fds). Then:
 *   - every program's instructions are libbpf's (bpf_program__insns);
 *   - every map's creation parameters are libbpf's (type, key, value,
 *     max entries, flags, map_extra, numa node), and so is the initial
 *     value of every data section (.data, .rodata, .kconfig: every
 *     .kconfig value; .bss is zero);
 *   - each program's load attributes are what libbpf passes to
 *     BPF_PROG_LOAD: program type, expected attach type, attach BTF id and
 *     object, sleepable and XDP-frags flags, instruction count. libbpf
 *     resolves attach targets only when it loads, so bpf_object__load is
 *     run with syscall() wrapped (-Wl,--wrap=syscall): each BPF_PROG_LOAD
 *     of the object's programs is recorded and answered with a dup of a
 *     trivial program's fd instead of reaching the kernel, so that every
 *     program is seen, whether the kernel would take it or not. A program
 *     libbpf cannot load for want of a target (its load preparation
 *     fails) must be one libksym reports an error for, with
 *     KSYM_ATTACH_TARGET_AT_LOAD; libbpf is then run again without it.
 * Differences are printed (DIFF, MAP, ATTACH lines) and fail the test; the
 * counts are printed at the end (docs/bpf-objects.md reports them).
 */
#define _GNU_SOURCE
#include "../check.h"
#include "corpus.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../tools/bpf_loader.h"

static struct ksym_cache *cache;
static struct ksym_btf *kbtf;
static int verbose;

static size_t n_objects, n_programs, n_compared, n_identical, n_attach_same, n_no_target;
static size_t n_maps, n_maps_same, n_values, n_kconfig;
static size_t n_open_fail, n_prepare_fail, n_prepare_fail_progs, n_prepare_extern, n_not_loadable, n_aliases, n_usdt, n_info;

/* ---- BPF_PROG_LOAD as libbpf makes it ------------------------------- */

#define MAX_WATCH 512
struct seen_load {
    const void *insns; /* the program's bpf_program__insns(), to match */
    int got;
    uint32_t prog_type, expected_attach_type, attach_btf_id, attach_btf_obj_fd, prog_flags, insn_cnt;
};
static struct seen_load watch[MAX_WATCH];
static size_t n_watch;
static int capturing, fake_fd = -1;

long __real_syscall(long nr, ...);
long __wrap_syscall(long nr, ...);

long __wrap_syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long),
         e = va_arg(ap, long);
    va_end(ap);
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

/* ---- the comparisons ------------------------------------------------ */

static void compare_maps(const char *file, struct bpf_object *lb, struct ksym_bpf_object *o)
{
    size_t nm = ksym_bpf_object_map_count(o), nk = 0, kcfg_same = 1;
    size_t ne = ksym_bpf_object_extern_count(o);
    for (size_t i = 0; i < ne; i++) {
        struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
        if (ksym_bpf_extern_info(o, i, &e) == 0 && e.kind == KSYM_BPF_EXTERN_KCONFIG)
            nk++;
    }
    for (size_t m = 0; m < nm; m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_map_info(o, m, &mi) == 0);
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        n_maps++;
        if (!bm) {
            fprintf(stderr, "MAP %s `%s`: libbpf has no such map\n", file, mi.name);
            CHECK(0);
            continue;
        }
        /* A perf event array of 0 entries gets one per possible CPU when
         * created: libbpf has it in max_entries after prepare, libksym
         * leaves it to the loader (tools/bpf_loader.h does the same). So
         * are the sizes size_as_a_loader gave libbpf: libksym says 0, as
         * the object does. */
        uint32_t max = mi.max_entries, value = mi.value_size;
        if (mi.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && max == 0)
            max = (uint32_t)libbpf_num_possible_cpus();
        else if (max == 0 && mi.name[0] != '.')
            max = loader_max_entries(mi.type);
        if (mi.type == BPF_MAP_TYPE_STACK_TRACE && value == 0)
            value = 127 * sizeof(uint64_t);
        int same = mi.type == bpf_map__type(bm) && mi.key_size == bpf_map__key_size(bm) &&
                   value == bpf_map__value_size(bm) && max == bpf_map__max_entries(bm) &&
                   mi.map_flags == bpf_map__map_flags(bm) && mi.map_extra == bpf_map__map_extra(bm) &&
                   mi.numa_node == bpf_map__numa_node(bm);
        if (!same)
            fprintf(stderr,
                    "MAP %s `%s`: libksym type %u key %u value %u max %u flags %#x extra %llu numa %u, "
                    "libbpf %u %u %u %u %#x %llu %u\n",
                    file, mi.name, mi.type, mi.key_size, mi.value_size, mi.max_entries, mi.map_flags,
                    (unsigned long long)mi.map_extra, mi.numa_node, bpf_map__type(bm), bpf_map__key_size(bm),
                    bpf_map__value_size(bm), bpf_map__max_entries(bm), bpf_map__map_flags(bm),
                    (unsigned long long)bpf_map__map_extra(bm), bpf_map__numa_node(bm));
        /* A data section's initial value (libbpf's is its mmap'ed copy,
         * filled in by prepare for .kconfig). */
        size_t lsize = 0;
        const void *lval = NULL;
        int data = !strncmp(mi.name, ".data", 5) || !strncmp(mi.name, ".rodata", 7) || !strcmp(mi.name, ".kconfig") ||
                   !strncmp(mi.name, ".bss", 4);
        if (data && (lval = bpf_map__initial_value(bm, &lsize)) != NULL) {
            int vsame;
            if (mi.initial_value)
                vsame = lsize >= mi.initial_value_size && !memcmp(lval, mi.initial_value, mi.initial_value_size);
            else {
                /* .bss: zero. */
                vsame = 1;
                for (size_t k = 0; k < lsize; k++)
                    vsame &= ((const unsigned char *)lval)[k] == 0;
            }
            if (!vsame)
                fprintf(stderr, "MAP %s `%s`: initial value differs from libbpf's (%zu bytes)\n", file, mi.name,
                        mi.initial_value_size);
            same &= vsame;
            n_values += vsame;
            if (!strcmp(mi.name, ".kconfig"))
                kcfg_same = vsame;
        }
        CHECK(same);
        n_maps_same += same;
        CHECK(ksym_bpf_object_set_map_fd(o, m, bpf_map__fd(bm) >= 0 ? bpf_map__fd(bm) : 30000 + (int)m) == 0);
    }
    if (kcfg_same)
        n_kconfig += nk;
}

/* Program `p` of prepared `lb` against libksym's `idx`: instructions. */
static int compare_insns(const char *file, struct bpf_program *p, struct ksym_bpf_object *o, size_t idx)
{
    const struct bpf_insn *want = bpf_program__insns(p);
    size_t want_cnt = bpf_program__insn_cnt(p), cnt = 0;
    const struct ksym_bpf_insn *got = ksym_bpf_program_insns(o, idx, &cnt);
    if (got && cnt == want_cnt && !memcmp(got, want, cnt * sizeof(*got)))
        return 1;
    fprintf(stderr, "DIFF %s %s: %zu insns (libbpf %zu)%s%s\n", file, bpf_program__name(p), cnt, want_cnt,
            got ? "" : ": ", got ? "" : ksym_last_error_message());
    for (size_t i = 0, shown = 0; got && i < cnt && i < want_cnt && shown < 4; i++) {
        const unsigned char *a = (const void *)&got[i], *b = (const void *)&want[i];
        if (memcmp(a, b, 8)) {
            fprintf(stderr, "  insn %zu: libksym %02x %02x %02x%02x %02x%02x%02x%02x, libbpf %02x %02x %02x%02x "
                            "%02x%02x%02x%02x\n",
                    i, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], b[0], b[1], b[2], b[3], b[4], b[5], b[6],
                    b[7]);
            shown++;
        }
    }
    return 0;
}

/* What libbpf passed to BPF_PROG_LOAD for program `name` against
 * libksym's attach info: 1 the same, 2 the same but for the usdt attach
 * type (counted apart), 0 different. */
static int compare_load(const char *file, const char *name, const struct seen_load *w,
                        struct ksym_bpf_object *o, size_t idx)
{
    struct ksym_bpf_attach a = { .sz = sizeof(a) };
    int rc = ksym_bpf_program_attach_info(o, idx, &a);
    uint32_t flags = 0;
    if (a.flags & KSYM_ATTACH_SLEEPABLE)
        flags |= BPF_F_SLEEPABLE;
    if (a.flags & KSYM_ATTACH_XDP_FRAGS)
        flags |= BPF_F_XDP_HAS_FRAGS;
    size_t cnt = 0;
    ksym_bpf_program_insns(o, idx, &cnt);
    /* A section libbpf does not know: libbpf never gets to load it. */
    uint32_t pt = a.prog_type;
    /* A target needed only when attaching (raw_tp, kprobe) that this
     * kernel lacks: libksym says so, libbpf loads it all the same. */
    int info = rc != 0 && !(a.flags & KSYM_ATTACH_TARGET_AT_LOAD);
    /* libbpf 1.7 loads usdt programs as BPF_TRACE_UPROBE_MULTI where the
     * kernel has uprobe_multi links (a probe at load time); libksym gives
     * the section's attach type (0), which legacy uprobes take. */
    uint32_t eat = a.expected_attach_type;
    int usdt = w->expected_attach_type == BPF_TRACE_UPROBE_MULTI && eat == 0 && pt == BPF_PROG_TYPE_KPROBE;
    if (usdt)
        eat = BPF_TRACE_UPROBE_MULTI;
    int same = (rc == 0 || info) && w->prog_type == pt && w->expected_attach_type == eat &&
               w->attach_btf_id == a.attach_btf_id &&
               (w->attach_btf_obj_fd == 0) == (a.attach_btf_obj_fd == 0) && w->prog_flags == flags &&
               w->insn_cnt == cnt;
    if (!same)
        fprintf(stderr,
                "ATTACH %s %s: libbpf loads type %u attach %u btf id %u (obj fd %u) flags %#x, %u insns; "
                "libksym %u %u %u (%d) %#x, %zu (%d%s%s)\n",
                file, name, w->prog_type, w->expected_attach_type, w->attach_btf_id, w->attach_btf_obj_fd,
                w->prog_flags, w->insn_cnt, a.prog_type, a.expected_attach_type, a.attach_btf_id,
                a.attach_btf_obj_fd, flags, cnt, rc, rc ? ": " : "", rc ? ksym_last_error_message() : "");
    if (same && usdt)
        n_usdt++;
    else if (same && info)
        n_info++;
    return same ? (usdt ? 2 : 1) : 0;
}

static void check_object(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    n_objects++;
    struct bpf_object *lb0 = bpf_object__open_file(path, NULL);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    if (!lb0) {
        /* libbpf refuses it (the corpus has a few broken on purpose). */
        n_open_fail++;
        ksym_bpf_object_free(o);
        return;
    }
    size_t np = 0;
    struct bpf_program *p;
    bpf_object__for_each_program(p, lb0) np++;
    bpf_object__close(lb0);
    n_programs += np;
    if (!o) {
        fprintf(stderr, "OPEN %s: libbpf opens it, libksym: %s\n", file, ksym_last_error_message());
        CHECK(0);
        return;
    }
    int err;
    last_warn[0] = 0;
    struct bpf_object *lb = libbpf_prepared(path, NULL, 0, &err);
    if (!lb) {
        /* libbpf cannot prepare it here: nothing to compare but why. A
         * strong extern this kernel lacks (the selftests' test module's
         * kfuncs and ksyms, a CONFIG_ option) must fail libksym too; the
         * others are maps libbpf cannot create as declared (sized or
         * pinned by the test at run time). */
        n_prepare_fail++;
        n_prepare_fail_progs += np;
        if (strstr(last_warn, "extern")) {
            int kerr = ksym_bpf_object_resolve_ksyms(o, cache);
            if (!kerr)
                kerr = ksym_bpf_object_resolve_btf(o, kbtf);
            if (!kerr)
                fprintf(stderr, "DIFF %s: libbpf: %s", file, last_warn);
            CHECK(kerr != 0);
            n_prepare_extern += kerr != 0;
        } else if (verbose) {
            fprintf(stderr, "PREPARE %s: libbpf: %s (%s)", file, strerror(-err), last_warn);
        }
        ksym_bpf_object_free(o);
        return;
    }
    size_t nk = ksym_bpf_object_program_count(o);
    for (size_t i = 0; i < nk; i++)
        CHECK(ksym_bpf_program_set_autoload(o, i, true) == 0);
    int kerr = ksym_bpf_object_resolve_ksyms(o, cache);
    if (!kerr)
        kerr = ksym_bpf_object_resolve_btf(o, kbtf);
    if (kerr) {
        fprintf(stderr, "DIFF %s: libbpf prepares it, libksym: %s\n", file, ksym_last_error_message());
        CHECK(0);
    }
    compare_maps(file, lb, o);
    if (ksym_bpf_object_relocate(o) != 0) {
        fprintf(stderr, "DIFF %s: libbpf prepares it, libksym relocate: %s\n", file, ksym_last_error_message());
        CHECK(0);
    }
    /* Instructions, after prepare, of every program libbpf relocated
     * (all: autoload on; libbpf turns off struct_ops programs no map
     * uses, and so does nothing relocate them). */
    char **failed = calloc(np + 1, sizeof(char *));
    size_t n_failed = 0;
    bpf_object__for_each_program(p, lb)
    {
        size_t idx;
        const char *name = bpf_program__name(p);
        if (ksym_bpf_object_find_program(o, name, &idx) != 0) {
            fprintf(stderr, "DIFF %s %s: libksym has no such program\n", file, name);
            CHECK(0);
            continue;
        }
        if (!bpf_program__autoload(p)) {
            if (verbose)
                fprintf(stderr, "NOTE %s %s: libbpf turned its autoload off\n", file, name);
            continue;
        }
        struct ksym_bpf_program_info pi = { .sz = sizeof(pi) };
        if (ksym_bpf_program_info(o, idx, &pi) == 0 && pi.alias_of != idx) {
            /* Another symbol of the same code: libbpf relocates only the
             * first program at an offset (its relocations find one
             * program), so its copy of an alias is not relocated. */
            n_aliases++;
            continue;
        }
        n_compared++;
        int same = compare_insns(file, p, o, idx);
        CHECK(same);
        n_identical += same;
    }
    /* Load attributes: libbpf's load, each BPF_PROG_LOAD recorded. libbpf
     * stops at the first program it cannot load; that one is set aside
     * and the object prepared and loaded again, until every program was
     * seen. */
    char **done = calloc(np + 1, sizeof(char *));
    size_t n_done = 0;
    for (int pass = 0; pass < 64 && lb; pass++) {
        n_watch = 0;
        bpf_object__for_each_program(p, lb)
        {
            if (bpf_program__autoload(p) && n_watch < MAX_WATCH) {
                memset(&watch[n_watch], 0, sizeof(watch[0]));
                watch[n_watch++].insns = bpf_program__insns(p);
            }
        }
        capturing = 1;
        bpf_object__load(lb);
        capturing = 0;
        size_t w = 0;
        char *stuck = NULL;
        uint32_t stuck_type = 0;
        bpf_object__for_each_program(p, lb)
        {
            if (!bpf_program__autoload(p) || w >= n_watch)
                continue;
            const char *name = bpf_program__name(p);
            size_t idx, k;
            for (k = 0; k < n_done && strcmp(done[k], name); k++)
                ;
            struct ksym_bpf_program_info pi = { .sz = sizeof(pi) };
            if (watch[w].got && k == n_done && ksym_bpf_object_find_program(o, name, &idx) == 0 &&
                ksym_bpf_program_info(o, idx, &pi) == 0) {
                if (pi.alias_of == idx) {
                    int same = compare_load(file, name, &watch[w], o, idx);
                    CHECK(same != 0);
                    n_attach_same += same == 1;
                }
                done[n_done++] = strdup(name);
            } else if (!watch[w].got && !stuck) {
                stuck = strdup(name);
                stuck_type = bpf_program__type(p);
            }
            w++;
        }
        bpf_object__close(lb);
        lb = NULL;
        if (!stuck)
            break;
        size_t idx;
        struct ksym_bpf_attach a = { .sz = sizeof(a) };
        int rc = ksym_bpf_object_find_program(o, stuck, &idx) == 0 ? ksym_bpf_program_attach_info(o, idx, &a) : 0;
        if (stuck_type == BPF_PROG_TYPE_STRUCT_OPS || stuck_type == BPF_PROG_TYPE_UNSPEC ||
            stuck_type == BPF_PROG_TYPE_EXT) {
            /* libbpf refuses to load a struct_ops program no map uses, a
             * program of a section it does not know, and a freplace one
             * whose target program the loader did not give (an fd):
             * none is a kernel target. */
            n_not_loadable++;
            if (verbose)
                fprintf(stderr, "NOTE %s %s: libbpf does not load it (type %u)\n", file, stuck, stuck_type);
        } else {
            /* No attach target here: libksym must say so, as a target
             * needed at load. */
            if (rc == 0 || !(a.flags & KSYM_ATTACH_TARGET_AT_LOAD))
                fprintf(stderr, "ATTACH %s %s: libbpf cannot load it, libksym: %d\n", file, stuck, rc);
            CHECK(rc != 0 && (a.flags & KSYM_ATTACH_TARGET_AT_LOAD));
            n_no_target += rc != 0;
        }
        failed[n_failed++] = stuck;
        lb = libbpf_prepared(path, failed, n_failed, &err);
    }
    for (size_t k = 0; k < n_done; k++)
        free(done[k]);
    free(done);
    if (lb)
        bpf_object__close(lb);
    for (size_t k = 0; k < n_failed; k++)
        free(failed[k]);
    free(failed);
    ksym_bpf_object_free(o);
}

static void check_dir(const char *dir)
{
    CHECK(corpus_each(dir, check_object) > 0);
}

int main(int argc, char **argv)
{
    const char *data = getenv("KSYM_TESTDATA");
    char dir[512];
    verbose = getenv("KSYM_CORPUS_VERBOSE") != NULL;
    if (argc > 1)
        snprintf(dir, sizeof(dir), "%s", argv[1]);
    else if (data)
        snprintf(dir, sizeof(dir), "%s/bpf-selftests-6.1", data);
    else {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no corpus");
        return finish("test_libbpf_prepare");
    }
    libbpf_set_print(quiet);
    if (kl_bpf_available() != 0) {
        KERNEL_SKIP("bpf() is not available: libbpf cannot prepare the corpus (it creates the maps)");
        return finish("test_libbpf_prepare");
    }
    kbtf = ksym_btf_open(NULL);
    cache = ksym_cache_new(NULL);
    if (!kbtf || !cache) {
        KERNEL_SKIP("no kernel BTF or kallsyms: %s", ksym_last_error_message());
        return finish("test_libbpf_prepare");
    }
    /* The fd every recorded load gets: a trivial socket filter's. */
    struct bpf_insn ret0[2];
    memset(ret0, 0, sizeof(ret0));
    ret0[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
    ret0[1].code = BPF_JMP | BPF_EXIT;
    fake_fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "fake", "GPL", ret0, 2, NULL);
    CHECK(fake_fd >= 0);
    check_dir(dir);
    size_t corpus_programs = n_programs;
    check_dir(getenv("KSYM_BPF_OBJECTS") ? getenv("KSYM_BPF_OBJECTS") : "c-tests/bpf");
    /* Real tools' objects (tests/data/libbpf-tools-0.26: Debian's
     * libbpf-tools, cut out of its binaries): every one libbpf opens,
     * prepared once its maps are sized as the tools size them, and every
     * program identical. */
    if (data && argc <= 1) {
        size_t o0 = n_objects, f0 = n_open_fail + n_prepare_fail, p0 = n_programs, c0 = n_compared,
               i0 = n_identical, a0 = n_attach_same, t0 = n_no_target, m0 = n_maps, s0 = n_maps_same;
        snprintf(dir, sizeof(dir), "%s/libbpf-tools-0.26", data);
        check_dir(dir);
        printf("  libbpf-tools 0.26: %zu objects (libbpf opens and prepares all but %zu), %zu programs: %zu compared "
               "after prepare, %zu identical; %zu load with libbpf's attach attributes, %zu lack a target here in "
               "both; %zu of %zu maps with libbpf's parameters\n",
               n_objects - o0, n_open_fail + n_prepare_fail - f0, n_programs - p0, n_compared - c0,
               n_identical - i0, n_attach_same - a0, n_no_target - t0, n_maps_same - s0, n_maps - m0);
        CHECK(n_objects - o0 >= 50 && n_open_fail + n_prepare_fail == f0);
        CHECK(n_compared - c0 == n_programs - p0 && n_identical - i0 == n_compared - c0);
    }
    printf("  libbpf %s prepare: %zu objects (libbpf opens all but %zu, prepares all but %zu: %zu programs; %zu "
           "of them for an extern this kernel lacks, which libksym refuses too, the others for maps libbpf "
           "cannot create as declared), %zu programs (%zu of the corpus): %zu compared after prepare, %zu identical in libksym; %zu load "
           "with libbpf's attach type, BTF id and flags, %zu lack a target here in both, %zu libbpf does not "
           "load (struct_ops no map uses, freplace without a target program, unknown sections), %zu usdt programs "
           "libbpf loads as uprobe_multi; %zu aliases (not relocated by libbpf); libksym also reports %zu "
           "missing targets needed only to attach; %zu maps with libbpf's parameters (%zu initial "
           "values, %zu .kconfig values)\n",
           libbpf_version_string(), n_objects, n_open_fail, n_prepare_fail, n_prepare_fail_progs, n_prepare_extern,
           n_programs,
           corpus_programs, n_compared, n_identical, n_attach_same, n_no_target, n_not_loadable, n_usdt, n_aliases,
           n_info, n_maps_same, n_values, n_kconfig);
    CHECK(n_compared > 800 && n_identical == n_compared);
    CHECK(n_maps > 0 && n_maps_same == n_maps && n_kconfig > 0);
    CHECK(n_attach_same + n_no_target + n_not_loadable + n_usdt == n_compared);
    close(fake_fd);
    ksym_cache_free(cache);
    ksym_btf_free(kbtf);
    return finish("test_libbpf_prepare");
}
