/*
 * Typed __ksym variables, loaded and run (issue 21): c-tests/bpf/
 * percpu_ksym.bpf.o reads the per-CPU `runqueues` (struct rq, whose `cpu`
 * field CO-RE relocates against the kernel's BTF) through bpf_per_cpu_ptr
 * for CPUs 0..7 and bpf_this_cpu_ptr, and the per-CPU int
 * `bpf_prog_active`, as libbpf's users do. libksym resolves the typed
 * ksyms (BTF ids of the kernel's VARs) and relocates; the bundled loader
 * loads the program and runs it with BPF_PROG_TEST_RUN. The oracle is the
 * kernel itself: CPU i's run queue says it is CPU i for every possible CPU
 * (bpf_per_cpu_ptr is NULL past them), the running CPU's says it is one of
 * them, and no BPF program of a kprobe is running (bpf_prog_active 0).
 *
 * The verifier takes typed ksyms only where kallsyms lists data symbols
 * (CONFIG_KALLSYMS_ALL): the qemu guest (make test-guest); elsewhere a
 * visible skip (NEED_SKIP "kallsyms_all").
 */
#define _GNU_SOURCE

#include "check.h"
#include "../tools/bpf_loader.h"

/* Is `name` a symbol of the core kernel in /proc/kallsyms? */
static int in_kallsyms(const char *name)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], type;
    unsigned long long a;
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name) && !strchr(line, '[');
    fclose(f);
    return found;
}

struct percpu_bss {
    int32_t rq_cpu[8];
    int32_t this_rq_cpu_plus1;
    int32_t prog_active_plus100;
};

int main(void)
{
    const char *objdir = getenv("KSYM_BPF_OBJECTS");
    char path[512];
    if (!objdir)
        objdir = "c-tests/bpf";
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf)
        KERNEL_SKIP("no kernel BTF (%s)", ksym_last_error_message());
    int avail = kl_bpf_available();
    if (!btf || avail != 0) {
        if (btf)
            KERNEL_SKIP("bpf() is not available (%s)", strerror(-avail));
        ksym_btf_free(btf);
        return finish("test_percpu_ksym_kernel");
    }
    if (!in_kallsyms("runqueues") || !in_kallsyms("bpf_prog_active")) {
        NEED_SKIP("kallsyms_all", "/proc/kallsyms lists no data symbols (runqueues, bpf_prog_active): "
                                  "the verifier refuses typed ksyms without CONFIG_KALLSYMS_ALL");
        ksym_btf_free(btf);
        return finish("test_percpu_ksym_kernel");
    }
    snprintf(path, sizeof(path), "%s/percpu_ksym.bpf.o", objdir);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    struct kl_loaded l;
    CHECK(o != NULL);
    if (!o)
        goto out;
    /* Both externs are typed ksyms that resolved to the kernel's VARs. */
    size_t ne = ksym_bpf_object_extern_count(o);
    CHECK(ne == 2);
    char why[4096];
    int err = kl_prepare(o, NULL, btf, &l, why, sizeof(why));
    /* A kernel whose BTF has no VARs of per-CPU variables (Debian 11's
     * 5.10): a typed ksym of one cannot resolve, and the error says which
     * VAR is missing where. */
    if (err && kernel_has("btf_percpu_vars") == 0) {
        struct ksym_btf_type t = { .sz = sizeof(t) };
        CHECK(ksym_btf_find(btf, "runqueues", 14 /* BTF_KIND_VAR */, &t) == KSYM_ERR_NOT_FOUND);
        CHECK(strstr(why, "no VAR `runqueues` in the BTF of vmlinux") != NULL);
        NEED_SKIP("btf_percpu_vars", "percpu_ksym.bpf.o: %.900s", why);
        goto out;
    }
    if (err)
        fprintf(stderr, "prepare: %s\n", why);
    CHECK(err == 0);
    if (err)
        goto out;
    for (size_t i = 0; i < ne; i++) {
        struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
        CHECK(ksym_bpf_extern_info(o, i, &e) == 0);
        CHECK(e.kind == KSYM_BPF_EXTERN_KSYM_BTF && e.resolved);
    }
    size_t prog = (size_t)-1, bss = (size_t)-1;
    CHECK(ksym_bpf_object_find_program(o, "read_percpu", &prog) == 0);
    CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0);
    int fd = kl_load_prog(o, &l, prog, stdout);
    CHECK(fd >= 0);
    uint32_t ret = 99, zero = 0;
    struct percpu_bss v;
    memset(&v, 0x7f, sizeof(v));
    if (fd >= 0) {
        CHECK(kl_test_run(fd, &ret) == 0 && ret == 0);
        CHECK(kl_map_lookup(l.map_fds[bss], &zero, &v) == 0);
        int ncpu = kl_possible_cpus();
        CHECK(ncpu > 0);
        printf("  %d possible CPUs; rq->cpu of CPUs 0..7:", ncpu);
        for (int i = 0; i < 8; i++) {
            printf(" %d", v.rq_cpu[i]);
            CHECK(v.rq_cpu[i] == (i < ncpu ? i : -1));
        }
        printf("; this CPU's %d; bpf_prog_active %d\n", v.this_rq_cpu_plus1 - 1, v.prog_active_plus100 - 100);
        CHECK(v.this_rq_cpu_plus1 >= 1 && v.this_rq_cpu_plus1 <= ncpu);
        CHECK(v.prog_active_plus100 == 100);
    }
    kl_unload(&l);
out:
    ksym_bpf_object_free(o);
    ksym_btf_free(btf);
    return finish("test_percpu_ksym_kernel");
}
