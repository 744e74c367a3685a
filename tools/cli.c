/*
 * ksym: the command-line front end of libksym, and an example of its C API
 * (written against ksym.h only). This file is the frame: the command and
 * option tables, dispatch and help. Each command family has its file
 * (tools/cli.h): cli_table.c (lookup, addr, grep, modules, stat),
 * cli_kallsyms.c (resolve, addresses), cli_obj.c (obj), cli_btf.c (btf,
 * and trace's options), what they share in cli_common.c; `ksym trace` is
 * trace.c, through trace.h; `obj --load` and `trace` load with the
 * bundled loader, bpf_loader.h.
 *
 * One table, `commands` in this file, holds every command's
 * name, arguments, help and handler, and `options` every option with the
 * commands it applies to: dispatch, `ksym --help`, `ksym COMMAND --help`
 * and the reference part of docs/cli.md (`ksym --help-markdown`, checked
 * by `make test`) all come from them.
 *
 * Errors go to stderr as "ksym: ..." with libksym's message; the exit
 * status is 0 on success, 1 when a query or the command failed, 2 for bad
 * usage (with the usage on stderr).
 */
#define _GNU_SOURCE

#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_version(const struct options *o, int argc, char **argv)
{
    (void)o;
    (void)argc;
    (void)argv;
    printf("libksym %s\n", ksym_version());
    return 0;
}

static int cmd_help(const struct options *o, int argc, char **argv);

/* The commands: dispatch, usage, `ksym CMD --help` and docs/cli.md. */
struct command {
    const char *name;
    const char *args;    /* as usage shows them */
    int min_args;        /* positional arguments after the command */
    int max_args;        /* -1: any number */
    const char *summary; /* one line for the usage */
    const char *details; /* more, for `ksym CMD --help` and docs/cli.md */
    int (*run)(const struct options *o, int argc, char **argv);
    int (*run_table)(struct ksym_table *t, int argc, char **argv); /* opens the table first */
};

static const struct command commands[] = {
    { "lookup", "QUERY...", 1, -1, "the symbol each query names: name, module`name or vmlinux`name",
      "Prints address, type, name, [module], size (~: estimated) and \"built-in\" for each query.\n"
      "A name defined at several addresses is an error that lists them all; a name not found\n"
      "names its near matches (compiler-suffixed variants, other modules).",
      NULL, cmd_lookup },
    { "addr", "ADDR...", 1, -1, "the symbol at each hex address, and the offset into it",
      "Prints address, symbol+offset/size and [module]. Addresses are hex, with or without 0x.", NULL,
      cmd_addr },
    { "grep", "PATTERN", 1, 1, "every symbol matching a glob or modglob`glob (* ? [...])",
      "Prints each match as lookup does, absolute symbols first, then by address, and the count\n"
      "on stderr; no match is exit status 1.",
      NULL, cmd_grep },
    { "modules", "", 0, 0, "the modules: kind, symbol count, address range",
      "Kinds: vmlinux (the core kernel), loadable, built-in (from /proc/kallmodsyms or\n"
      "modules.builtin.ranges), pseudo ([bpf], [__builtin__ftrace], ...).",
      NULL, cmd_modules },
    { "stat", "", 0, 0, "counts, memory, read and parse time, snapshot, notes",
      "What ksym_table_stats says of the table, whether it came from a snapshot, and the\n"
      "table's diagnostics (notes that were not errors).",
      NULL, cmd_stat },
    { "resolve", "NAME...", 1, -1, "the names in one streaming pass over kallsyms (no table), through a cache",
      "Prints address and name per query (`-` and the error when not found); on stderr, per\n"
      "round, the passes over kallsyms, hits, misses and cached answers (--repeat N asks N\n"
      "times: the later rounds are answered by the cache).",
      cmd_resolve, NULL },
    { "obj", "FILE.bpf.o", 1, 1, "a BPF object: programs and aliases, attach targets, maps, variables, externs, relocations",
      "Attach targets are resolved against the running kernel's BTF (or --btf), externs in\n"
      "one pass over kallsyms (or --kallsyms). --load creates the maps and loads every\n"
      "program whose autoload is on (not `?` sections), aliases included, and prints each\n"
      "verifier verdict (root: bpf()); a target this kernel lacks is that program's error,\n"
      "not the object's: it is printed under the program.",
      cmd_obj, NULL },
    { "trace", "PATTERN", 1, 1, "hits per kernel function (fentry) or BTF tracepoint matching PATTERN",
      "One counting program (built in) on every target matching PATTERN (glob or module`glob):\n"
      "where the kernel has multi links (Linux 7.3), one program attached by one tracing_multi\n"
      "link per BTF object; elsewhere one alias per target, all loaded from one copy of its\n"
      "instructions (--way forces one). The hits per target, sorted, every --interval seconds\n"
      "until Ctrl-C or --duration. --tracepoints: BTF tracepoints (tp_btf) instead of functions\n"
      "(fentry). Root: bpf().",
      cmd_trace_options, NULL },
    { "btf", "[QUERY...]", 0, -1, "the kernel's BTF: the type each query names, or its counts",
      "A query is name, module`name or KIND:name (STRUCT:task_struct, FUNC:vfs_read); it\n"
      "prints [id] KIND module`name. Without queries: type and module counts, memory, and\n"
      "whether the boot's BTF snapshot was used.",
      cmd_btf, NULL },
    { "addresses", "", 0, 0, "whether this process sees the kernel's addresses (exit 0) or zeros (exit 1)",
      "Judged from the first lines of kallsyms (or --kallsyms), as libksym judges it before\n"
      "keeping a snapshot: a restricted reader (kernel.kptr_restrict, no CAP_SYSLOG) sees every\n"
      "address as 0; the first line alone cannot tell (x86-64 kernels print a per-CPU symbol at 0\n"
      "first, for root too). Exit status 2 when the file cannot be read or is not kallsyms.",
      cmd_addresses, NULL },
    { "version", "", 0, 0, "the library's version", NULL, cmd_version, NULL },
    { "help", "[COMMAND]", 0, 1, "this help, or one command's", NULL, cmd_help, NULL },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

enum option_kind { OPT_TEXT, OPT_SWITCH, OPT_COUNT, OPT_SECONDS, OPT_SECONDS0 };

/* The options: what they take, which commands they apply to. */
struct option_def {
    const char *name;
    const char *value;    /* as usage shows it; NULL for a switch */
    enum option_kind kind;
    const char *commands; /* the commands it applies to, space-separated */
    const char *help;
    size_t field;         /* offsetof(struct options, ...) */
};

#define TABLE_CMDS "lookup addr grep modules stat"
static const struct option_def options[] = {
    { "--kallsyms", "FILE", OPT_TEXT, TABLE_CMDS " resolve obj addresses",
      "kallsyms or kallmodsyms text instead of /proc/kallmodsyms or /proc/kallsyms",
      offsetof(struct options, kallsyms) },
    { "--ranges", "FILE", OPT_TEXT, TABLE_CMDS " resolve obj",
      "modules.builtin.ranges instead of /lib/modules/$(uname -r)'s (\"\": none)",
      offsetof(struct options, ranges) },
    { "--vmlinux", "FILE", OPT_TEXT, TABLE_CMDS, "a vmlinux ELF: exact symbol sizes", offsetof(struct options, vmlinux) },
    { "--modules", "FILE", OPT_TEXT, TABLE_CMDS " resolve obj",
      "/proc/modules to check snapshots and the cache against", offsetof(struct options, modules) },
    { "--btf", "PATH", OPT_TEXT, "obj btf",
      "vmlinux BTF (a file), or a directory of it and module BTF, for /sys/kernel/btf",
      offsetof(struct options, btf) },
    { "--no-snapshot", NULL, OPT_SWITCH, TABLE_CMDS " obj trace btf",
      "neither read nor write the table's or the kernel BTF's snapshot", offsetof(struct options, no_snapshot) },
    { "--snapshot-dir", "DIR", OPT_TEXT, TABLE_CMDS " obj trace btf", "where snapshots live (default /run/ksym)",
      offsetof(struct options, snapshot_dir) },
    { "--repeat", "N", OPT_COUNT, "resolve", "ask N times (default 1)", offsetof(struct options, repeat) },
    { "--load", NULL, OPT_SWITCH, "obj", "create the maps and load every program whose autoload is on", offsetof(struct options, load) },
    { "--tracepoints", NULL, OPT_SWITCH, "trace", "BTF tracepoints (tp_btf) instead of functions (fentry)",
      offsetof(struct options, tracepoints) },
    { "--interval", "S", OPT_SECONDS, "trace", "seconds between reports (default 1)",
      offsetof(struct options, interval) },
    { "--duration", "S", OPT_SECONDS0, "trace", "stop after S seconds (default 0: at Ctrl-C)",
      offsetof(struct options, duration) },
    { "--top", "N", OPT_COUNT, "trace", "targets per report (default 20)", offsetof(struct options, top) },
    { "--way", "WAY", OPT_TEXT, "trace",
      "multi (one program, tracing_multi links: Linux 7.3) or aliases (one link per function); default: the kernel's best",
      offsetof(struct options, way) },
    { "--phases", NULL, OPT_SWITCH, "trace", "print each phase's seconds to stderr (expand, prepare, load, attach)",
      offsetof(struct options, phases) },
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static int applies(const struct option_def *d, const char *cmd)
{
    size_t n = strlen(cmd);
    for (const char *p = d->commands; (p = strstr(p, cmd)) != NULL; p += n)
        if ((p == d->commands || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

static const char *spaced(const char *s)
{
    return *s ? " " : "";
}

/* The usage: with `all`, the options too (--help); without, for errors. */
static void usage(FILE *f, int all)
{
    fprintf(f, "usage: ksym [OPTIONS] COMMAND [ARGS...]   (options may come anywhere)\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++) {
        char head[64];
        snprintf(head, sizeof(head), "%s%s%s", commands[i].name, spaced(commands[i].args), commands[i].args);
        fprintf(f, "  %-22s %s\n", head, commands[i].summary);
    }
    if (!all) {
        fprintf(f, "\n`ksym --help` lists the options, `ksym COMMAND --help` says more of one command.\n");
        return;
    }
    fprintf(f, "\noptions (`ksym COMMAND --help` lists the ones of a command):\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        char head[64];
        snprintf(head, sizeof(head), "%s%s%s", options[i].name, options[i].value ? " " : "",
                 options[i].value ? options[i].value : "");
        fprintf(f, "  %-22s %s\n", head, options[i].help);
    }
    fprintf(f, "\nexit status: 0 success, 1 a query or the command failed, 2 bad usage\n");
}

static void command_help(FILE *f, const struct command *c)
{
    fprintf(f, "usage: ksym %s%s%s\n\n%s\n", c->name, spaced(c->args), c->args, c->summary);
    if (c->details)
        fprintf(f, "\n%s\n", c->details);
    int any = 0;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (!applies(&options[i], c->name))
            continue;
        if (!any++)
            fprintf(f, "\noptions:\n");
        char head[64];
        snprintf(head, sizeof(head), "%s%s%s", options[i].name, options[i].value ? " " : "",
                 options[i].value ? options[i].value : "");
        fprintf(f, "  %-22s %s\n", head, options[i].help);
    }
}

static int cmd_help(const struct options *o, int argc, char **argv)
{
    (void)o;
    if (argc == 0) {
        usage(stdout, 1);
        return 0;
    }
    const struct command *c = find_command(argv[0]);
    if (!c) {
        fprintf(stderr, "ksym: unknown command %s\n", argv[0]);
        usage(stderr, 0);
        return 2;
    }
    command_help(stdout, c);
    return 0;
}

/* docs/cli.md's reference part, from the tables (`make cli-doc` writes it,
 * `make test` checks it). Newlines in details become line breaks. */
/* Text for markdown: backticks (module`name) escaped; `cap` capitalises. */
static void md(const char *s, int cap)
{
    for (const char *p = s; *p; p++) {
        if (*p == '`' || *p == '|' || *p == '*' || *p == '[')
            putchar('\\');
        putchar(p == s && cap ? (char)toupper((unsigned char)*p) : *p == '\n' ? ' ' : *p);
    }
}

static void markdown(void)
{
    printf("| command | what it does |\n|---|---|\n");
    for (size_t i = 0; i < N_COMMANDS; i++) {
        printf("| `ksym %s%s%s` | ", commands[i].name, spaced(commands[i].args), commands[i].args);
        md(commands[i].summary, 1);
        printf(" |\n");
    }
    printf("\n| option | applies to | what it does |\n|---|---|---|\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        printf("| `%s%s%s` | %s | ", options[i].name, options[i].value ? " " : "",
               options[i].value ? options[i].value : "", options[i].commands);
        md(options[i].help, 1);
        printf(" |\n");
    }
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const struct command *c = &commands[i];
        printf("\n### ksym %s\n\n```\nksym [OPTIONS] %s%s%s\n```\n\n", c->name, c->name, spaced(c->args), c->args);
        md(c->summary, 1);
        putchar('.');
        if (c->details) {
            putchar(' ');
            md(c->details, 0);
        }
        putchar('\n');
        int any = 0;
        for (size_t j = 0; j < N_OPTIONS; j++)
            if (applies(&options[j], c->name))
                printf("%s`%s`", any++ ? ", " : "\nOptions: ", options[j].name);
        if (any)
            printf(".\n");
    }
    printf("\nExit status: 0 success, 1 a query or the command failed, 2 bad usage (the usage goes to stderr).\n");
}

/* "ksym: WHAT" and the usage (of command c, or all) on stderr: exit status 2. */
static int bad_usage(const struct command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad_usage(const struct command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ksym: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (c)
        command_help(stderr, c);
    else
        usage(stderr, 0);
    return 2;
}

/* A value of the option's kind, or 0. */
static int valid_value(const struct option_def *d, const char *v)
{
    char *end;
    errno = 0;
    switch (d->kind) {
    case OPT_COUNT: {
        long n = strtol(v, &end, 10);
        return !errno && end != v && !*end && n > 0;
    }
    case OPT_SECONDS:
    case OPT_SECONDS0: {
        double s = strtod(v, &end);
        return !errno && end != v && !*end && isfinite(s) && (d->kind == OPT_SECONDS ? s > 0 : s >= 0);
    }
    default:
        return 1;
    }
}

int main(int argc, char **argv)
{
    struct options o = { 0 };
    const struct option_def *given[N_OPTIONS];
    size_t ngiven = 0;
    char **pos = calloc((size_t)argc + 1, sizeof(*pos));
    int npos = 0, help = 0, rc;
    if (!pos)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) != 0 || !argv[i][2]) {
            pos[npos++] = argv[i];
            continue;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help = 1;
            continue;
        }
        if (!strcmp(argv[i], "--help-markdown")) {
            markdown();
            free(pos);
            return 0;
        }
        const struct option_def *d = NULL;
        for (size_t k = 0; k < N_OPTIONS && !d; k++)
            if (!strcmp(argv[i], options[k].name))
                d = &options[k];
        if (!d) {
            rc = bad_usage(NULL, "unknown option %s", argv[i]);
            goto out;
        }
        if (d->kind == OPT_SWITCH) {
            *(int *)((char *)&o + d->field) = 1;
        } else if (i + 1 >= argc) {
            rc = bad_usage(NULL, "%s needs a value", argv[i]);
            goto out;
        } else if (!valid_value(d, argv[i + 1])) {
            rc = bad_usage(NULL, "%s needs %s, not '%s'", d->name,
                           d->kind == OPT_COUNT     ? "a positive whole number"
                           : d->kind == OPT_SECONDS ? "a positive number of seconds"
                                                    : "a number of seconds, 0 or more",
                           argv[i + 1]);
            goto out;
        } else {
            *(const char **)((char *)&o + d->field) = argv[++i];
        }
        given[ngiven++] = d;
    }
    if (npos == 0) {
        if (help) {
            usage(stdout, 1);
            rc = 0;
        } else {
            rc = bad_usage(NULL, "no command");
        }
        goto out;
    }
    const struct command *c = find_command(pos[0]);
    if (!c) {
        rc = bad_usage(NULL, "unknown command %s", pos[0]);
        goto out;
    }
    if (help) {
        command_help(stdout, c);
        rc = 0;
        goto out;
    }
    for (size_t k = 0; k < ngiven; k++)
        if (!applies(given[k], c->name)) {
            rc = bad_usage(c, "%s is not an option of %s", given[k]->name, c->name);
            goto out;
        }
    int nargs = npos - 1;
    if (nargs < c->min_args || (c->max_args >= 0 && nargs > c->max_args)) {
        rc = bad_usage(c, "%s %s", c->name,
                       c->max_args == 0              ? "takes no arguments"
                       : c->max_args == 1 && c->min_args == 1 ? "takes one argument"
                       : c->max_args == 1                     ? "takes at most one argument"
                                                              : "needs at least one argument");
        goto out;
    }
    if (c->run_table) {
        struct ksym_table *t = open_table(&o);
        if (!t) {
            rc = 1;
            goto out;
        }
        rc = c->run_table(t, nargs, pos + 1);
        ksym_table_free(t);
    } else {
        rc = c->run(&o, nargs, pos + 1);
    }
out:
    free(pos);
    return rc;
}
