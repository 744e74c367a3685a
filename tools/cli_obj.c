/*
 * The ksym CLI's `obj` command (tools/cli.h): a BPF object's programs and
 * aliases, attach targets, maps, variables, externs and relocations, and
 * with --load the object loaded by the bundled loader (bpf_loader.h).
 */
#define _GNU_SOURCE

#include "cli.h"
#include "bpf_loader.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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
    case KSYM_BPF_RELOC_ALIAS: return "alias";
    default: return "?";
    }
}

static void print_programs(struct ksym_bpf_object *obj, size_t np)
{
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
}

/* Attach targets, as resolved against the kernel's BTF. */
static void print_targets(struct ksym_bpf_object *obj, size_t np)
{
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
}

static void print_maps(struct ksym_bpf_object *obj, size_t nm)
{
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
}

static void print_vars(struct ksym_bpf_object *obj)
{
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
}

static void print_externs(struct ksym_bpf_object *obj, size_t ne)
{
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
        case KSYM_BPF_EXTERN_ALIAS_VALUE:
            printf("per-alias: each program's value%s", weak);
            break;
        case KSYM_BPF_EXTERN_ALIAS_ADDR:
            printf("per-alias: each program's function address%s", weak);
            break;
        default:
            if (e.resolved)
                printf("%016" PRIx64 "%s", e.addr, weak);
            else
                printf("%16s%s", "-", e.weak ? " (weak: 0)" : "");
        }
        putchar('\n');
    }
}

static void print_relocs(struct ksym_bpf_object *obj, size_t np)
{
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
}

/* --load: the object loaded, every program whose autoload is on; 0 or 1. */
static int load(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct ksym_btf *btf, size_t np)
{
    int rc = 0;
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
    return rc;
}

int cmd_obj(const struct options *o, int argc, char **argv)
{
    (void)argc;
    const char *path = argv[0];
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

    print_programs(obj, np);
    /* Attach targets, against the running kernel's BTF when there is one. */
    struct ksym_btf *btf = open_btf(o);
    printf("\nattach targets (%s%s):\n", !btf ? "no kernel BTF here" : o->btf ? "the BTF of " : "the running kernel's BTF",
           btf && o->btf ? o->btf : "");
    if (!btf)
        printf("  %s\n", ksym_last_error_message());
    else if (ksym_bpf_object_resolve_btf(obj, btf) != 0)
        printf("  not all resolved: %s\n", ksym_last_error_message());
    print_targets(obj, np);
    print_maps(obj, nm);
    print_vars(obj);
    printf("\nexterns (one pass over %s):\n", o->kallsyms ? o->kallsyms : "kallsyms");
    if (ne && ksym_bpf_object_resolve_ksyms(obj, cache) != 0) {
        fprintf(stderr, "ksym: %s\n", ksym_last_error_message());
        rc = 1;
    }
    print_externs(obj, ne);
    print_relocs(obj, np);
    if (o->load && rc == 0)
        rc = load(obj, cache, btf, np);
    ksym_cache_free(cache);
    ksym_bpf_object_free(obj);
    ksym_btf_free(btf);
    return rc;
}
