/*
 * The ksym CLI's commands on the kernel's BTF (tools/cli.h): btf, and
 * trace's options turned into trace.c's (which does the rest, on the
 * BTF opened here).
 */
#define _GNU_SOURCE

#include "cli.h"

#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's BTF: with queries, the type each names (any kind; "KIND:"
 * in front picks one, e.g. STRUCT:task_struct); without, what was read
 * and whether the snapshot was used. */
int cmd_btf(const struct options *o, int argc, char **argv)
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

int cmd_trace_options(const struct options *o, int argc, char **argv)
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
