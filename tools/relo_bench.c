/*
 * Relocation speed, libksym against libbpf, in one run (`make bench`):
 *
 *   relo_bench OBJECT.bpf.o...
 *
 * libksym  ksym_bpf_object_open + ksym_btf_open (the running kernel's BTF,
 *          read fresh each time, as libbpf does) + resolve_ksyms +
 *          resolve_btf + relocate; and again with the kernel BTF opened
 *          once and kept (what a tool that loads many objects does).
 * libbpf   bpf_object__open_file + bpf_object__load up to its programs:
 *          every program's type is set to one the kernel does not have, so
 *          the load stops at the first BPF_PROG_LOAD, after the relocation
 *          (vmlinux BTF, externs, CO-RE, subprograms, maps; libbpf 1.1 has
 *          no bpf_object__prepare). libbpf also creates the maps and loads
 *          the object's BTF here, which libksym leaves to the loader: the
 *          ratio slightly favours libksym by that much.
 *
 * Medians of 15 runs after 2 warm-ups, the three alternating; the ratio
 * is the median of each run's libksym / libbpf. Target: libksym (kernel
 * BTF opened per object) at most 0.5 x libbpf; a verdict per object.
 */
#define _GNU_SOURCE

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ksym.h>

#define RUNS 15

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level, (void)fmt, (void)ap;
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v)
{
    qsort(v, RUNS, sizeof(*v), cmp);
    return v[RUNS / 2];
}

/* One libksym relocation; `btf` NULL opens the kernel's BTF inside. */
static int ksym_once(const char *path, struct ksym_btf *btf, struct ksym_cache *cache)
{
    struct ksym_btf *own = NULL;
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    if (!o)
        return -1;
    if (!btf)
        btf = own = ksym_btf_open(NULL);
    int rc = btf && ksym_bpf_object_resolve_ksyms(o, cache) == 0 ? 0 : -1;
    (void)ksym_bpf_object_resolve_btf(o, btf); /* attach targets may be missing */
    for (size_t m = 0; rc == 0 && m < ksym_bpf_object_map_count(o); m++)
        rc = ksym_bpf_object_set_map_fd(o, m, 100 + (int)m);
    if (rc == 0)
        rc = ksym_bpf_object_relocate(o);
    ksym_bpf_object_free(o);
    ksym_btf_free(own);
    return rc;
}

static int libbpf_once(const char *path)
{
    struct bpf_object *o = bpf_object__open_file(path, NULL);
    struct bpf_program *p;
    if (!o)
        return -1;
    bpf_object__for_each_program(p, o) bpf_program__set_type(p, (enum bpf_prog_type)0x7fff);
    int rc = bpf_object__load(o); /* fails at the first program, after relocation */
    bpf_object__close(o);
    return rc == 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    libbpf_set_print(quiet);
    struct ksym_cache *cache = ksym_cache_new(NULL);
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!cache || !btf) {
        printf("relo_bench: SKIP: %s\n", ksym_last_error_message());
        return 0;
    }
    printf("%-24s %12s %12s %12s %9s %9s  %s\n", "object", "libbpf", "libksym", "ksym warm", "ratio", "warm",
           "target");
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        double a[RUNS], b[RUNS], c[RUNS], rb[RUNS], rw[RUNS];
        for (int r = -2; r < RUNS; r++) {
            double t0 = now();
            int e1 = libbpf_once(argv[i]);
            double t1 = now();
            int e2 = ksym_once(argv[i], NULL, cache);
            double t2 = now();
            int e3 = ksym_once(argv[i], btf, cache);
            double t3 = now();
            if (e1 || e2 || e3) {
                printf("%s: failed (libbpf %d, libksym %d/%d: %s)\n", argv[i], e1, e2, e3,
                       ksym_last_error_message());
                rc = 1;
                break;
            }
            if (r >= 0) {
                a[r] = t1 - t0, b[r] = t2 - t1, c[r] = t3 - t2;
                rb[r] = b[r] / a[r], rw[r] = c[r] / a[r];
            }
        }
        if (rc)
            continue;
        const char *base = strrchr(argv[i], '/');
        double ma = median(a), mb = median(b), mc = median(c), r = median(rb);
        printf("%-24s %9.2f ms %9.2f ms %9.2f ms %8.3fx %8.3fx  <= 0.50 x libbpf: %s\n", base ? base + 1 : argv[i],
               ma * 1e3, mb * 1e3, mc * 1e3, r, median(rw), r <= 0.5 ? "met" : "MISSED");
    }
    ksym_btf_free(btf);
    ksym_cache_free(cache);
    return rc;
}
