/* libksym-bcc: a kernel symbol cache with bcc's answers (kcache.c). */
#ifndef KSYM_BCC_KCACHE_H
#define KSYM_BCC_KCACHE_H

#include "types.h"

/* What differs between bcc's versions (real.h says which applies). */
struct kcache_rules {
    /* /proc/kallsyms is read only with effective uid 0 (bcc before 0.29);
     * else by anyone, whose hidden addresses (all 0) leave it empty. */
    int root_only;
};

struct kcache;
struct kcache *kcache_new(struct kcache_rules rules);
void kcache_free(struct kcache *kc);
/* 0 and *sym filled, or -1 with *sym zeroed, as bcc's KSyms::resolve_addr. */
int kcache_resolve(struct kcache *kc, uint64_t addr, struct bcc_symbol *sym, int demangle);
int kcache_resolve_name(struct kcache *kc, const char *module, const char *name, uint64_t *addr);
void kcache_refresh(struct kcache *kc);

#endif
