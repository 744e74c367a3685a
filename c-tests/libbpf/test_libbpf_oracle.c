/*
 * libbpf (the system's libbpf-dev) as the oracle of attach semantics:
 * for every program of the tracing and section fixtures, libksym's program
 * type and expected attach type must be what libbpf_prog_type_by_name()
 * says of its section, and, once resolved in the running kernel's BTF,
 * its attach BTF id what libbpf_find_vmlinux_btf_id() finds for its
 * target. Built with -std=gnu11 (libbpf's headers need it) when libbpf is
 * installed (.ci/run installs libbpf-dev).
 */
#include "../check.h"

#include <bpf/libbpf.h>
#include <errno.h>

static const char *objdir;

static void check_object(const char *dir, const char *name, struct ksym_btf *btf, size_t *typed, size_t *ids)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    if (!o)
        return;
    /* Module targets (xfs) are not in this kernel: those fail, the others resolve. */
    int rc = ksym_bpf_object_resolve_btf(o, btf);
    CHECK(rc == 0 || rc == KSYM_ERR_NOT_FOUND);
    size_t n = ksym_bpf_object_program_count(o);
    for (size_t i = 0; i < n; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        struct ksym_bpf_attach a = { .sz = sizeof(a) };
        CHECK(ksym_bpf_program_info(o, i, &p) == 0 && ksym_bpf_program_attach_info(o, i, &a) == 0);
        enum bpf_prog_type pt = 0;
        enum bpf_attach_type at = 0;
        libbpf_set_print(NULL);
        if (libbpf_prog_type_by_name(p.section, &pt, &at) != 0) {
            if (a.prog_type != 0)
                fprintf(stderr, "%s: libbpf does not know section %s, libksym says type %u\n", p.name, p.section,
                        a.prog_type);
            CHECK(a.prog_type == 0);
            continue;
        }
        if (a.prog_type != pt || a.expected_attach_type != at)
            fprintf(stderr, "%s (%s): libbpf %d/%d, libksym %u/%u\n", p.name, p.section, pt, at, a.prog_type,
                    a.expected_attach_type);
        CHECK(a.prog_type == (uint32_t)pt && a.expected_attach_type == (uint32_t)at);
        (*typed)++;
        if (a.attach_btf_id && a.module && !strcmp(a.module, "vmlinux")) {
            int id = libbpf_find_vmlinux_btf_id(a.target, at);
            if (id != (int)a.attach_btf_id)
                fprintf(stderr, "%s -> %s: libbpf id %d, libksym %u\n", p.name, a.target, id, a.attach_btf_id);
            CHECK(id == (int)a.attach_btf_id);
            (*ids)++;
        }
    }
    ksym_bpf_object_free(o);
}

int main(void)
{
    objdir = getenv("KSYM_BPF_OBJECTS");
    if (!objdir)
        objdir = "c-tests/bpf";
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf) {
        KERNEL_SKIP("no kernel BTF: %s", ksym_last_error_message());
        return finish("test_libbpf_oracle");
    }
    size_t typed = 0, ids = 0;
    check_object(objdir, "sections.bpf.o", btf, &typed, &ids);
    check_object(objdir, "trace.bpf.o", btf, &typed, &ids);
    check_object("tools/bpf", "count.bpf.o", btf, &typed, &ids);
    printf("  %zu program types and %zu attach BTF ids as libbpf %s gives them\n", typed, ids,
           libbpf_version_string());
    CHECK(typed >= 25 && ids >= 15);
    ksym_btf_free(btf);
    return finish("test_libbpf_oracle");
}
