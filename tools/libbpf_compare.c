/*
 * The same BPF objects through libbpf and through libksym, side by side:
 * what each does with one function that has many symbol aliases (one per
 * attach point). Run by `make compare-libbpf` (part of `make bench`) where
 * the system has libbpf (libbpf-dev) and bpf() is permitted; it reports,
 * it does not judge libbpf: docs/bpf-objects.md quotes its output.
 *
 *   libbpf_compare OBJECT.bpf.o...
 *
 * For each object:
 *   libbpf   bpf_object__open_file + bpf_object__load; when that fails, the
 *            target program loaded alone, then its first alias alone, with
 *            the first line of libbpf's or the verifier's complaint.
 *   libksym  every program loaded (tools/bpf_loader.h), each run once with
 *            BPF_PROG_TEST_RUN, and its first map compared with what the
 *            target program wrote. Exit status 1 if anything of libksym's
 *            side fails.
 */
#define _GNU_SOURCE

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ksym.h>

#include "bpf_loader.h"

/* libbpf's warnings, kept to quote the first telling line. */
static char complaint[512];

static int capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    char msg[16384];
    if (level == LIBBPF_DEBUG)
        return 0;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    /* The verifier's verdict is the most telling line; else the first
     * line of the first warning. */
    for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
        int verdict = strstr(line, "expected=") || strstr(line, "invalid") || strstr(line, "unknown");
        if (verdict || (!complaint[0] && !strstr(line, "PROG LOAD LOG")))
            snprintf(complaint, sizeof(complaint), "%s", line);
        if (verdict)
            break;
    }
    return 0;
}

/* Loads `path` with libbpf; `only` NULL loads every program, otherwise only
 * the program of that name. Returns the load result; counts programs and
 * the ones with an fd. */
static int libbpf_load(const char *path, const char *only, int *nprogs, int *loaded)
{
    complaint[0] = 0;
    struct bpf_object *o = bpf_object__open_file(path, NULL);
    if (!o)
        return -errno;
    struct bpf_program *p;
    int i = 0;
    bpf_object__for_each_program(p, o) {
        if (only)
            bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), only));
        i++;
    }
    *nprogs = i;
    int err = bpf_object__load(o);
    *loaded = 0;
    bpf_object__for_each_program(p, o) *loaded += bpf_program__fd(p) >= 0;
    bpf_object__close(o);
    return err;
}

/* `target` and `alias` name a program and one of its aliases (or NULL). */
static void report_libbpf(const char *path, const char *target, const char *alias)
{
    int n = 0, loaded = 0;
    int err = libbpf_load(path, NULL, &n, &loaded);
    printf("libbpf %s:\n", libbpf_version_string());
    if (err && n == 0) {
        printf("  open: %s\n    %s\n", strerror(-err), complaint);
        return;
    }
    printf("  open: %d programs (each alias a program with its own copy of the instructions)\n", n);
    printf("  load all: %s, %d of %d programs loaded\n", err ? strerror(-err) : "ok", loaded, n);
    if (!err)
        return;
    printf("    %s\n", complaint);
    const char *only[2] = { target, alias };
    for (int k = 0; k < 2 && only[k]; k++) {
        err = libbpf_load(path, only[k], &n, &loaded);
        printf("  load only %s (%s): %s\n", only[k], k ? "an alias" : "the function", err ? strerror(-err) : "ok");
        if (err)
            printf("    %s\n", complaint);
    }
}

/* The name of program 0 and of its first alias, per libksym. */
static void names(const char *path, char *target, char *alias, size_t size)
{
    struct ksym_bpf_object *obj = ksym_bpf_object_open(path);
    size_t np = obj ? ksym_bpf_object_program_count(obj) : 0;
    target[0] = alias[0] = 0;
    for (size_t i = 0; i < np; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        if (ksym_bpf_program_info(obj, i, &p))
            continue;
        if (i == 0)
            snprintf(target, size, "%s", p.name);
        else if (p.alias_of == 0 && !alias[0])
            snprintf(alias, size, "%s", p.name);
    }
    ksym_bpf_object_free(obj);
}

static int report_libksym(const char *path)
{
    struct ksym_bpf_object *obj = ksym_bpf_object_open(path);
    struct kl_loaded l;
    char why[4096];
    if (!obj) {
        printf("libksym: open: %s\n", ksym_last_error_message());
        return 1;
    }
    printf("libksym %s:\n", ksym_version());
    int err = kl_load(obj, NULL, &l, NULL, why, sizeof(why));
    size_t np = ksym_bpf_object_program_count(obj), loaded = 0, same = 0, ran = 0, aliases = 0;
    for (size_t i = 0; i < l.nprogs; i++)
        loaded += l.prog_fds[i] >= 0;
    printf("  open: %zu programs; load all: %s, %zu of %zu programs loaded\n", np,
           err == 0 ? "ok" : (err > 0 ? "some failed" : why), loaded, np);

    /* Run each program with map 0 zeroed; an alias must write what its
     * target wrote. */
    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    uint64_t *want = NULL, *got = NULL;
    if (err == 0 && ksym_bpf_map_info(obj, 0, &m) == 0 && m.value_size == 8) {
        want = calloc(m.max_entries, 8);
        got = calloc(m.max_entries, 8);
    }
    for (size_t i = 0; want && got && i < np; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        uint64_t zero = 0;
        uint32_t ret;
        int ok = ksym_bpf_program_info(obj, i, &p) == 0;
        for (uint32_t k = 0; ok && k < m.max_entries; k++)
            ok = kl_map_update(l.map_fds[0], &k, &zero) == 0;
        ok = ok && kl_test_run(l.prog_fds[i], &ret) == 0;
        for (uint32_t k = 0; ok && k < m.max_entries; k++)
            ok = kl_map_lookup(l.map_fds[0], &k, &got[k]) == 0;
        if (!ok)
            continue;
        ran++;
        if (p.alias_of == i) {
            memcpy(want, got, (size_t)m.max_entries * 8);
            continue;
        }
        aliases++;
        same += !memcmp(want, got, (size_t)m.max_entries * 8);
    }
    if (want && got) {
        printf("  ran %zu programs; %zu of %zu aliases wrote exactly what their target wrote", ran, same, aliases);
        if (m.max_entries == 1)
            printf(" (%s[0] = %#" PRIx64 ")", m.name, want[0]);
        printf("\n");
    }
    int rc = err != 0 || ran != np || same != aliases;
    free(want);
    free(got);
    kl_unload(&l);
    ksym_bpf_object_free(obj);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    int avail = kl_bpf_available();
    if (avail) {
        printf("SKIP: bpf() is not permitted here (%s): nothing to compare\n", strerror(-avail));
        return 0;
    }
    libbpf_set_print(capture);
    for (int i = 1; i < argc; i++) {
        printf("\n%s\n", argv[i]);
        char target[256], alias[256];
        names(argv[i], target, alias, sizeof(target));
        report_libbpf(argv[i], target[0] ? target : NULL, alias[0] ? alias : NULL);
        rc |= report_libksym(argv[i]);
    }
    return rc;
}
