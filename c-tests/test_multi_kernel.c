/*
 * The kernel's multi links (Linux 7.3: fentry.multi, fexit.multi,
 * fsession.multi) and the way each kernel gets, with the running kernel
 * as the oracle and its row of the kernel table (tests/kernels.txt:
 * tracing_multi, fentry) saying which behaviour it must show:
 *
 * - the kernel itself: a two-instruction fentry.multi program loads if
 *   and only if the row says tracing_multi; ksym_bpf_program_way agrees
 *   (KSYM_WAY_MULTI; else KSYM_WAY_ALIASES for a plain fentry body where
 *   fentry loads, KSYM_ERR_UNSUPPORTED for a `.multi` section).
 * - with multi links: c-tests/bpf/multi.bpf.o's `plain` fentry body
 *   listed over `__do_sys_getp*` (ksym_bpf_program_multi_attach) loads as
 *   one multi program with one link, which the kernel reports
 *   (bpf_link_info: type tracing_multi, its attach type and count equal to
 *   libksym's); every listed function is at its /proc/kallsyms address
 *   and in tracefs' available_filter_functions; after getppid() 37 times
 *   and getpgrp() 5 times in this process, the counts by cookie are 37
 *   and 5 and bpf_get_func_ip() gave getppid's address. fexit.multi counts
 *   37 too; fsession.multi 74 (entry and exit) where the kernel loads it.
 *   `fentry.multi/vfs_*` attaches every function listed (vfs_caches_init,
 *   __init, is not: libbpf's glob takes it and the kernel refuses the
 *   link) and vfs_write fires; `fentry.multi/9p:v9fs_*` attaches through
 *   the 9p module's BTF object (the guests' root is on 9p).
 * - a link that holds vfs_caches_init fails whole; the loader's split
 *   (kl_multi_split) attaches the rest and says which it left out.
 * - `typed`, a body that reads its first argument from the context: the
 *   verifier refuses it as a multi program (the multi prototype has no
 *   arguments), and as aliases on __x64_sys_getpgid it loads and sees its
 *   first argument, the syscall's `struct pt_regs *` (a kernel address).
 *   (do_getpgid, which takes the pid itself, is inlined into the syscall
 *   on 5.10: its own copy never runs there.)
 * - without multi links: loading a multi program fails (the kernel's
 *   errno is printed), and the aliases of `typed` fire where fentry loads.
 */
#define _GNU_SOURCE

#include "check.h"
#include "../tools/bpf_multi.h"

#include <fcntl.h>
#include <sys/syscall.h>

#define BPF_TRACE_FENTRY_MULTI 59
#define BPF_TRACE_FEXIT_MULTI 60
#define BPF_TRACE_FSESSION_MULTI 61

static const char *objdir;
static int filter_list; /* the filter list could be read */
static int multi; /* the kernel table's tracing_multi */

/* /proc/kallsyms' text symbols and tracefs' filter list, each read once
 * naively and sorted as "module name" keys, looked up by bsearch (a
 * guest under TCG reads /proc/kallsyms slowly). */
struct sym {
    char *key;
    uint64_t addr;
};
static struct sym *syms;
static size_t nsyms;
static char **filter_keys;
static size_t nfilter;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct sym *)a)->key, ((const struct sym *)b)->key);
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *key_of(const char *module, const char *name)
{
    size_t n = strlen(module) + strlen(name) + 2;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s %s", module, name);
    return k;
}

static void read_kallsyms(void)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], name[256], mod[128], type;
    unsigned long long a;
    size_t cap = 0;
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        int n = sscanf(line, "%llx %c %255s [%127[^]]]", &a, &type, name, mod);
        if (n < 3 || (type != 't' && type != 'T'))
            continue;
        if (nsyms == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            syms = realloc(syms, cap * sizeof(*syms));
        }
        syms[nsyms].key = key_of(n == 4 ? mod : "vmlinux", name);
        syms[nsyms++].addr = a;
    }
    fclose(f);
    /* The lowest address of a name defined twice, as libksym gives it. */
    qsort(syms, nsyms, sizeof(*syms), by_key);
}

static uint64_t kallsyms_addr(const char *module, const char *name)
{
    char *k = key_of(module, name);
    struct sym want = { k, 0 }, *hit = k ? bsearch(&want, syms, nsyms, sizeof(*syms), by_key) : NULL;
    uint64_t best = 0;
    if (hit) {
        while (hit > syms && !strcmp(hit[-1].key, k))
            hit--;
        for (best = hit->addr; hit < syms + nsyms && !strcmp(hit->key, k); hit++)
            best = hit->addr < best ? hit->addr : best;
    }
    free(k);
    return best;
}

/* The filter list's "name" and "name [module]" lines, as keys; 0 when
 * it cannot be read. */
static int read_filter_list(void)
{
    FILE *f = fopen("/sys/kernel/tracing/available_filter_functions", "r");
    char line[512], name[256], mod[128];
    size_t cap = 0;
    if (!f)
        f = fopen("/sys/kernel/debug/tracing/available_filter_functions", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        int n = sscanf(line, "%255s [%127[^]]]", name, mod);
        if (n < 1)
            continue;
        if (nfilter == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            filter_keys = realloc(filter_keys, cap * sizeof(*filter_keys));
        }
        filter_keys[nfilter++] = key_of(n == 2 ? mod : "vmlinux", name);
    }
    fclose(f);
    qsort(filter_keys, nfilter, sizeof(*filter_keys), by_str);
    return nfilter > 0;
}

static int in_filter_list(const char *module, const char *name)
{
    char *k = key_of(module, name);
    int found = k && bsearch(&k, filter_keys, nfilter, sizeof(*filter_keys), by_str) != NULL;
    free(k);
    return found;
}

/* A two-instruction multi program of `attach_type`, loaded raw: its fd
 * (closed here) or -errno. */
static int raw_multi_load(uint32_t attach_type)
{
    static const uint64_t insns[2] = { 0xb7, 0x95 }; /* r0 = 0; exit */
    struct kl_prog_load a;
    memset(&a, 0, sizeof(a));
    a.prog_type = KL_PROG_TRACING;
    a.expected_attach_type = attach_type;
    a.insns = kl_ptr(insns);
    a.insn_cnt = 2;
    a.license = kl_ptr("GPL");
    long fd = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
    if (fd < 0)
        return -errno;
    close((int)fd);
    return 0;
}

static struct ksym_bpf_object *open_multi(const char *prog, size_t *i)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/multi.bpf.o", objdir);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    if (!o)
        return NULL;
    uint32_t tgid = (uint32_t)getpid();
    CHECK(ksym_bpf_object_set_var(o, "target_tgid", &tgid, sizeof(tgid)) == 0);
    CHECK(ksym_bpf_object_find_program(o, prog, i) == 0);
    for (size_t k = 0; k < ksym_bpf_object_program_count(o); k++)
        ksym_bpf_program_set_autoload(o, k, k == *i);
    return o;
}

/* The counts and ips by cookie, from the .bss map. */
static int read_bss(struct ksym_bpf_object *o, const struct kl_loaded *l, uint64_t **runs, uint64_t **ips,
                    unsigned char **buf)
{
    size_t bss, vr, vi;
    struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
    struct ksym_bpf_var_info r = { .sz = sizeof(r) }, p = { .sz = sizeof(p) };
    if (ksym_bpf_object_find_map(o, ".bss", &bss) || ksym_bpf_map_info(o, bss, &mi) ||
        ksym_bpf_object_find_var(o, "runs", &vr) || ksym_bpf_var_info(o, vr, &r) ||
        ksym_bpf_object_find_var(o, "ips", &vi) || ksym_bpf_var_info(o, vi, &p))
        return -1;
    *buf = calloc(1, mi.value_size);
    uint32_t zero = 0;
    if (!*buf || kl_map_lookup(l->map_fds[bss], &zero, *buf) != 0)
        return -1;
    *runs = (uint64_t *)(*buf + r.offset);
    *ips = (uint64_t *)(*buf + p.offset);
    return 0;
}

static void drive(int getppids, int getpgrps)
{
    for (int k = 0; k < getppids; k++)
        syscall(SYS_getppid);
    for (int k = 0; k < getpgrps; k++)
        syscall(SYS_getpgrp);
}

/* Lists `prog` over `pattern` (NULL: its section's), attaches it with
 * multi links, runs `trigger`, and checks the kernel's links against
 * libksym's lists. Returns the counts by cookie in *runs (the caller
 * frees *buf) and the cookie of each name in `names` in cookies[], or -1
 * when it could not attach. */
static int multi_fire(struct ksym_btf *btf, const char *prog, const char *pattern, uint32_t attach_type,
                      void (*trigger)(void), const char *const *names, size_t nnames, uint64_t *cookies,
                      uint64_t **runs, uint64_t **ips, unsigned char **buf)
{
    size_t i;
    struct kl_loaded l;
    struct kl_multi m;
    char why[4096];
    int rc = -1;
    memset(&m, 0, sizeof(m));
    memset(&l, 0, sizeof(l));
    l.btf_fd = -1;
    struct ksym_bpf_object *o = open_multi(prog, &i);
    if (!o)
        return -1;
    int n = ksym_bpf_program_multi_attach(o, i, pattern, btf);
    CHECK(n >= 1);
    if (n < 1) {
        fprintf(stderr, "%s over %s: %d: %s\n", prog, pattern ? pattern : "its section", n,
                ksym_last_error_message());
        goto out;
    }
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    CHECK(ksym_bpf_program_attach_info(o, i, &at) == 0);
    CHECK(at.prog_type == KL_PROG_TRACING && at.expected_attach_type == attach_type && at.attach_btf_id == 0);
    /* The module's BTF object is needed at load only for in_module
     * (`fentry.multi/9p:v9fs_*`): test_libbpf_multi_next shows the kernel
     * refusing 9p's ids for a program loaded without it. */
    int module_section = !strcmp(prog, "in_module");
    CHECK(at.flags & KSYM_ATTACH_MULTI);
    CHECK(!!(at.flags & KSYM_ATTACH_TARGET_AT_LOAD) == module_section);
    CHECK(kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0);
    int err = kl_multi_attach(o, &l, i, (size_t)n, &m, stderr, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "%s: %s\n", prog, why);
        goto out;
    }
    size_t listed = 0, bad = 0;
    /* Nothing refused: one link per BTF object. */
    CHECK(m.refused == 0 && m.nfds == (size_t)n);
    for (size_t k = 0; k < (size_t)n && k < m.nfds; k++) {
        struct ksym_bpf_multi_link ml = { .sz = sizeof(ml) };
        struct kl_link_info_multi info;
        CHECK(ksym_bpf_program_multi_link(o, i, k, &ml) == 0);
        CHECK(ml.attach_type == attach_type && ml.count > 0);
        CHECK(kl_multi_link_info(m.link_fds[k], &info) == 0);
        /* The kernel's account of the link is libksym's. */
        CHECK(info.type == KL_LINK_TYPE_TRACING_MULTI);
        CHECK(info.attach_type == attach_type);
        CHECK(info.count == ml.count);
        CHECK(info.btf_obj_id == ml.btf_obj_id || !strcmp(ml.module, "vmlinux"));
        if (info.count != ml.count)
            fprintf(stderr, "  %s link %zu: the kernel counts %u functions, libksym %zu\n", prog, k, info.count,
                    ml.count);
        for (size_t j = 0; j < ml.count; j++) {
            struct ksym_bpf_multi_function f = { .sz = sizeof(f) };
            CHECK(ksym_bpf_program_multi_function(o, i, ml.cookies[j], &f) == 0);
            CHECK(f.link == k && f.addr == ml.addrs[j] && f.btf_id == ml.btf_ids[j]);
            CHECK(!strcmp(f.module, ml.module));
            if (kallsyms_addr(f.module, f.name) != f.addr || (filter_list && !in_filter_list(f.module, f.name))) {
                fprintf(stderr, "  %s`%s: at %#llx, kallsyms %#llx, in the filter list: %d\n", f.module, f.name,
                        (unsigned long long)f.addr, (unsigned long long)kallsyms_addr(f.module, f.name),
                        filter_list ? in_filter_list(f.module, f.name) : -1);
                bad++;
            }
            for (size_t w = 0; w < nnames; w++)
                if (!strcmp(f.name, names[w]))
                    cookies[w] = ml.cookies[j];
            listed++;
        }
    }
    CHECK(bad == 0);
    CHECK(m.functions == listed);
    trigger();
    CHECK(read_bss(o, &l, runs, ips, buf) == 0);
    rc = 0;
out:
    kl_multi_free(&m);
    kl_unload(&l);
    ksym_bpf_object_free(o);
    return rc;
}

static void getppid_37_getpgrp_5(void)
{
    drive(37, 5);
}

static void getppid_37(void)
{
    drive(37, 0);
}

static void file_io(void)
{
    char path[] = "/tmp/ksym-multi-XXXXXX", b[8];
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "multi", 5) == 5);
    if (fd >= 0)
        close(fd);
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, b, sizeof(b)) == 5);
    if (fd >= 0)
        close(fd);
    unlink(path);
}

static void read_on_9p(void)
{
    char path[512], b[64];
    snprintf(path, sizeof(path), "%s/multi.bpf.c", objdir);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, b, sizeof(b)) > 0);
    if (fd >= 0)
        close(fd);
}

static void with_multi(struct ksym_btf *btf)
{
    static const char *const getp[] = { "__do_sys_getppid", "__do_sys_getpgrp" };
    uint64_t c[2] = { (uint64_t)-1, (uint64_t)-1 }, *runs, *ips;
    unsigned char *buf = NULL;
    if (multi_fire(btf, "plain", "__do_sys_getp*", BPF_TRACE_FENTRY_MULTI, getppid_37_getpgrp_5, getp, 2, c,
                   &runs, &ips, &buf) == 0) {
        CHECK(c[0] != (uint64_t)-1 && c[1] != (uint64_t)-1);
        if (c[0] != (uint64_t)-1 && c[1] != (uint64_t)-1) {
            CHECK(runs[c[0]] == 37);
            CHECK(runs[c[1]] == 5);
            CHECK(ips[c[0]] == kallsyms_addr("vmlinux", "__do_sys_getppid"));
            printf("fentry.multi: getppid %llu, getpgrp %llu runs by cookie\n", (unsigned long long)runs[c[0]],
                   (unsigned long long)runs[c[1]]);
        }
    }
    free(buf);
    buf = NULL;
    c[0] = (uint64_t)-1;
    if (multi_fire(btf, "on_exit", "__do_sys_getppid", BPF_TRACE_FEXIT_MULTI, getppid_37, getp, 1, c, &runs,
                   &ips, &buf) == 0) {
        CHECK(c[0] == 0 && runs[0] == 37);
    }
    free(buf);
    buf = NULL;
    /* fsession runs at entry and at exit, where the kernel loads it. */
    int session = raw_multi_load(BPF_TRACE_FSESSION_MULTI);
    size_t i;
    struct ksym_bpf_object *o = open_multi("on_session", &i);
    int way = o ? ksym_bpf_program_way(o, i, btf) : 0;
    CHECK(way == (session == 0 ? KSYM_WAY_MULTI : KSYM_ERR_UNSUPPORTED));
    ksym_bpf_object_free(o);
    if (session == 0) {
        c[0] = (uint64_t)-1;
        if (multi_fire(btf, "on_session", "__do_sys_getppid", BPF_TRACE_FSESSION_MULTI, getppid_37, getp, 1, c,
                       &runs, &ips, &buf) == 0)
            CHECK(c[0] == 0 && runs[0] == 74);
        free(buf);
        buf = NULL;
    } else {
        printf("fsession.multi: this kernel refuses it (%s), as ksym_bpf_program_way says\n", strerror(-session));
    }
    /* The section's glob. */
    static const char *const vfs[] = { "vfs_write", "vfs_caches_init" };
    c[0] = c[1] = (uint64_t)-1;
    if (multi_fire(btf, "on_entry", NULL, BPF_TRACE_FENTRY_MULTI, file_io, vfs, 2, c, &runs, &ips, &buf) == 0) {
        CHECK(c[0] != (uint64_t)-1 && runs[c[0]] >= 1);
        CHECK(c[1] == (uint64_t)-1); /* __init: not listed */
    }
    free(buf);
    buf = NULL;
    /* A module's: the 9p module's BTF object (the root is on 9p). */
    if (access("/sys/module/9p", F_OK) == 0) {
        static const char *const v9fs[] = { "v9fs_file_read_iter" };
        c[0] = (uint64_t)-1;
        if (multi_fire(btf, "in_module", NULL, BPF_TRACE_FENTRY_MULTI, read_on_9p, v9fs, 1, c, &runs, &ips,
                       &buf) == 0) {
            uint64_t sum = 0;
            for (size_t k = 0; k < 8192; k++)
                sum += runs[k];
            CHECK(sum > 0);
        }
        free(buf);
        buf = NULL;
    } else {
        NEED_SKIP("modules", "the 9p module is not loaded: no module multi link to check");
    }
}

/* A link that holds a function the kernel cannot trace (vfs_caches_init,
 * __init: in BTF, not in ftrace's list) fails whole (the kernel's
 * ENOENT); the loader's split attaches the others and says which it
 * left out. */
static void refused_function(struct ksym_btf *btf)
{
    size_t i;
    struct kl_loaded l;
    struct kl_multi m;
    char why[4096];
    struct ksym_btf_type t = { .sz = sizeof(t) };
    struct ksym_bpf_multi_link ml = { .sz = sizeof(ml) };
    CHECK(ksym_btf_find(btf, "vmlinux`vfs_caches_init", 0, &t) == 0);
    struct ksym_bpf_object *o = open_multi("on_entry", &i);
    if (!o)
        return;
    CHECK(ksym_bpf_program_multi_attach(o, i, "vfs_read*", btf) == 1);
    CHECK(ksym_bpf_program_multi_link(o, i, 0, &ml) == 0);
    CHECK(kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0);
    memset(&m, 0, sizeof(m));
    int fd = kl_load_prog_btf(o, &l, i, NULL, 0);
    CHECK(fd >= 0 && ml.count >= 1 && ml.count < 64);
    if (fd >= 0 && ml.count >= 1 && ml.count < 64) {
        uint32_t ids[64];
        uint64_t cookies[64];
        memcpy(ids, ml.btf_ids, ml.count * sizeof(uint32_t));
        memcpy(cookies, ml.cookies, ml.count * sizeof(uint64_t));
        ids[ml.count] = t.type_id;
        cookies[ml.count] = ml.count; /* no function of the list: not named */
        int whole = kl_multi_link(fd, BPF_TRACE_FENTRY_MULTI, ids, cookies, ml.count + 1);
        CHECK(whole < 0);
        printf("a link with vfs_caches_init: %s\n", strerror(-whole));
        if (whole >= 0)
            close(whole);
        int err = kl_multi_split(o, i, &m, fd, BPF_TRACE_FENTRY_MULTI, ids, cookies, ml.count + 1, stdout);
        CHECK(err == whole);
        CHECK(m.functions == ml.count && m.refused == 1);
        CHECK(m.refused == 1 && m.refused_cookies[0] == ml.count);
        close(fd);
    }
    kl_multi_free(&m);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* `typed` reads ctx[0]: refused as multi (where the kernel has it), and
 * as aliases on __x64_sys_getpgid it loads where fentry does and sees its
 * pt_regs pointer. */
static void typed(struct ksym_btf *btf)
{
    size_t i;
    struct kl_loaded l;
    char why[4096];
    struct kl_multi m;
    struct ksym_bpf_object *o;
    if (multi) {
        o = open_multi("typed", &i);
        CHECK(o && ksym_bpf_program_multi_attach(o, i, "__x64_sys_getpgid", btf) == 1);
        CHECK(kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0);
        int err = kl_multi_attach(o, &l, i, 1, &m, NULL, why, sizeof(why));
        /* The verifier: "func 'bpf_multi_func' doesn't have 1-th argument". */
        CHECK(err == -EACCES || err == -EINVAL);
        printf("typed as multi: %s\n", why);
        kl_multi_free(&m);
        kl_unload(&l);
        ksym_bpf_object_free(o);
    }
    o = open_multi("typed", &i);
    if (!o)
        return;
    size_t base = ksym_bpf_object_program_count(o);
    int n = ksym_bpf_program_expand(o, i, "__x64_sys_getpgid", btf);
    CHECK(n == 1);
    if (n != 1) {
        ksym_bpf_object_free(o);
        return;
    }
    ksym_bpf_program_set_autoload(o, i, false);
    CHECK(kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0);
    int fd = kl_load_prog(o, &l, base, stderr);
    if (kernel_has("fentry") == 0) {
        CHECK(fd < 0);
        NEED_SKIP("fentry", "typed as aliases: this kernel refuses fentry programs (%s)", strerror(-fd));
    } else {
        CHECK(fd >= 0 && kl_attach(o, &l, base) >= 0);
        pid_t me = getpid();
        CHECK(syscall(SYS_getpgid, me) >= 0);
        size_t bss, v;
        struct ksym_bpf_var_info vi = { .sz = sizeof(vi) };
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0 && ksym_bpf_map_info(o, bss, &mi) == 0);
        CHECK(ksym_bpf_object_find_var(o, "first_arg", &v) == 0 && ksym_bpf_var_info(o, v, &vi) == 0);
        unsigned char *b = calloc(1, mi.value_size);
        uint32_t zero = 0;
        CHECK(b && kl_map_lookup(l.map_fds[bss], &zero, b) == 0);
        uint64_t arg = 0;
        if (b)
            memcpy(&arg, b + vi.offset, sizeof(arg));
        /* __x64_sys_getpgid(const struct pt_regs *regs): a kernel address
         * (the upper half; from 0xff00... with 5-level paging, as 7.3's). */
        CHECK(arg >= 0xff00000000000000ull);
        if (arg < 0xff00000000000000ull)
            fprintf(stderr, "typed: first argument %#llx\n", (unsigned long long)arg);
        free(b);
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

int main(void)
{
    objdir = getenv("KSYM_BPF_OBJECTS");
    if (!objdir)
        objdir = "c-tests/bpf";
    int avail = kl_bpf_available();
    if (avail) {
        KERNEL_SKIP("bpf() is not permitted here (%s)", strerror(-avail));
        return finish("test_multi_kernel");
    }
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf) {
        KERNEL_SKIP("no kernel BTF: %s", ksym_last_error_message());
        return finish("test_multi_kernel");
    }
    read_kallsyms();
    filter_list = read_filter_list();
    int table = kernel_has("tracing_multi");
    int raw = raw_multi_load(BPF_TRACE_FENTRY_MULTI);
    multi = table == -1 ? raw == 0 : table;
    /* The kernel answers as its row says. */
    CHECK((raw == 0) == (multi == 1));
    printf("a fentry.multi program: %s\n", raw == 0 ? "loads" : strerror(-raw));
    size_t i;
    struct ksym_bpf_object *o = open_multi("on_entry", &i);
    int way = o ? ksym_bpf_program_way(o, i, btf) : 0;
    if (multi) {
        CHECK(way == KSYM_WAY_MULTI);
    } else {
        CHECK(way == KSYM_ERR_UNSUPPORTED);
        CHECK_MSG("no tracing_multi link");
    }
    size_t p;
    CHECK(o && ksym_bpf_object_find_program(o, "plain", &p) == 0);
    way = o ? ksym_bpf_program_way(o, p, btf) : 0;
    if (multi)
        CHECK(way == KSYM_WAY_MULTI);
    else if (kernel_has("fentry") != 0)
        CHECK(way == KSYM_WAY_ALIASES);
    else
        CHECK(way == KSYM_ERR_UNSUPPORTED);
    printf("ksym_bpf_program_way: fentry.multi %s, fentry %d\n", multi ? "multi" : "unsupported", way);
    ksym_bpf_object_free(o);
    if (multi) {
        with_multi(btf);
        refused_function(btf);
    } else {
        /* Listing works on any kernel; loading the multi program is what
         * the kernel refuses. */
        struct kl_loaded l;
        struct kl_multi m;
        char why[4096];
        o = open_multi("plain", &i);
        CHECK(o && ksym_bpf_program_multi_attach(o, i, "__do_sys_getppid", btf) == 1);
        CHECK(kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0);
        int err = kl_multi_attach(o, &l, i, 1, &m, NULL, why, sizeof(why));
        CHECK(err < 0 && m.functions == 0);
        printf("the multi program on this kernel: %s\n", why);
        kl_multi_free(&m);
        kl_unload(&l);
        ksym_bpf_object_free(o);
        NEED_SKIP("tracing_multi", "a fentry.multi program does not load (%s)", strerror(-raw));
    }
    typed(btf);
    for (size_t k = 0; k < nsyms; k++)
        free(syms[k].key);
    for (size_t k = 0; k < nfilter; k++)
        free(filter_keys[k]);
    free(syms);
    free(filter_keys);
    ksym_btf_free(btf);
    return finish("test_multi_kernel");
}
