/*
 * libksym-bcc: bcc's kernel symbol cache (bcc_syms.h) answered by libksym.
 * What the shim's files share; nothing here is exported (the version script
 * libksym-bcc.map exports the six bcc_* functions only).
 */
#ifndef KSYM_BCC_INTERNAL_H
#define KSYM_BCC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* bcc's public struct, as bcc_syms.h lays it out. */
struct bcc_symbol {
    const char *name;
    const char *demangle_name;
    const char *module;
    uint64_t offset;
};

/* Passed through to bcc untouched (user-space caches only). */
struct bcc_symbol_option;

/* One kernel symbol as bcc keeps it: its address, name and module string. */
struct ksent {
    uint64_t addr;
    const char *name;
    const char *module;
};

/* std::sort(first, last) of libstdc++ with bcc's comparison (address only):
 * the same permutation bcc's KSyms gets, so the same name comes last among
 * several at one address (stdsort.c). */
void ksym_bcc_stdsort(struct ksent *first, struct ksent *last);

/* The better answers asked for with KSYM_BCC_FIX (docs/bcc.md). */
enum {
    FIX_SYMBOLIZE = 1, /* libksym's symbolization: extents, data symbols, a stable alias */
    FIX_BUILTIN = 2,   /* built-in modules by name instead of "kernel" */
    FIX_MODULE = 4,    /* resolve_name honours its module argument */
};

/* Settings read from the environment when the library is loaded. */
struct settings {
    unsigned fixes;           /* FIX_* */
    int debug;                /* KSYM_BCC_DEBUG: 1 the "active" line, 2 also one per load */
    const char *snapshot_dir; /* KSYM_BCC_SNAPSHOT_DIR; NULL: libksym's default */
    int no_snapshot;          /* KSYM_BCC_SNAPSHOT_DIR=none */
    const char *forward_lib;  /* KSYM_BCC_FORWARD_LIB: what to dlopen when bcc is not loaded */
};
extern struct settings ksym_bcc_settings;

/* One line on stderr, the first time `once` is seen (a static flag per
 * message): "libksym-bcc: ...". */
void ksym_bcc_note(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The kernel cache (kcache.c). */
struct kcache;
struct kcache *kcache_new(void);
void kcache_free(struct kcache *kc);
int kcache_resolve(struct kcache *kc, uint64_t addr, struct bcc_symbol *sym, int demangle);
int kcache_resolve_name(struct kcache *kc, const char *module, const char *name, uint64_t *addr);
void kcache_refresh(struct kcache *kc);

#endif
