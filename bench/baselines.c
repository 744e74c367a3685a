/*
 * What a C programmer would write in about ten lines each, the baselines
 * of `make bench`'s symbol rows (built by bench/build.rs with -O2, called
 * from bench/ksym_bench/table.rs on the same file and the same queries in
 * the same run):
 *
 *   naive_parse  read a kallsyms file whole and parse every line into
 *                (address, type, name), names NUL-terminated in place: no
 *                index, no sorting, one thread;
 *   fnv_*        name -> address: a FNV-1a open-addressing table (power of
 *                two, at most half full, linear probing), the first line
 *                of a name wins;
 *   bs_*         address -> symbol: the lines sorted by address (qsort),
 *                a binary search for the last address <= the query.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nsym {
    uint64_t addr;
    const char *name;
    char type;
};

/* The baseline parse: returns the number of lines, the symbols and the
 * text they point into (both malloc'd), or -1. */
long naive_parse(const char *path, struct nsym **out, char **text)
{
    FILE *f = fopen(path, "r");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        return -1;
    long size = ftell(f);
    char *buf = malloc(size + 1), *p = buf, *end = buf + size;
    rewind(f);
    if (!buf || fread(buf, 1, size, f) != (size_t)size)
        return -1;
    fclose(f);
    buf[size] = 0;
    size_t n = 0, cap = 1024;
    struct nsym *s = malloc(cap * sizeof(*s));
    while (p < end) {
        if (n == cap)
            s = realloc(s, (cap *= 2) * sizeof(*s));
        s[n].addr = strtoull(p, &p, 16);
        s[n].type = p[1];
        s[n].name = p += 3;
        p += strcspn(p, "\t\n");
        int at_tab = *p == '\t';
        *p++ = 0;
        if (at_tab)
            p = strchr(p, '\n') + 1;
        n++;
    }
    *out = s;
    *text = buf;
    return (long)n;
}

/* ---- FNV-1a open addressing: name -> address ---------------------------- */

struct fnv_slot {
    const char *name;
    uint64_t addr;
};
struct fnv {
    struct fnv_slot *slot;
    size_t mask;
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

void fnv_build(struct fnv *t, const struct nsym *s, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    t->slot = calloc(cap, sizeof(*t->slot));
    t->mask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        size_t k = fnv1a(s[i].name) & t->mask;
        while (t->slot[k].name && strcmp(t->slot[k].name, s[i].name))
            k = (k + 1) & t->mask;
        if (!t->slot[k].name)
            t->slot[k] = (struct fnv_slot){ s[i].name, s[i].addr };
    }
}

/* The address of `name`, 0 when it is not there. */
uint64_t fnv_lookup(const struct fnv *t, const char *name)
{
    for (size_t k = fnv1a(name) & t->mask; t->slot[k].name; k = (k + 1) & t->mask)
        if (!strcmp(t->slot[k].name, name))
            return t->slot[k].addr;
    return 0;
}

void fnv_free(struct fnv *t)
{
    free(t->slot);
}

/* ---- binary search over the sorted addresses ---------------------------- */

static int by_addr(const void *a, const void *b)
{
    uint64_t x = ((const struct nsym *)a)->addr, y = ((const struct nsym *)b)->addr;
    return x < y ? -1 : x > y;
}

/* Sorts a copy of the symbols by address into two arrays. */
void bs_build(const struct nsym *s, size_t n, uint64_t **addrs, const char ***names)
{
    struct nsym *c = malloc(n * sizeof(*c));
    memcpy(c, s, n * sizeof(*c));
    qsort(c, n, sizeof(*c), by_addr);
    *addrs = malloc(n * sizeof(**addrs));
    *names = malloc(n * sizeof(**names));
    for (size_t i = 0; i < n; i++)
        (*addrs)[i] = c[i].addr, (*names)[i] = c[i].name;
    free(c);
}

/* The name of the last symbol at or below `a` and the offset into it;
 * NULL below the first. */
const char *bs_find(const uint64_t *addrs, const char *const *names, size_t n, uint64_t a,
                    uint64_t *off)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addrs[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    *off = a - addrs[lo - 1];
    return names[lo - 1];
}
