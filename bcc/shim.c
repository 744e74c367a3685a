/*
 * libksym-bcc: bcc's symbol cache API (bcc_syms.h) with the kernel's caches
 * (pid < 0) answered by libksym and the others forwarded to bcc.
 *
 * Exported (libksym-bcc.map): bcc_symcache_new, bcc_free_symcache,
 * bcc_symcache_resolve, bcc_symcache_resolve_no_demangle,
 * bcc_symcache_resolve_name, bcc_symcache_refresh. Preloaded
 * (LD_PRELOAD=libksym-bcc.so.0) into a program linked with libbcc, they
 * take the place of bcc's; bcc's own are found with dlsym(RTLD_NEXT), or by
 * a dlopen of bcc's library when it is not in the process.
 *
 * Every handle handed out is registered: a NULL or unknown handle gets
 * bcc's error return (-1, the symbol zeroed) instead of a crash, and
 * bcc_free_symcache frees a handle as what it is, whatever pid it is given.
 * The registry's read lock is held during a call, its write lock to add or
 * remove a handle: a handle is never freed under a call that uses it.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <ksym.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#ifndef KSYM_BCC_VERSION
#define KSYM_BCC_VERSION "0"
#endif

struct settings ksym_bcc_settings;

void ksym_bcc_note(int *once, const char *fmt, ...)
{
    if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED))
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "libksym-bcc: %s\n", line);
}

/* ----- settings ---------------------------------------------------------------- */

static int note_fix_word;

static unsigned parse_fixes(const char *v)
{
    unsigned fixes = 0;
    while (v && *v) {
        size_t n = strcspn(v, ", ");
        static const struct {
            const char *word;
            unsigned bits;
        } words[] = { { "symbolize", FIX_SYMBOLIZE },
                      { "builtin", FIX_BUILTIN },
                      { "module", FIX_MODULE },
                      { "all", FIX_SYMBOLIZE | FIX_BUILTIN | FIX_MODULE } };
        int known = n == 0;
        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
            if (strlen(words[i].word) == n && strncmp(v, words[i].word, n) == 0) {
                fixes |= words[i].bits;
                known = 1;
            }
        }
        if (!known)
            ksym_bcc_note(&note_fix_word, "KSYM_BCC_FIX: ignoring '%.*s' (known: symbolize, builtin, module, all)",
                          (int)n, v);
        v += n;
        v += strspn(v, ", ");
    }
    return fixes;
}

static const char *fixes_text(unsigned f)
{
    static char buf[64];
    if (!f)
        return "none (bcc's answers)";
    snprintf(buf, sizeof(buf), "%s%s%s", (f & FIX_SYMBOLIZE) ? "symbolize " : "",
             (f & FIX_BUILTIN) ? "builtin " : "", (f & FIX_MODULE) ? "module " : "");
    buf[strlen(buf) - 1] = 0;
    return buf;
}

__attribute__((constructor)) static void init(void)
{
    struct settings *s = &ksym_bcc_settings;
    s->fixes = parse_fixes(getenv("KSYM_BCC_FIX"));
    const char *d = getenv("KSYM_BCC_DEBUG");
    if (d && *d && strcmp(d, "0") != 0)
        s->debug = atoi(d) >= 2 ? 2 : 1;
    const char *dir = getenv("KSYM_BCC_SNAPSHOT_DIR");
    if (dir && strcmp(dir, "none") == 0)
        s->no_snapshot = 1;
    else if (dir && *dir)
        s->snapshot_dir = dir;
    const char *fwd = getenv("KSYM_BCC_FORWARD_LIB");
    s->forward_lib = fwd && *fwd ? fwd : NULL;
    if (s->debug)
        fprintf(stderr,
                "libksym-bcc %s: active in pid %d: kernel symbol caches (pid < 0) from libksym %s, "
                "user-space ones forwarded to bcc; KSYM_BCC_FIX: %s\n",
                KSYM_BCC_VERSION, (int)getpid(), ksym_version(), fixes_text(s->fixes));
}

/* ----- bcc's own functions, for user-space pids ---------------------------------- */

struct bcc_api {
    void *(*symcache_new)(int, struct bcc_symbol_option *);
    void (*free_symcache)(void *, int);
    int (*resolve)(void *, uint64_t, struct bcc_symbol *);
    int (*resolve_no_demangle)(void *, uint64_t, struct bcc_symbol *);
    int (*resolve_name)(void *, const char *, const char *, uint64_t *);
    void (*refresh)(void *);
};

static struct bcc_api real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static char real_error[512];
static int note_forward;

EXPORT void *bcc_symcache_new(int pid, struct bcc_symbol_option *option);

static void *lookup(void *handle, const char *name)
{
    dlerror();
    return dlsym(handle, name);
}

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

static void find_real(void)
{
    fill_api(RTLD_NEXT);
    if (real.symcache_new && real.symcache_new != bcc_symcache_new && real.free_symcache)
        return;
    memset(&real, 0, sizeof(real));
    const char *candidates[] = { ksym_bcc_settings.forward_lib, "libbcc_bpf.so.0", "libbcc.so.0" };
    size_t used = 0;
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
        if (!candidates[i] || (i > 0 && ksym_bcc_settings.forward_lib))
            continue;
        void *h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            used += (size_t)snprintf(real_error + used, used < sizeof(real_error) ? sizeof(real_error) - used : 0,
                                     "%s%s", used ? "; " : "", e ? e : candidates[i]);
            if (used >= sizeof(real_error))
                used = sizeof(real_error) - 1;
            continue;
        }
        fill_api(h);
        if (real.symcache_new && real.symcache_new != bcc_symcache_new && real.free_symcache)
            return;
        memset(&real, 0, sizeof(real));
        used += (size_t)snprintf(real_error + used, used < sizeof(real_error) ? sizeof(real_error) - used : 0,
                                 "%s%s has no bcc_symcache_new", used ? "; " : "", candidates[i]);
        if (used >= sizeof(real_error))
            used = sizeof(real_error) - 1;
    }
}

static const struct bcc_api *bcc(int pid)
{
    pthread_once(&real_once, find_real);
    if (!real.symcache_new)
        ksym_bcc_note(&note_forward,
                      "user-space symbols (pid %d) cannot be resolved: bcc's library is not in the process "
                      "and could not be loaded (%s)",
                      pid, real_error);
    return &real;
}

/* ----- the registry of handles ----------------------------------------------------- */

enum kind { EMPTY, KERNEL, FORWARDED };

struct slot {
    void *handle;
    enum kind kind;
    int pid;
};

static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct slot *slots;
static size_t nslots, used;

static size_t slot_of(const void *h, size_t n)
{
    uint64_t x = (uint64_t)(uintptr_t)h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (n - 1);
}

static struct slot *find(const void *h)
{
    if (!h || !nslots)
        return NULL;
    for (size_t i = slot_of(h, nslots);; i = (i + 1) & (nslots - 1)) {
        if (slots[i].kind == EMPTY)
            return NULL;
        if (slots[i].handle == h)
            return &slots[i];
    }
}

/* Under the write lock. -1: out of memory. */
static int add(void *h, enum kind kind, int pid)
{
    if ((used + 1) * 2 > nslots) {
        size_t n = nslots ? nslots * 2 : 64;
        struct slot *s = calloc(n, sizeof(*s));
        if (!s)
            return -1;
        for (size_t i = 0; i < nslots; i++) {
            if (slots[i].kind == EMPTY)
                continue;
            size_t j = slot_of(slots[i].handle, n);
            while (s[j].kind != EMPTY)
                j = (j + 1) & (n - 1);
            s[j] = slots[i];
        }
        free(slots);
        slots = s;
        nslots = n;
    }
    size_t i = slot_of(h, nslots);
    while (slots[i].kind != EMPTY)
        i = (i + 1) & (nslots - 1);
    slots[i] = (struct slot){ h, kind, pid };
    used++;
    return 0;
}

/* Under the write lock: removes the slot and closes the gap (linear
 * probing's backward shift). */
static void remove_slot(struct slot *s)
{
    size_t i = (size_t)(s - slots);
    slots[i].kind = EMPTY;
    used--;
    for (size_t j = (i + 1) & (nslots - 1); slots[j].kind != EMPTY; j = (j + 1) & (nslots - 1)) {
        size_t home = slot_of(slots[j].handle, nslots);
        /* Move j into the hole i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            slots[i] = slots[j];
            slots[j].kind = EMPTY;
            i = j;
        }
    }
}

/* ----- the API ----------------------------------------------------------------------- */

EXPORT void *bcc_symcache_new(int pid, struct bcc_symbol_option *option)
{
    void *h;
    enum kind kind;
    if (pid < 0) {
        h = kcache_new();
        kind = KERNEL;
    } else {
        const struct bcc_api *b = bcc(pid);
        h = b->symcache_new ? b->symcache_new(pid, option) : NULL;
        kind = FORWARDED;
    }
    if (!h)
        return NULL;
    pthread_rwlock_wrlock(&reg_lock);
    int r = add(h, kind, pid);
    pthread_rwlock_unlock(&reg_lock);
    if (r == 0)
        return h;
    if (kind == KERNEL)
        kcache_free(h);
    else
        real.free_symcache(h, pid);
    return NULL;
}

EXPORT void bcc_free_symcache(void *symcache, int pid)
{
    (void)pid; /* the registry knows what the handle is */
    pthread_rwlock_wrlock(&reg_lock);
    struct slot *s = find(symcache);
    struct slot copy = s ? *s : (struct slot){ NULL, EMPTY, 0 };
    if (s)
        remove_slot(s);
    pthread_rwlock_unlock(&reg_lock);
    if (copy.kind == KERNEL)
        kcache_free(copy.handle);
    else if (copy.kind == FORWARDED && real.free_symcache)
        real.free_symcache(copy.handle, copy.pid);
}

static int resolve(void *symcache, uint64_t addr, struct bcc_symbol *sym, int demangle)
{
    if (!sym)
        return -1;
    int r = -1;
    pthread_rwlock_rdlock(&reg_lock);
    struct slot *s = find(symcache);
    if (s && s->kind == KERNEL) {
        r = kcache_resolve(s->handle, addr, sym, demangle);
    } else if (s && s->kind == FORWARDED) {
        int (*f)(void *, uint64_t, struct bcc_symbol *) = demangle ? real.resolve : real.resolve_no_demangle;
        if (f)
            r = f(s->handle, addr, sym);
        else
            memset(sym, 0, sizeof(*sym));
    } else {
        memset(sym, 0, sizeof(*sym));
    }
    pthread_rwlock_unlock(&reg_lock);
    return r;
}

EXPORT int bcc_symcache_resolve(void *symcache, uint64_t addr, struct bcc_symbol *sym)
{
    return resolve(symcache, addr, sym, 1);
}

EXPORT int bcc_symcache_resolve_no_demangle(void *symcache, uint64_t addr, struct bcc_symbol *sym)
{
    return resolve(symcache, addr, sym, 0);
}

EXPORT int bcc_symcache_resolve_name(void *resolver, const char *module, const char *name, uint64_t *addr)
{
    if (!name || !addr)
        return -1;
    int r = -1;
    pthread_rwlock_rdlock(&reg_lock);
    struct slot *s = find(resolver);
    if (s && s->kind == KERNEL)
        r = kcache_resolve_name(s->handle, module, name, addr);
    else if (s && s->kind == FORWARDED && module && real.resolve_name)
        r = real.resolve_name(s->handle, module, name, addr);
    pthread_rwlock_unlock(&reg_lock);
    return r;
}

EXPORT void bcc_symcache_refresh(void *resolver)
{
    pthread_rwlock_rdlock(&reg_lock);
    struct slot *s = find(resolver);
    if (s && s->kind == KERNEL)
        kcache_refresh(s->handle);
    else if (s && s->kind == FORWARDED && real.refresh)
        real.refresh(s->handle);
    pthread_rwlock_unlock(&reg_lock);
}
