/*
 * The differential comparison of libksym-bcc with the real libbcc, shared
 * by diff.c (files, refresh, modules) and creds.c (callers that are not
 * root): the same questions to both libraries in one process, every
 * answer compared.
 *
 * Questions: every address of every line (data and absolute symbols
 * included), one below and one above it, a random address between it and
 * the next, random addresses in the large gaps (between modules, past the
 * image) and anywhere, the edges of the address space; resolve and
 * resolve_no_demangle. Names: bcc rebuilds its map of every name at each
 * resolve_name (tens of ms), so bcc is asked a sample (names present more
 * than once, random ones, absent ones, with and without a module), and
 * every name of the file is checked against bcc's rule, worked out from
 * the file (the highest address among the lines bcc keeps, -1 for a name
 * it keeps none of), a rule the sample checks against bcc itself.
 */
#ifndef KSYM_BCC_TEST_COMPARE_H
#define KSYM_BCC_TEST_COMPARE_H

#include "common.h"

#include <unistd.h>

static struct api bcc, shim;
static const char UNTOUCHED[] = "<untouched>";

/* KSYM_BCC_DIFF_EVERY=N: every N-th line's addresses and name only (the
 * guests' runs under each kptr_restrict; emulation is slow). */
static size_t every_nth(void)
{
    const char *v = getenv("KSYM_BCC_DIFF_EVERY");
    long n = v ? atol(v) : 1;
    return n > 1 ? (size_t)n : 1;
}


static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

struct addrs {
    uint64_t *a;
    size_t n, cap;
};

static void add(struct addrs *v, uint64_t a)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 1 << 18;
        v->a = realloc(v->a, v->cap * sizeof(*v->a));
        if (!v->a)
            exit(2);
    }
    v->a[v->n++] = a;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every question's address, from the lines of the file. */
static struct addrs questions(const struct lines *ls)
{
    struct addrs starts = { 0 }, q = { 0 };
    for (size_t i = 0; i < ls->n; i++)
        add(&starts, ls->l[i].addr);
    qsort(starts.a, starts.n, sizeof(uint64_t), cmp_u64);
    size_t n = 0;
    for (size_t i = 0; i < starts.n; i++)
        if (n == 0 || starts.a[n - 1] != starts.a[i])
            starts.a[n++] = starts.a[i];
    starts.n = n;
    size_t step = every_nth();
    for (size_t i = 0; i < n; i += step) {
        uint64_t a = starts.a[i];
        add(&q, a);
        add(&q, a - 1);
        add(&q, a + 1);
        if (i + 1 < n) {
            uint64_t gap = starts.a[i + 1] - a;
            add(&q, a + rnd() % gap);
            for (int k = 0; gap > (1u << 16) && k < 8; k++)
                add(&q, a + rnd() % gap);
        } else {
            for (int k = 0; k < 8; k++)
                add(&q, a + rnd() % (1u << 24));
        }
    }
    /* A restricted file (all zeros) has one address, and bcc reads it
     * again at every call while it holds no symbol: a few will do. */
    int randoms = n > 1 ? 2000 : 20;
    for (int k = 0; k < randoms; k++) {
        add(&q, rnd());
        add(&q, n ? starts.a[0] - (rnd() % (1u << 20)) : rnd());
    }
    static const uint64_t edges[] = { 0, 1, 0x00fffffffffffffeULL, 0x00ffffffffffffffULL, 0x0100000000000000ULL,
                                      0xffffffff80000000ULL, 0xfffffffffffffffeULL, UINT64_MAX };
    for (size_t k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
        add(&q, edges[k]);
    free(starts.a);
    return q;
}

/* Names to look up: bcc rebuilds a map of every symbol on each call (tens
 * of ms), so a sample: names present more than once (40, spread),
 * random others, and names that are not there. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char **names(const struct lines *ls, size_t *count)
{
    const char **all = malloc(ls->n * sizeof(char *));
    for (size_t i = 0; i < ls->n; i++)
        all[i] = ls->l[i].name;
    qsort(all, ls->n, sizeof(char *), cmp_str);
    const char **out = malloc((ls->n / 50 + 1000) * sizeof(char *));
    size_t n = 0, ndups = 0;
    const char **dups = malloc(ls->n * sizeof(char *));
    for (size_t i = 1; i < ls->n; i++)
        if (!strcmp(all[i], all[i - 1]) && (ndups == 0 || strcmp(dups[ndups - 1], all[i])))
            dups[ndups++] = all[i];
    /* 40 of each kind (KSYM_BCC_DIFF_NAMES), fewer with
     * KSYM_BCC_DIFF_EVERY (at least 2). */
    const char *v = getenv("KSYM_BCC_DIFF_NAMES");
    size_t each = v && atol(v) > 0 ? (size_t)atol(v) : 40;
    each = each / every_nth() > 2 ? each / every_nth() : 2;
    for (size_t i = 0; i < ndups; i += ndups / each + 1)
        out[n++] = dups[i];
    free(dups);
    for (size_t k = 0; k < each && ls->n; k++)
        out[n++] = ls->l[rnd() % ls->n].name;
    static const char *const absent[] = { "no_such_symbol_at_all", "vmlinux`vfs_read", "", "vfs_read ",
                                          "kernel", "[bpf]", "vfs_read.cold.99" };
    for (size_t k = 0; k < sizeof(absent) / sizeof(absent[0]) && k < each; k++)
        out[n++] = absent[k];
    free(all);
    *count = n;
    return out;
}

/* ----- bcc's rule for names, worked out from the file ------------------------- */

struct rule {
    const char *name;
    uint64_t addr; /* the highest address of a line bcc keeps */
    int kept;      /* 0: bcc keeps no line of this name (-1) */
};

struct rules {
    struct rule *r;
    size_t n;
    int bcc_reads; /* 0: bcc does not read the file for this caller (-1 for every name) */
};

static int bcc_keeps_line(const struct line *l)
{
    return l->addr != 0 && l->addr != UINT64_MAX && l->addr >= 0x00ffffffffffffffULL && !strchr("bBdDrR", l->type);
}

static int cmp_rule(const void *a, const void *b)
{
    return strcmp(((const struct rule *)a)->name, ((const struct rule *)b)->name);
}

static struct rules name_rules(const struct lines *ls)
{
    struct rules rs = { malloc((ls->n + 1) * sizeof(struct rule)), 0, 1 };
    if (!rs.r)
        exit(2);
    for (size_t i = 0; i < ls->n; i++)
        rs.r[i] = (struct rule){ ls->l[i].name, ls->l[i].addr, bcc_keeps_line(&ls->l[i]) };
    qsort(rs.r, ls->n, sizeof(struct rule), cmp_rule);
    for (size_t i = 0; i < ls->n; i++) {
        struct rule *last = rs.n ? &rs.r[rs.n - 1] : NULL;
        if (last && !strcmp(last->name, rs.r[i].name)) {
            if (rs.r[i].kept && (!last->kept || rs.r[i].addr > last->addr)) {
                last->addr = rs.r[i].addr;
                last->kept = 1;
            }
        } else {
            rs.r[rs.n++] = rs.r[i];
        }
    }
    return rs;
}

/* The rule's answer: 0 and *addr, or -1. */
static int rule_answer(const struct rules *rs, const char *name, uint64_t *addr)
{
    struct rule key = { name, 0, 0 };
    const struct rule *r = bsearch(&key, rs->r, rs->n, sizeof(struct rule), cmp_rule);
    if (!rs->bcc_reads || !r || !r->kept)
        return -1;
    *addr = r->addr;
    return 0;
}

static const struct rules *current_rules;

/* ----- comparing ------------------------------------------------------------ */

static long mismatches;
/* Answers of libksym-bcc with a symbol (resolve returned 0). */
static long found_answers;

static void compare_addr(void *b, void *s, uint64_t a)
{
    struct bcc_symbol x, y;
    int rx = bcc.resolve(b, a, &x), ry = shim.resolve(s, a, &y);
    found_answers += ry == 0;
    checks++;
    if (!same_answer(rx, &x, ry, &y)) {
        if (++mismatches <= 10) {
            fprintf(stderr, "  resolve(%#llx) differs:\n", (unsigned long long)a);
            show("bcc", rx, &x);
            show("libksym-bcc", ry, &y);
        }
    }
    x.demangle_name = y.demangle_name = UNTOUCHED;
    rx = bcc.resolve_no_demangle(b, a, &x);
    ry = shim.resolve_no_demangle(s, a, &y);
    checks++;
    if (!same_answer(rx, &x, ry, &y)) {
        if (++mismatches <= 10) {
            fprintf(stderr, "  resolve_no_demangle(%#llx) differs:\n", (unsigned long long)a);
            show("bcc", rx, &x);
            show("libksym-bcc", ry, &y);
        }
    }
}

static void compare_name(void *b, void *s, const char *module, const char *name)
{
    uint64_t x = 7, y = 7;
    int rx = bcc.resolve_name(b, module, name, &x), ry = shim.resolve_name(s, module, name, &y);
    checks++;
    if (rx != ry || x != y) {
        if (++mismatches <= 10)
            fprintf(stderr, "  resolve_name(%s, \"%s\") differs: bcc %d %#llx, libksym-bcc %d %#llx\n",
                    module ? module : "NULL", name, rx, (unsigned long long)x, ry, (unsigned long long)y);
    }
    /* The rule every name is checked against is bcc's. */
    uint64_t z = 7;
    int rz = current_rules ? rule_answer(current_rules, name, &z) : rx;
    checks++;
    if (current_rules && (rz != rx || (rx == 0 && z != x))) {
        if (++mismatches <= 10)
            fprintf(stderr, "  resolve_name(\"%s\"): bcc %d %#llx, the rule worked out from the file %d %#llx\n",
                    name, rx, (unsigned long long)x, rz, (unsigned long long)z);
    }
}

/* Every name of the file, asked of libksym-bcc, against the rule. */
static size_t compare_every_name(void *s, const struct rules *rs)
{
    size_t asked = 0;
    for (size_t i = 0; i < rs->n; i += every_nth()) {
        asked++;
        uint64_t want = 7, got = 7;
        int rw = rule_answer(rs, rs->r[i].name, &want);
        int rg = shim.resolve_name(s, NULL, rs->r[i].name, &got);
        checks++;
        if (rw != rg || (rw == 0 && want != got)) {
            if (++mismatches <= 10)
                fprintf(stderr, "  resolve_name(\"%s\"): by bcc's rule %d %#llx, libksym-bcc %d %#llx\n",
                        rs->r[i].name, rw, (unsigned long long)want, rg, (unsigned long long)got);
        }
    }
    return asked;
}

/* Reads from /proc/self/io: bytes this process read with read(2). */
static unsigned long long rchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    unsigned long long v = 0;
    char key[32];
    while (f && fscanf(f, "%31s %llu", key, &v) == 2)
        if (!strcmp(key, "rchar:"))
            break;
    if (f)
        fclose(f);
    return v;
}

/* The addresses several lines bcc keeps share (then the order of bcc's
 * sort decides, and the core level leaves the answer to the full one),
 * sorted. */
static struct addrs shared_addresses(const struct lines *ls)
{
    struct addrs kept = { 0 }, shared = { 0 };
    for (size_t i = 0; i < ls->n; i++)
        if (!strchr("bBdDrR", ls->l[i].type) && ls->l[i].addr >= 0x00ffffffffffffffULL)
            add(&kept, ls->l[i].addr);
    qsort(kept.a, kept.n, sizeof(uint64_t), cmp_u64);
    for (size_t i = 1; i < kept.n; i++)
        if (kept.a[i] == kept.a[i - 1] && (shared.n == 0 || shared.a[shared.n - 1] != kept.a[i]))
            add(&shared, kept.a[i]);
    free(kept.a);
    return shared;
}

/* This process sees real addresses in /proc/kallsyms: a non-zero one in
 * its first 64 KB (a kernel that lists its per-CPU variables first starts
 * with zeros for everyone; a restricted reader sees only zeros). */
static int sees_addresses(void)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[256];
    int real = 0;
    size_t read = 0;
    while (f && !real && read < (64u << 10) && fgets(line, sizeof(line), f)) {
        size_t hex = strspn(line, "0123456789abcdef");
        real = hex > 0 && strspn(line, "0") < hex;
        read += strlen(line);
    }
    if (f)
        fclose(f);
    return real;
}

/* Root, and /proc/kallsyms shows real addresses. */
static int privileged(void)
{
    return geteuid() == 0 && sees_addresses();
}


/* Addresses spread over the file's lines, for a reader that sees none:
 * bcc reads the whole file again at each question while its cache is
 * empty. */
static struct addrs few_questions(const struct lines *ls, size_t n)
{
    struct addrs q = { 0 };
    for (size_t i = 0; i < n && ls->n; i++)
        add(&q, ls->l[(ls->n - 1) * i / (n > 1 ? n - 1 : 1)].addr + i % 3);
    add(&q, UINT64_MAX);
    return q;
}

/* One complete comparison of the file now at /proc/kallsyms, with the
 * questions chosen from `source` (NULL: that file as this process reads
 * it; a caller that sees no addresses is given root's copy). A reader
 * that sees no addresses, or for whom bcc does not read the file
 * (`bcc_reads` 0: not root, bcc before 0.29), is asked a few questions
 * (each costs bcc a read of the file while its cache is empty). */
static void run(const char *label, const struct lines *source, int bcc_reads)
{
    long before = mismatches;
    int before_checks = checks;
    struct lines ls = source ? *source : read_lines("/proc/kallsyms");
    /* Nothing to compare but "not found": a few questions. */
    int sees = sees_addresses() && bcc_reads;
    struct addrs q = sees ? questions(&ls) : few_questions(&ls, 2);
    size_t nn;
    const char **nm = names(&ls, &nn);
    if (!sees)
        nn = 1;
    struct rules rs = name_rules(&ls);
    rs.bcc_reads = bcc_reads;
    current_rules = sees ? &rs : NULL;
    size_t modules = 0;
    for (size_t i = 0; i < ls.n; i++)
        modules += ls.l[i].module[0] != 0 && ls.l[i].module[0] != '_' && strcmp(ls.l[i].module, "bpf");
    if (!strcmp(label, "/proc/kallsyms") && modules == 0)
        NEED_SKIP("modules", "the running kernel lists no symbols of loadable modules: compared without");
    struct addrs shared = sees ? shared_addresses(&ls) : (struct addrs){ 0 };

    void *b = bcc.symcache_new(-1, NULL);
    struct bcc_symbol x;
    bcc.resolve(b, q.a[0], &x); /* bcc reads the file now */

    /* A first cache writes the snapshot, a second maps it: its core
     * answers (an address of the core kernel, one name there) come with
     * no read of /proc/kallsyms. */
    void *s0 = shim.symcache_new(-1, NULL);
    struct bcc_symbol y;
    shim.resolve(s0, q.a[0], &y);
    shim.free_symcache(s0, -1);
    void *s = shim.symcache_new(-1, NULL);
    CHECK(b && s);
    /* The core kernel's lines bcc keeps, by address: an address between
     * the first and the last whose nearest one below is not shared. */
    struct addrs core = { 0 };
    for (size_t i = 0; sees && i < ls.n; i++)
        if (!ls.l[i].module[0] && bcc_keeps_line(&ls.l[i]))
            add(&core, ls.l[i].addr);
    qsort(core.a, core.n, sizeof(uint64_t), cmp_u64);
    unsigned long long r0 = rchar();
    size_t core_first = 0;
    for (size_t i = 0; i < ls.n && core.n; i += every_nth()) {
        for (uint64_t a = ls.l[i].addr; a <= ls.l[i].addr + 1; a++) {
            if (ls.l[i].module[0] || a < core.a[0] || a > core.a[core.n - 1])
                continue;
            size_t lo = 0, hi = core.n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (a < core.a[mid])
                    hi = mid;
                else
                    lo = mid + 1;
            }
            uint64_t f = core.a[lo - 1];
            if (bsearch(&f, shared.a, shared.n, sizeof(uint64_t), cmp_u64))
                continue;
            compare_addr(b, s, a);
            core_first++;
        }
    }
    unsigned long long read_core = rchar() - r0;
    /* A module's line inside the core's range turns the core level off. */
    int inside = 0;
    for (size_t i = 0; i < ls.n && core.n; i++)
        inside |= ls.l[i].module[0] && bcc_keeps_line(&ls.l[i]) && ls.l[i].addr >= core.a[0] &&
                  ls.l[i].addr <= core.a[core.n - 1];
    if (!inside && privileged() && getenv("KSYM_BCC_SNAPSHOT_DIR") && strcmp(getenv("KSYM_BCC_SNAPSHOT_DIR"), "none")) {
        /* The file is 4-8 MB; /proc/modules and the boot id are small. */
        if (read_core >= (1u << 20))
            fprintf(stderr, "  %zu core answers read %llu bytes: not from the snapshot\n", core_first, read_core);
        CHECK(read_core < (1u << 20));
    }
    for (size_t i = 0; i < q.n; i++)
        compare_addr(b, s, q.a[i]);
    /* A new cache asked first where several names share an address: the
     * core level must leave those to the full one. */
    void *s2 = shim.symcache_new(-1, NULL);
    for (size_t i = 0; i < shared.n; i++) {
        compare_addr(b, s2, shared.a[i]);
        compare_addr(b, s2, shared.a[i] + 2);
    }
    shim.free_symcache(s2, -1);
    for (size_t i = 0; i < nn; i++) {
        compare_name(b, s, NULL, nm[i]);
        if (sees && i % 10 == 0) {
            compare_name(b, s, "kernel", nm[i]);
            compare_name(b, s, "no_such_module", nm[i]);
        }
    }
    size_t every = sees ? compare_every_name(s, &rs) : 0;
    bcc.free_symcache(b, -1);
    shim.free_symcache(s, -1);
    printf("%s (%s): %zu lines (%zu of loadable modules), %zu addresses, %zu names of bcc and %zu by its rule, "
           "%zu core answers first (%llu bytes read for them): %ld of %d answers differ\n",
           label, api_file(&bcc), ls.n, modules, q.n, nn, every, core_first, read_core, mismatches - before,
           checks - before_checks);
    if (mismatches > before)
        failures++;
    current_rules = NULL;
    free(rs.r);
    free(q.a);
    free(shared.a);
    free(core.a);
    free(nm);
}

#endif
