/*
 * ksym: command-line front end of libksym, and an example of its C API.
 *
 *   ksym [OPTIONS] lookup QUERY...     name, module`name or vmlinux`name
 *   ksym [OPTIONS] addr ADDR...        symbolize hex addresses
 *   ksym [OPTIONS] grep PATTERN        glob or modglob`glob
 *   ksym [OPTIONS] modules             modules: kind, symbols, address range
 *   ksym [OPTIONS] stat                counts, memory, read/parse time
 *   ksym [OPTIONS] resolve NAME...     one streaming pass, no table (ksym_cache)
 *
 * OPTIONS: --kallsyms FILE, --ranges FILE (modules.builtin.ranges; "" for
 * none), --vmlinux FILE (exact sizes), --modules FILE (what the cache
 * watches), --repeat N (resolve: ask N times, to show the cache at work).
 *
 * Errors go to stderr with libksym's message; the exit status is 1 when any
 * query failed, 2 for usage errors.
 */
#define _POSIX_C_SOURCE 200809L

#include <ksym.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct options {
    const char *kallsyms;
    const char *ranges;
    const char *vmlinux;
    const char *modules;
    const char *repeat;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ksym [--kallsyms FILE] [--ranges FILE] [--vmlinux FILE] [--modules FILE]\n"
            "            [--repeat N] COMMAND ARGS...\n"
            "commands:\n"
            "  lookup QUERY...   resolve name, module`name or vmlinux`name\n"
            "  addr ADDR...      symbolize hex addresses\n"
            "  grep PATTERN      list symbols matching glob or modglob`glob (* ? [...])\n"
            "  modules           list modules (kind, symbols, address range)\n"
            "  stat              symbol and module counts, memory, read/parse time\n"
            "  resolve NAME...   resolve in one streaming pass (no table), through a cache\n"
            "  version           print the library version\n");
}

static int fail(const char *what)
{
    fprintf(stderr, "ksym: %s: %s\n", what, ksym_last_error_message());
    return 1;
}

static void print_symbol(const struct ksym_symbol *s)
{
    printf("%016" PRIx64 " %c %s [%s]", s->addr, s->type, s->name, s->module);
    if (s->size)
        printf(" size=%#" PRIx64 "%s", s->size, (s->flags & KSYM_SYM_SIZE_EXACT) ? "" : "~");
    if (s->flags & KSYM_SYM_BUILTIN)
        printf(" built-in");
    putchar('\n');
}

static struct ksym_table *open_table(const struct options *o)
{
    KSYM_OPTS(ksym_table_opts, opts, .kallsyms_path = o->kallsyms, .builtin_ranges_path = o->ranges,
              .vmlinux_path = o->vmlinux);
    struct ksym_table *t = ksym_table_open(&opts);
    if (!t)
        fail("cannot open the symbol table");
    return t;
}

static int cmd_lookup(struct ksym_table *t, int argc, char **argv)
{
    int rc = 0;
    for (int i = 0; i < argc; i++) {
        struct ksym_symbol s;
        int err = ksym_lookup(t, argv[i], &s);
        if (err == 0) {
            print_symbol(&s);
        } else if (err == KSYM_ERR_AMBIGUOUS) {
            fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
            int n = ksym_lookup_all(t, argv[i], NULL, 0);
            struct ksym_symbol *all = n > 0 ? calloc((size_t)n, sizeof(*all)) : NULL;
            if (all && ksym_lookup_all(t, argv[i], all, (size_t)n) == n)
                for (int k = 0; k < n; k++)
                    print_symbol(&all[k]);
            free(all);
            rc = 1;
        } else {
            rc = fail(argv[i]);
        }
    }
    return rc;
}

static int parse_addr(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 16);
    if (errno || end == text || *end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int cmd_addr(struct ksym_table *t, int argc, char **argv)
{
    int rc = 0;
    for (int i = 0; i < argc; i++) {
        uint64_t addr, off;
        struct ksym_symbol s;
        if (parse_addr(argv[i], &addr)) {
            fprintf(stderr, "ksym: %s: not a hex address\n", argv[i]);
            rc = 1;
            continue;
        }
        if (ksym_symbolize(t, addr, &s, &off)) {
            rc = fail(argv[i]);
            continue;
        }
        printf("%016" PRIx64 " %s+%#" PRIx64 "/%#" PRIx64 " [%s]%s\n", addr, s.name, off, s.size,
               s.module, (s.flags & KSYM_SYM_BUILTIN) ? " built-in" : "");
    }
    return rc;
}

static int print_match(const struct ksym_symbol *s, void *ctx)
{
    size_t *n = ctx;
    (*n)++;
    print_symbol(s);
    return 0;
}

static int cmd_grep(struct ksym_table *t, const char *pattern)
{
    size_t n = 0;
    if (ksym_foreach_match(t, pattern, print_match, &n) < 0)
        return fail(pattern);
    fprintf(stderr, "%zu symbols match %s\n", n, pattern);
    return n ? 0 : 1;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case KSYM_MODULE_VMLINUX: return "vmlinux";
    case KSYM_MODULE_LOADABLE: return "loadable";
    case KSYM_MODULE_BUILTIN: return "built-in";
    case KSYM_MODULE_PSEUDO: return "pseudo";
    default: return "?";
    }
}

static int cmd_modules(struct ksym_table *t)
{
    size_t n = ksym_table_module_count(t);
    printf("%-28s %-9s %8s  %-16s %-16s\n", "module", "kind", "symbols", "lowest", "highest");
    for (size_t i = 0; i < n; i++) {
        struct ksym_module_info m = { .sz = sizeof(m) };
        if (ksym_table_module(t, i, &m))
            return fail("module");
        printf("%-28s %-9s %8zu  %016" PRIx64 " %016" PRIx64 "\n", m.name, kind_name(m.kind), m.symbols,
               m.lo, m.hi);
    }
    return 0;
}

static int cmd_resolve(const struct options *o, int argc, char **argv)
{
    KSYM_OPTS(ksym_table_opts, opts, .kallsyms_path = o->kallsyms, .builtin_ranges_path = o->ranges,
              .modules_path = o->modules);
    long repeat = o->repeat ? strtol(o->repeat, NULL, 10) : 1;
    if (repeat < 1) {
        fprintf(stderr, "ksym: --repeat needs a positive count\n");
        return 2;
    }
    struct ksym_cache *c = ksym_cache_new(&opts);
    if (!c)
        return fail("cannot create the cache");
    uint64_t *addrs = calloc((size_t)argc, sizeof(*addrs));
    int *errs = calloc((size_t)argc, sizeof(*errs));
    int rc = 0;
    if (!addrs || !errs) {
        fprintf(stderr, "ksym: out of memory\n");
        rc = 1;
        goto out;
    }
    for (long r = 0; r < repeat; r++) {
        struct ksym_cache_stats before = { .sz = sizeof(before) };
        struct ksym_cache_stats after = { .sz = sizeof(after) };
        ksym_cache_stats(c, &before);
        int n = ksym_cache_resolve(c, (const char *const *)argv, (size_t)argc, addrs, errs);
        if (n < 0) {
            rc = fail("resolve");
            goto out;
        }
        ksym_cache_stats(c, &after);
        for (int i = 0; i < argc && r == 0; i++) {
            if (errs[i] == 0)
                printf("%016" PRIx64 " %s\n", addrs[i], argv[i]);
            else if (errs[i] == KSYM_ERR_AMBIGUOUS)
                printf("%016" PRIx64 " %s (ambiguous: the lowest of several addresses)\n", addrs[i], argv[i]);
            else
                printf("%16s %s (%s)\n", "-", argv[i], ksym_strerror(errs[i]));
            if (errs[i])
                rc = 1;
        }
        fprintf(stderr, "round %ld: %d of %d resolved, %" PRIu64 " pass(es) over kallsyms, %" PRIu64
                " hits, %" PRIu64 " misses, %" PRIu64 " cached\n",
                r + 1, n, argc, after.passes - before.passes, after.hits - before.hits,
                after.misses - before.misses, after.entries);
    }
out:
    free(addrs);
    free(errs);
    ksym_cache_free(c);
    return rc;
}

static int cmd_stat(struct ksym_table *t)
{
    struct ksym_table_stats st = { .sz = sizeof(st) };
    if (ksym_table_stats(t, &st))
        return fail("stats");
    size_t kinds[4] = { 0 };
    size_t n = ksym_table_module_count(t);
    for (size_t i = 0; i < n; i++) {
        struct ksym_module_info m = { .sz = sizeof(m) };
        if (ksym_table_module(t, i, &m) == 0 && m.kind >= 0 && m.kind < 4)
            kinds[m.kind]++;
    }
    printf("symbols:      %zu\n", st.symbols);
    printf("modules:      %zu (%zu loadable, %zu built-in, %zu pseudo)\n", st.modules - kinds[0],
           kinds[KSYM_MODULE_LOADABLE], kinds[KSYM_MODULE_BUILTIN], kinds[KSYM_MODULE_PSEUDO]);
    printf("file:         %zu bytes%s\n", st.file_bytes,
           (st.flags & KSYM_STATS_KALLMODSYMS) ? " (kallmodsyms format)" : "");
    printf("memory:       %zu bytes (%.2f x file)\n", st.memory_bytes,
           st.file_bytes ? (double)st.memory_bytes / (double)st.file_bytes : 0.0);
    printf("read:         %.3f ms\n", (double)st.read_ns / 1e6);
    printf("parse+index:  %.3f ms (overlaps the read)\n", (double)st.parse_ns / 1e6);
    printf("attribution:  %.3f ms%s%s\n", (double)st.attribution_ns / 1e6,
           (st.flags & KSYM_STATS_BUILTIN_RANGES) ? " (modules.builtin.ranges applied)" : "",
           (st.flags & KSYM_STATS_VMLINUX_SIZES) ? " (vmlinux sizes)" : "");
    size_t nd = ksym_table_diagnostic_count(t);
    for (size_t i = 0; i < nd; i++)
        printf("note:         %s\n", ksym_table_diagnostic(t, i));
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = { 0 };
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char **slot = NULL;
        if (!strcmp(argv[i], "--kallsyms"))
            slot = &o.kallsyms;
        else if (!strcmp(argv[i], "--ranges"))
            slot = &o.ranges;
        else if (!strcmp(argv[i], "--vmlinux"))
            slot = &o.vmlinux;
        else if (!strcmp(argv[i], "--modules"))
            slot = &o.modules;
        else if (!strcmp(argv[i], "--repeat"))
            slot = &o.repeat;
        else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "ksym: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "ksym: %s needs a value\n", argv[i]);
            return 2;
        }
        *slot = argv[++i];
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[i++];
    int nargs = argc - i;
    char **args = argv + i;

    if (!strcmp(cmd, "version")) {
        printf("libksym %s\n", ksym_version());
        return 0;
    }
    int need_args = !strcmp(cmd, "lookup") || !strcmp(cmd, "addr") || !strcmp(cmd, "grep") ||
                    !strcmp(cmd, "resolve");
    int known = need_args || !strcmp(cmd, "modules") || !strcmp(cmd, "stat");
    if (!known) {
        fprintf(stderr, "ksym: unknown command %s\n", cmd);
        usage(stderr);
        return 2;
    }
    if (need_args && nargs == 0) {
        fprintf(stderr, "ksym: %s needs arguments\n", cmd);
        return 2;
    }
    if (!strcmp(cmd, "grep") && nargs != 1) {
        fprintf(stderr, "ksym: grep takes one pattern\n");
        return 2;
    }

    if (!strcmp(cmd, "resolve"))
        return cmd_resolve(&o, nargs, args);

    struct ksym_table *t = open_table(&o);
    if (!t)
        return 1;
    int rc;
    if (!strcmp(cmd, "lookup"))
        rc = cmd_lookup(t, nargs, args);
    else if (!strcmp(cmd, "addr"))
        rc = cmd_addr(t, nargs, args);
    else if (!strcmp(cmd, "grep"))
        rc = cmd_grep(t, args[0]);
    else if (!strcmp(cmd, "modules"))
        rc = cmd_modules(t);
    else
        rc = cmd_stat(t);
    ksym_table_free(t);
    return rc;
}
