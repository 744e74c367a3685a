/*
 * ksym: the command-line front end of libksym, and an example of its C API
 * (written against ksym.h only). `ksym trace` is trace.c, through trace.h;
 * `obj --load` and `trace` load with the bundled loader, bpf_loader.h.
 *
 * One table, `commands` at the end of this file, holds every command's
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

#include <ksym.h>
#include "bpf_loader.h"
#include "trace.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct options {
    const char *kallsyms;
    const char *ranges;
    const char *vmlinux;
    const char *modules;
    const char *btf;
    const char *repeat;
    const char *interval;
    const char *duration;
    const char *top;
    const char *snapshot_dir;
    const char *way;
    int load;
    int tracepoints;
    int phases;
    int no_snapshot;
};

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
              .vmlinux_path = o->vmlinux, .modules_path = o->modules, .snapshot_dir = o->snapshot_dir,
              .flags = o->no_snapshot ? KSYM_TABLE_NO_SNAPSHOT : 0);
    struct ksym_table *t = ksym_table_open(&opts);
    if (!t)
        fail("cannot open the symbol table");
    return t;
}

/* The kernel's BTF: the running kernel's, or --btf (a vmlinux BTF file, or
 * a directory laid out as /sys/kernel/btf: vmlinux and one file per
 * module), with the snapshot options of the table's. */
static struct ksym_btf *open_btf(const struct options *o)
{
    char vmlinux[4096];
    const char *vmlinux_path = NULL, *module_dir = NULL, *filter = NULL;
    struct stat st;
    if (o->btf) {
        vmlinux_path = o->btf;
        module_dir = "";
        filter = ""; /* tracefs describes the running kernel, not this BTF */
        if (stat(o->btf, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", o->btf);
            vmlinux_path = vmlinux;
            module_dir = o->btf;
        }
    }
    KSYM_OPTS(ksym_btf_opts, opts, .vmlinux_btf_path = vmlinux_path, .module_btf_dir = module_dir,
              .filter_functions_path = filter, .kallsyms_path = o->kallsyms, .snapshot_dir = o->snapshot_dir,
              .flags = o->no_snapshot ? KSYM_BTF_NO_SNAPSHOT : 0);
    return ksym_btf_open(&opts);
}

/* A kind's name from libksym, or its number when this version has none. */
static const char *kind_str(const char *name, uint32_t value, char buf[16])
{
    if (name)
        return name;
    snprintf(buf, 16, "%u", value);
    return buf;
}

/* The kernel's BTF: with queries, the type each names (any kind; "KIND:"
 * in front picks one, e.g. STRUCT:task_struct); without, what was read
 * and whether the snapshot was used. */
static int cmd_btf(const struct options *o, int argc, char **argv)
{
    struct ksym_btf *btf = open_btf(o);
    if (!btf)
        return fail("cannot open the kernel's BTF");
    int rc = 0;
    for (int i = 0; i < argc; i++) {
        const char *q = argv[i], *colon = strchr(q, ':');
        uint32_t kind = 0;
        if (colon && strchr(q, '`') == NULL) {
            const char *name;
            for (uint32_t k = 1; (name = ksym_btf_kind_str(k)) != NULL; k++)
                if ((size_t)(colon - q) == strlen(name) && !strncmp(q, name, (size_t)(colon - q)))
                    kind = k;
            if (kind)
                q = colon + 1;
        }
        struct ksym_btf_type t = { .sz = sizeof(t) };
        if (ksym_btf_find(btf, q, kind, &t) != 0) {
            fprintf(stderr, "ksym: %s: %s\n", argv[i], ksym_last_error_message());
            rc = 1;
            continue;
        }
        char buf[16];
        printf("[%u] %s %s`%s", t.type_id, kind_str(ksym_btf_kind_str(t.kind), t.kind, buf), t.module, t.name);
        if (t.obj_id)
            printf(" (BTF object %u)", t.obj_id);
        putchar('\n');
    }
    if (argc == 0) {
        struct ksym_btf_stats st = { .sz = sizeof(st) };
        if (ksym_btf_stats(btf, &st) != 0) {
            ksym_btf_free(btf);
            return fail("stats");
        }
        printf("vmlinux:      %u types\n", st.vmlinux_types);
        printf("modules:      %zu with BTF (%zu read so far)\n", st.modules, st.modules_read);
        printf("memory:       %zu bytes (the BTF, mapped or read, and its index)\n", st.memory_bytes);
        printf("snapshot:     %s\n", (st.flags & KSYM_BTF_STATS_SNAPSHOT)           ? "checked and indexed by an earlier open (no check)"
                                     : (st.flags & KSYM_BTF_STATS_SNAPSHOT_WRITTEN) ? "written by this open"
                                                                                     : "none (root only; --no-snapshot)");
    }
    ksym_btf_free(btf);
    return rc;
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

static int cmd_grep(struct ksym_table *t, int argc, char **argv)
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

static int cmd_modules(struct ksym_table *t, int argc, char **argv)
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

static int cmd_resolve(const struct options *o, int argc, char **argv)
{
    KSYM_OPTS(ksym_table_opts, opts, .kallsyms_path = o->kallsyms, .builtin_ranges_path = o->ranges,
              .modules_path = o->modules);
    long repeat = o->repeat ? strtol(o->repeat, NULL, 10) : 1; /* checked when parsed */
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

static const char *reloc_kind(int k)
{
    switch (k) {
    case KSYM_BPF_RELOC_KSYM: return "ksym";
    case KSYM_BPF_RELOC_MAP_FD: return "map_fd";
    case KSYM_BPF_RELOC_MAP_VALUE: return "map_value";
    case KSYM_BPF_RELOC_CALL: return "call";
    case KSYM_BPF_RELOC_FUNC: return "func";
    case KSYM_BPF_RELOC_CORE: return "co-re";
    case KSYM_BPF_RELOC_KSYM_BTF: return "ksym_btf";
    case KSYM_BPF_RELOC_KFUNC: return "kfunc";
    case KSYM_BPF_RELOC_KCONFIG: return "kconfig";
    default: return "?";
    }
}

static int cmd_obj(const struct options *o, const char *path)
{
    struct ksym_bpf_object *obj = ksym_bpf_object_open(path);
    if (!obj) {
        /* The library's message already names the file. */
        fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
        return 1;
    }
    KSYM_OPTS(ksym_table_opts, opts, .kallsyms_path = o->kallsyms, .builtin_ranges_path = o->ranges,
              .modules_path = o->modules);
    struct ksym_cache *cache = ksym_cache_new(&opts);
    if (!cache) {
        fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
        ksym_bpf_object_free(obj);
        return 1;
    }
    int rc = 0;
    size_t np = ksym_bpf_object_program_count(obj);
    size_t nm = ksym_bpf_object_map_count(obj);
    size_t ne = ksym_bpf_object_extern_count(obj);
    size_t btf_size = 0;

    printf("%s: license \"%s\", %zu programs, %zu maps, %zu externs, ", path, ksym_bpf_object_license(obj), np,
           nm, ne);
    if (ksym_bpf_object_btf(obj, &btf_size))
        printf("%zu bytes of loadable BTF\n", btf_size);
    else
        printf("no BTF\n");

    printf("\nprograms:\n");
    for (size_t i = 0; i < np; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        ksym_bpf_program_info(obj, i, &p);
        if (p.alias_of != i) {
            struct ksym_bpf_program_info t = { .sz = sizeof(t) };
            ksym_bpf_program_info(obj, p.alias_of, &t);
            printf("  [%zu] %-24s alias of [%zu] %s\n", i, p.name, p.alias_of, t.name);
        } else {
            printf("  [%zu] %-24s section %s, %zu insns at %zu\n", i, p.name, p.section, p.insn_cnt, p.insn_off);
        }
    }
    /* Attach targets, against the running kernel's BTF when there is one. */
    struct ksym_btf *btf = open_btf(o);
    printf("\nattach targets (%s%s):\n", !btf ? "no kernel BTF here" : o->btf ? "the BTF of " : "the running kernel's BTF",
           btf && o->btf ? o->btf : "");
    if (!btf)
        printf("  %s\n", ksym_last_error_message());
    else if (ksym_bpf_object_resolve_btf(obj, btf) != 0)
        printf("  not all resolved: %s\n", ksym_last_error_message());
    for (size_t i = 0; i < np; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        struct ksym_bpf_attach a = { .sz = sizeof(a) };
        ksym_bpf_program_info(obj, i, &p);
        ksym_bpf_program_attach_info(obj, i, &a);
        char buf[16];
        printf("  [%zu] %-24s %s", i, p.name, kind_str(ksym_bpf_prog_type_str(a.prog_type), a.prog_type, buf));
        /* A struct_ops program's expected attach type is its member's index. */
        const char *type = ksym_bpf_prog_type_str(a.prog_type);
        if (type && !strcmp(type, "struct_ops"))
            printf(" (member %u)", a.expected_attach_type);
        else if (a.expected_attach_type)
            printf(" (%s)", kind_str(ksym_bpf_attach_type_str(a.expected_attach_type), a.expected_attach_type, buf));
        if (a.target && a.tp_category)
            printf(" -> %s/%s", a.tp_category, a.target);
        else if (a.target)
            printf(" -> %s%s%s", a.module ? a.module : "", a.module ? "`" : "", a.target);
        if (a.target_offset)
            printf("+%#" PRIx64, a.target_offset);
        if (a.attach_btf_id)
            printf(" btf id %u%s", a.attach_btf_id, a.attach_btf_obj_fd > 0 ? " (module BTF fd)" : "");
        if (a.addr)
            printf(" at %016" PRIx64, a.addr);
        if (a.flags & KSYM_ATTACH_SLEEPABLE)
            printf(" sleepable");
        if (a.flags & KSYM_ATTACH_RETPROBE)
            printf(" (return probe)");
        if (a.flags & KSYM_ATTACH_OPTIONAL)
            printf(" (optional: `?` section)");
        if (!ksym_bpf_program_autoload(obj, i))
            printf(" (autoload off)");
        putchar('\n');
        bool at_load = (a.flags & KSYM_ATTACH_TARGET_AT_LOAD) != 0;
        if (a.error == KSYM_ERR_NOT_FOUND)
            printf("       not in this kernel (needed to %s it): %s\n", at_load ? "load" : "attach", a.error_message);
        else if (a.error)
            printf("       cannot %s it: %s\n", at_load ? "load" : "attach", a.error_message);
    }

    printf("\nmaps:\n");
    for (size_t i = 0; i < nm; i++) {
        struct ksym_bpf_map_info m = { .sz = sizeof(m) };
        ksym_bpf_map_info(obj, i, &m);
        char buf[16];
        printf("  [%zu] %-16s %s key %u value %u max_entries %u flags %#x%s\n", i, m.name,
               kind_str(ksym_bpf_map_type_str(m.type), m.type, buf), m.key_size, m.value_size, m.max_entries,
               m.map_flags, m.initial_value ? " (initial value)" : "");
        if (m.btf_vmlinux_value_type_id)
            printf("       struct_ops: kernel value type id %u, %zu bytes%s\n", m.btf_vmlinux_value_type_id,
                   m.struct_ops_value_size, m.map_flags & (1U << 13) ? ", registered by a link" : "");
        if (m.inner_type)
            printf("       inner map: %s key %u value %u max_entries %u flags %#x\n",
                   kind_str(ksym_bpf_map_type_str(m.inner_type), m.inner_type, buf), m.inner_key_size,
                   m.inner_value_size, m.inner_max_entries, m.inner_map_flags);
        for (size_t j = 0; j < m.slot_count; j++) {
            struct ksym_bpf_map_slot s = { .sz = sizeof(s) };
            if (ksym_bpf_map_slot(obj, i, j, &s) != 0)
                continue;
            const char *target = "?";
            struct ksym_bpf_map_info t = { .sz = sizeof(t) };
            struct ksym_bpf_program_info p = { .sz = sizeof(p) };
            if (s.kind == KSYM_BPF_SLOT_MAP && ksym_bpf_map_info(obj, s.target, &t) == 0)
                target = t.name;
            else if (s.kind != KSYM_BPF_SLOT_MAP && ksym_bpf_program_info(obj, s.target, &p) == 0)
                target = p.name;
            if (s.kind == KSYM_BPF_SLOT_STRUCT_OPS)
                printf("       +%-4u fd of program %s\n", s.index, target);
            else
                printf("       [%u] = %s %s\n", s.index, s.kind == KSYM_BPF_SLOT_MAP ? "map" : "program", target);
        }
    }
    size_t nv = ksym_bpf_object_var_count(obj);
    printf("\nvariables (map+offset, size; set with ksym_bpf_object_set_var):\n");
    for (size_t i = 0; i < nv; i++) {
        struct ksym_bpf_var_info v = { .sz = sizeof(v) };
        struct ksym_bpf_map_info m = { .sz = sizeof(m) };
        if (ksym_bpf_var_info(obj, i, &v) != 0 || ksym_bpf_map_info(obj, v.map, &m) != 0)
            continue;
        char where[64];
        snprintf(where, sizeof(where), "%s+%zu", m.name, v.offset);
        printf("  [%zu] %-20s %4zu  %s%s\n", i, where, v.size, v.name, v.flags & KSYM_BPF_VAR_GLOBAL ? "" : " (static)");
    }
    printf("\nexterns (one pass over %s):\n", o->kallsyms ? o->kallsyms : "kallsyms");
    if (ne && ksym_bpf_object_resolve_ksyms(obj, cache) != 0) {
        fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
        rc = 1;
    }
    for (size_t i = 0; i < ne; i++) {
        struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
        ksym_bpf_extern_info(obj, i, &e);
        const char *weak = e.weak ? " (weak)" : "";
        printf("  [%zu] %-28s ", i, e.name);
        switch (e.kind) {
        case KSYM_BPF_EXTERN_KSYM_BTF:
        case KSYM_BPF_EXTERN_KFUNC:
            if (e.resolved)
                printf("%s btf id %u in %s%s", e.kind == KSYM_BPF_EXTERN_KFUNC ? "kfunc" : "typed ksym", e.btf_id,
                       e.module, weak);
            else
                printf("%s not in the kernel's BTF%s", e.kind == KSYM_BPF_EXTERN_KFUNC ? "kfunc" : "typed ksym",
                       e.weak ? " (weak: 0)" : "");
            if (e.kind == KSYM_BPF_EXTERN_KFUNC && e.offset)
                printf(" (fd_array[%u])", e.offset);
            break;
        case KSYM_BPF_EXTERN_KCONFIG:
            printf(".kconfig at offset %u%s%s", e.offset, e.resolved ? "" : " (not set: 0)", weak);
            break;
        default:
            if (e.resolved)
                printf("%016" PRIx64 "%s", e.addr, weak);
            else
                printf("%16s%s", "-", e.weak ? " (weak: 0)" : "");
        }
        putchar('\n');
    }
    printf("\nrelocations (final instruction indices; aliases share their target's):\n");
    for (size_t i = 0; i < np; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        ksym_bpf_program_info(obj, i, &p);
        if (p.alias_of != i)
            continue;
        printf("  %s:\n", p.name);
        size_t n = ksym_bpf_program_reloc_count(obj, i);
        for (size_t k = 0; k < n; k++) {
            struct ksym_bpf_reloc r = { .sz = sizeof(r) };
            ksym_bpf_program_reloc(obj, i, k, &r);
            printf("    insn %4zu  %-9s %-24s", r.insn_idx, reloc_kind(r.kind), r.symbol);
            switch (r.kind) {
            case KSYM_BPF_RELOC_CORE:
                /* The local type and access string, as libbpf prints them, and the result. */
                if (r.flags & KSYM_BPF_RELOC_POISONED)
                    printf(" -> poisoned (missing in this kernel)");
                else if (r.flags & KSYM_BPF_RELOC_RESOLVED)
                    printf(" -> %" PRId64, r.addend);
                else
                    printf(" (not resolved)");
                break;
            case KSYM_BPF_RELOC_KSYM_BTF:
            case KSYM_BPF_RELOC_KFUNC:
                if (r.flags & KSYM_BPF_RELOC_RESOLVED)
                    printf(" -> btf id %" PRId64, r.addend);
                else
                    printf(" (not resolved)");
                break;
            case KSYM_BPF_RELOC_MAP_VALUE:
            case KSYM_BPF_RELOC_KCONFIG:
                printf(" target %zu +%" PRId64, r.target, r.addend);
                break;
            default:
                printf(" target %zu", r.target);
            }
            putchar('\n');
        }
    }
    if (o->load && rc == 0) {
        struct kl_loaded l;
        char why[8192];
        int avail = kl_bpf_available();
        printf("\nloading into the kernel:\n");
        if (avail) {
            printf("  not possible here: bpf() fails with %s (needs root or CAP_BPF)\n", strerror(-avail));
            rc = 1;
        } else {
            int err = kl_prepare(obj, cache, btf, &l, why, sizeof(why));
            int failed = err == 0 && kl_load_autoload(obj, &l, stdout) > 0;
            if (err < 0) {
                fprintf(stderr, "ksym: %s\n", why);
                rc = 1;
            } else if (failed) {
                rc = 1; /* each failed program's verdict is printed above */
            } else {
                size_t cnt = 0, loaded = 0;
                const struct ksym_bpf_insn *first = ksym_bpf_program_insns(obj, 0, &cnt);
                size_t shared = 0;
                for (size_t i = 0; i < np; i++) {
                    size_t c2;
                    loaded += l.prog_fds[i] >= 0;
                    shared += i > 0 && first && ksym_bpf_program_insns(obj, i, &c2) == first;
                }
                printf("  all %zu programs with autoload on loaded (%zu off); program 0 and its %zu aliases share "
                       "one copy of %zu insns\n",
                       loaded, np - loaded, shared, cnt);
            }
            kl_unload(&l);
        }
    }
    ksym_cache_free(cache);
    ksym_bpf_object_free(obj);
    ksym_btf_free(btf);
    return rc;
}

static int cmd_stat(struct ksym_table *t, int argc, char **argv)
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

/* Whether this process sees the kernel's addresses: exit 0 yes, 1 no, 2
 * when the file cannot be read (ksym_kallsyms_shows_addresses). */
static int cmd_addresses(const struct options *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *path = o->kallsyms ? o->kallsyms : "/proc/kallsyms";
    int r = ksym_kallsyms_shows_addresses(path);
    if (r < 0) {
        fail("cannot judge the addresses");
        return 2;
    }
    if (r)
        printf("real: %s shows this process the kernel's addresses\n", path);
    else
        printf("hidden: %s shows this process every address as 0 (kernel.kptr_restrict, CAP_SYSLOG)\n", path);
    return r ? 0 : 1;
}

static int cmd_version(const struct options *o, int argc, char **argv)
{
    (void)o;
    (void)argc;
    (void)argv;
    printf("libksym %s\n", ksym_version());
    return 0;
}

static int run_obj(const struct options *o, int argc, char **argv)
{
    (void)argc;
    return cmd_obj(o, argv[0]);
}

static int run_trace(const struct options *o, int argc, char **argv)
{
    (void)argc;
    struct trace_opts t = {
        .pattern = argv[0],
        .tracepoints = o->tracepoints,
        .interval = o->interval ? strtod(o->interval, NULL) : 1.0, /* checked when parsed */
        .duration = o->duration ? strtod(o->duration, NULL) : 0.0,
        .top = o->top ? strtol(o->top, NULL, 10) : 20,
        .phases = o->phases,
        .way = o->way,
    };
    if (o->way && strcmp(o->way, "multi") && strcmp(o->way, "aliases")) {
        fprintf(stderr, "ksym: --way takes `multi` or `aliases`, not `%s`\n", o->way);
        return 2;
    }
    struct ksym_btf *btf = open_btf(o);
    int rc = cmd_trace(btf, &t);
    ksym_btf_free(btf);
    return rc;
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
      run_obj, NULL },
    { "trace", "PATTERN", 1, 1, "hits per kernel function (fentry) or BTF tracepoint matching PATTERN",
      "One counting program (built in) on every target matching PATTERN (glob or module`glob):\n"
      "where the kernel has multi links (Linux 7.3), one program attached by one tracing_multi\n"
      "link per BTF object; elsewhere one alias per target, all loaded from one copy of its\n"
      "instructions (--way forces one). The hits per target, sorted, every --interval seconds\n"
      "until Ctrl-C or --duration. --tracepoints: BTF tracepoints (tp_btf) instead of functions\n"
      "(fentry). Root: bpf().",
      run_trace, NULL },
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
