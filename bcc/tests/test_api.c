/*
 * libksym-bcc's contract besides the answers (those are diff.c's): bad
 * handles and NULL pointers get bcc's error return and never a crash;
 * threads; what a non-root user gets; a process without bcc.
 *
 *   test_api            (BCC_LIB, KSYM_BCC_LIB as in diff.c)
 *   test_api --no-bcc   bcc is not in the process and cannot be loaded
 *                       (run with KSYM_BCC_FORWARD_LIB=/nonexistent)
 */
#include "common.h"

#include <fcntl.h>
#include <time.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static struct api bcc, shim;
static void test_refresh_threads(void);

static int zeroed(const struct bcc_symbol *s)
{
    return !s->name && !s->demangle_name && !s->module && s->offset == 0;
}

static void garbage(struct bcc_symbol *s)
{
    s->name = s->demangle_name = s->module = "garbage";
    s->offset = 99;
}

/* Everything written to stderr by `f` (run in this process), in `buf`. */
static void capture_stderr(void (*f)(void), char *buf, size_t size)
{
    char path[] = "/tmp/ksym-bcc-stderr-XXXXXX";
    int fd = mkstemp(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    f();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
}

static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; *p;) {
        if (!strncmp(p, prefix, strlen(prefix)))
            n++;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    return n;
}

/* A kernel text address of the running kernel (0 when hidden). */
static uint64_t some_kernel_address(void)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512];
    unsigned long long a = 0, found = 0;
    char type;
    while (f && !found && fgets(line, sizeof(line), f))
        if (sscanf(line, "%llx %c", &a, &type) == 2 && (type == 'T' || type == 't') && a)
            found = a;
    if (f)
        fclose(f);
    return found;
}

/* ----- bad handles and NULL pointers ------------------------------------------- */

static void test_bad_handles(void)
{
    struct bcc_symbol s;
    uint64_t a = 5;
    char junk[256];
    memset(junk, 0x5a, sizeof(junk));
    uint64_t k = some_kernel_address();

    garbage(&s);
    CHECK(shim.resolve(NULL, k, &s) == -1 && zeroed(&s));
    garbage(&s);
    CHECK(shim.resolve_no_demangle(NULL, k, &s) == -1 && zeroed(&s));
    garbage(&s);
    CHECK(shim.resolve(junk, k, &s) == -1 && zeroed(&s));
    CHECK(shim.resolve_name(NULL, NULL, "vfs_read", &a) == -1 && a == 5);
    CHECK(shim.resolve_name(junk, NULL, "vfs_read", &a) == -1 && a == 5);
    shim.refresh(NULL);
    shim.refresh(junk);
    shim.free_symcache(NULL, -1);
    shim.free_symcache(junk, -1);
    shim.free_symcache(junk, 1);

    void *c = shim.symcache_new(-1, NULL), *b = bcc.symcache_new(-1, NULL);
    CHECK(c != NULL);
    CHECK(shim.resolve(c, k, NULL) == -1);
    CHECK(shim.resolve_no_demangle(c, k, NULL) == -1);
    CHECK(shim.resolve_name(c, NULL, NULL, &a) == -1);
    CHECK(shim.resolve_name(c, "kernel", NULL, &a) == -1);
    CHECK(shim.resolve_name(c, NULL, "vfs_read", NULL) == -1);
    /* What bcc answers without crashing, the shim answers alike. */
    struct bcc_symbol x, y;
    garbage(&x);
    garbage(&y);
    CHECK(bcc.resolve(b, 0, &x) == -1 && shim.resolve(c, 0, &y) == -1 && zeroed(&x) && zeroed(&y));
    uint64_t ax = 5, ay = 5;
    CHECK(bcc.resolve_name(b, NULL, "no_such_symbol_at_all", &ax) == -1 &&
          shim.resolve_name(c, NULL, "no_such_symbol_at_all", &ay) == -1 && ax == 5 && ay == 5);
    CHECK(bcc.resolve_name(b, "", "", &ax) == shim.resolve_name(c, "", "", &ay));
    /* The handle knows what it is: a wrong pid frees it as a kernel cache
     * (valgrind: no leak), and a second free is a no-op. */
    shim.free_symcache(c, 4242);
    shim.free_symcache(c, -1);
    garbage(&s);
    CHECK(shim.resolve(c, k, &s) == -1 && zeroed(&s));
    bcc.free_symcache(b, -1);
}

/* ----- threads -------------------------------------------------------------------- */

#define NADDR 4000
#define NTHREADS 8

static uint64_t addrs[NADDR];
static struct bcc_symbol want[NADDR];
static int want_r[NADDR];
static void *shared_cache;

static void *resolver(void *arg)
{
    size_t t = (size_t)arg;
    long bad = 0;
    for (size_t j = 0; j < NADDR; j++) {
        size_t i = (j * 7919 + t * 131) % NADDR;
        struct bcc_symbol s;
        int r = (j + t) % 2 ? shim.resolve(shared_cache, addrs[i], &s)
                            : shim.resolve_no_demangle(shared_cache, addrs[i], &s);
        bad += r != want_r[i] || !str_eq(s.name, want[i].name) || !str_eq(s.module, want[i].module) ||
               s.offset != want[i].offset;
        if (j % 500 == 0) {
            uint64_t a;
            shim.resolve_name(shared_cache, NULL, "vfs_read", &a);
        }
    }
    return (void *)bad;
}

/* Other caches made and freed meanwhile: the registry under change. */
static volatile int stop_churn;
static void *churn(void *arg)
{
    (void)arg;
    while (!stop_churn) {
        void *c = shim.symcache_new(-1, NULL);
        struct bcc_symbol s;
        shim.resolve(c, addrs[0], &s);
        shim.free_symcache(c, -1);
    }
    return NULL;
}

/* One run of the threads' test; how many answers differ from bcc's. */
static long threads_once(void *b)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512];
    size_t n = 0;
    unsigned long long a;
    /* Every 30th line's address and one inside: shared addresses, module
     * and BPF ones included where the kernel has them. */
    for (size_t i = 0; f && n + 2 <= NADDR && fgets(line, sizeof(line), f); i++)
        if (i % 30 == 0 && sscanf(line, "%llx", &a) == 1) {
            addrs[n++] = a;
            addrs[n++] = a + 9;
        }
    if (f)
        fclose(f);
    for (; n < NADDR; n++)
        addrs[n] = 0xffffffff81000000ULL + n * 4096;
    for (size_t i = 0; i < NADDR; i++)
        want_r[i] = bcc.resolve(b, addrs[i], &want[i]);
    /* A new cache: the first answers load it, from every thread at once. */
    shared_cache = shim.symcache_new(-1, NULL);
    pthread_t th[NTHREADS], ch;
    pthread_create(&ch, NULL, churn, NULL);
    for (size_t t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, resolver, (void *)t);
    long bad = 0;
    for (size_t t = 0; t < NTHREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad += (long)r;
    }
    stop_churn = 1;
    pthread_join(ch, NULL);
    shim.free_symcache(shared_cache, -1);
    stop_churn = 0;
    return bad;
}

static void test_threads(void)
{
    /* bcc's cache and the shim's each read /proc/kallsyms once: a BPF
     * program or trampoline that came or went in between (the tests before
     * this one free theirs lazily) changes bcc's answers, not the shim's
     * alone. Such a run is done again (at most three times). */
    long bad = 0;
    void *b = NULL;
    for (int attempt = 1;; attempt++) {
        uint64_t d0 = kallsyms_digest();
        b = bcc.symcache_new(-1, NULL);
        bad = threads_once(b);
        if (kallsyms_digest() == d0 || attempt == 3)
            break;
        printf("  /proc/kallsyms changed during the run (a BPF program or trampoline): again\n");
        bcc.free_symcache(b, -1);
    }
    CHECK(bad == 0);
    printf("threads: %d threads x %d answers on one new cache, caches made and freed meanwhile: %ld differ from bcc\n",
           NTHREADS, NADDR, bad);
    test_refresh_threads();
    bcc.free_symcache(b, -1);
}

/* Refreshes while other threads resolve: the answers (return value and
 * offset: names from the full level are invalid after a refresh) stay
 * bcc's, and nothing breaks (ASan, valgrind). */
static volatile int refreshing;
static void *refresher(void *arg)
{
    (void)arg;
    for (int i = 0; i < 5; i++) {
        shim.refresh(shared_cache);
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    refreshing = 0;
    return NULL;
}

static void *offsets(void *arg)
{
    size_t t = (size_t)arg;
    long bad = 0;
    for (size_t j = 0; refreshing || j < NADDR; j++) {
        size_t i = (j * 7919 + t * 131) % NADDR;
        struct bcc_symbol s;
        int r = shim.resolve(shared_cache, addrs[i], &s);
        bad += r != want_r[i] || s.offset != want[i].offset;
    }
    return (void *)bad;
}

static void test_refresh_threads(void)
{
    shared_cache = shim.symcache_new(-1, NULL);
    refreshing = 1;
    pthread_t th[4], rt;
    pthread_create(&rt, NULL, refresher, NULL);
    for (size_t t = 0; t < 4; t++)
        pthread_create(&th[t], NULL, offsets, (void *)t);
    long bad = 0;
    for (size_t t = 0; t < 4; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad += (long)r;
    }
    pthread_join(rt, NULL);
    CHECK(bad == 0);
    printf("refresh under 4 resolving threads (5 refreshes): %ld answers differ from bcc\n", bad);
    shim.free_symcache(shared_cache, -1);
}

/* ----- not root -------------------------------------------------------------------- */

static void as_nobody(void)
{
    uint64_t k = some_kernel_address(); /* 0 for a reader that sees no addresses */
    void *c = shim.symcache_new(-1, NULL), *b = bcc.symcache_new(-1, NULL);
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        struct bcc_symbol x, y;
        garbage(&x);
        garbage(&y);
        uint64_t a = i == 0 ? k : 0xffffffff81000000ULL + (uint64_t)i * 0x1000;
        int rx = bcc.resolve(b, a, &x), ry = shim.resolve(c, a, &y);
        ok &= same_answer(rx, &x, ry, &y) && (rx == 0 || (zeroed(&x) && zeroed(&y)));
        uint64_t ax = 5, ay = 5;
        ok &= bcc.resolve_name(b, NULL, "vfs_read", &ax) == shim.resolve_name(c, NULL, "vfs_read", &ay) && ax == ay;
    }
    shim.free_symcache(c, -1);
    bcc.free_symcache(b, -1);
    printf("%s\n", ok ? "ok" : "differs");
}

/* uid 65534: bcc's answers, and one line on stderr when they are nothing:
 * bcc before 0.29 reads nothing for it; later ones read the file, whose
 * addresses the kernel may hide (kptr_restrict; creds.c tries each
 * identity in full). */
static void test_not_root(void)
{
    char path[] = "/tmp/ksym-bcc-nobody-XXXXXX";
    int fd = mkstemp(path);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(3);
        as_nobody();
        printf("sees %d\n", some_kernel_address() != 0);
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    char out[4096];
    ssize_t n = pread(fd, out, sizeof(out) - 1, 0);
    out[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(strstr(out, "ok\n") != NULL);
    int minor = api_bcc_minor(&bcc), sees = strstr(out, "sees 1") != NULL;
    CHECK(minor >= 0);
    if (geteuid() == 0 && minor < 29) {
        CHECK(count_lines(out, "libksym-bcc:") == 1);
        CHECK(strstr(out, "euid 65534 is not 0") != NULL);
    } else if (geteuid() == 0 && !sees) {
        CHECK(count_lines(out, "libksym-bcc:") == 1);
        CHECK(strstr(out, "libksym-bcc: /proc/kallsyms shows no kernel addresses") != NULL);
    } else {
        CHECK(count_lines(out, "libksym-bcc:") == 0);
    }
    const char *line = strstr(out, "libksym-bcc:");
    printf("not root (bcc 0.%d, %s): bcc's answers, and on stderr: %s", minor,
           sees ? "sees addresses" : "sees zeros", line ? line : "(nothing)\n");
}

/* ----- without bcc ------------------------------------------------------------------- */

static void forward_twice(void)
{
    CHECK(shim.symcache_new(getpid(), NULL) == NULL);
    CHECK(shim.symcache_new(1, NULL) == NULL);
    struct bcc_symbol s;
    garbage(&s);
    CHECK(shim.resolve(NULL, 0x1000, &s) == -1 && zeroed(&s));
    /* The kernel's caches do not need bcc. */
    void *c = shim.symcache_new(-1, NULL);
    CHECK(c != NULL);
    shim.free_symcache(c, -1);
}

static void test_no_bcc(void)
{
    char err[4096];
    capture_stderr(forward_twice, err, sizeof(err));
    CHECK(count_lines(err, "libksym-bcc:") == 1);
    CHECK(strstr(err, "cannot be resolved") != NULL && strstr(err, "/nonexistent") != NULL);
    printf("without bcc: NULL for user-space pids, once on stderr: %s", err);
}

int main(int argc, char **argv)
{
    shim = load_shim();
    if (argc > 1 && !strcmp(argv[1], "--no-bcc")) {
        test_no_bcc();
        return finish("test_api --no-bcc");
    }
    bcc = load_bcc();
    test_not_root();
    test_bad_handles();
    test_threads();
    return finish("test_api");
}
