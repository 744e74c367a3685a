/*
 * The differential test: libksym-bcc against the real libbcc, the same
 * questions to both in one process, every answer compared.
 *
 *   diff                      the running kernel's /proc/kallsyms
 *   diff --file KALLSYMS      a kallsyms file, bind-mounted over
 *                             /proc/kallsyms in a mount namespace of this
 *                             process, so that both libraries (bcc reads
 *                             /proc/kallsyms, nothing else) read it
 *   diff --refresh KALLSYMS MODULES
 *                             bcc_symcache_refresh after a module appears
 *                             and after a BPF program does (files derived
 *                             from the given ones, bind-mounted in turn)
 *   diff --modprobe MODULE    the same with a real module, loaded with
 *                             modprobe while the caches exist (root, a
 *                             kernel with modules: the guest), then removed
 *
 * Questions: every address of every line (data and absolute symbols
 * included), one below and one above it, a random address between it and
 * the next, random addresses in the large gaps (between modules, past the
 * image) and anywhere, the edges of the address space; resolve and
 * resolve_no_demangle; resolve_name for names present once, several times,
 * or not at all, with and without a module. The live kernel's file may
 * change while the test runs (another tool loads a BPF program): the run
 * is repeated when it did.
 *
 * Environment: BCC_LIB (default libbcc_bpf.so.0), KSYM_BCC_LIB (the shim),
 * KSYM_BCC_SNAPSHOT_DIR (the test's own snapshot directory).
 */
#include "common.h"

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

static struct api bcc, shim;
static const char UNTOUCHED[] = "<untouched>";

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

struct addrs {
    uint64_t *a;
    size_t n, cap;
};

static void add(struct addrs *v, uint64_t a)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 1 << 18;
        v->a = realloc(v->a, v->cap * sizeof(*v->a));
        if (!v->a)
            exit(2);
    }
    v->a[v->n++] = a;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every question's address, from the lines of the file. */
static struct addrs questions(const struct lines *ls)
{
    struct addrs starts = { 0 }, q = { 0 };
    for (size_t i = 0; i < ls->n; i++)
        add(&starts, ls->l[i].addr);
    qsort(starts.a, starts.n, sizeof(uint64_t), cmp_u64);
    size_t n = 0;
    for (size_t i = 0; i < starts.n; i++)
        if (n == 0 || starts.a[n - 1] != starts.a[i])
            starts.a[n++] = starts.a[i];
    starts.n = n;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = starts.a[i];
        add(&q, a);
        add(&q, a - 1);
        add(&q, a + 1);
        if (i + 1 < n) {
            uint64_t gap = starts.a[i + 1] - a;
            add(&q, a + rnd() % gap);
            for (int k = 0; gap > (1u << 16) && k < 8; k++)
                add(&q, a + rnd() % gap);
        } else {
            for (int k = 0; k < 8; k++)
                add(&q, a + rnd() % (1u << 24));
        }
    }
    /* A restricted file (all zeros) has one address, and bcc reads it
     * again at every call while it holds no symbol: a few will do. */
    int randoms = n > 1 ? 2000 : 20;
    for (int k = 0; k < randoms; k++) {
        add(&q, rnd());
        add(&q, n ? starts.a[0] - (rnd() % (1u << 20)) : rnd());
    }
    static const uint64_t edges[] = { 0, 1, 0x00fffffffffffffeULL, 0x00ffffffffffffffULL, 0x0100000000000000ULL,
                                      0xffffffff80000000ULL, 0xfffffffffffffffeULL, UINT64_MAX };
    for (size_t k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
        add(&q, edges[k]);
    free(starts.a);
    return q;
}

/* Names to look up: bcc rebuilds a map of every symbol on each call (tens
 * of ms), so a sample: names present more than once (40, spread),
 * random others, and names that are not there. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char **names(const struct lines *ls, size_t *count)
{
    const char **all = malloc(ls->n * sizeof(char *));
    for (size_t i = 0; i < ls->n; i++)
        all[i] = ls->l[i].name;
    qsort(all, ls->n, sizeof(char *), cmp_str);
    const char **out = malloc((ls->n / 50 + 1000) * sizeof(char *));
    size_t n = 0, ndups = 0;
    const char **dups = malloc(ls->n * sizeof(char *));
    for (size_t i = 1; i < ls->n; i++)
        if (!strcmp(all[i], all[i - 1]) && (ndups == 0 || strcmp(dups[ndups - 1], all[i])))
            dups[ndups++] = all[i];
    for (size_t i = 0; i < ndups; i += ndups / 40 + 1)
        out[n++] = dups[i];
    free(dups);
    for (int k = 0; k < 40 && ls->n; k++)
        out[n++] = ls->l[rnd() % ls->n].name;
    static const char *const absent[] = { "no_such_symbol_at_all", "", "vmlinux`vfs_read", "vfs_read ",
                                          "kernel", "[bpf]", "vfs_read.cold.99" };
    for (size_t k = 0; k < sizeof(absent) / sizeof(absent[0]); k++)
        out[n++] = absent[k];
    free(all);
    *count = n;
    return out;
}

/* ----- comparing ------------------------------------------------------------ */

static long mismatches;

static void compare_addr(void *b, void *s, uint64_t a)
{
    struct bcc_symbol x, y;
    int rx = bcc.resolve(b, a, &x), ry = shim.resolve(s, a, &y);
    checks++;
    if (!same_answer(rx, &x, ry, &y)) {
        if (++mismatches <= 10) {
            fprintf(stderr, "  resolve(%#llx) differs:\n", (unsigned long long)a);
            show("bcc", rx, &x);
            show("libksym-bcc", ry, &y);
        }
    }
    x.demangle_name = y.demangle_name = UNTOUCHED;
    rx = bcc.resolve_no_demangle(b, a, &x);
    ry = shim.resolve_no_demangle(s, a, &y);
    checks++;
    if (!same_answer(rx, &x, ry, &y)) {
        if (++mismatches <= 10) {
            fprintf(stderr, "  resolve_no_demangle(%#llx) differs:\n", (unsigned long long)a);
            show("bcc", rx, &x);
            show("libksym-bcc", ry, &y);
        }
    }
}

static void compare_name(void *b, void *s, const char *module, const char *name)
{
    uint64_t x = 7, y = 7;
    int rx = bcc.resolve_name(b, module, name, &x), ry = shim.resolve_name(s, module, name, &y);
    checks++;
    if (rx != ry || x != y) {
        if (++mismatches <= 10)
            fprintf(stderr, "  resolve_name(%s, \"%s\") differs: bcc %d %#llx, libksym-bcc %d %#llx\n",
                    module ? module : "NULL", name, rx, (unsigned long long)x, ry, (unsigned long long)y);
    }
}

/* Reads from /proc/self/io: bytes this process read with read(2). */
static unsigned long long rchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    unsigned long long v = 0;
    char key[32];
    while (f && fscanf(f, "%31s %llu", key, &v) == 2)
        if (!strcmp(key, "rchar:"))
            break;
    if (f)
        fclose(f);
    return v;
}

/* The addresses several lines bcc keeps share (then the order of bcc's
 * sort decides, and the core level leaves the answer to the full one),
 * sorted. */
static struct addrs shared_addresses(const struct lines *ls)
{
    struct addrs kept = { 0 }, shared = { 0 };
    for (size_t i = 0; i < ls->n; i++)
        if (!strchr("bBdDrR", ls->l[i].type) && ls->l[i].addr >= 0x00ffffffffffffffULL)
            add(&kept, ls->l[i].addr);
    qsort(kept.a, kept.n, sizeof(uint64_t), cmp_u64);
    for (size_t i = 1; i < kept.n; i++)
        if (kept.a[i] == kept.a[i - 1] && (shared.n == 0 || shared.a[shared.n - 1] != kept.a[i]))
            add(&shared, kept.a[i]);
    free(kept.a);
    return shared;
}

/* Root, and /proc/kallsyms shows real addresses: a non-zero one in its
 * first lines (a kernel that lists its per-CPU variables first starts
 * with zeros). */
static int privileged(void)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[256];
    int real = 0;
    for (int i = 0; f && i < 8 && !real && fgets(line, sizeof(line), f); i++) {
        size_t hex = strspn(line, "0123456789abcdef");
        real = hex > 0 && strspn(line, "0") < hex;
    }
    if (f)
        fclose(f);
    return geteuid() == 0 && real;
}

/* One complete comparison of the file now at /proc/kallsyms. */
static void run(const char *label)
{
    long before = mismatches;
    int before_checks = checks;
    struct lines ls = read_lines("/proc/kallsyms");
    struct addrs q = questions(&ls);
    size_t nn;
    const char **nm = names(&ls, &nn);
    size_t modules = 0;
    for (size_t i = 0; i < ls.n; i++)
        modules += ls.l[i].module[0] != 0 && ls.l[i].module[0] != '_' && strcmp(ls.l[i].module, "bpf");
    if (!strcmp(label, "/proc/kallsyms") && modules == 0)
        NEED_SKIP("modules", "the running kernel lists no symbols of loadable modules: compared without");
    struct addrs shared = shared_addresses(&ls);

    void *b = bcc.symcache_new(-1, NULL);
    struct bcc_symbol x;
    bcc.resolve(b, q.a[0], &x); /* bcc reads the file now */

    /* A first cache writes the snapshot, a second maps it: its core
     * answers (an address of the core kernel, one name there) come with
     * no read of /proc/kallsyms. */
    void *s0 = shim.symcache_new(-1, NULL);
    struct bcc_symbol y;
    shim.resolve(s0, q.a[0], &y);
    shim.free_symcache(s0, -1);
    void *s = shim.symcache_new(-1, NULL);
    CHECK(b && s);
    /* The core kernel's lines bcc keeps, by address: an address between
     * the first and the last whose nearest one below is not shared. */
    struct addrs core = { 0 };
    for (size_t i = 0; i < ls.n; i++)
        if (!ls.l[i].module[0] && !strchr("bBdDrR", ls.l[i].type) && ls.l[i].addr >= 0x00ffffffffffffffULL)
            add(&core, ls.l[i].addr);
    qsort(core.a, core.n, sizeof(uint64_t), cmp_u64);
    unsigned long long r0 = rchar();
    size_t core_first = 0;
    for (size_t i = 0; i < ls.n && core.n; i++) {
        for (uint64_t a = ls.l[i].addr; a <= ls.l[i].addr + 1; a++) {
            if (ls.l[i].module[0] || a < core.a[0] || a > core.a[core.n - 1])
                continue;
            size_t lo = 0, hi = core.n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (a < core.a[mid])
                    hi = mid;
                else
                    lo = mid + 1;
            }
            uint64_t f = core.a[lo - 1];
            if (bsearch(&f, shared.a, shared.n, sizeof(uint64_t), cmp_u64))
                continue;
            compare_addr(b, s, a);
            core_first++;
        }
    }
    unsigned long long read_core = rchar() - r0;
    /* A module's line inside the core's range turns the core level off. */
    int inside = 0;
    for (size_t i = 0; i < ls.n && core.n; i++)
        inside |= ls.l[i].module[0] && !strchr("bBdDrR", ls.l[i].type) && ls.l[i].addr >= core.a[0] &&
                  ls.l[i].addr <= core.a[core.n - 1];
    if (!inside && privileged() && getenv("KSYM_BCC_SNAPSHOT_DIR") && strcmp(getenv("KSYM_BCC_SNAPSHOT_DIR"), "none")) {
        /* The file is 4-8 MB; /proc/modules and the boot id are small. */
        if (read_core >= (1u << 20))
            fprintf(stderr, "  %zu core answers read %llu bytes: not from the snapshot\n", core_first, read_core);
        CHECK(read_core < (1u << 20));
    }
    for (size_t i = 0; i < q.n; i++)
        compare_addr(b, s, q.a[i]);
    /* A new cache asked first where several names share an address: the
     * core level must leave those to the full one. */
    void *s2 = shim.symcache_new(-1, NULL);
    for (size_t i = 0; i < shared.n; i++) {
        compare_addr(b, s2, shared.a[i]);
        compare_addr(b, s2, shared.a[i] + 2);
    }
    shim.free_symcache(s2, -1);
    for (size_t i = 0; i < nn; i++) {
        compare_name(b, s, NULL, nm[i]);
        if (i % 10 == 0) {
            compare_name(b, s, "kernel", nm[i]);
            compare_name(b, s, "no_such_module", nm[i]);
        }
    }
    bcc.free_symcache(b, -1);
    shim.free_symcache(s, -1);
    printf("%s: %zu lines (%zu of loadable modules), %zu addresses, %zu names, %zu core answers first "
           "(%llu bytes read for them): %ld of %d answers differ\n",
           label, ls.n, modules, q.n, nn, core_first, read_core, mismatches - before, checks - before_checks);
    if (mismatches > before)
        failures++;
    free(q.a);
    free(shared.a);
    free(core.a);
    free(nm);
}

/* ----- files over /proc/kallsyms -------------------------------------------- */

static int private_mounts(void)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        KERNEL_SKIP("a mount namespace to put a file over /proc/kallsyms: %s (needs root)", strerror(errno));
        return -1;
    }
    return 0;
}

static int over(const char *file, const char *target)
{
    if (mount(file, target, NULL, MS_BIND, NULL) != 0) {
        fprintf(stderr, "bind-mounting %s over %s: %s\n", file, target, strerror(errno));
        failures++;
        return -1;
    }
    return 0;
}

/* ----- refresh ------------------------------------------------------------------ */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    char *buf = NULL;
    size_t cap = 0, n = 0, k;
    do {
        if (n + 65536 > cap) {
            cap = cap ? cap * 2 : 1 << 20;
            buf = realloc(buf, cap + 1);
        }
        k = fread(buf + n, 1, cap - n, f);
        n += k;
    } while (k > 0);
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

/* `text` without the lines containing `needle`. */
static size_t drop_lines(char *text, size_t len, const char *needle)
{
    char *w = text;
    for (char *r = text; r < text + len;) {
        char *nl = memchr(r, '\n', (size_t)(text + len - r));
        size_t l = nl ? (size_t)(nl - r) + 1 : (size_t)(text + len - r);
        char save = r[l - 1];
        r[l - 1] = 0;
        int drop = strstr(r, needle) != NULL;
        r[l - 1] = save;
        if (!drop) {
            memmove(w, r, l);
            w += l;
        }
        r += l;
    }
    return (size_t)(w - text);
}

struct snap {
    int r;
    struct bcc_symbol s;
};

static void test_refresh(const char *kallsyms, const char *modules)
{
    char dir[] = "/tmp/ksym-bcc-refresh-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(2);
    }
    size_t klen, mlen;
    char *k = slurp(kallsyms, &klen), *m = slurp(modules, &mlen);
    /* X: the first module of /proc/modules (the newest). */
    char mod[64] = "", needle[80];
    if (sscanf(m, "%63s", mod) != 1) {
        fprintf(stderr, "%s: no module\n", modules);
        exit(2);
    }
    snprintf(needle, sizeof(needle), "\t[%s]", mod);
    char pa[128], pb[128], pc[128], ma[128], mb[128];
    snprintf(pa, sizeof(pa), "%s/kallsyms.a", dir);
    snprintf(pb, sizeof(pb), "%s/kallsyms.b", dir);
    snprintf(pc, sizeof(pc), "%s/kallsyms.c", dir);
    snprintf(ma, sizeof(ma), "%s/modules.a", dir);
    snprintf(mb, sizeof(mb), "%s/modules.b", dir);
    write_text(pb, k, klen);
    write_text(mb, m, mlen);
    struct lines lb = read_lines(pb);
    /* C: B and one more BPF program, above everything. */
    uint64_t top = 0;
    for (size_t i = 0; i < lb.n; i++)
        top = lb.l[i].addr > top ? lb.l[i].addr : top;
    uint64_t prog = top + 0x10000;
    char extra[128];
    int el = snprintf(extra, sizeof(extra), "%016llx t bpf_prog_0123456789abcdef_added\t[bpf]\n",
                      (unsigned long long)prog);
    char *kc = malloc(klen + (size_t)el);
    memcpy(kc, k, klen);
    memcpy(kc + klen, extra, (size_t)el);
    write_text(pc, kc, klen + (size_t)el);
    size_t alen = drop_lines(k, klen, needle);
    write_text(pa, k, alen);
    size_t malen = drop_lines(m, mlen, mod);
    write_text(ma, m, malen);

    /* The addresses that change: X's symbols, and above the new program. */
    struct addrs q = { 0 };
    for (size_t i = 0; i < lb.n; i++)
        if (!strcmp(lb.l[i].module, mod)) {
            add(&q, lb.l[i].addr);
            add(&q, lb.l[i].addr + 3);
        }
    size_t nx = q.n;
    add(&q, prog);
    add(&q, prog + 0x40);
    CHECK(nx > 0);

    /* /proc/modules too, where the kernel has one (libksym's snapshot is
     * keyed by it). */
    int have_modules = access("/proc/modules", F_OK) == 0;
    if (over(pa, "/proc/kallsyms") || (have_modules && over(ma, "/proc/modules")))
        return;
    void *bold = bcc.symcache_new(-1, NULL), *s = shim.symcache_new(-1, NULL);
    struct snap *before = calloc(q.n, sizeof(*before));
    for (size_t i = 0; i < q.n; i++) {
        struct bcc_symbol y;
        before[i].r = bcc.resolve(bold, q.a[i], &before[i].s);
        int ry = shim.resolve(s, q.a[i], &y);
        CHECK(same_answer(before[i].r, &before[i].s, ry, &y));
    }
    /* X is loaded: without a refresh both keep their answers. */
    if (over(pb, "/proc/kallsyms") || (have_modules && over(mb, "/proc/modules")))
        return;
    int kept = 1, stale = 0, fresh_ok = 1;
    for (size_t i = 0; i < q.n; i++) {
        struct bcc_symbol y;
        int ry = shim.resolve(s, q.a[i], &y);
        kept &= same_answer(before[i].r, &before[i].s, ry, &y);
    }
    CHECK(kept);
    /* After a refresh the shim answers as a new bcc cache does. bcc's own
     * refresh of a kernel cache does nothing (KSyms::refresh reads the file
     * only when it holds no symbol): its old cache stays stale. */
    shim.refresh(s);
    bcc.refresh(bold);
    void *bnew = bcc.symcache_new(-1, NULL);
    for (size_t i = 0; i < q.n; i++) {
        struct bcc_symbol x, y, z;
        int rx = bcc.resolve(bnew, q.a[i], &x), ry = shim.resolve(s, q.a[i], &y);
        int rz = bcc.resolve(bold, q.a[i], &z);
        if (!same_answer(rx, &x, ry, &y)) {
            fresh_ok = 0;
            fprintf(stderr, "  after refresh, %#llx:\n", (unsigned long long)q.a[i]);
            show("bcc (new)", rx, &x);
            show("libksym-bcc", ry, &y);
        }
        stale += i < nx && !same_answer(rx, &x, rz, &z);
    }
    CHECK(fresh_ok);
    CHECK(stale > 0);
    /* A BPF program appears (no module changes): the same after a refresh. */
    if (over(pc, "/proc/kallsyms"))
        return;
    shim.refresh(s);
    void *bnew2 = bcc.symcache_new(-1, NULL);
    int prog_ok = 1;
    for (size_t i = nx; i < q.n; i++) {
        struct bcc_symbol x, y;
        int rx = bcc.resolve(bnew2, q.a[i], &x), ry = shim.resolve(s, q.a[i], &y);
        prog_ok &= same_answer(rx, &x, ry, &y) && rx == 0 && !strcmp(y.module, "bpf");
    }
    CHECK(prog_ok);
    printf("refresh: module %s (%zu addresses) appears, then a BPF program: answers as a new bcc cache "
           "(bcc's refreshed old cache is stale at %d)\n",
           mod, nx, stale);
    bcc.free_symcache(bold, -1);
    bcc.free_symcache(bnew, -1);
    bcc.free_symcache(bnew2, -1);
    shim.free_symcache(s, -1);
    free(before);
    free(q.a);
    while (umount2("/proc/kallsyms", MNT_DETACH) == 0)
        ;
    while (have_modules && umount2("/proc/modules", MNT_DETACH) == 0)
        ;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* A real module loaded while the caches exist: without a refresh both keep
 * their answers; after one the shim answers as a new bcc cache, at the
 * module's symbols too. */
static void test_modprobe(const char *module)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "modprobe -r %s 2>/dev/null", module);
    if (system(cmd) != 0)
        fprintf(stderr, "(%s was not loaded)\n", module);
    void *bold = bcc.symcache_new(-1, NULL), *s = shim.symcache_new(-1, NULL);
    struct bcc_symbol x, y;
    bcc.resolve(bold, 0xffffffff81000000ULL, &x);
    shim.resolve(s, 0xffffffff81000000ULL, &y);
    snprintf(cmd, sizeof(cmd), "modprobe %s", module);
    if (system(cmd) != 0) {
        NEED_SKIP("modules", "modprobe %s failed: no loadable modules here", module);
        bcc.free_symcache(bold, -1);
        shim.free_symcache(s, -1);
        return;
    }
    struct lines ls = read_lines("/proc/kallsyms");
    struct addrs q = { 0 };
    for (size_t i = 0; i < ls.n; i++)
        if (!strcmp(ls.l[i].module, module) && !strchr("bBdDrR", ls.l[i].type)) {
            add(&q, ls.l[i].addr);
            add(&q, ls.l[i].addr + 5);
        }
    CHECK(q.n > 0);
    int kept = 1, fresh = 1, named = 0;
    for (size_t i = 0; i < q.n; i++) {
        int rx = bcc.resolve(bold, q.a[i], &x), ry = shim.resolve(s, q.a[i], &y);
        kept &= same_answer(rx, &x, ry, &y);
    }
    CHECK(kept);
    shim.refresh(s);
    void *bnew = bcc.symcache_new(-1, NULL);
    for (size_t i = 0; i < q.n; i++) {
        int rx = bcc.resolve(bnew, q.a[i], &x), ry = shim.resolve(s, q.a[i], &y);
        fresh &= same_answer(rx, &x, ry, &y);
        named += ry == 0 && !strcmp(y.module, module);
    }
    CHECK(fresh);
    CHECK(named == (int)q.n);
    printf("modprobe %s: %zu addresses in it, the same as bcc before the refresh and as a new bcc cache after\n",
           module, q.n);
    bcc.free_symcache(bold, -1);
    bcc.free_symcache(bnew, -1);
    shim.free_symcache(s, -1);
    snprintf(cmd, sizeof(cmd), "modprobe -r %s", module);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", module);
    free(q.a);
}

/* ----- main ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    bcc = load_bcc();
    shim = load_shim();
    if (argc >= 3 && !strcmp(argv[1], "--file")) {
        if (private_mounts() == 0 && over(argv[2], "/proc/kallsyms") == 0)
            run(argv[2]);
    } else if (argc >= 4 && !strcmp(argv[1], "--refresh")) {
        if (private_mounts() == 0)
            test_refresh(argv[2], argv[3]);
    } else if (argc >= 3 && !strcmp(argv[1], "--modprobe")) {
        if (!privileged())
            KERNEL_SKIP("loading a module needs root");
        else
            test_modprobe(argv[2]);
    } else if (argc == 1) {
        if (!privileged()) {
            KERNEL_SKIP("the running kernel's symbols need root and real addresses in /proc/kallsyms");
        } else {
            for (int attempt = 1;; attempt++) {
                long m0 = mismatches;
                int f0 = failures;
                uint64_t d0 = kallsyms_digest();
                run("/proc/kallsyms");
                if (kallsyms_digest() == d0 || attempt == 3)
                    break;
                printf("  /proc/kallsyms changed during the run (a BPF program or trampoline): again\n");
                mismatches = m0;
                failures = f0;
            }
        }
    } else {
        fprintf(stderr, "usage: %s [--file KALLSYMS | --refresh KALLSYMS MODULES | --modprobe MODULE]\n", argv[0]);
        return 2;
    }
    return finish("diff");
}
