/*
 * What the libksym-bcc tests share: bcc's API loaded from a library (the
 * real libbcc, the oracle, or the shim under test), a kallsyms file read
 * into lines (only to choose what to ask: the answers come from the
 * libraries), and comparing two answers.
 */
#ifndef KSYM_BCC_TEST_COMMON_H
#define KSYM_BCC_TEST_COMMON_H

#define _GNU_SOURCE
/* The one skip mechanism (NEED_SKIP, KERNEL_SKIP, KSYM_REQUIRE) and the
 * counters of the C tests; CHECK without libksym's last error, which these
 * tests do not link. */
#include "../../c-tests/check.h"
#undef CHECK
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                \
        }                                                                                          \
    } while (0)

#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bcc_symbol {
    const char *name;
    const char *demangle_name;
    const char *module;
    uint64_t offset;
};

struct api {
    const char *what;
    void *handle;
    void *(*symcache_new)(int, void *);
    void (*free_symcache)(void *, int);
    int (*resolve)(void *, uint64_t, struct bcc_symbol *);
    int (*resolve_no_demangle)(void *, uint64_t, struct bcc_symbol *);
    int (*resolve_name)(void *, const char *, const char *, uint64_t *);
    void (*refresh)(void *);
};

/* The six functions from `path` (RTLD_LOCAL: the shim's and bcc's stay
 * apart); exits when one is missing. */
static inline struct api load_api(const char *path, const char *what)
{
    struct api a;
    memset(&a, 0, sizeof(a));
    a.what = what;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s: dlopen %s: %s\n", what, path, dlerror());
        exit(2);
    }
    a.handle = h;
    *(void **)&a.symcache_new = dlsym(h, "bcc_symcache_new");
    *(void **)&a.free_symcache = dlsym(h, "bcc_free_symcache");
    *(void **)&a.resolve = dlsym(h, "bcc_symcache_resolve");
    *(void **)&a.resolve_no_demangle = dlsym(h, "bcc_symcache_resolve_no_demangle");
    *(void **)&a.resolve_name = dlsym(h, "bcc_symcache_resolve_name");
    *(void **)&a.refresh = dlsym(h, "bcc_symcache_refresh");
    if (!a.symcache_new || !a.free_symcache || !a.resolve || !a.resolve_no_demangle || !a.resolve_name ||
        !a.refresh) {
        fprintf(stderr, "%s: %s lacks a bcc_symcache function\n", what, path);
        exit(2);
    }
    return a;
}

/* The real libbcc: $BCC_LIB, default libbcc_bpf.so.0 (package libbpfcc). */
static inline struct api load_bcc(void)
{
    const char *p = getenv("BCC_LIB");
    return load_api(p && *p ? p : "libbcc_bpf.so.0", "bcc");
}

/* The file a library was loaded from, links resolved ("libbcc.so.0.31.0":
 * the bcc version the tests compare with), in a static buffer. */
static inline const char *api_file(const struct api *a)
{
    static char buf[4096];
    struct link_map *lm = NULL;
    if (dlinfo(a->handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
        return "?";
    if (!realpath(lm->l_name, buf))
        snprintf(buf, sizeof(buf), "%s", lm->l_name);
    const char *base = strrchr(buf, '/');
    return base ? base + 1 : buf;
}

/* The minor version of the bcc library `a` was loaded from (0.31.0: 31), or
 * -1. */
static inline int api_bcc_minor(const struct api *a)
{
    int major = -1, minor = -1;
    const char *f = api_file(a), *so = strstr(f, ".so.");
    if (!so || sscanf(so + 4, "%d.%d", &major, &minor) != 2 || major != 0)
        return -1;
    return minor;
}

/* The shim under test: $KSYM_BCC_LIB. */
static inline struct api load_shim(void)
{
    const char *p = getenv("KSYM_BCC_LIB");
    if (!p || !*p) {
        fprintf(stderr, "KSYM_BCC_LIB is not set (the path of libksym-bcc.so.0)\n");
        exit(2);
    }
    return load_api(p, "libksym-bcc");
}

/* One line of a kallsyms file. */
struct line {
    uint64_t addr;
    char type;
    const char *name;
    const char *module; /* "" for the core kernel */
};

struct lines {
    struct line *l;
    size_t n;
};

static inline struct lines read_lines(const char *path)
{
    struct lines ls = { NULL, 0 };
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 0;
    char buf[4096];
    while (fgets(buf, sizeof(buf), f)) {
        char type, name[1024], mod[1024] = "";
        unsigned long long addr;
        int k = sscanf(buf, "%llx %c %1023s [%1023[^]]]", &addr, &type, name, mod);
        if (k < 3)
            continue;
        if (ls.n == cap) {
            cap = cap ? cap * 2 : 1 << 17;
            ls.l = realloc(ls.l, cap * sizeof(*ls.l));
            if (!ls.l)
                exit(2);
        }
        ls.l[ls.n++] = (struct line){ addr, type, strdup(name), strdup(mod) };
    }
    fclose(f);
    return ls;
}

/* A digest of /proc/kallsyms (FNV-1a of its text), to see whether it
 * changed during a run: a BPF program or trampoline that came or went
 * changes which of several names at one address bcc answers. */
static inline uint64_t kallsyms_digest(void)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    uint64_t h = 1469598103934665603ULL;
    char buf[65536];
    size_t k;
    while (f && (k = fread(buf, 1, sizeof(buf), f)) > 0)
        for (size_t i = 0; i < k; i++)
            h = (h ^ (unsigned char)buf[i]) * 1099511628211ULL;
    if (f)
        fclose(f);
    return h;
}

static inline int str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The same answer: return value, name, module, offset, and the demangled
 * name as text (bcc's points at the name). */
static inline int same_answer(int ra, const struct bcc_symbol *a, int rb, const struct bcc_symbol *b)
{
    return ra == rb && str_eq(a->name, b->name) && str_eq(a->module, b->module) && a->offset == b->offset &&
           str_eq(a->demangle_name, b->demangle_name);
}

static inline void show(const char *who, int r, const struct bcc_symbol *s)
{
    fprintf(stderr, "      %-12s %d %s [%s] +%#llx (demangled %s)\n", who, r, s->name ? s->name : "(null)",
            s->module ? s->module : "(null)", (unsigned long long)s->offset,
            s->demangle_name ? s->demangle_name : "(null)");
}

#endif
