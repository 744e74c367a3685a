/*
 * libksym-bcc: bcc's own library in the process, for the caches of
 * processes (forwarded to it) and for its version (whose answers the
 * kernel caches give).
 *
 * The library is looked for among the objects already loaded
 * (dl_iterate_phdr), by file name: libbcc.so.* (bcc's Python module loads
 * it; the interposer in lib/ksym-bcc/ stands in for it and depends on it
 * by path) or libbcc_bpf.so.* (bpftrace links it). An object whose
 * bcc_symcache_new is this library's own (the interposer) is not bcc.
 */
#define _GNU_SOURCE
#include "real.h"

#include "note.h"
#include "settings.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This library's own bcc_symcache_new (ksym_bcc_real_own): to tell bcc's
 * library from one that only passes ours on. */
static void *(*own_symcache_new)(int, struct bcc_symbol_option *);

void ksym_bcc_real_own(void *(*symcache_new)(int, struct bcc_symbol_option *))
{
    own_symcache_new = symcache_new;
}

/* ----- bcc's libraries among the loaded objects --------------------------- */

#define MAX_LOADED 8

struct loaded {
    char path[MAX_LOADED][PATH_MAX];
    int n;
};

static int is_bcc_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libbcc.so", 9) == 0 || strncmp(base, "libbcc_bpf.so", 13) == 0;
}

static int each_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    struct loaded *l = ctx;
    if (info->dlpi_name && is_bcc_name(info->dlpi_name) && l->n < MAX_LOADED)
        snprintf(l->path[l->n++], PATH_MAX, "%s", info->dlpi_name);
    return 0;
}

static void *lookup(void *handle, const char *name)
{
    dlerror();
    return dlsym(handle, name);
}

/* The first loaded object that is bcc's library: its path (as loaded) in
 * `path`, a handle on it (not closed: it stays loaded anyway), or NULL. */
static void *loaded_bcc(char *path, size_t len)
{
    struct loaded l;
    l.n = 0;
    /* dlopen is not called under dl_iterate_phdr's lock. */
    dl_iterate_phdr(each_object, &l);
    for (int i = 0; i < l.n; i++) {
        void *h = dlopen(l.path[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        void *f = lookup(h, "bcc_symcache_new");
        if (f && f != (void *)own_symcache_new) {
            snprintf(path, len, "%s", l.path[i]);
            return h;
        }
        dlclose(h);
    }
    return NULL;
}

/* ----- the functions, for user-space pids ----------------------------------- */

static struct bcc_api real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static char real_error[512];
static int note_forward;

static void fill_api(void *handle)
{
    /* Casts between object and function pointers: POSIX dlsym's contract. */
    *(void **)&real.symcache_new = lookup(handle, "bcc_symcache_new");
    *(void **)&real.free_symcache = lookup(handle, "bcc_free_symcache");
    *(void **)&real.resolve = lookup(handle, "bcc_symcache_resolve");
    *(void **)&real.resolve_no_demangle = lookup(handle, "bcc_symcache_resolve_no_demangle");
    *(void **)&real.resolve_name = lookup(handle, "bcc_symcache_resolve_name");
    *(void **)&real.refresh = lookup(handle, "bcc_symcache_refresh");
}

static int usable(void)
{
    if (real.symcache_new && real.symcache_new != own_symcache_new && real.free_symcache)
        return 1;
    memset(&real, 0, sizeof(real));
    return 0;
}

static void add_error(size_t *used, const char *fmt, const char *a, const char *b)
{
    if (*used >= sizeof(real_error) - 1)
        return;
    int k = snprintf(real_error + *used, sizeof(real_error) - *used, fmt, *used ? "; " : "", a, b);
    *used += k > 0 ? (size_t)k : 0;
    if (*used >= sizeof(real_error))
        *used = sizeof(real_error) - 1;
}

static void find_real(void)
{
    char path[PATH_MAX];
    void *h = ksym_bcc_settings.forward_lib ? NULL : loaded_bcc(path, sizeof(path));
    if (h) {
        fill_api(h);
        if (usable())
            return;
    }
    const char *candidates[] = { ksym_bcc_settings.forward_lib, "libbcc_bpf.so.0", "libbcc.so.0" };
    size_t used = 0;
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
        if (!candidates[i] || (i > 0 && ksym_bcc_settings.forward_lib))
            continue;
        h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            add_error(&used, "%s%s%s", e ? e : candidates[i], "");
            continue;
        }
        fill_api(h);
        if (usable())
            return;
        add_error(&used, "%s%s%s", candidates[i], " has no bcc_symcache_new of bcc's");
    }
}

const struct bcc_api *ksym_bcc_real_api(int pid)
{
    pthread_once(&real_once, find_real);
    if (!real.symcache_new)
        ksym_bcc_note(&note_forward,
                      "user-space symbols (pid %d) cannot be resolved: bcc's library is not in the process "
                      "and could not be loaded (%s)",
                      pid, real_error);
    return &real;
}

/* ----- the version ------------------------------------------------------------- */

static struct bcc_version version;
static int version_known; /* set, or found in a loaded library: kept */
static pthread_mutex_t version_lock = PTHREAD_MUTEX_INITIALIZER;
static char version_source[PATH_MAX + 64];
static int note_bad_version;

/* "X.Y[.Z]" at s, followed by nothing: 0, else -1. */
static int parse_version(const char *s, struct bcc_version *v)
{
    int n = 0;
    v->patch = 0;
    if (sscanf(s, "%d.%d%n", &v->major, &v->minor, &n) != 2)
        return -1;
    s += n;
    if (*s == '.') {
        if (sscanf(s, ".%d%n", &v->patch, &n) != 1)
            return -1;
        s += n;
    }
    return *s == 0 && v->major >= 0 && v->minor >= 0 && v->patch >= 0 ? 0 : -1;
}

/* Under version_lock. A library not loaded yet may be later: only a
 * version found is kept. */
static void find_version(void)
{
    version = (struct bcc_version){ -1, -1, -1, "unknown" };
    const char *var = ksym_bcc_settings.bcc_version;
    if (var) {
        if (parse_version(var, &version) == 0) {
            version.source = "KSYM_BCC_BCC_VERSION";
            version_known = 1;
            return;
        }
        version = (struct bcc_version){ -1, -1, -1, "unknown" };
        ksym_bcc_note(&note_bad_version, "KSYM_BCC_BCC_VERSION=%s is not a version (X.Y or X.Y.Z): ignored", var);
    }
    char path[PATH_MAX], real_path[PATH_MAX];
    if (!loaded_bcc(path, sizeof(path))) {
        version.source = "(no bcc library in the process)";
        return;
    }
    const char *file = realpath(path, real_path) ? real_path : path;
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    const char *so = strstr(base, ".so.");
    struct bcc_version v;
    if (so && parse_version(so + 4, &v) == 0) {
        version = v;
        snprintf(version_source, sizeof(version_source), "%s", file);
    } else {
        snprintf(version_source, sizeof(version_source), "%s (no version in its file name)", file);
    }
    version.source = version_source;
    version_known = 1;
}

const struct bcc_version *ksym_bcc_version(void)
{
    pthread_mutex_lock(&version_lock);
    if (!version_known)
        find_version();
    pthread_mutex_unlock(&version_lock);
    return &version;
}

int ksym_bcc_reads_as_root_only(const struct bcc_version *v)
{
    if (v->major < 0)
        return 0;
    return v->major == 0 && v->minor < 29;
}
