/*
 * libksym-bcc: bcc's symbol cache API (bcc_syms.h) with the kernel's caches
 * (pid < 0) answered by libksym and the others forwarded to bcc.
 *
 * Exported (libksym-bcc.map): bcc_symcache_new, bcc_free_symcache,
 * bcc_symcache_resolve, bcc_symcache_resolve_no_demangle,
 * bcc_symcache_resolve_name, bcc_symcache_refresh, and ksym_bcc_counts
 * (how many kernel answers it gave). Preloaded (LD_PRELOAD=libksym-bcc.so.0)
 * into a program linked with libbcc, or reached through the interposer
 * (lib/ksym-bcc/libbcc.so.0, for bcc's Python module), they take the place
 * of bcc's; bcc's own are found in the process (real.c).
 *
 * Every handle handed out is registered: a NULL or unknown handle gets
 * bcc's error return (-1, the symbol zeroed) instead of a crash, and
 * bcc_free_symcache frees a handle as what it is, whatever pid it is given.
 * The registry's read lock is held during a call, its write lock to add or
 * remove a handle: a handle is never freed under a call that uses it.
 */
#define _GNU_SOURCE
#include "kcache.h"
#include "note.h"
#include "real.h"
#include "settings.h"

#include <ksym.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#ifndef KSYM_BCC_VERSION
#define KSYM_BCC_VERSION "0"
#endif

/* ----- what it answered: the proof that answers came from libksym ------------------ */

/* Kernel addresses asked of libksym's caches, those it found a symbol
 * for, and kernel names looked up. */
static uint64_t n_resolved, n_found, n_names;

/* ksym_bcc_counts(out): out[0] the kernel addresses this process asked
 * (bcc_symcache_resolve and _no_demangle on a kernel cache), out[1] those
 * answered with a symbol, out[2] the kernel names looked up
 * (bcc_symcache_resolve_name). Every one was answered by libksym. */
EXPORT void ksym_bcc_counts(uint64_t out[3])
{
    out[0] = __atomic_load_n(&n_resolved, __ATOMIC_RELAXED);
    out[1] = __atomic_load_n(&n_found, __ATOMIC_RELAXED);
    out[2] = __atomic_load_n(&n_names, __ATOMIC_RELAXED);
}

static void version_text(char *buf, size_t len)
{
    const struct bcc_version *v = ksym_bcc_version();
    if (v->major < 0)
        snprintf(buf, len, "bcc %s: the newest rules", v->source);
    else
        snprintf(buf, len, "bcc %d.%d.%d (%s)", v->major, v->minor, v->patch, v->source);
}

EXPORT void *bcc_symcache_new(int pid, struct bcc_symbol_option *option);

__attribute__((constructor)) static void init(void)
{
    ksym_bcc_real_own(bcc_symcache_new);
    ksym_bcc_settings_read();
    if (!ksym_bcc_settings.debug)
        return;
    char v[4200];
    version_text(v, sizeof(v));
    fprintf(stderr,
            "libksym-bcc %s: active in pid %d: kernel symbol caches (pid < 0) from libksym %s with the "
            "answers of %s, user-space ones forwarded to bcc; KSYM_BCC_FIX: %s\n",
            KSYM_BCC_VERSION, (int)getpid(), ksym_version(), v, ksym_bcc_fixes_text(ksym_bcc_settings.fixes));
}

__attribute__((destructor)) static void fini(void)
{
    if (!ksym_bcc_settings.debug)
        return;
    uint64_t c[3];
    ksym_bcc_counts(c);
    fprintf(stderr,
            "libksym-bcc: pid %d exits: %llu kernel addresses answered by libksym (%llu with a symbol), "
            "%llu kernel names\n",
            (int)getpid(), (unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2]);
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
        struct kcache_rules rules = { .root_only = ksym_bcc_reads_as_root_only(ksym_bcc_version()) };
        h = kcache_new(rules);
        kind = KERNEL;
    } else {
        const struct bcc_api *b = ksym_bcc_real_api(pid);
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
        ksym_bcc_real_api(pid)->free_symcache(h, pid);
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
    else if (copy.kind == FORWARDED)
        ksym_bcc_real_api(copy.pid)->free_symcache(copy.handle, copy.pid);
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
        __atomic_add_fetch(&n_resolved, 1, __ATOMIC_RELAXED);
        if (r == 0)
            __atomic_add_fetch(&n_found, 1, __ATOMIC_RELAXED);
    } else if (s && s->kind == FORWARDED) {
        const struct bcc_api *real = ksym_bcc_real_api(s->pid);
        int (*f)(void *, uint64_t, struct bcc_symbol *) = demangle ? real->resolve : real->resolve_no_demangle;
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
    if (s && s->kind == KERNEL) {
        r = kcache_resolve_name(s->handle, module, name, addr);
        __atomic_add_fetch(&n_names, 1, __ATOMIC_RELAXED);
    } else if (s && s->kind == FORWARDED && module && ksym_bcc_real_api(s->pid)->resolve_name) {
        r = ksym_bcc_real_api(s->pid)->resolve_name(s->handle, module, name, addr);
    }
    pthread_rwlock_unlock(&reg_lock);
    return r;
}

EXPORT void bcc_symcache_refresh(void *resolver)
{
    pthread_rwlock_rdlock(&reg_lock);
    struct slot *s = find(resolver);
    if (s && s->kind == KERNEL)
        kcache_refresh(s->handle);
    else if (s && s->kind == FORWARDED && ksym_bcc_real_api(s->pid)->refresh)
        ksym_bcc_real_api(s->pid)->refresh(s->handle);
    pthread_rwlock_unlock(&reg_lock);
}
