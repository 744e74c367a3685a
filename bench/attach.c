/*
 * make bench-attach (in the 7.3 guest): one body on N kernel functions,
 * four ways, each in a child process of its own, rounds times; medians.
 *
 *   attach PATTERN ROUNDS
 *
 * The functions are libksym's list for PATTERN (ksym_bpf_program_multi_
 * attach: what the kernel can trace), handed to every contender:
 *   (a) libksym, multi link: open the object, list, prepare, load once,
 *       one tracing_multi link (tools/bpf_multi.h; what `ksym trace` does);
 *   (b) libksym, aliases: open, expand, prepare, load and link each alias
 *       from one relocated copy (what `ksym trace --way aliases` does);
 *   (c) libbpf's newest source: open, load, bpf_program__attach_tracing_
 *       multi() with the same ids and cookies (its own glob would take
 *       __init functions and fail);
 *   (d) the floor of one program per function: a two-instruction fentry
 *       program loaded and linked per function with raw bpf().
 * Each child reports the time from its start until every link exists (and
 * of it, for (a) and (b), libksym's listing: the kernel's BTF, kallsyms and
 * tracefs' filter list read, the functions chosen; (c) and (d) are handed
 * the list), the teardown (closing them), and the count attached; the parent reads its
 * peak RSS (wait4's ru_maxrss). The object is `ksym trace`'s own
 * (tools/bpf/count.bpf.o: count_multi, count_fentry). RLIMIT_NOFILE is
 * raised to its hard limit for (b) and (d), which need two fds a function.
 */
#define _GNU_SOURCE
#include <ksym.h>

#include "../tools/bpf_multi.h"
#include "count_bpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

struct result {
    double attach, teardown, listing;
    long count;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *pattern;
static uint32_t *ids;
static uint64_t *cookies;
static size_t nids;

static void raise_nofile(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

/* The list every contender gets: libksym's, vmlinux's link. */
static int list_functions(void)
{
    size_t prog;
    struct ksym_btf *btf = ksym_btf_open(NULL);
    struct ksym_bpf_object *o = ksym_bpf_object_open_mem(count_bpf_o, sizeof(count_bpf_o));
    struct ksym_bpf_multi_link ml = { .sz = sizeof(ml) };
    if (!btf || !o || ksym_bpf_object_find_program(o, "count_multi", &prog) ||
        ksym_bpf_program_multi_attach(o, prog, pattern, btf) != 1 || ksym_bpf_program_multi_link(o, prog, 0, &ml))
        return -1;
    nids = ml.count;
    ids = malloc(nids * sizeof(*ids));
    cookies = malloc(nids * sizeof(*cookies));
    memcpy(ids, ml.btf_ids, nids * sizeof(*ids));
    memcpy(cookies, ml.cookies, nids * sizeof(*cookies));
    ksym_bpf_object_free(o);
    ksym_btf_free(btf);
    return 0;
}

static struct result ksym_multi(double t0)
{
    struct result r = { 0, 0, 0, 0 };
    struct kl_loaded l;
    struct kl_multi m;
    char why[4096];
    size_t prog;
    struct ksym_btf *btf = ksym_btf_open(NULL);
    struct ksym_bpf_object *o = ksym_bpf_object_open_mem(count_bpf_o, sizeof(count_bpf_o));
    memset(&l, 0, sizeof(l));
    l.btf_fd = -1;
    ksym_bpf_object_find_program(o, "count_multi", &prog);
    int n = ksym_bpf_program_multi_attach(o, prog, pattern, btf);
    r.listing = now() - t0;
    for (size_t i = 0; i < ksym_bpf_object_program_count(o); i++)
        ksym_bpf_program_set_autoload(o, i, i == prog);
    if (n > 0 && kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0 &&
        kl_multi_attach(o, &l, prog, (size_t)n, &m, NULL, why, sizeof(why)) == 0)
        r.count = (long)m.functions;
    r.attach = now() - t0;
    double t1 = now();
    kl_multi_free(&m);
    kl_unload(&l);
    r.teardown = now() - t1;
    ksym_bpf_object_free(o);
    ksym_btf_free(btf);
    return r;
}

static struct result ksym_aliases(double t0)
{
    struct result r = { 0, 0, 0, 0 };
    struct kl_loaded l;
    char why[4096];
    size_t prog;
    raise_nofile();
    struct ksym_btf *btf = ksym_btf_open(NULL);
    struct ksym_bpf_object *o = ksym_bpf_object_open_mem(count_bpf_o, sizeof(count_bpf_o));
    memset(&l, 0, sizeof(l));
    l.btf_fd = -1;
    ksym_bpf_object_find_program(o, "count_fentry", &prog);
    size_t base = ksym_bpf_object_program_count(o);
    int n = ksym_bpf_program_expand(o, prog, pattern, btf);
    r.listing = now() - t0;
    for (size_t i = 0; i < base; i++)
        ksym_bpf_program_set_autoload(o, i, false);
    if (n > 0 && kl_prepare(o, NULL, btf, &l, why, sizeof(why)) == 0)
        for (size_t i = base; i < base + (size_t)n; i++)
            if (kl_load_prog(o, &l, i, NULL) >= 0 && kl_attach(o, &l, i) >= 0)
                r.count++;
    r.attach = now() - t0;
    double t1 = now();
    kl_unload(&l);
    r.teardown = now() - t1;
    ksym_bpf_object_free(o);
    ksym_btf_free(btf);
    return r;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    (void)fmt;
    (void)ap;
    return 0;
}

static struct result libbpf_multi(double t0)
{
    struct result r = { 0, 0, 0, 0 };
    libbpf_set_print(quiet);
    struct bpf_object *o = bpf_object__open_mem(count_bpf_o, sizeof(count_bpf_o), NULL);
    struct bpf_program *p;
    struct bpf_link *link = NULL;
    bpf_object__for_each_program(p, o) bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), "count_multi"));
    p = bpf_object__find_program_by_name(o, "count_multi");
    if (p && bpf_object__load(o) == 0) {
        LIBBPF_OPTS(bpf_tracing_multi_opts, opts, .ids = ids, .cookies = (const __u64 *)cookies, .cnt = nids);
        link = bpf_program__attach_tracing_multi(p, NULL, &opts);
        if (link)
            r.count = (long)nids;
    }
    r.attach = now() - t0;
    double t1 = now();
    bpf_link__destroy(link);
    bpf_object__close(o);
    r.teardown = now() - t1;
    return r;
}

static struct result floor_per_function(double t0)
{
    static const uint64_t insns[2] = { 0xb7, 0x95 }; /* r0 = 0; exit */
    struct result r = { 0, 0, 0, 0 };
    int *fds = malloc(2 * nids * sizeof(int));
    size_t nfds = 0;
    raise_nofile();
    for (size_t k = 0; k < nids; k++) {
        struct kl_prog_load a;
        memset(&a, 0, sizeof(a));
        a.prog_type = KL_PROG_TRACING;
        a.expected_attach_type = 24; /* BPF_TRACE_FENTRY */
        a.attach_btf_id = ids[k];
        a.insns = kl_ptr(insns);
        a.insn_cnt = 2;
        a.license = kl_ptr("GPL");
        long fd = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
        if (fd < 0)
            continue;
        fds[nfds++] = (int)fd;
        struct kl_raw_tp_open o;
        memset(&o, 0, sizeof(o));
        o.prog_fd = (uint32_t)fd;
        long link = kl_bpf(KL_RAW_TRACEPOINT_OPEN, &o, sizeof(o));
        if (link < 0)
            continue;
        fds[nfds++] = (int)link;
        r.count++;
    }
    r.attach = now() - t0;
    double t1 = now();
    while (nfds > 0)
        close(fds[--nfds]);
    r.teardown = now() - t1;
    free(fds);
    return r;
}

/* One contender in a child: its result and peak RSS (KiB). */
static struct result run(struct result (*f)(double), long *rss)
{
    int p[2];
    struct result r = { -1, -1, 0, 0 };
    struct rusage ru;
    int st;
    if (pipe(p) != 0)
        return r;
    pid_t c = fork();
    if (c == 0) {
        struct result x = f(now());
        if (write(p[1], &x, sizeof(x)) != (ssize_t)sizeof(x))
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    if (read(p[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
        r.attach = -1;
    close(p[0]);
    wait4(c, &st, 0, &ru);
    *rss = ru.ru_maxrss;
    return r;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: attach PATTERN ROUNDS\n");
        return 2;
    }
    pattern = argv[1];
    int rounds = atoi(argv[2]);
    if (rounds < 1 || rounds > 15 || list_functions() != 0) {
        fprintf(stderr, "attach: %s: %s\n", pattern, ksym_last_error_message());
        return 1;
    }
    static const char *const names[4] = { "(a) ksym trace, multi link", "(b) ksym trace, aliases",
                                          "(c) libbpf-next tracing_multi, ids", "(d) floor: a program per function" };
    struct result (*fns[4])(double) = { ksym_multi, ksym_aliases, libbpf_multi, floor_per_function };
    double att[4][15], tear[4][15], rssv[4][15], list[4][15], med[4];
    long count[4] = { 0 };
    /* Rounds interleaved: a + b + c + d, again, so that drift hits all. */
    for (int k = 0; k < rounds; k++)
        for (int c = 0; c < 4; c++) {
            long rss = 0;
            struct result r = run(fns[c], &rss);
            att[c][k] = r.attach;
            tear[c][k] = r.teardown;
            rssv[c][k] = (double)rss;
            list[c][k] = r.listing;
            count[c] = r.count;
        }
    for (int c = 0; c < 4; c++) {
        med[c] = median(att[c], rounds);
        double l = median(list[c], rounds);
        char listing[32] = "";
        if (l > 0)
            snprintf(listing, sizeof(listing), " (listing %.3f s)", l);
        printf("| %s | %zu | %s | %.3f s%s | %.3f s | %.0f MiB | %ld |\n", pattern, nids, names[c], med[c], listing,
               median(tear[c], rounds), median(rssv[c], rounds) / 1024, count[c]);
    }
    int all = 1;
    for (int c = 0; c < 4; c++)
        all &= count[c] == (long)nids;
    /* A target compares contenders that attached the same functions. */
#define TARGET(cond, text, ratio)                                                                          \
    printf("target %s: %s: %.3f (%s)\n", pattern, text, ratio, !all ? "not compared: counts differ" :     \
                                                                (cond) ? "MET" : "MISSED")
    TARGET(med[0] <= 1.2 * med[2], "(a) <= 1.2x (c)", med[0] / med[2]);
    TARGET(med[1] <= 1.3 * med[3], "(b) <= 1.3x (d)", med[1] / med[3]);
    if (nids > 900)
        TARGET(med[0] <= 0.05 * med[3], "(a) <= 0.05x (d)", med[0] / med[3]);
    for (int c = 0; c < 4; c++)
        if (count[c] != (long)nids)
            printf("count %s: %s attached %ld of %zu\n", pattern, names[c], count[c], nids);
    return 0;
}
