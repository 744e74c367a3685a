/*
 * ksym: command-line front end of libksym, and an example of its C API.
 *
 *   ksym [OPTIONS] lookup QUERY...     name, module`name or vmlinux`name
 *   ksym [OPTIONS] addr ADDR...        symbolize hex addresses
 *   ksym [OPTIONS] grep PATTERN        glob or modglob`glob
 *   ksym [OPTIONS] modules             modules: kind, symbols, address range
 *   ksym [OPTIONS] stat                counts, memory, read/parse time
 *   ksym [OPTIONS] resolve NAME...     one streaming pass, no table (ksym_cache)
 *   ksym obj FILE.bpf.o [--kallsyms FILE] [--load]
 *                                      programs and their aliases, maps, externs
 *                                      resolved, relocations; --load creates the
 *                                      maps and loads every program whose
 *                                      autoload is on (`?` sections: off)
 *   ksym trace [--tracepoints] PATTERN [--interval S] [--duration S] [--top N]
 *                                      one counting program attached to every
 *                                      kernel function (fentry) or BTF tracepoint
 *                                      matching PATTERN, through aliases; hit
 *                                      counts per target (tools/trace.c)
 *
 * OPTIONS: --kallsyms FILE, --ranges FILE (modules.builtin.ranges; "" for
 * none), --vmlinux FILE (exact sizes), --modules FILE (what the cache
 * watches, and a snapshot is checked against), --no-snapshot (read the
 * source, neither read nor write a table snapshot), --snapshot-dir DIR
 * (default /run/ksym), --repeat N (resolve: ask N times, to show the cache
 * at work), --load (obj). Options may come anywhere on the command line.
 *
 * Errors go to stderr with libksym's message; the exit status is 1 when any
 * query failed, 2 for usage errors.
 */
#define _GNU_SOURCE

#include <ksym.h>
#include "bpf_loader.h"

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
    const char *interval;
    const char *duration;
    const char *top;
    const char *snapshot_dir;
    int load;
    int tracepoints;
    int no_snapshot;
};

int cmd_trace(struct ksym_btf *btf, const char *pattern, int tracepoints, double interval, double duration,
              long top);

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ksym [--kallsyms FILE] [--ranges FILE] [--vmlinux FILE] [--modules FILE]\n"
            "            [--no-snapshot] [--snapshot-dir DIR] [--repeat N] COMMAND ARGS...\n"
            "commands:\n"
            "  lookup QUERY...   resolve name, module`name or vmlinux`name\n"
            "  addr ADDR...      symbolize hex addresses\n"
            "  grep PATTERN      list symbols matching glob or modglob`glob (* ? [...])\n"
            "  modules           list modules (kind, symbols, address range)\n"
            "  stat              symbol and module counts, memory, read/parse time\n"
            "  resolve NAME...   resolve in one streaming pass (no table), through a cache\n"
            "  obj FILE.bpf.o    a BPF object: programs and aliases, maps, externs, relocations;\n"
            "                    --load creates its maps and loads every program whose autoload is\n"
            "                    on (not `?` sections) into the kernel; a target this kernel lacks\n"
            "                    is that program's error, not the object's\n"
            "  trace PATTERN     count hits on every kernel function matching PATTERN (glob or\n"
            "                    module`glob), one fentry alias each; --tracepoints: every BTF\n"
            "                    tracepoint (tp_btf); --interval S (1), --duration S (0: until\n"
            "                    Ctrl-C), --top N (20)\n"
            "  btf [QUERY...]    the kernel's BTF: the types named (name, module`name, KIND:name),\n"
            "                    or, with none, what was read and whether the snapshot was used\n"
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
              .vmlinux_path = o->vmlinux, .modules_path = o->modules, .snapshot_dir = o->snapshot_dir,
              .flags = o->no_snapshot ? KSYM_TABLE_NO_SNAPSHOT : 0);
    struct ksym_table *t = ksym_table_open(&opts);
    if (!t)
        fail("cannot open the symbol table");
    return t;
}

/* The running kernel's BTF, with the snapshot options of the table's. */
static struct ksym_btf *open_btf(const struct options *o)
{
    KSYM_OPTS(ksym_btf_opts, opts, .snapshot_dir = o->snapshot_dir,
              .flags = o->no_snapshot ? KSYM_BTF_NO_SNAPSHOT : 0);
    return ksym_btf_open(&opts);
}

static const char *btf_kind_name(uint32_t kind)
{
    static const char *const names[] = { "UNKN",   "INT",      "PTR",     "ARRAY",      "STRUCT",
                                         "UNION",  "ENUM",     "FWD",     "TYPEDEF",    "VOLATILE",
                                         "CONST",  "RESTRICT", "FUNC",    "FUNC_PROTO", "VAR",
                                         "DATASEC", "FLOAT",   "DECL_TAG", "TYPE_TAG",  "ENUM64" };
    return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
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
            for (uint32_t k = 1; k < 20; k++)
                if ((size_t)(colon - q) == strlen(btf_kind_name(k)) && !strncmp(q, btf_kind_name(k), (size_t)(colon - q)))
                    kind = k;
            if (kind)
                q = colon + 1;
        }
        struct ksym_btf_type t = { .sz = sizeof(t) };
        if (ksym_btf_find(btf, q, kind, &t) != 0) {
            fprintf(stderr, "%s: %s\n", argv[i], ksym_last_error_message());
            rc = 1;
            continue;
        }
        printf("[%u] %s %s`%s", t.type_id, btf_kind_name(t.kind), t.module, t.name);
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

/* enum bpf_prog_type names, for display. */
static const char *prog_type_name(uint32_t t)
{
    static const char *const names[] = {
        "unknown",      "socket_filter", "kprobe",         "sched_cls",     "sched_act",     "tracepoint",
        "xdp",          "perf_event",    "cgroup_skb",     "cgroup_sock",   "lwt_in",        "lwt_out",
        "lwt_xmit",     "sock_ops",      "sk_skb",         "cgroup_device", "sk_msg",        "raw_tracepoint",
        "cgroup_sock_addr", "lwt_seg6local", "lirc_mode2", "sk_reuseport", "flow_dissector", "cgroup_sysctl",
        "raw_tracepoint_writable", "cgroup_sockopt", "tracing", "struct_ops", "ext", "lsm", "sk_lookup",
        "syscall",      "netfilter",
    };
    return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
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
    printf("\nattach targets (%s):\n", btf ? "the running kernel's BTF and kallsyms" : "no kernel BTF here");
    if (!btf)
        printf("  %s\n", ksym_last_error_message());
    else if (ksym_bpf_object_resolve_btf(obj, btf) != 0)
        printf("  not all resolved: %s\n", ksym_last_error_message());
    for (size_t i = 0; i < np; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        struct ksym_bpf_attach a = { .sz = sizeof(a) };
        ksym_bpf_program_info(obj, i, &p);
        ksym_bpf_program_attach_info(obj, i, &a);
        printf("  [%zu] %-24s %s", i, p.name, prog_type_name(a.prog_type));
        if (a.expected_attach_type)
            printf(" (attach type %u)", a.expected_attach_type);
        if (a.target)
            printf(" -> %s%s%s", a.module ? a.module : "", a.module ? "`" : "", a.target);
        if (a.attach_btf_id)
            printf(" btf id %u%s", a.attach_btf_id, a.attach_btf_obj_fd > 0 ? " (module BTF fd)" : "");
        if (a.addr)
            printf(" at %016" PRIx64, a.addr);
        if (a.flags & KSYM_ATTACH_SLEEPABLE)
            printf(" sleepable");
        if (a.flags & KSYM_ATTACH_OPTIONAL)
            printf(" (optional: `?` section)");
        if (!ksym_bpf_program_autoload(obj, i))
            printf(" (autoload off)");
        putchar('\n');
        if (a.error)
            printf("       not in this kernel%s: %s\n",
                   a.flags & KSYM_ATTACH_TARGET_AT_LOAD ? " (needed to load it)" : " (needed to attach it)",
                   a.error_message);
    }

    printf("\nmaps:\n");
    for (size_t i = 0; i < nm; i++) {
        struct ksym_bpf_map_info m = { .sz = sizeof(m) };
        ksym_bpf_map_info(obj, i, &m);
        printf("  [%zu] %-16s type %u key %u value %u max_entries %u flags %#x%s\n", i, m.name, m.type, m.key_size,
               m.value_size, m.max_entries, m.map_flags, m.initial_value ? " (initial value)" : "");
        if (m.btf_vmlinux_value_type_id)
            printf("       struct_ops: kernel value type id %u, %zu bytes%s\n", m.btf_vmlinux_value_type_id,
                   m.struct_ops_value_size, m.map_flags & (1U << 13) ? ", registered by a link" : "");
        if (m.inner_type)
            printf("       inner map: type %u key %u value %u max_entries %u flags %#x\n", m.inner_type,
                   m.inner_key_size, m.inner_value_size, m.inner_max_entries, m.inner_map_flags);
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

static int cmd_stat(struct ksym_table *t)
{
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

static int run(const struct options *o, const char *cmd, int nargs, char **args)
{
    if (!strcmp(cmd, "version")) {
        printf("libksym %s\n", ksym_version());
        return 0;
    }
    int need_args = !strcmp(cmd, "lookup") || !strcmp(cmd, "addr") || !strcmp(cmd, "grep") ||
                    !strcmp(cmd, "resolve") || !strcmp(cmd, "obj") || !strcmp(cmd, "trace");
    int known = need_args || !strcmp(cmd, "modules") || !strcmp(cmd, "stat") || !strcmp(cmd, "btf");
    if (!known) {
        fprintf(stderr, "ksym: unknown command %s\n", cmd);
        usage(stderr);
        return 2;
    }
    if (need_args && nargs == 0) {
        fprintf(stderr, "ksym: %s needs arguments\n", cmd);
        return 2;
    }
    if ((!strcmp(cmd, "grep") || !strcmp(cmd, "obj") || !strcmp(cmd, "trace")) && nargs != 1) {
        fprintf(stderr, "ksym: %s takes one argument\n", cmd);
        return 2;
    }

    if (!strcmp(cmd, "resolve"))
        return cmd_resolve(o, nargs, args);
    if (!strcmp(cmd, "btf"))
        return cmd_btf(o, nargs, args);
    if (!strcmp(cmd, "obj"))
        return cmd_obj(o, args[0]);
    if (!strcmp(cmd, "trace")) {
        double interval = o->interval ? strtod(o->interval, NULL) : 1.0;
        double duration = o->duration ? strtod(o->duration, NULL) : 0.0;
        long top = o->top ? strtol(o->top, NULL, 10) : 20;
        if (!(interval > 0) || duration < 0 || top < 1) {
            fprintf(stderr, "ksym: --interval and --top need positive values, --duration zero or more\n");
            return 2;
        }
        struct ksym_btf *btf = open_btf(o);
        int rc = cmd_trace(btf, args[0], o->tracepoints, interval, duration, top);
        ksym_btf_free(btf);
        return rc;
    }

    struct ksym_table *t = open_table(o);
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

int main(int argc, char **argv)
{
    struct options o = { 0 };
    char **pos = calloc((size_t)argc + 1, sizeof(*pos));
    int npos = 0;
    if (!pos)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char **slot = NULL;
        if (strncmp(argv[i], "--", 2) != 0) {
            pos[npos++] = argv[i];
            continue;
        }
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
        else if (!strcmp(argv[i], "--interval"))
            slot = &o.interval;
        else if (!strcmp(argv[i], "--duration"))
            slot = &o.duration;
        else if (!strcmp(argv[i], "--top"))
            slot = &o.top;
        else if (!strcmp(argv[i], "--snapshot-dir"))
            slot = &o.snapshot_dir;
        else if (!strcmp(argv[i], "--no-snapshot")) {
            o.no_snapshot = 1;
            continue;
        }
        else if (!strcmp(argv[i], "--tracepoints")) {
            o.tracepoints = 1;
            continue;
        } else if (!strcmp(argv[i], "--load")) {
            o.load = 1;
            continue;
        } else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            free(pos);
            return 0;
        } else {
            fprintf(stderr, "ksym: unknown option %s\n", argv[i]);
            usage(stderr);
            free(pos);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "ksym: %s needs a value\n", argv[i]);
            free(pos);
            return 2;
        }
        *slot = argv[++i];
    }
    if (npos == 0) {
        usage(stderr);
        free(pos);
        return 2;
    }
    const char *cmd = pos[0];
    int nargs = npos - 1;
    char **args = pos + 1;
    int rc = run(&o, cmd, nargs, args);
    free(pos);
    return rc;
}
