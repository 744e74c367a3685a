/*
 * `ksym trace PATTERN` and `ksym trace --tracepoints PATTERN`: one counting
 * program (tools/bpf/count.bpf.c, built into the binary) on every kernel
 * function (fentry) or BTF tracepoint (tp_btf) the pattern matches, then
 * per-target hit counts, sorted, refreshed every --interval seconds until
 * Ctrl-C or --duration. Functions take the kernel's best way
 * (ksym_bpf_program_way, or --way): one multi program with a
 * tracing_multi link per BTF object (Linux 7.3; counts by cookie), or
 * aliases (ksym_bpf_program_expand: one alias per target, every one loaded
 * from the one relocated copy of the instructions and attached to its own
 * target; counts from the kernel's run counter of each alias). Both print
 * the same report.
 */
#define _GNU_SOURCE

#include "trace.h"

#include <ksym.h>
#include "bpf_multi.h"
#include "count_bpf.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

struct hit {
    size_t prog;
    uint64_t runs;
    const char *target, *module;
};

static int by_runs(const void *a, const void *b)
{
    const struct hit *x = a, *y = b;
    if (x->runs != y->runs)
        return x->runs < y->runs ? 1 : -1;
    return strcmp(x->target, y->target);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (!stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Ctrl-C and SIGTERM end the trace with one last report: caught from
 * before the "attached" line is printed, so that a caller who signals
 * once it has read that line always gets the report. */
static void catch_stop(void)
{
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
}

/* The report, every --interval seconds until Ctrl-C or --duration, and
 * once more at the end (a signal before the first interval included);
 * `count` refreshes hits[].runs. */
static void report(struct hit *hits, size_t attached, const struct trace_opts *o,
                   void (*count)(struct hit *, size_t, void *), void *arg)
{
    double elapsed = 0, start = now_s();
    for (int last = 0; !last;) {
        sleep_ms((long)(o->interval * 1000));
        elapsed += o->interval;
        last = stop || (o->duration > 0 && elapsed + 1e-9 >= o->duration);
        uint64_t total = 0;
        count(hits, attached, arg);
        for (size_t k = 0; k < attached; k++)
            total += hits[k].runs;
        qsort(hits, attached, sizeof(*hits), by_runs);
        printf("--- %.1fs: %" PRIu64 " hits on %zu targets\n", stop ? now_s() - start : elapsed, total, attached);
        for (size_t k = 0; k < attached && (long)k < o->top && hits[k].runs > 0; k++)
            printf("%12" PRIu64 "  %s%s%s\n", hits[k].runs, strcmp(hits[k].module, "vmlinux") ? hits[k].module : "",
                   strcmp(hits[k].module, "vmlinux") ? "`" : "", hits[k].target);
        fflush(stdout);
    }
}

static void count_runs(struct hit *hits, size_t n, void *arg)
{
    const struct kl_loaded *l = arg;
    for (size_t k = 0; k < n; k++)
        kl_run_count(l->prog_fds[hits[k].prog], &hits[k].runs);
}

/* count_multi's per-function counts: the .bss array, by cookie (hit.prog
 * holds the cookie). */
struct multi_counts {
    int bss_fd;
    size_t bss_size, off;
    unsigned char *buf;
};

static void count_cookies(struct hit *hits, size_t n, void *arg)
{
    struct multi_counts *c = arg;
    uint32_t zero = 0;
    if (kl_map_lookup(c->bss_fd, &zero, c->buf) != 0)
        return;
    const uint64_t *per = (const uint64_t *)(c->buf + c->off);
    size_t max = (c->bss_size - c->off) / sizeof(uint64_t);
    for (size_t k = 0; k < n; k++)
        hits[k].runs = hits[k].prog < max ? per[hits[k].prog] : 0;
}

/* The multi way: count_multi on every function `pattern` matches, one
 * load and one tracing_multi link per BTF object. 0 once it traced, 1
 * when it could not, -1 when the kernel refused the multi program itself
 * (the caller falls back to aliases; `why` says why). */
static int trace_multi(struct ksym_bpf_object *obj, struct ksym_btf *btf, const struct trace_opts *o,
                       char *why, size_t why_size)
{
    double t_start = now_s(), t_prepare, t_attach;
    size_t prog, bss, var;
    struct kl_loaded l;
    struct kl_multi m;
    struct multi_counts counts = { -1, 0, 0, NULL };
    struct hit *hits = NULL;
    int rc = 1;
    memset(&l, 0, sizeof(l));
    memset(&m, 0, sizeof(m));
    l.btf_fd = -1;
    if (ksym_bpf_object_find_program(obj, "count_multi", &prog) != 0 ||
        ksym_bpf_object_find_map(obj, ".bss", &bss) != 0 ||
        ksym_bpf_object_find_var(obj, "multi_hits", &var) != 0) {
        snprintf(why, why_size, "%s", ksym_last_error_message());
        return 1;
    }
    int nlinks = ksym_bpf_program_multi_attach(obj, prog, o->pattern, btf);
    double t_expand = now_s() - t_start;
    if (nlinks <= 0) {
        if (nlinks == 0)
            snprintf(why, why_size, "no attachable kernel function (BTF, kallsyms, ftrace) matches `%s`",
                     o->pattern);
        else
            snprintf(why, why_size, "%s", ksym_last_error_message());
        return 1;
    }
    for (size_t i = 0; i < ksym_bpf_object_program_count(obj); i++)
        ksym_bpf_program_set_autoload(obj, i, i == prog);
    double t0 = now_s();
    int err = kl_prepare(obj, NULL, btf, &l, why, why_size);
    t_prepare = now_s() - t0;
    if (err)
        goto out;
    t0 = now_s();
    err = kl_multi_attach(obj, &l, prog, (size_t)nlinks, &m, NULL, why, why_size);
    t_attach = now_s() - t0;
    if (err && m.functions == 0) {
        rc = (m.prog_fds[0] < 0) ? -1 : 1; /* the program itself refused: aliases may do */
        goto out;
    }
    if (err)
        fprintf(stderr, "ksym: %s\n", why);
    struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
    struct ksym_bpf_var_info vi = { .sz = sizeof(vi) };
    ksym_bpf_map_info(obj, bss, &mi);
    ksym_bpf_var_info(obj, var, &vi);
    counts.bss_fd = l.map_fds[bss];
    counts.bss_size = mi.value_size;
    counts.off = vi.offset;
    counts.buf = calloc(1, mi.value_size);
    hits = calloc(m.functions ? m.functions : 1, sizeof(*hits));
    if (!counts.buf || !hits) {
        snprintf(why, why_size, "out of memory");
        goto out;
    }
    size_t attached = 0, insn_cnt = 0;
    ksym_bpf_program_insns(obj, prog, &insn_cnt);
    for (size_t k = 0; k < (size_t)nlinks; k++) {
        struct ksym_bpf_multi_link ml = { .sz = sizeof(ml) };
        if (m.prog_fds[k] < 0 || ksym_bpf_program_multi_link(obj, prog, k, &ml) != 0)
            continue;
        for (size_t j = 0; j < ml.count; j++) {
            struct ksym_bpf_multi_function f = { .sz = sizeof(f) };
            if (!kl_multi_refused(&m, ml.cookies[j]) &&
                ksym_bpf_program_multi_function(obj, prog, ml.cookies[j], &f) == 0)
                hits[attached++] = (struct hit){ (size_t)ml.cookies[j], 0, f.name, f.module };
        }
    }
    catch_stop();
    printf("%zu functions attached for `%s` by %zu tracing_multi link%s, one program of %zu instructions%s\n",
           attached, o->pattern, m.nfds, m.nfds == 1 ? "" : "s", insn_cnt, o->duration > 0 ? "" : "; Ctrl-C to stop");
    if (o->phases)
        fprintf(stderr,
                "phases: expand %.3f s, prepare %.3f s, load + attach %.3f s; %.3f s from start to attached\n",
                t_expand, t_prepare, t_attach, now_s() - t_start);
    fflush(stdout);
    report(hits, attached, o, count_cookies, &counts);
    rc = 0;
out:
    free(hits);
    free(counts.buf);
    kl_multi_free(&m);
    kl_unload(&l);
    return rc;
}

/* The phases (--phases): expand; prepare (relocation, maps and BTF);
 * load (every BPF_PROG_LOAD, the verifier's time); attach. */
int cmd_trace(struct ksym_btf *btf, const struct trace_opts *o)
{
    const char *pattern = o->pattern;
    int tracepoints = o->tracepoints, phases = o->phases;
    double duration = o->duration;
    double t_start = now_s(), t_expand = 0, t_prepare = 0, t_load = 0, t_attach = 0;
    const char *body = tracepoints ? "count_tp_btf" : "count_fentry";
    const char *kind = tracepoints ? "tp_btf" : "fentry";
    struct ksym_bpf_object *obj = ksym_bpf_object_open_mem(count_bpf_o, sizeof(count_bpf_o));
    struct kl_loaded l;
    struct hit *hits = NULL;
    int rc = 1, stats = -1;
    memset(&l, 0, sizeof(l));
    l.btf_fd = -1;
    if (!obj || !btf) {
        fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
        goto out;
    }
    size_t prog, base = ksym_bpf_object_program_count(obj);
    if (ksym_bpf_object_find_program(obj, body, &prog) != 0) {
        fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
        goto out;
    }
    if (!tracepoints) {
        /* The kernel's best way, or the one asked for. */
        char why[4096];
        int way = ksym_bpf_program_way(obj, prog, btf);
        int multi = o->way ? !strcmp(o->way, "multi") : way == KSYM_WAY_MULTI;
        if (multi && way != KSYM_WAY_MULTI) {
            fprintf(stderr, "ksym: --way multi: %s\n",
                    way < 0 ? ksym_last_error_message() : "this kernel has no tracing_multi link (Linux 7.3)");
            goto out;
        }
        if (multi) {
            int r = trace_multi(obj, btf, o, why, sizeof(why));
            if (r >= 0 || o->way) {
                if (r)
                    fprintf(stderr, "ksym: %s\n", why);
                rc = r ? 1 : 0;
                goto out;
            }
            fprintf(stderr, "ksym: the multi program was refused (%s); attaching aliases instead\n", why);
            ksym_bpf_object_free(obj);
            obj = ksym_bpf_object_open_mem(count_bpf_o, sizeof(count_bpf_o));
            if (!obj || ksym_bpf_object_find_program(obj, body, &prog) != 0) {
                fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
                goto out;
            }
            base = ksym_bpf_object_program_count(obj);
        }
    }
    int n = ksym_bpf_program_expand(obj, prog, pattern, btf);
    t_expand = now_s() - t_start;
    if (n < 0) {
        fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
        goto out;
    }
    if (n == 0) {
        fprintf(stderr, "ksym: no %s matches `%s`\n",
                tracepoints ? "BTF tracepoint" : "attachable kernel function (BTF, kallsyms, ftrace)", pattern);
        goto out;
    }
    /* Only the aliases are loaded: the object's own programs are
     * placeholders without a target (autoload off, as a libbpf loader
     * would say it); expand's aliases start with autoload on. */
    for (size_t i = 0; i < base; i++)
        ksym_bpf_program_set_autoload(obj, i, false);
    char why[4096];
    double t0 = now_s();
    int err = kl_prepare(obj, NULL, btf, &l, why, sizeof(why));
    t_prepare = now_s() - t0;
    if (err) {
        fprintf(stderr, "ksym: %s\n", why);
        goto out;
    }
    stats = kl_enable_stats();
    if (stats < 0) {
        fprintf(stderr, "ksym: cannot enable the kernel's run counters (BPF_ENABLE_STATS): %s\n",
                strerror(-stats));
        goto out;
    }
    hits = calloc((size_t)n, sizeof(*hits));
    if (!hits) {
        fprintf(stderr, "ksym: out of memory\n");
        goto out;
    }
    size_t attached = 0, insn_cnt = 0;
    ksym_bpf_program_insns(obj, prog, &insn_cnt);
    for (size_t i = base; i < base + (size_t)n; i++) {
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        if (!ksym_bpf_program_autoload(obj, i))
            continue;
        ksym_bpf_program_attach_info(obj, i, &at);
        t0 = now_s();
        int fd = kl_load_prog(obj, &l, i, NULL);
        t_load += now_s() - t0;
        if (fd < 0 && attached == 0 && !tracepoints && (fd == -EPERM || fd == -EOPNOTSUPP || fd == -524)) {
            fprintf(stderr,
                    "ksym: this kernel refuses fentry programs (%s); trace its BTF tracepoints instead, "
                    "e.g. ksym trace --tracepoints 'sched_*'\n",
                    strerror(-fd));
            goto out;
        }
        t0 = now_s();
        int link = fd < 0 ? -1 : kl_attach(obj, &l, i);
        t_attach += now_s() - t0;
        if (fd < 0 || link < 0) {
            fprintf(stderr, "ksym: %s`%s: %s\n", at.module ? at.module : "?", at.target ? at.target : "?",
                    strerror(fd < 0 ? -fd : -l.link_fds[i]));
            continue;
        }
        hits[attached++] = (struct hit){ i, 0, at.target, at.module };
    }
    catch_stop();
    printf("%zu of %d %s programs attached for `%s`, one copy of %zu instructions%s\n", attached, n, kind,
           pattern, insn_cnt, duration > 0 ? "" : "; Ctrl-C to stop");
    if (phases)
        fprintf(stderr,
                "phases: expand %.3f s, prepare %.3f s, load %.3f s, attach %.3f s; %.3f s from start to attached\n",
                t_expand, t_prepare, t_load, t_attach, now_s() - t_start);
    fflush(stdout);
    if (attached == 0)
        goto out;
    report(hits, attached, o, count_runs, &l);
    rc = 0;
out:
    if (stats >= 0)
        close(stats);
    free(hits);
    kl_unload(&l);
    ksym_bpf_object_free(obj);
    return rc;
}
