/*
 * make bench-bcc: libksym-bcc against the real libbcc, in one run.
 *
 *   bench SHIM [RUNS]              the C table of docs/bcc.md ("Measured")
 *   bench --one LIB ADDRS [FIX]    one measurement (a fresh process each time)
 *
 * In-process: bcc_symcache_new(-1) and the first 1,000 bcc_symcache_resolve
 * calls, in a new process each time (so the cache is new, the page cache
 * and libksym's snapshot warm), for two sets of addresses taken from
 * /proc/kallsyms: inside random symbols (any kind; a few share their address
 * with another name), and inside core-kernel functions whose address no
 * other name shares. Also the shim without a snapshot (as the first use in
 * a boot, which then writes it). RSS added: resident KB after the calls
 * minus before, private (anonymous) and shared (file-backed and tmpfs
 * pages: libksym's snapshot, the page cache every process shares) apart.
 *
 * bpftrace: Debian's bpftrace started with a program that prints a kernel
 * stack at the first sched_switch and exits; the time from its start to
 * the first symbolized frame on its stdout, and its peak RSS, without and
 * with LD_PRELOAD=libksym-bcc.so.0, alternating.
 *
 * Medians of RUNS (default 11); the ratio is bcc's median over the shim's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct bcc_symbol {
    const char *name, *demangle_name, *module;
    uint64_t offset;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Resident KB of this process: anonymous (private) in *anon, file-backed
 * and tmpfs pages (libksym's snapshot, shared by every process of a boot)
 * in *shared (/proc/self/status). */
static void rss_kb(long *anon, long *shared)
{
    char line[256];
    long v;
    *anon = *shared = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "RssAnon: %ld", &v) == 1)
            *anon = v;
        else if (sscanf(line, "RssFile: %ld", &v) == 1 || sscanf(line, "RssShmem: %ld", &v) == 1)
            *shared += v;
    }
    if (f)
        fclose(f);
}

/* One measurement: prints "MS ANON_KB SHARED_KB FOUND". */
static int one(const char *lib, const char *addrs_path)
{
    uint64_t a[1000];
    size_t n = 0;
    FILE *f = fopen(addrs_path, "r");
    unsigned long long v;
    while (f && n < 1000 && fscanf(f, "%llx", &v) == 1)
        a[n++] = v;
    if (f)
        fclose(f);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    void *(*new_cache)(int, void *);
    int (*resolve)(void *, uint64_t, struct bcc_symbol *);
    *(void **)&new_cache = dlsym(h, "bcc_symcache_new");
    *(void **)&resolve = dlsym(h, "bcc_symcache_resolve");
    long a0, s0, a1, s1;
    rss_kb(&a0, &s0);
    double t0 = now_ms();
    void *c = new_cache(-1, NULL);
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        struct bcc_symbol s;
        found += resolve(c, a[i], &s) == 0;
    }
    double t1 = now_ms();
    rss_kb(&a1, &s1);
    printf("%.3f %ld %ld %zu\n", t1 - t0, a1 - a0, s1 - s0, found);
    return 0;
}

/* ----- the driver ---------------------------------------------------------------- */

static char self[4096];

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Runs `bench --one LIB ADDRS` with `env` added: its time, private and
 * shared KB. */
static int measure(const char *lib, const char *addrs, const char *env, double *ms, double *kb, double *shared)
{
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "env %s '%s' --one '%s' '%s'", env, self, lib, addrs);
    FILE *p = popen(cmd, "r");
    size_t found = 0;
    int ok = p && fscanf(p, "%lf %lf %lf %zu", ms, kb, shared, &found) == 4;
    if (p)
        pclose(p);
    return ok ? 0 : -1;
}

/* Addresses from /proc/kallsyms: `core_only` picks functions of the core
 * kernel whose address no other name has. */
static void write_addrs(const char *path, int core_only)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    size_t cap = 1 << 18, n = 0;
    unsigned long long *a = malloc(cap * sizeof(*a));
    char *is_core = malloc(cap);
    char line[1024];
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long long v;
        char type;
        if (sscanf(line, "%llx %c", &v, &type) != 2 || v < 0x00ffffffffffffffULL)
            continue;
        if (n == cap) {
            cap *= 2;
            a = realloc(a, cap * sizeof(*a));
            is_core = realloc(is_core, cap);
        }
        is_core[n] = !strchr(line, '[') && (type == 't' || type == 'T');
        a[n++] = v;
    }
    if (f)
        fclose(f);
    FILE *o = fopen(path, "w");
    uint64_t r = 0x2545f4914f6cdd1dULL;
    for (int k = 0; k < 1000 && n > 2;) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        size_t i = (size_t)(r % (n - 1));
        if (core_only && (!is_core[i] || (i > 0 && a[i - 1] == a[i]) || a[i + 1] == a[i] || a[i + 1] < a[i]))
            continue;
        uint64_t span = a[i + 1] > a[i] ? a[i + 1] - a[i] : 1;
        fprintf(o, "%llx\n", a[i] + (r >> 20) % (span < 256 ? span : 256));
        k++;
    }
    fclose(o);
    free(a);
    free(is_core);
}

/* bpftrace to its first symbolized frame: ms, and its peak RSS in KB. */
static int bpftrace_once(const char *preload, const char *err, double *ms, double *kb)
{
    int pfd[2];
    if (pipe(pfd) != 0)
        return -1;
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        int errfd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(errfd, 2);
        close(pfd[0]);
        if (preload)
            setenv("LD_PRELOAD", preload, 1);
        execlp("bpftrace", "bpftrace", "-e", "tracepoint:sched:sched_switch { printf(\"%s\\n\", kstack); exit(); }",
               (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    char buf[8192];
    size_t len = 0;
    *ms = -1;
    for (;;) {
        struct pollfd p = { pfd[0], POLLIN, 0 };
        if (poll(&p, 1, 60000) <= 0)
            break;
        ssize_t k = read(pfd[0], buf + len, sizeof(buf) - 1 - len);
        if (k <= 0)
            break;
        len += (size_t)k;
        buf[len] = 0;
        /* A frame: "        name+offset". */
        char *plus = strchr(buf, '+');
        if (*ms < 0 && plus && plus > buf && plus[-1] != ' ' && strstr(buf, "    "))
            *ms = now_ms() - t0;
        if (len >= sizeof(buf) - 1)
            len = 0;
    }
    close(pfd[0]);
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    *kb = (double)ru.ru_maxrss;
    return *ms >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void row(const char *what, const char *unit, double a, double b)
{
    printf("| %s | %.1f %s | %.1f %s | %.2fx |\n", what, a, unit, b, unit, b > 0 ? a / b : 0);
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--one"))
        return one(argv[2], argv[3]);
    if (argc < 2) {
        fprintf(stderr, "usage: %s SHIM [RUNS] | --one LIB ADDRS\n", argv[0]);
        return 2;
    }
    const char *shim = argv[1];
    int runs = argc > 2 ? atoi(argv[2]) : 11;
    if (runs < 1 || runs > 101)
        runs = 11;
    const char *bcc = getenv("BCC_LIB") && *getenv("BCC_LIB") ? getenv("BCC_LIB") : "libbcc_bpf.so.0";
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[sl > 0 ? sl : 0] = 0;
    if (geteuid() != 0) {
        printf("bench-bcc: SKIP: needs root (bcc reads kernel symbols only as root)\n");
        return 0;
    }
    char dir[] = "/tmp/ksym-bcc-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char any[128], core[128], snapenv[256];
    snprintf(any, sizeof(any), "%s/any", dir);
    snprintf(core, sizeof(core), "%s/core", dir);
    snprintf(snapenv, sizeof(snapenv), "KSYM_BCC_SNAPSHOT_DIR=%s/snap", dir);
    write_addrs(any, 0);
    write_addrs(core, 1);
    double ms, kb, sh;
    measure(shim, any, snapenv, &ms, &kb, &sh); /* writes the snapshot */

    printf("bcc_symcache_new(-1) + the first 1,000 resolves, new process each, median of %d "
           "(`make bench-bcc`):\n\n",
           runs);
    printf("| | libbcc (0.26) | libksym-bcc | bcc / shim |\n|---|---|---|---|\n");
    struct {
        const char *what, *addrs, *env;
    } sets[] = {
        { "inside random symbols: time", any, snapenv },
        { "core functions, no alias: time", core, snapenv },
        { "inside random symbols, no snapshot: time", any, "KSYM_BCC_SNAPSHOT_DIR=none" },
    };
    for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
        double bt[101], st[101], bk[101], sk[101], bs[101], ss[101];
        int nb = 0, ns = 0;
        for (int i = 0; i < runs; i++) {
            if (measure(bcc, sets[s].addrs, "A=1", &bt[nb], &bk[nb], &bs[nb]) == 0)
                nb++;
            if (measure(shim, sets[s].addrs, sets[s].env, &st[ns], &sk[ns], &ss[ns]) == 0)
                ns++;
        }
        if (!nb || !ns) {
            printf("| %s | failed | | |\n", sets[s].what);
            continue;
        }
        row(sets[s].what, "ms", median(bt, nb), median(st, ns));
        char what[160];
        int stem = (int)(strlen(sets[s].what) - 6);
        snprintf(what, sizeof(what), "%.*s: private RSS added", stem, sets[s].what);
        row(what, "MB", median(bk, nb) / 1024, median(sk, ns) / 1024);
        snprintf(what, sizeof(what), "%.*s: shared RSS added (snapshot pages)", stem, sets[s].what);
        row(what, "MB", median(bs, nb) / 1024, median(ss, ns) / 1024);
    }

    if (system("command -v bpftrace > /dev/null") != 0) {
        printf("\nbpftrace: SKIP: not installed\n");
    } else {
        double pt[101], qt[101], pk[101], qk[101];
        int np = 0, nq = 0;
        char preload[4096 + 64];
        snprintf(preload, sizeof(preload), "%s", shim);
        setenv("KSYM_BCC_SNAPSHOT_DIR", snapenv + strlen("KSYM_BCC_SNAPSHOT_DIR="), 1);
        /* Its tracepoint needs tracefs, which a fresh boot may not have
         * mounted (bcc/tests/bpftrace.sh mounts it the same way). */
        if (system("[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing") != 0)
            printf("\nbpftrace: tracefs is not mounted at /sys/kernel/tracing and could not be\n");
        char err[4096 + 64];
        snprintf(err, sizeof(err), "%s/bpftrace.err", dir);
        int bruns = runs < 7 ? runs : 7;
        for (int i = 0; i < bruns; i++) {
            if (bpftrace_once(NULL, err, &pt[np], &pk[np]) == 0)
                np++;
            if (bpftrace_once(preload, err, &qt[nq], &qk[nq]) == 0)
                nq++;
        }
        printf("\nbpftrace 0.17 (`tracepoint:sched:sched_switch { printf(\"%%s\\n\", kstack); exit(); }`), "
               "median of %d:\n\n",
               bruns);
        printf("| | without | LD_PRELOAD=libksym-bcc.so.0 | without / with |\n|---|---|---|---|\n");
        if (np && nq) {
            row("start to the first symbolized frame", "ms", median(pt, np), median(qt, nq));
            row("peak RSS", "MB", median(pk, np) / 1024, median(qk, nq) / 1024);
        } else {
            /* What the last failed run said, so the reader can act. */
            char line[512] = "";
            FILE *e = fopen(err, "r");
            while (e && fgets(line, sizeof(line), e) && !strstr(line, "ERROR"))
                ;
            if (e)
                fclose(e);
            line[strcspn(line, "\n")] = 0;
            printf("| bpftrace failed (%d of %d runs without, %d with the shim ok): %s | | | |\n", np, bruns, nq,
                   line);
        }
    }
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
