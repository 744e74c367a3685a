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
 * The questions are compare.h's. The live kernel's file may
 * change while the test runs (another tool loads a BPF program): the run
 * is repeated when it did.
 *
 * Environment: BCC_LIB (default libbcc_bpf.so.0), KSYM_BCC_LIB (the shim),
 * KSYM_BCC_SNAPSHOT_DIR (the test's own snapshot directory).
 */
#include "compare.h"

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

/* ----- files over /proc/kallsyms -------------------------------------------- */

static int private_mounts(void)
{
    /* In a chroot (tools/root/run.sh) "/" may be no mount point: then
     * /proc, where the files go, is made private. */
    if (unshare(CLONE_NEWNS) != 0 || (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 &&
                                      mount(NULL, "/proc", NULL, MS_REC | MS_PRIVATE, NULL) != 0)) {
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
            run(argv[2], NULL, 1);
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
                run("/proc/kallsyms", NULL, 1);
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
