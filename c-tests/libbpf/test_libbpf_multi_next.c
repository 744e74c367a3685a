/*
 * Multi links (Linux 7.3's tracing_multi) with libbpf's newest source
 * (build/libbpf-next, linked statically) and the running kernel as the
 * oracles of libksym, on every kernel of the matrix and this machine's;
 * the kernel table's row (tests/kernels.txt: tracing_multi) says which
 * behaviour the kernel must show. syscall() is wrapped
 * (-Wl,--wrap=syscall) to see what libbpf asks the kernel and what the
 * kernel answers.
 *
 * - Every program of c-tests/bpf/multi.bpf.o that libbpf loads with a
 *   multi attach type is loaded alone by libbpf: where the kernel answers
 *   (libbpf got as far as BPF_PROG_LOAD), ksym_bpf_program_way is
 *   KSYM_WAY_MULTI if the kernel loaded it and KSYM_ERR_UNSUPPORTED if it
 *   refused it. Each errno is printed.
 * - With multi links: libbpf's bpf_program__attach_tracing_multi(prog,
 *   glob) fails for `vfs_*` (fentry.multi) and `tcp_*` (fexit.multi): its
 *   glob takes every BTF function and the kernel refuses the whole link
 *   with ENOENT (docs/btf-and-attach.md), the BTF ids it gave the kernel
 *   recorded. libksym's list of the same pattern attaches
 *   (kl_multi_attach), nothing refused, and the kernel's account of each
 *   link (bpf_link_info: type tracing_multi, attach type, count) is
 *   libksym's. libksym's vmlinux ids are a subset of libbpf's, and each
 *   id libbpf has and libksym lacks is a function that tracefs'
 *   available_filter_functions lacks or that the trampoline refuses, and
 *   in either case one the kernel refuses in a link of its own; the
 *   counts and names are printed.
 * - With multi links and the 9p module (the guests' root): a
 *   `fentry.multi/9p:v9fs_*` program needs the module's BTF object at
 *   load (libksym: KSYM_ATTACH_TARGET_AT_LOAD): loaded with vmlinux's,
 *   the kernel refuses a link of 9p's ids; loaded with 9p's, it takes it.
 * - Without multi links: libksym's own load of the program fails with
 *   the errno the kernel gave libbpf, and ksym_bpf_program_way said
 *   KSYM_ERR_UNSUPPORTED above (the documented fallback: aliases).
 */
#define _GNU_SOURCE
#include "../check.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../tools/bpf_multi.h"

static char objpath[512];
static int multi; /* the kernel table's tracing_multi (probed where no row) */

/* ---- what libbpf asks the kernel ------------------------------------ */

static int is_multi(uint32_t attach_type)
{
    return attach_type == BPF_TRACE_FENTRY_MULTI || attach_type == BPF_TRACE_FEXIT_MULTI ||
           attach_type == BPF_TRACE_FSESSION_MULTI;
}

/* While `watching`: libbpf's first BPF_PROG_LOAD of a multi program
 * (errno 0: it loaded) and its last tracing_multi BPF_LINK_CREATE (ids
 * and errno). */
static struct {
    int watching;
    int loads, load_errno;
    int links, link_errno;
    uint32_t *ids;
    size_t cnt;
} seen;

long __real_syscall(long nr, ...);
long __wrap_syscall(long nr, ...);

long __wrap_syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long),
         e = va_arg(ap, long);
    va_end(ap);
    long r = __real_syscall(nr, a, b, c, d, e);
    int saved = errno;
    const union bpf_attr *attr = (const void *)b;
    if (seen.watching && nr == __NR_bpf && a == BPF_PROG_LOAD && is_multi(attr->expected_attach_type) &&
        seen.loads++ == 0)
        seen.load_errno = r < 0 ? saved : 0;
    if (seen.watching && nr == __NR_bpf && a == BPF_LINK_CREATE && is_multi(attr->link_create.attach_type)) {
        size_t n = attr->link_create.tracing_multi.cnt;
        free(seen.ids);
        seen.ids = malloc((n ? n : 1) * sizeof(uint32_t));
        seen.cnt = seen.ids ? n : 0;
        if (seen.ids)
            memcpy(seen.ids, (const void *)(uintptr_t)attr->link_create.tracing_multi.ids, n * sizeof(uint32_t));
        seen.links++;
        seen.link_errno = r < 0 ? saved : 0;
    }
    errno = saved;
    return r;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level, (void)fmt, (void)ap;
    return 0;
}

/* libbpf's object with only program `name` to load, loaded; its load's
 * result in *err (0, or libbpf's -errno). */
static struct bpf_object *libbpf_load_one(const char *name, struct bpf_program **prog, int *err)
{
    struct bpf_object *lb = bpf_object__open_file(objpath, NULL);
    struct bpf_program *p;
    CHECK(lb != NULL);
    if (!lb)
        return NULL;
    bpf_object__for_each_program(p, lb) bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
    *prog = bpf_object__find_program_by_name(lb, name);
    CHECK(*prog != NULL);
    seen.watching = 1;
    seen.loads = 0;
    *err = bpf_object__load(lb);
    seen.watching = 0;
    return lb;
}

static struct ksym_bpf_object *ksym_open_one(const char *name, size_t *i)
{
    struct ksym_bpf_object *o = ksym_bpf_object_open(objpath);
    CHECK(o != NULL);
    if (!o)
        return NULL;
    CHECK(ksym_bpf_object_find_program(o, name, i) == 0);
    for (size_t k = 0; k < ksym_bpf_object_program_count(o); k++)
        ksym_bpf_program_set_autoload(o, k, k == *i);
    return o;
}

/* ---- every multi program: libbpf's load and libksym's way ------------ */

static const char *way_name(int way)
{
    return way == KSYM_WAY_MULTI      ? "multi"
           : way == KSYM_WAY_ALIASES  ? "aliases"
           : way == KSYM_ERR_UNSUPPORTED ? "unsupported"
                                         : "an error";
}

/* The errno the kernel gave libbpf's load of `on_entry` (0: loaded). */
static int on_entry_errno = -1;

static void ways(struct ksym_btf *btf)
{
    struct bpf_object *all = bpf_object__open_file(objpath, NULL);
    struct bpf_program *p;
    size_t nmulti = 0, answered = 0;
    CHECK(all != NULL);
    if (!all)
        return;
    bpf_object__for_each_program(p, all)
    {
        const char *name = bpf_program__name(p);
        if (!is_multi(bpf_program__expected_attach_type(p)))
            continue;
        nmulti++;
        struct bpf_program *q;
        int err;
        struct bpf_object *lb = libbpf_load_one(name, &q, &err);
        size_t i;
        struct ksym_bpf_object *o = ksym_open_one(name, &i);
        int way = o ? ksym_bpf_program_way(o, i, btf) : 0;
        if (seen.loads == 0) {
            /* libbpf refused it before the kernel (a module's section
             * whose module has no BTF here): nothing the kernel said. */
            printf("  %-13s %-20s libbpf refuses it before loading (%s); libksym's way: %s\n", name,
                   bpf_program__section_name(p), strerror(-err), way_name(way));
        } else {
            answered++;
            CHECK((seen.load_errno == 0) == (err == 0));
            CHECK(way == (seen.load_errno == 0 ? KSYM_WAY_MULTI : KSYM_ERR_UNSUPPORTED));
            if (way == KSYM_ERR_UNSUPPORTED)
                CHECK_MSG("no tracing_multi link");
            if (multi == 0)
                CHECK(seen.load_errno != 0);
            if (!strcmp(name, "on_entry"))
                on_entry_errno = seen.load_errno;
            printf("  %-13s %-20s the kernel's answer to libbpf's load: %s; libksym's way: %s\n", name,
                   bpf_program__section_name(p), seen.load_errno ? strerror(seen.load_errno) : "loaded",
                   way_name(way));
        }
        ksym_bpf_object_free(o);
        bpf_object__close(lb);
    }
    bpf_object__close(all);
    /* Every multi section of multi.bpf.o (libksym's tests/multi.rs lists
     * the same 8); the kernel saw all but a module's without BTF. */
    CHECK(nmulti == 8 && answered >= 7);
    CHECK(multi != 1 || on_entry_errno == 0);
}

/* ---- with multi links: libbpf's glob against libksym's list ------------ */

/* tracefs' filter list, vmlinux's names (lines without a module), sorted;
 * 0 when it cannot be read. */
static char **filter;
static size_t nfilter;

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int read_filter(void)
{
    FILE *f = fopen("/sys/kernel/tracing/available_filter_functions", "r");
    char line[512], name[256];
    size_t cap = 0;
    if (!f)
        f = fopen("/sys/kernel/debug/tracing/available_filter_functions", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%255s", name) != 1 || strchr(line, '['))
            continue;
        if (nfilter == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            filter = realloc(filter, cap * sizeof(*filter));
        }
        filter[nfilter++] = strdup(name);
    }
    fclose(f);
    qsort(filter, nfilter, sizeof(*filter), by_str);
    return nfilter > 0;
}

static int in_filter(const char *name)
{
    return bsearch(&name, filter, nfilter, sizeof(*filter), by_str) != NULL;
}

static void glob_against_list(struct ksym_btf *btf, struct btf *vmlinux, const char *prog, const char *pattern)
{
    struct bpf_program *p;
    int err;
    struct bpf_object *lb = libbpf_load_one(prog, &p, &err);
    CHECK(lb && err == 0);
    if (!lb || err)
        return;
    uint32_t attach_type = bpf_program__expected_attach_type(p);
    seen.watching = 1;
    seen.links = 0;
    struct bpf_link *link = bpf_program__attach_tracing_multi(p, pattern, NULL);
    int lerr = link ? 0 : errno;
    seen.watching = 0;
    /* libbpf's glob fails the whole link, with the documented ENOENT, the
     * kernel's answer to the one BPF_LINK_CREATE libbpf made. */
    CHECK(link == NULL && lerr == ENOENT && seen.links == 1 && seen.link_errno == lerr);
    bpf_link__destroy(link);
    size_t nlib = seen.cnt;
    uint32_t *lib = seen.ids;
    seen.ids = NULL;
    seen.cnt = 0;
    if (lib)
        qsort(lib, nlib, sizeof(*lib), by_u32);
    unsigned char *ours = calloc(nlib ? nlib : 1, 1); /* libbpf's ids libksym lists too */

    size_t i, listed = 0, vmlinux_listed = 0, foreign = 0;
    struct kl_loaded l;
    struct kl_multi m;
    char why[4096];
    memset(&l, 0, sizeof(l));
    memset(&m, 0, sizeof(m));
    l.btf_fd = -1;
    struct ksym_bpf_object *o = ksym_open_one(prog, &i);
    int n = o ? ksym_bpf_program_multi_attach(o, i, pattern, btf) : -1;
    CHECK(n >= 1);
    if (n < 1 || !ours)
        goto out;
    CHECK(kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0);
    err = kl_multi_attach(o, &l, i, (size_t)n, &m, NULL, why, sizeof(why));
    if (err)
        fprintf(stderr, "%s over %s: %s\n", prog, pattern, why);
    /* libksym's list attaches whole: one link per BTF object. */
    CHECK(err == 0 && m.refused == 0 && m.nfds == (size_t)n);
    for (size_t k = 0; k < (size_t)n && k < m.nfds; k++) {
        struct ksym_bpf_multi_link ml = { .sz = sizeof(ml) };
        struct kl_link_info_multi info;
        CHECK(ksym_bpf_program_multi_link(o, i, k, &ml) == 0);
        CHECK(kl_multi_link_info(m.link_fds[k], &info) == 0);
        CHECK(info.type == BPF_LINK_TYPE_TRACING_MULTI && info.attach_type == attach_type);
        CHECK(info.count == ml.count);
        listed += ml.count;
        if (strcmp(ml.module, "vmlinux"))
            continue; /* libbpf's glob without `module:` is vmlinux's */
        vmlinux_listed += ml.count;
        for (size_t j = 0; j < ml.count; j++) {
            uint32_t *hit = lib ? bsearch(&ml.btf_ids[j], lib, nlib, sizeof(*lib), by_u32) : NULL;
            if (hit)
                ours[hit - lib] = 1;
            else
                foreign++;
        }
    }
    CHECK(m.functions == listed);
    CHECK(foreign == 0); /* libksym's ids are a subset of libbpf's */
    /* Each id libbpf has and libksym lacks: a function the filter list
     * lacks, or one the trampoline refuses; and either way the kernel
     * refuses a link of it alone. */
    size_t lacked = 0, unlisted = 0, refused = 0, unexplained = 0, taken = 0;
    int fd = bpf_program__fd(p), first_errno = 0;
    char names[512] = "";
    for (size_t k = 0; k < nlib; k++) {
        if (ours[k])
            continue;
        lacked++;
        const struct btf_type *t = btf__type_by_id(vmlinux, lib[k]);
        const char *name = t ? btf__name_by_offset(vmlinux, t->name_off) : "?";
        uint64_t cookie = 0;
        int alone = kl_multi_link(fd, attach_type, &lib[k], &cookie, 1);
        if (alone >= 0)
            close(alone);
        else if (!first_errno)
            first_errno = -alone;
        taken += alone >= 0;
        if (nfilter && !in_filter(name))
            unlisted++;
        else if (alone < 0)
            refused++;
        else
            unexplained++;
        if (alone >= 0)
            fprintf(stderr, "  %s: libbpf's id %u (%s) links alone (in the filter list: %s), but libksym leaves it "
                            "out\n", pattern, lib[k], name, nfilter && !in_filter(name) ? "no" : "yes");
        if (strlen(names) + strlen(name) + 3 < sizeof(names))
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "", name);
    }
    CHECK(unexplained == 0 && taken == 0);
    CHECK(lacked >= 1); /* libbpf's link failed: something of it is not libksym's */
    CHECK(vmlinux_listed + lacked == nlib);
    printf("%s (%s): libbpf's glob: %zu ids, refused whole (%s); libksym: %d link(s), %zu functions, the "
           "kernel counts the same; libbpf's ids libksym leaves out: %zu, each refused alone by the kernel (%s), "
           "%zu not in the filter list, %zu refused by the trampoline: %s\n",
           pattern, prog, nlib, strerror(lerr), n, listed, lacked, first_errno ? strerror(first_errno) : "-",
           unlisted, refused, names);
out:
    free(ours);
    free(lib);
    kl_multi_free(&m);
    kl_unload(&l);
    ksym_bpf_object_free(o);
    bpf_object__close(lb);
}

/* A module's section needs the module's BTF object at load: the kernel
 * reads the link's ids there. */
static void module_btf_at_load(struct ksym_btf *btf)
{
    size_t i;
    struct kl_loaded l;
    struct kl_multi m;
    char why[4096];
    struct ksym_bpf_multi_link ml = { .sz = sizeof(ml) };
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    struct ksym_bpf_object *o = ksym_open_one("in_module", &i);
    if (!o)
        return;
    memset(&m, 0, sizeof(m));
    CHECK(ksym_bpf_program_attach_info(o, i, &at) == 0 || at.error);
    CHECK(at.flags & KSYM_ATTACH_TARGET_AT_LOAD);
    CHECK(ksym_bpf_program_multi_attach(o, i, NULL, btf) == 1);
    CHECK(ksym_bpf_program_multi_link(o, i, 0, &ml) == 0 && !strcmp(ml.module, "9p") && ml.attach_btf_obj_fd > 0);
    CHECK(kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0);
    int with_vmlinux = kl_load_prog_btf(o, &l, i, NULL, 0);
    int with_9p = kl_load_prog_btf(o, &l, i, NULL, ml.attach_btf_obj_fd);
    l.prog_fds[i] = -ENOENT;
    CHECK(with_vmlinux >= 0 && with_9p >= 0);
    if (with_vmlinux >= 0 && with_9p >= 0) {
        int bad = kl_multi_link(with_vmlinux, ml.attach_type, ml.btf_ids, ml.cookies, ml.count);
        int good = kl_multi_link(with_9p, ml.attach_type, ml.btf_ids, ml.cookies, ml.count);
        CHECK(bad < 0 && good >= 0);
        printf("9p's %zu v9fs_* ids: loaded with vmlinux's BTF, the link is refused (%s); with 9p's, %s\n", ml.count,
               bad < 0 ? strerror(-bad) : "taken", good >= 0 ? "taken" : strerror(-good));
        if (bad >= 0)
            close(bad);
        if (good >= 0)
            close(good);
    }
    if (with_vmlinux >= 0)
        close(with_vmlinux);
    if (with_9p >= 0)
        close(with_9p);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* ---- without multi links: libksym's load fails as libbpf's did ------- */

static void without_multi(struct ksym_btf *btf)
{
    size_t i;
    struct kl_loaded l;
    struct kl_multi m;
    char why[4096];
    memset(&m, 0, sizeof(m));
    memset(&l, 0, sizeof(l));
    l.btf_fd = -1;
    struct ksym_bpf_object *o = ksym_open_one("on_entry", &i);
    if (!o)
        return;
    /* Listing works on any kernel; the load is what the kernel refuses. */
    int n = ksym_bpf_program_multi_attach(o, i, NULL, btf);
    CHECK(n >= 1);
    CHECK(kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0);
    int err = n >= 1 ? kl_multi_attach(o, &l, i, (size_t)n, &m, NULL, why, sizeof(why)) : 0;
    CHECK(err < 0 && m.functions == 0);
    CHECK(on_entry_errno > 0 && err == -on_entry_errno);
    printf("libksym's load of on_entry: %s (libbpf's: %s)\n", strerror(-err),
           on_entry_errno > 0 ? strerror(on_entry_errno) : "loaded");
    kl_multi_free(&m);
    kl_unload(&l);
    ksym_bpf_object_free(o);
    NEED_SKIP("tracing_multi", "a fentry.multi program does not load (%s), as libbpf and libksym both found",
              on_entry_errno > 0 ? strerror(on_entry_errno) : "it loads");
}

int main(void)
{
    const char *dir = getenv("KSYM_BPF_OBJECTS");
    snprintf(objpath, sizeof(objpath), "%s/multi.bpf.o", dir ? dir : "c-tests/bpf");
    libbpf_set_print(quiet);
    int avail = kl_bpf_available();
    if (avail) {
        KERNEL_SKIP("bpf() is not permitted here (%s)", strerror(-avail));
        return finish("test_libbpf_multi_next");
    }
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf) {
        KERNEL_SKIP("no kernel BTF: %s", ksym_last_error_message());
        return finish("test_libbpf_multi_next");
    }
    multi = kernel_has("tracing_multi");
    ways(btf);
    if (multi == -1) /* no row for this machine: the kernel says */
        multi = on_entry_errno == 0;
    printf("libbpf %s; tracing_multi: %s\n", libbpf_version_string(), multi ? "yes" : "no");
    if (multi) {
        struct btf *vmlinux = btf__load_vmlinux_btf();
        CHECK(vmlinux != NULL);
        if (!read_filter())
            printf("tracefs' available_filter_functions cannot be read: the kernel alone says\n");
        if (vmlinux) {
            glob_against_list(btf, vmlinux, "on_entry", "vfs_*");
            glob_against_list(btf, vmlinux, "on_exit", "tcp_*");
        }
        btf__free(vmlinux);
        if (access("/sys/kernel/btf/9p", F_OK) == 0)
            module_btf_at_load(btf);
        else
            NEED_SKIP("modules", "the 9p module has no BTF here: no module multi link to check");
    } else {
        without_multi(btf);
    }
    for (size_t k = 0; k < nfilter; k++)
        free(filter[k]);
    free(filter);
    ksym_btf_free(btf);
    return finish("test_libbpf_multi_next");
}
