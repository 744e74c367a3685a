/*
 * The ksym CLI's symbol table commands (tools/cli.h): lookup, addr, grep,
 * modules and stat, each on the table the options open.
 */
#define _GNU_SOURCE

#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_symbol(const struct ksym_symbol *s)
{
    printf("%016" PRIx64 " %c %s [%s]", s->addr, s->type, s->name, s->module);
    if (s->size)
        printf(" size=%#" PRIx64 "%s", s->size, (s->flags & KSYM_SYM_SIZE_EXACT) ? "" : "~");
    if (s->flags & KSYM_SYM_BUILTIN)
        printf(" built-in");
    putchar('\n');
}

struct ksym_table *open_table(const struct options *o)
{
    KSYM_OPTS(ksym_table_opts, opts, .kallsyms_path = o->kallsyms, .builtin_ranges_path = o->ranges,
              .vmlinux_path = o->vmlinux, .modules_path = o->modules, .snapshot_dir = o->snapshot_dir,
              .flags = o->no_snapshot ? KSYM_TABLE_NO_SNAPSHOT : 0);
    struct ksym_table *t = ksym_table_open(&opts);
    if (!t)
        fail("cannot open the symbol table");
    return t;
}

int cmd_lookup(struct ksym_table *t, int argc, char **argv)
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

int cmd_addr(struct ksym_table *t, int argc, char **argv)
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

int cmd_grep(struct ksym_table *t, int argc, char **argv)
{
    const char *pattern = argv[0];
    (void)argc;
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

int cmd_modules(struct ksym_table *t, int argc, char **argv)
{
    (void)argc;
    (void)argv;
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

int cmd_stat(struct ksym_table *t, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    struct ksym_table_stats st = { .sz = sizeof(st) };
    if (ksym_table_stats(t, &st))
        return fail("stats");
    printf("symbols:      %zu\n", st.symbols);
    if (st.flags & KSYM_STATS_SNAPSHOT) {
        /* Listing a snapshot's modules would read /proc (pseudo-modules
         * come and go): the count is the snapshot's. */
        printf("modules:      %zu (from the snapshot; `ksym modules` lists the current ones)\n",
               st.modules - 1);
    } else {
        size_t kinds[4] = { 0 };
        size_t n = ksym_table_module_count(t);
        for (size_t i = 0; i < n; i++) {
            struct ksym_module_info m = { .sz = sizeof(m) };
            if (ksym_table_module(t, i, &m) == 0 && m.kind >= 0 && m.kind < 4)
                kinds[m.kind]++;
        }
        printf("modules:      %zu (%zu loadable, %zu built-in, %zu pseudo)\n", st.modules - kinds[0],
               kinds[KSYM_MODULE_LOADABLE], kinds[KSYM_MODULE_BUILTIN], kinds[KSYM_MODULE_PSEUDO]);
    }
    printf("snapshot:     %s\n", (st.flags & KSYM_STATS_SNAPSHOT)           ? "the table comes from one (no read)"
                                 : (st.flags & KSYM_STATS_SNAPSHOT_WRITTEN) ? "written by this open"
                                                                             : "none (see the notes)");
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
