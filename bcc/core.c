/*
 * libksym-bcc: the core level of a kernel cache. The core kernel never
 * changes while the system runs, and nothing else lies inside the kernel
 * image (modules, BPF programs, trampolines and kprobe pages are allocated
 * outside it), so an address between the core's first and last symbol has
 * the answer bcc would give, unless several names share the address found.
 * Kept as two arrays (32-bit offsets, names): 12 bytes a symbol, about
 * 1.4 MB for a distribution kernel, where bcc keeps every line in a
 * std::string pair.
 */
#include "core.h"

#include "lines.h"

#include <stdlib.h>
#include <string.h>

struct collect {
    uint64_t *addr;
    const char **name;
    size_t n, cap;
    /* The kept symbols of loadable modules, to check that none lies
     * inside the core's range (known at the end). */
    uint64_t *other;
    size_t n_other, cap_other;
    int nomem;
};

static int collect_cb(const struct ksym_symbol *s, void *ctx)
{
    struct collect *c = ctx;
    if (!bcc_keeps(s))
        return 0;
    if (!bcc_is_core(s)) {
        if (c->n_other == c->cap_other) {
            size_t ncap = c->cap_other ? c->cap_other * 2 : 4096;
            uint64_t *o = realloc(c->other, ncap * sizeof(*o));
            if (!o) {
                c->nomem = 1;
                return 1;
            }
            c->other = o;
            c->cap_other = ncap;
        }
        c->other[c->n_other++] = s->addr;
        return 0;
    }
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 65536;
        uint64_t *a = realloc(c->addr, ncap * sizeof(*a));
        if (a)
            c->addr = a;
        const char **nm = a ? realloc(c->name, ncap * sizeof(*nm)) : NULL;
        if (!nm) {
            c->nomem = 1;
            return 1;
        }
        c->name = nm;
        c->cap = ncap;
    }
    c->addr[c->n] = s->addr;
    c->name[c->n++] = s->name;
    return 0;
}

struct pair {
    uint64_t addr;
    const char *name;
};

static int by_addr(const void *a, const void *b)
{
    uint64_t x = ((const struct pair *)a)->addr, y = ((const struct pair *)b)->addr;
    return x < y ? -1 : x > y;
}

/* Any order among equal addresses will do: the core level never answers
 * for an address several names share. -1: out of memory. */
static int sort(struct collect *c)
{
    int sorted = 1;
    for (size_t i = 1; i < c->n && sorted; i++)
        sorted = c->addr[i - 1] <= c->addr[i];
    if (sorted)
        return 0;
    struct pair *p = malloc(c->n * sizeof(*p));
    if (!p)
        return -1;
    for (size_t i = 0; i < c->n; i++)
        p[i] = (struct pair){ c->addr[i], c->name[i] };
    qsort(p, c->n, sizeof(*p), by_addr);
    for (size_t i = 0; i < c->n; i++) {
        c->addr[i] = p[i].addr;
        c->name[i] = p[i].name;
    }
    free(p);
    return 0;
}

int core_build(struct core_level *out, const struct ksym_table *t, const char **why)
{
    memset(out, 0, sizeof(*out));
    struct collect c;
    memset(&c, 0, sizeof(c));
    *why = NULL;
    if (ksym_table_foreach(t, KSYM_FOREACH_NO_PSEUDO, collect_cb, &c) != 0 || c.nomem || sort(&c) != 0)
        *why = c.nomem ? "out of memory" : "the table could not be listed";
    else if (c.n == 0)
        *why = "no symbol of the core kernel";
    else if (c.addr[c.n - 1] - c.addr[0] > UINT32_MAX)
        *why = "the core spans 4 GiB or more";
    for (size_t i = 0; !*why && i < c.n_other; i++)
        if (c.other[i] >= c.addr[0] && c.other[i] <= c.addr[c.n - 1])
            *why = "a symbol of a loadable module lies inside the core's range";
    free(c.other);
    if (*why) {
        free(c.addr);
        free(c.name);
        return -1;
    }
    /* The offsets overwrite the addresses in place, then the array shrinks. */
    uint64_t base = c.addr[0];
    uint32_t *off = (uint32_t *)c.addr;
    for (size_t i = 0; i < c.n; i++)
        off[i] = (uint32_t)(c.addr[i] - base);
    uint32_t *shrunk = realloc(off, c.n * sizeof(*off));
    const char **names = realloc(c.name, c.n * sizeof(*names));
    *out = (struct core_level){ base, shrunk ? shrunk : off, names ? names : c.name, c.n };
    return 0;
}

void core_free(struct core_level *c)
{
    free(c->off);
    free(c->name);
    memset(c, 0, sizeof(*c));
}

int core_floor(const struct core_level *c, uint64_t addr, const char **name, uint64_t *offset)
{
    if (c->n == 0 || addr < c->base || addr - c->base > c->off[c->n - 1])
        return 0;
    uint32_t o = (uint32_t)(addr - c->base);
    /* The last entry whose offset is <= o (std::upper_bound, then one back). */
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o < c->off[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t i = lo - 1; /* lo >= 1: off[0] == 0 <= o */
    if ((i > 0 && c->off[i - 1] == c->off[i]))
        return 0;
    *name = c->name[i];
    *offset = o - c->off[i];
    return 1;
}
