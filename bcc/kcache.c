/*
 * The kernel cache: bcc's KSyms answers from libksym.
 *
 * bcc (src/cc/bcc_syms.cc, bcc_proc.c) reads /proc/kallsyms at the first
 * lookup (as root only before bcc 0.29: kcache_rules), keeps each line whose address is neither 0 nor
 * all ones nor below the kernel's half of the address space (x86-64) and
 * whose type is not a data one (b B d D r R), names its module "kernel" or
 * what the brackets say, sorts by address with std::sort, and answers an
 * address with the last symbol at or below it, however far below.
 *
 * Two levels give the same answers:
 * - core: the core kernel's symbols (built-in modules included), from the
 *   table libksym maps from its snapshot, without reading /proc/kallsyms
 *   (core.c says why its answers are bcc's, and when it has none).
 * - full: every line bcc keeps, read from /proc/kallsyms when first needed
 *   (an address outside the core, several names at one address, a name to
 *   look up), in the file's order (ksym_table_foreach), sorted as bcc sorts
 *   them (stdsort.c).
 * bcc_symcache_refresh drops the full level (modules, BPF programs and
 * trampolines may have changed: the next answer that needs them reads the
 * file again) and keeps the core.
 *
 * Locking: a rwlock per cache; answers under the read lock, loads and
 * refresh under the write lock. The levels are immutable once built.
 */
#define _GNU_SOURCE
#include "kcache.h"

#include "core.h"
#include "lines.h"
#include "note.h"
#include "settings.h"
#include "stdsort.h"

#include <errno.h>
#include <ksym.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct level {
    struct ksent *e;
    size_t n;
};

struct kcache {
    pthread_rwlock_t lock;
    struct kcache_rules rules;
    /* The table of the core level (from a snapshot when possible): 0 not
     * opened yet, 1 open, -1 failed (every answer is bcc's "not found"),
     * -2 failed on hidden addresses: tried again at the next answer, as
     * bcc reads the file again while its cache is empty. */
    int table_state;
    struct ksym_table *table;
    /* The table was read from /proc/kallsyms, not mapped from a snapshot,
     * and no refresh happened since: the full level may use it. */
    int table_is_fresh;
    /* The core level (core.c), when it applies. */
    struct core_level core;
    /* The full level: 0 not read, 1 read, -1 failed. */
    int full_state;
    struct ksym_table *full_table; /* its own table, or NULL when it uses `table` */
    struct level full;
};

static int note_not_root, note_restricted, note_open_failed, note_full_failed, note_nomem;

/* ----- how bcc names a module -------------------------------------------- */

static const char *bcc_module(const struct ksym_symbol *s)
{
    if (s->flags & KSYM_SYM_BUILTIN)
        return (ksym_bcc_settings.fixes & FIX_BUILTIN) ? s->module : "kernel";
    return strcmp(s->module, "vmlinux") == 0 ? "kernel" : s->module;
}

/* ----- collecting ------------------------------------------------------------ */

struct collect {
    struct level out;
    size_t cap;
    int nomem;
};

static int collect_cb(const struct ksym_symbol *s, void *ctx)
{
    struct collect *c = ctx;
    if (!bcc_keeps(s))
        return 0;
    if (c->out.n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 65536;
        struct ksent *e = realloc(c->out.e, ncap * sizeof(*e));
        if (!e) {
            c->nomem = 1;
            return 1;
        }
        c->out.e = e;
        c->cap = ncap;
    }
    c->out.e[c->out.n++] = (struct ksent){ s->addr, s->name, bcc_module(s) };
    return 0;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ----- loading (under the write lock) ----------------------------------------- */

static void table_opts(struct ksym_table_opts *o, int no_snapshot)
{
    memset(o, 0, sizeof(*o));
    o->sz = sizeof(*o);
    /* bcc reads /proc/kallsyms; libksym's default is /proc/kallmodsyms
     * where it exists, which differs in order and content. */
    if (access("/proc/kallmodsyms", F_OK) == 0) {
        o->kallsyms_path = "/proc/kallsyms";
        /* A named source gets a snapshot only in a directory named for it. */
        o->snapshot_dir = "/run/ksym";
    }
    if (ksym_bcc_settings.snapshot_dir)
        o->snapshot_dir = ksym_bcc_settings.snapshot_dir;
    if (no_snapshot || ksym_bcc_settings.no_snapshot)
        o->flags |= KSYM_TABLE_NO_SNAPSHOT;
}

static void open_failed(const char *what)
{
    if (ksym_last_error() == KSYM_ERR_RESTRICTED)
        ksym_bcc_note(&note_restricted,
                      "/proc/kallsyms shows no kernel addresses (all zero: kptr_restrict, or no CAP_SYSLOG); "
                      "as with bcc, kernel addresses resolve to nothing");
    else if (ksym_last_error() == KSYM_ERR_NOMEM)
        ksym_bcc_note(&note_nomem, "out of memory reading kernel symbols; kernel addresses resolve to nothing");
    else
        ksym_bcc_note(what == NULL ? &note_open_failed : &note_full_failed, "%s: %s; kernel addresses %s",
                      what ? what : "kernel symbols", ksym_last_error_message(),
                      what ? "outside the core kernel resolve to nothing" : "resolve to nothing");
}

static void load_table(struct kcache *kc)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kc->table_state = -1;
    if (kc->rules.root_only && geteuid() != 0) {
        ksym_bcc_note(&note_not_root,
                      "euid %u is not 0: as with bcc before 0.29 (which reads /proc/kallsyms only as root), kernel "
                      "addresses resolve to nothing",
                      (unsigned)geteuid());
        return;
    }
    struct ksym_table_opts o;
    table_opts(&o, 0);
    kc->table = ksym_table_open(&o);
    if (!kc->table) {
        if (ksym_last_error() == KSYM_ERR_RESTRICTED)
            kc->table_state = -2;
        open_failed(NULL);
        return;
    }
    KSYM_OPTS(ksym_table_stats, st);
    int from_snapshot = ksym_table_stats(kc->table, &st) == 0 && (st.flags & KSYM_STATS_SNAPSHOT);
    kc->table_is_fresh = !from_snapshot;
    kc->table_state = 1;
    if (ksym_bcc_settings.fixes & FIX_SYMBOLIZE)
        return;

    /* With FIX_BUILTIN a built-in module's symbols are not "kernel": the
     * full level answers them all. */
    if (ksym_bcc_settings.fixes & FIX_BUILTIN)
        return;
    const char *why = NULL;
    core_build(&kc->core, kc->table, &why);
    if (ksym_bcc_settings.debug >= 2)
        fprintf(stderr, "libksym-bcc: kernel cache: %zu core symbols from %s in %.2f ms%s%s%s\n", kc->core.n,
                from_snapshot ? "libksym's snapshot" : "/proc/kallsyms", ms_since(&t0), why ? " (none: " : "",
                why ? why : "", why ? ")" : "");
}

static void load_full(struct kcache *kc)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kc->full_state = -1;
    struct ksym_table *src = kc->table;
    if (!kc->table_is_fresh) {
        struct ksym_table_opts o;
        table_opts(&o, 1);
        kc->full_table = ksym_table_open(&o);
        if (!kc->full_table) {
            open_failed("reading /proc/kallsyms again");
            return;
        }
        src = kc->full_table;
    }
    struct collect c;
    memset(&c, 0, sizeof(c));
    if (ksym_table_foreach(src, KSYM_FOREACH_FILE_ORDER, collect_cb, &c) != 0 || c.nomem) {
        if (c.nomem)
            ksym_bcc_note(&note_nomem, "out of memory reading kernel symbols");
        else
            open_failed("listing kernel symbols");
        free(c.out.e);
        return;
    }
    ksym_bcc_stdsort(c.out.e, c.out.e + c.out.n);
    kc->full = c.out;
    kc->full_state = 1;
    if (ksym_bcc_settings.debug >= 2)
        fprintf(stderr, "libksym-bcc: kernel cache: %zu symbols read from /proc/kallsyms and sorted as bcc does in %.2f ms\n",
                c.out.n, ms_since(&t0));
}

/* Takes the write lock to run `load` if *state is still 0, and returns
 * with the read lock held again. */
static void load_under_write_lock(struct kcache *kc, int *state, void (*load)(struct kcache *))
{
    pthread_rwlock_unlock(&kc->lock);
    pthread_rwlock_wrlock(&kc->lock);
    if (*state == 0)
        load(kc);
    pthread_rwlock_unlock(&kc->lock);
    pthread_rwlock_rdlock(&kc->lock);
}

/* After an open that found the addresses hidden: are they still? The
 * first 64 KB of /proc/kallsyms, parsed by libksym (its rule: every
 * address zero is KSYM_ERR_RESTRICTED), instead of the whole file: bcc
 * reads it again at every answer while its cache is empty, and so would
 * this cache's open. */
static int still_hidden(void)
{
    enum { HEAD = 64 << 10 };
    char *head = malloc(HEAD);
    FILE *f = head ? fopen("/proc/kallsyms", "r") : NULL;
    if (!f) {
        free(head);
        return 1;
    }
    size_t n = fread(head, 1, HEAD, f);
    fclose(f);
    while (n > 0 && head[n - 1] != '\n')
        n--;
    KSYM_OPTS(ksym_table_opts, o, .flags = KSYM_TABLE_NO_SNAPSHOT);
    struct ksym_table *t = n ? ksym_table_from_buffer(head, n, &o) : NULL;
    int hidden = !t && (n == 0 || ksym_last_error() == KSYM_ERR_RESTRICTED);
    ksym_table_free(t);
    free(head);
    return hidden;
}

/* Takes the read lock (held on return, whatever the result) with the table
 * loaded: 1, or 0 when it could not be (bcc's "nothing"). A refresh between
 * the loads may undo them again: tried twice. */
static int read_lock_loaded(struct kcache *kc)
{
    pthread_rwlock_rdlock(&kc->lock);
    if (kc->table_state == -2 && !still_hidden()) {
        pthread_rwlock_unlock(&kc->lock);
        pthread_rwlock_wrlock(&kc->lock);
        if (kc->table_state == -2)
            kc->table_state = 0;
        pthread_rwlock_unlock(&kc->lock);
        pthread_rwlock_rdlock(&kc->lock);
    }
    for (int tries = 0; kc->table_state == 0 && tries < 2; tries++)
        load_under_write_lock(kc, &kc->table_state, load_table);
    return kc->table_state == 1;
}

/* ----- answering (under the read lock) ---------------------------------------- */

/* The last entry whose address is <= addr (std::upper_bound, then one
 * back), or NULL. */
static const struct ksent *floor_of(const struct level *l, uint64_t addr)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < l->e[mid].addr)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo ? &l->e[lo - 1] : NULL;
}

static int fill(struct bcc_symbol *sym, const char *name, const char *module, uint64_t offset, int demangle)
{
    sym->name = name;
    if (demangle)
        sym->demangle_name = name;
    sym->module = module;
    sym->offset = offset;
    return 0;
}

/* The answer of the core level: 1 answered, 0 it cannot say. */
static int core_answer(const struct kcache *kc, uint64_t addr, struct bcc_symbol *sym, int demangle)
{
    const char *name;
    uint64_t off;
    if (!core_floor(&kc->core, addr, &name, &off))
        return 0;
    fill(sym, name, "kernel", off, demangle);
    return 1;
}

static int symbolize_answer(const struct kcache *kc, uint64_t addr, struct bcc_symbol *sym, int demangle)
{
    struct ksym_symbol s;
    uint64_t off;
    if (ksym_symbolize(kc->table, addr, &s, &off) != 0)
        return -1;
    return fill(sym, s.name, bcc_module(&s), off, demangle);
}

int kcache_resolve(struct kcache *kc, uint64_t addr, struct bcc_symbol *sym, int demangle)
{
    int r = -1;
    if (!read_lock_loaded(kc))
        goto out;
    if (ksym_bcc_settings.fixes & FIX_SYMBOLIZE) {
        r = symbolize_answer(kc, addr, sym, demangle);
        goto out;
    }
    if (kc->full_state != 1 && core_answer(kc, addr, sym, demangle)) {
        r = 0;
        goto out;
    }
    for (int tries = 0; kc->full_state == 0 && tries < 2; tries++)
        load_under_write_lock(kc, &kc->full_state, load_full);
    if (kc->full_state == 1) {
        const struct ksent *e = floor_of(&kc->full, addr);
        if (e)
            r = fill(sym, e->name, e->module, addr - e->addr, demangle);
    }
out:
    pthread_rwlock_unlock(&kc->lock);
    if (r != 0)
        memset(sym, 0, sizeof(*sym));
    return r;
}

/* The highest address among the kept matches of `query` (bcc keeps one
 * address per name, the last in address order). */
static int lookup_highest(struct ksym_table *t, const char *query, uint64_t *addr)
{
    struct ksym_symbol buf[16], *m = buf;
    int n = ksym_lookup_all(t, query, buf, 16);
    if (n > 16) {
        m = malloc((size_t)n * sizeof(*m));
        if (!m)
            return -1;
        n = ksym_lookup_all(t, query, m, (size_t)n);
    }
    int found = 0;
    uint64_t best = 0;
    for (int i = 0; i < n; i++) {
        if (bcc_keeps(&m[i]) && (!found || m[i].addr >= best)) {
            best = m[i].addr;
            found = 1;
        }
    }
    if (m != buf)
        free(m);
    if (!found)
        return -1;
    *addr = best;
    return 0;
}

int kcache_resolve_name(struct kcache *kc, const char *module, const char *name, uint64_t *addr)
{
    /* bcc looks the name up as it is: a libksym query ("mod`name") it is not. */
    if (!name || !addr || strchr(name, '`'))
        return -1;
    char *query = NULL;
    const char *q = name;
    if (module && (ksym_bcc_settings.fixes & FIX_MODULE)) {
        const char *m = strcmp(module, "kernel") == 0 ? "vmlinux" : module;
        if (strchr(m, '`') || asprintf(&query, "%s`%s", m, name) < 0)
            return -1;
        q = query;
    }
    int r = -1;
    if (!read_lock_loaded(kc))
        goto out;
    if (ksym_bcc_settings.fixes & FIX_SYMBOLIZE) {
        r = lookup_highest(kc->table, q, addr);
        goto out;
    }
    for (int tries = 0; kc->full_state == 0 && tries < 2; tries++)
        load_under_write_lock(kc, &kc->full_state, load_full);
    if (kc->full_state == 1)
        r = lookup_highest(kc->full_table ? kc->full_table : kc->table, q, addr);
out:
    pthread_rwlock_unlock(&kc->lock);
    free(query);
    return r;
}

static void drop_full(struct kcache *kc)
{
    free(kc->full.e);
    kc->full.e = NULL;
    kc->full.n = 0;
    ksym_table_free(kc->full_table);
    kc->full_table = NULL;
    kc->full_state = 0;
}

void kcache_refresh(struct kcache *kc)
{
    pthread_rwlock_wrlock(&kc->lock);
    drop_full(kc);
    /* The table's own read (if it was one) is as old as the full level. */
    kc->table_is_fresh = 0;
    if (kc->table_state < 0 || (ksym_bcc_settings.fixes & FIX_SYMBOLIZE)) {
        /* Tried again at the next answer; libksym's table routes what may
         * have changed to a read of its own, made once: a new table. */
        core_free(&kc->core);
        ksym_table_free(kc->table);
        kc->table = NULL;
        kc->table_state = 0;
    }
    pthread_rwlock_unlock(&kc->lock);
}

struct kcache *kcache_new(struct kcache_rules rules)
{
    struct kcache *kc = calloc(1, sizeof(*kc));
    if (!kc)
        return NULL;
    kc->rules = rules;
    if (pthread_rwlock_init(&kc->lock, NULL) != 0) {
        free(kc);
        return NULL;
    }
    return kc;
}

void kcache_free(struct kcache *kc)
{
    if (!kc)
        return;
    drop_full(kc);
    core_free(&kc->core);
    ksym_table_free(kc->table);
    pthread_rwlock_destroy(&kc->lock);
    free(kc);
}
