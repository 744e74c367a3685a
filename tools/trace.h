/*
 * `ksym trace`: what tools/cli.c's command table hands tools/trace.c.
 * The command line is parsed and checked in cli.c (its option table);
 * trace.c expands, loads, attaches and reports. A new `trace` option is a
 * field here, an entry in cli.c's option table, and its use in trace.c.
 */
#ifndef KSYM_TRACE_H
#define KSYM_TRACE_H

#include <ksym.h>

struct trace_opts {
    const char *pattern; /* `glob` or `module`glob`: functions, or BTF tracepoints */
    int tracepoints;     /* --tracepoints: tp_btf aliases instead of fentry */
    double interval;     /* --interval: seconds between reports */
    double duration;     /* --duration: stop after so many seconds; 0: at Ctrl-C */
    long top;            /* --top: targets per report */
    int phases;          /* --phases: each phase's seconds on stderr */
    const char *way;     /* --way: "multi", "aliases", or NULL: the kernel's best (ksym_bpf_program_way) */
};

/* Runs `ksym trace` on the kernel's BTF `btf` (opened and freed by the
 * caller; NULL when that failed: reported, 1). 0 once it traced, 1 when
 * it could not (the reason on stderr). */
int cmd_trace(struct ksym_btf *btf, const struct trace_opts *o);

#endif
