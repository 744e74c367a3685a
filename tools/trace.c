/*
 * `ksym trace PATTERN` and `ksym trace --tracepoints PATTERN`: one counting
 * program (tools/bpf/count.bpf.c, built into the binary) expanded with
 * ksym_bpf_program_expand into one alias per kernel function (fentry) or
 * BTF tracepoint (tp_btf) the pattern matches, every alias loaded from the
 * one relocated copy of the instructions and attached to its own target;
 * then per-target hit counts (the kernel's run counter of each alias),
 * sorted, refreshed every --interval seconds until Ctrl-C or --duration.
 */
#define _GNU_SOURCE

#include "trace.h"

#include <ksym.h>
#include "bpf_loader.h"
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

/* The phases (--phases): expand; prepare (relocation, maps and BTF);
 * load (every BPF_PROG_LOAD, the verifier's time); attach. */
int cmd_trace(struct ksym_btf *btf, const struct trace_opts *o)
{
    const char *pattern = o->pattern;
    int tracepoints = o->tracepoints, phases = o->phases;
    double interval = o->interval, duration = o->duration;
    long top = o->top;
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
    printf("%zu of %d %s programs attached for `%s`, one copy of %zu instructions%s\n", attached, n, kind,
           pattern, insn_cnt, duration > 0 ? "" : "; Ctrl-C to stop");
    if (phases)
        fprintf(stderr,
                "phases: expand %.3f s, prepare %.3f s, load %.3f s, attach %.3f s; %.3f s from start to attached\n",
                t_expand, t_prepare, t_load, t_attach, now_s() - t_start);
    fflush(stdout);
    if (attached == 0)
        goto out;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    double elapsed = 0;
    while (!stop) {
        sleep_ms((long)(interval * 1000));
        elapsed += interval;
        uint64_t total = 0;
        for (size_t k = 0; k < attached; k++) {
            kl_run_count(l.prog_fds[hits[k].prog], &hits[k].runs);
            total += hits[k].runs;
        }
        qsort(hits, attached, sizeof(*hits), by_runs);
        printf("--- %.1fs: %" PRIu64 " hits on %zu targets\n", elapsed, total, attached);
        for (size_t k = 0; k < attached && (long)k < top && hits[k].runs > 0; k++)
            printf("%12" PRIu64 "  %s%s%s\n", hits[k].runs, strcmp(hits[k].module, "vmlinux") ? hits[k].module : "",
                   strcmp(hits[k].module, "vmlinux") ? "`" : "", hits[k].target);
        fflush(stdout);
        if (duration > 0 && elapsed + 1e-9 >= duration)
            break;
    }
    rc = 0;
out:
    if (stats >= 0)
        close(stats);
    free(hits);
    kl_unload(&l);
    ksym_bpf_object_free(obj);
    return rc;
}
