/*
 * What the tests of real tools' objects share (test_real_tools_kernel.c:
 * the tracepoint tools, test_real_tools_probes_kernel.c: the kprobe and
 * fentry tools): each object of tests/data/libbpf-tools-0.26 opened, its
 * tool's choices made through libksym, loaded and attached through the
 * bundled loader (tools/bpf_loader.h), and a workload in a child process,
 * which the tool's pid filter must leave out.
 */
#ifndef KSYM_CTEST_REAL_TOOLS_H
#define KSYM_CTEST_REAL_TOOLS_H

#include "check.h"
#include "../tools/bpf_loader.h"

#include <sys/wait.h>

static const char *tooldir;
static struct ksym_btf *kbtf;

static inline struct ksym_bpf_object *open_tool(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.bpf.o", tooldir, name);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    return o;
}

static inline size_t prog(struct ksym_bpf_object *o, const char *name)
{
    size_t i = (size_t)-1;
    CHECK(ksym_bpf_object_find_program(o, name, &i) == 0);
    return i;
}

static inline void autoload(struct ksym_bpf_object *o, const char *name, bool on)
{
    CHECK(ksym_bpf_program_set_autoload(o, prog(o, name), on) == 0);
}

static inline void set_u32(struct ksym_bpf_object *o, const char *var, uint32_t v)
{
    CHECK(ksym_bpf_object_set_var(o, var, &v, sizeof(v)) == 0);
}

static inline void set_bool(struct ksym_bpf_object *o, const char *var, bool v)
{
    CHECK(ksym_bpf_object_set_var(o, var, &v, sizeof(v)) == 0);
}

static inline size_t map(struct ksym_bpf_object *o, const char *name)
{
    size_t m = (size_t)-1;
    CHECK(ksym_bpf_object_find_map(o, name, &m) == 0);
    return m;
}

/* Prepares `o` against the running kernel, loads every program whose
 * autoload is on and attaches it; 0 when all of that worked, else the
 * first failure's code (the verifier's or the kernel's words on stderr). */
static inline int run(struct ksym_bpf_object *o, struct kl_loaded *l, const char *what)
{
    char why[4096];
    int err = kl_prepare(o, NULL, kbtf, l, why, sizeof(why));
    if (err) {
        fprintf(stderr, "%s: prepare: %s\n", what, why);
        return err;
    }
    size_t n = ksym_bpf_object_program_count(o);
    for (size_t i = 0; i < n; i++) {
        if (!ksym_bpf_program_autoload(o, i))
            continue;
        char *verdict = NULL;
        size_t verdict_len = 0;
        FILE *report = open_memstream(&verdict, &verdict_len);
        int fd = kl_load_prog(o, l, i, report);
        if (report)
            fclose(report);
        if (fd < 0 && fd != -EPERM)
            fprintf(stderr, "%s: program %zu does not load: %s\n%s", what, i, strerror(-fd), verdict ? verdict : "");
        free(verdict);
        if (fd < 0)
            return fd;
        int link = kl_attach(o, l, i);
        if (link < 0) {
            struct ksym_bpf_program_info p = { .sz = sizeof(p) };
            ksym_bpf_program_info(o, i, &p);
            fprintf(stderr, "%s: program `%s` (%s) does not attach: %s\n", what, p.name, p.section,
                    strerror(-link));
            return link;
        }
    }
    return 0;
}

/* `work(n)` in a child process: the control a tool's pid filter must
 * leave out. */
static inline void in_child(void (*work)(int), int n)
{
    pid_t pid = fork();
    if (pid == 0) {
        work(n);
        _exit(0);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static inline uint64_t sum_u32(const uint32_t *v, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* The objects' folder and the running kernel's BTF set up; 0 (and a skip)
 * when the data, bpf() or the kernel's BTF is missing. */
static inline int real_tools_ready(void)
{
    const char *data = getenv("KSYM_TESTDATA");
    static char dir[512];
    if (!data) {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no libbpf-tools objects");
        return 0;
    }
    snprintf(dir, sizeof(dir), "%s/libbpf-tools-0.26", data);
    tooldir = dir;
    if (kl_bpf_available() != 0 || !(kbtf = ksym_btf_open(NULL))) {
        KERNEL_SKIP("bpf() or the kernel's BTF is not available: %s", ksym_last_error_message());
        return 0;
    }
    return 1;
}

#endif
