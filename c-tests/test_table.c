/*
 * The kernel symbol table through the C API: every function, every error
 * path of the contract (NULL arguments, bad opts size, missing file,
 * restricted, malformed, ambiguous, not found), out-parameters untouched on
 * failure, the thread-local message; snapshots. The tables of the bundled
 * and the running kernels are test_table_kernels.c's.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <stdint.h>
#include <unistd.h>

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    return check_write_file(dir, name, text);
}

static const char FIXTURE[] = "0000000000000000 A fixed_percpu_data\n"
                              "ffffffff81000000 T _text\n"
                              "ffffffff81000000 t __pfx_start\n"
                              "ffffffff81000010 t __pfx_foo\n"
                              "ffffffff81000020 t foo\n"
                              "ffffffff81000040 t foo.cold\n"
                              "ffffffff81000050 T bar\n"
                              "ffffffff81000060 t dup\n"
                              "ffffffff81000070 t dup\n"
                              "ffffffff81000080 b __key.0\n"
                              "ffffffff81000080 b __key.0\n"
                              "ffffffff81000100 T _etext\n"
                              "ffffffffc0001000 t mod_fn\t[crc_itu_t]\n"
                              "ffffffffc0000000 t mod_first\t[crc_itu_t]\n"
                              "ffffffffc0000100 T foo\t[crc_itu_t]\n"
                              "ffffffffc0002000 t bpf_prog_0123456789abcdef_x\t[bpf]\n";

static struct ksym_table *fixture(void)
{
    struct ksym_table *t = ksym_table_from_buffer(FIXTURE, strlen(FIXTURE), NULL);
    CHECK(t != NULL);
    return t;
}

static void test_version_and_errors(void)
{
    char want[32];
    snprintf(want, sizeof(want), "%d.%d.%d", KSYM_VERSION_MAJOR, KSYM_VERSION_MINOR, KSYM_VERSION_PATCH);
    CHECK(strcmp(ksym_version(), want) == 0);
    int codes[] = { KSYM_ERR_NOT_FOUND, KSYM_ERR_INVALID,     KSYM_ERR_AMBIGUOUS, KSYM_ERR_RESTRICTED,
                    KSYM_ERR_FORMAT,    KSYM_ERR_UNSUPPORTED, KSYM_ERR_NOMEM,     KSYM_ERR_INTERNAL };
    CHECK(KSYM_ERR_NOT_FOUND == -2 && KSYM_ERR_INVALID == -22 && KSYM_ERR_AMBIGUOUS == -76);
    CHECK(KSYM_ERR_RESTRICTED == -13 && KSYM_ERR_FORMAT == -74 && KSYM_ERR_UNSUPPORTED == -95);
    CHECK(KSYM_ERR_NOMEM == -12 && KSYM_ERR_INTERNAL == -131);
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        const char *s = ksym_strerror(codes[i]);
        CHECK(s != NULL && *s);
        for (size_t k = 0; k < i; k++)
            CHECK(strcmp(s, ksym_strerror(codes[k])) != 0);
    }
    CHECK(ksym_strerror(-99999) != NULL);
    CHECK(strcmp(ksym_strerror(0), "success") == 0);
}

static void test_lookup(void)
{
    struct ksym_table *t = fixture();
    struct ksym_symbol s;
    CHECK(ksym_table_count(t) == 16);

    CHECK(ksym_lookup(t, "bar", &s) == 0);
    CHECK(s.addr == 0xffffffff81000050ull && s.type == 'T' && !strcmp(s.name, "bar"));
    CHECK(!strcmp(s.module, "vmlinux") && s.flags == 0 && s.size == 0x10);
    CHECK(ksym_last_error() == 0);

    /* Exact: no suffix or prefix matching. */
    CHECK(ksym_lookup(t, "fo", &s) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_lookup(t, "foo.cold", &s) == 0 && s.addr == 0xffffffff81000040ull);

    /* foo in vmlinux and in crc_itu_t: ambiguous, out = lowest address. */
    memset(&s, 0, sizeof(s));
    CHECK(ksym_lookup(t, "foo", &s) == KSYM_ERR_AMBIGUOUS);
    CHECK(ksym_last_error() == KSYM_ERR_AMBIGUOUS);
    CHECK(s.addr == 0xffffffff81000020ull);
    CHECK_MSG("vmlinux`foo");
    CHECK_MSG("crc_itu_t`foo");

    /* Qualified lookups; module names compare with - and _ equal. */
    CHECK(ksym_lookup(t, "vmlinux`foo", &s) == 0 && s.addr == 0xffffffff81000020ull);
    CHECK(ksym_lookup(t, "crc-itu-t`foo", &s) == 0 && s.addr == 0xffffffffc0000100ull);
    CHECK(!strcmp(s.module, "crc_itu_t"));

    /* Duplicates at one address are one answer. */
    CHECK(ksym_lookup(t, "__key.0", &s) == 0 && s.addr == 0xffffffff81000080ull);
    CHECK(ksym_lookup(t, "fixed_percpu_data", &s) == 0 && s.addr == 0 && s.type == 'A');

    /* Not found: the message names the query and near matches; out untouched. */
    struct ksym_symbol before;
    memset(&s, 0x5a, sizeof(s));
    memcpy(&before, &s, sizeof(s));
    CHECK(ksym_lookup(t, "foo.isra.0", &s) == KSYM_ERR_NOT_FOUND);
    CHECK(memcmp(&s, &before, sizeof(s)) == 0);
    CHECK_MSG("foo.isra.0");
    CHECK_MSG("foo.cold");
    CHECK(ksym_lookup(t, "ext4`foo", &s) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("ext4");

    /* Malformed queries. */
    const char *bad[] = { "", "a`b`c", "`x", "x`", "a b" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK(ksym_lookup(t, bad[i], &s) == KSYM_ERR_INVALID);
        CHECK(memcmp(&s, &before, sizeof(s)) == 0);
    }

    /* lookup_all: count with NULL/0, partial copy, order by address. */
    CHECK(ksym_lookup_all(t, "dup", NULL, 0) == 2);
    struct ksym_symbol all[4];
    CHECK(ksym_lookup_all(t, "foo", all, 1) == 2);
    CHECK(all[0].addr == 0xffffffff81000020ull);
    CHECK(ksym_lookup_all(t, "foo", all, 4) == 2);
    CHECK(all[1].addr == 0xffffffffc0000100ull && !strcmp(all[1].module, "crc_itu_t"));
    CHECK(ksym_lookup_all(t, "__key.0", all, 4) == 1);
    CHECK(ksym_lookup_all(t, "nothing", all, 4) == 0);
    CHECK(ksym_lookup_all(t, "x`y`z", all, 4) == KSYM_ERR_INVALID);
    CHECK(ksym_lookup_all(t, "foo", NULL, 2) == KSYM_ERR_INVALID);

    ksym_table_free(t);
}

static void test_symbolize(void)
{
    struct ksym_table *t = fixture();
    struct ksym_symbol s;
    uint64_t off = 12345;

    CHECK(ksym_symbolize(t, 0xffffffff81000005ull, &s, &off) == 0);
    CHECK(!strcmp(s.name, "_text") && off == 5 && s.size == 0x10);
    CHECK(ksym_symbolize(t, 0xffffffff81000024ull, &s, NULL) == 0 && !strcmp(s.name, "foo"));
    /* Past the last core symbol, below the first: not found, out untouched. */
    memset(&s, 0, sizeof(s));
    off = 7;
    CHECK(ksym_symbolize(t, 0xffffffff81000200ull, &s, &off) == KSYM_ERR_NOT_FOUND);
    CHECK(off == 7 && s.name == NULL);
    CHECK_MSG("past the last symbol");
    CHECK(ksym_symbolize(t, 0x1000, &s, &off) == KSYM_ERR_NOT_FOUND);
    /* Module symbols given out of order; a module's end is its own. */
    CHECK(ksym_symbolize(t, 0xffffffffc0000010ull, &s, &off) == 0);
    CHECK(!strcmp(s.name, "mod_first") && !strcmp(s.module, "crc_itu_t") && off == 0x10);
    CHECK(ksym_symbolize(t, 0xffffffffc0001010ull, &s, &off) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_symbolize(t, 0xffffffffc0002000ull, &s, &off) == 0 && !strcmp(s.module, "bpf"));
    ksym_table_free(t);
}

struct collect {
    int n;
    int stop_at;
    char names[16][64];
};

static int collect_cb(const struct ksym_symbol *s, void *ctx)
{
    struct collect *c = ctx;
    if (c->n < 16)
        snprintf(c->names[c->n], 64, "%s`%s", s->module, s->name);
    c->n++;
    return c->n == c->stop_at ? 42 : 0;
}

static void test_foreach(void)
{
    struct ksym_table *t = fixture();
    struct collect c = { 0, 0, { { 0 } } };
    CHECK(ksym_foreach_match(t, "foo*", collect_cb, &c) == 0);
    CHECK(c.n == 3);
    CHECK(!strcmp(c.names[0], "vmlinux`foo") && !strcmp(c.names[1], "vmlinux`foo.cold"));
    CHECK(!strcmp(c.names[2], "crc_itu_t`foo"));
    memset(&c, 0, sizeof(c));
    CHECK(ksym_foreach_match(t, "crc-*`*", collect_cb, &c) == 0 && c.n == 3);
    memset(&c, 0, sizeof(c));
    c.stop_at = 2;
    CHECK(ksym_foreach_match(t, "*", collect_cb, &c) == 42 && c.n == 2);
    CHECK(ksym_foreach_match(t, "[abc", collect_cb, &c) == KSYM_ERR_INVALID);
    CHECK(ksym_foreach_match(t, "*", NULL, &c) == KSYM_ERR_INVALID);
    ksym_table_free(t);
}

/* ksym_table_foreach: every line, in the file's order or the table's, with
 * or without the pseudo-modules; the orders worked out by hand from FIXTURE. */
struct seq {
    int n;
    char names[32][80];
};

static int seq_cb(const struct ksym_symbol *s, void *ctx)
{
    struct seq *q = ctx;
    if (q->n < 32)
        snprintf(q->names[q->n], sizeof(q->names[0]), "%s`%s", s->module, s->name);
    q->n++;
    return 0;
}

static int seq_equal(const struct seq *a, const char *const *want, int n)
{
    if (a->n != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(a->names[i], want[i]) != 0) {
            fprintf(stderr, "    entry %d: %s, expected %s\n", i, a->names[i], want[i]);
            return 0;
        }
    return 1;
}

static const char *const FILE_ORDER[] = {
    "vmlinux`fixed_percpu_data", "vmlinux`_text",   "vmlinux`__pfx_start", "vmlinux`__pfx_foo",
    "vmlinux`foo",               "vmlinux`foo.cold", "vmlinux`bar",        "vmlinux`dup",
    "vmlinux`dup",               "vmlinux`__key.0", "vmlinux`__key.0",    "vmlinux`_etext",
    "crc_itu_t`mod_fn",          "crc_itu_t`mod_first", "crc_itu_t`foo",  "bpf`bpf_prog_0123456789abcdef_x",
};
static const char *const TABLE_ORDER[] = {
    "vmlinux`fixed_percpu_data", "vmlinux`_text",   "vmlinux`__pfx_start", "vmlinux`__pfx_foo",
    "vmlinux`foo",               "vmlinux`foo.cold", "vmlinux`bar",        "vmlinux`dup",
    "vmlinux`dup",               "vmlinux`__key.0", "vmlinux`__key.0",    "vmlinux`_etext",
    "crc_itu_t`mod_first",       "crc_itu_t`foo",   "crc_itu_t`mod_fn",   "bpf`bpf_prog_0123456789abcdef_x",
};

static void check_orders(struct ksym_table *t)
{
    struct seq q;
    memset(&q, 0, sizeof(q));
    CHECK(ksym_table_foreach(t, KSYM_FOREACH_FILE_ORDER, seq_cb, &q) == 0);
    CHECK(seq_equal(&q, FILE_ORDER, 16));
    memset(&q, 0, sizeof(q));
    CHECK(ksym_table_foreach(t, 0, seq_cb, &q) == 0);
    CHECK(seq_equal(&q, TABLE_ORDER, 16));
    memset(&q, 0, sizeof(q));
    CHECK(ksym_table_foreach(t, KSYM_FOREACH_FILE_ORDER | KSYM_FOREACH_NO_PSEUDO, seq_cb, &q) == 0);
    CHECK(seq_equal(&q, FILE_ORDER, 15));
    memset(&q, 0, sizeof(q));
    CHECK(ksym_table_foreach(t, KSYM_FOREACH_NO_PSEUDO, seq_cb, &q) == 0);
    CHECK(seq_equal(&q, TABLE_ORDER, 15));
}

static void test_foreach_order(void)
{
    struct ksym_table *t = fixture();
    check_orders(t);
    struct collect c = { 0, 3, { { 0 } } };
    CHECK(ksym_table_foreach(t, KSYM_FOREACH_FILE_ORDER, collect_cb, &c) == 42 && c.n == 3);
    CHECK(!strcmp(c.names[2], "vmlinux`__pfx_start"));
    CHECK(ksym_table_foreach(t, 4, collect_cb, &c) == KSYM_ERR_INVALID);
    CHECK_MSG("unknown flag");
    CHECK(ksym_table_foreach(t, 0, NULL, &c) == KSYM_ERR_INVALID);
    CHECK(ksym_table_foreach(NULL, 0, collect_cb, &c) == KSYM_ERR_INVALID);
    ksym_table_free(t);
}

static void test_null_arguments(void)
{
    struct ksym_table *t = fixture();
    struct ksym_symbol s;
    uint64_t off;
    CHECK(ksym_lookup(NULL, "foo", &s) == KSYM_ERR_INVALID);
    CHECK_MSG("NULL");
    CHECK(ksym_lookup(t, NULL, &s) == KSYM_ERR_INVALID);
    CHECK(ksym_lookup(t, "bar", NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_lookup_all(NULL, "bar", &s, 1) == KSYM_ERR_INVALID);
    CHECK(ksym_symbolize(NULL, 1, &s, &off) == KSYM_ERR_INVALID);
    CHECK(ksym_symbolize(t, 1, NULL, &off) == KSYM_ERR_INVALID);
    CHECK(ksym_foreach_match(NULL, "*", collect_cb, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_foreach_match(t, NULL, collect_cb, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_table_count(NULL) == 0 && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_table_from_buffer(NULL, 10, NULL) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_table_stats(NULL, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_table_stats(t, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_table_module_count(NULL) == 0);
    CHECK(ksym_table_module(t, 0, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_table_diagnostic(NULL, 0) == NULL);
    ksym_table_free(NULL);
    ksym_table_free(t);
}

static void test_opts(void)
{
    const char *path = write_file("small", FIXTURE);
    KSYM_OPTS(ksym_table_opts, o, .kallsyms_path = path, .builtin_ranges_path = "");
    struct ksym_table *t = ksym_table_open(&o);
    CHECK(t != NULL);
    ksym_table_free(t);

    /* sz smaller than the size field itself. */
    o.sz = 4;
    CHECK(ksym_table_open(&o) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK_MSG("sz");
    /* An older caller: only the first field after sz. */
    o.sz = offsetof(struct ksym_table_opts, builtin_ranges_path);
    t = ksym_table_open(&o);
    CHECK(t != NULL && ksym_table_count(t) == 16);
    ksym_table_free(t);

    /* A newer caller: larger struct, zero tail accepted, non-zero tail refused. */
    struct {
        struct ksym_table_opts o;
        uint64_t future[2];
    } big;
    memset(&big, 0, sizeof(big));
    big.o.sz = sizeof(big);
    big.o.kallsyms_path = path;
    big.o.builtin_ranges_path = "";
    t = ksym_table_open(&big.o);
    CHECK(t != NULL);
    ksym_table_free(t);
    big.future[1] = 1;
    CHECK(ksym_table_open(&big.o) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK_MSG("tail");

    /* Unknown flags. */
    KSYM_OPTS(ksym_table_opts, f, .kallsyms_path = path, .flags = 0x80000000u);
    CHECK(ksym_table_open(&f) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK_MSG("flag");
}

static void test_file_errors(void)
{
    char missing[128];
    snprintf(missing, sizeof(missing), "%s/does-not-exist", dir);
    KSYM_OPTS(ksym_table_opts, o, .kallsyms_path = missing);
    CHECK(ksym_table_open(&o) == NULL);
    CHECK(ksym_last_error() == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("does-not-exist");

    o.kallsyms_path = dir; /* a directory: an I/O error, -EISDIR */
    CHECK(ksym_table_open(&o) == NULL && ksym_last_error() == -21);

    o.kallsyms_path = write_file("restricted", "0000000000000000 A fixed_percpu_data\n"
                                               "0000000000000000 T _text\n"
                                               "0000000000000000 t foo\t[ext4]\n");
    CHECK(ksym_table_open(&o) == NULL);
    CHECK(ksym_last_error() == KSYM_ERR_RESTRICTED);
    CHECK_MSG("kptr_restrict");
    CHECK_MSG("CAP_SYSLOG");

    o.kallsyms_path = write_file("malformed", "ffffffff81000000 T _text\n"
                                              "ffffffff81000010 t foo\n"
                                              "ffffffff81000020 t two words\n"
                                              "ffffffff81000030 t bar\n");
    CHECK(ksym_table_open(&o) == NULL);
    CHECK(ksym_last_error() == KSYM_ERR_FORMAT);
    CHECK_MSG(":3:");
    CHECK_MSG("two words");

    o.kallsyms_path = write_file("empty", "");
    CHECK(ksym_table_open(&o) == NULL && ksym_last_error() == KSYM_ERR_FORMAT);
    CHECK_MSG("empty");

    CHECK(ksym_table_from_buffer("garbage\n", 8, NULL) == NULL && ksym_last_error() == KSYM_ERR_FORMAT);
    CHECK_MSG("<buffer>:1:");
    /* The message stays valid until the next call, then a success clears it. */
    const char *msg = ksym_last_error_message();
    CHECK(ksym_last_error() == KSYM_ERR_FORMAT);
    CHECK(strstr(msg, "garbage") != NULL);
    struct ksym_table *t = fixture();
    CHECK(ksym_last_error() == 0);
    ksym_table_free(t);
}

static uint32_t stats_flags(struct ksym_table *t)
{
    struct ksym_table_stats st = { .sz = sizeof(st) };
    CHECK(ksym_table_stats(t, &st) == 0);
    return st.flags;
}

/* Snapshots: written by one open, used by the next (as root reading real
 * addresses), same answers; KSYM_TABLE_NO_SNAPSHOT; a process that may not
 * use them gets neither flag and a note saying why. */
static void test_snapshot(void)
{
    char snap[128];
    snprintf(snap, sizeof(snap), "%s/snap", dir);
    const char *path = write_file("snapfix", FIXTURE);
    const char *mods = write_file("snapmods", "");
    KSYM_OPTS(ksym_table_opts, o, .kallsyms_path = path, .builtin_ranges_path = "", .modules_path = mods,
              .snapshot_dir = snap);
    KSYM_OPTS(ksym_table_opts, no, .kallsyms_path = path, .builtin_ranges_path = "", .modules_path = mods,
              .snapshot_dir = snap, .flags = KSYM_TABLE_NO_SNAPSHOT);
    /* Real addresses: _text is not at 0. (The first line cannot tell: on
     * x86-64 SMP kernels it is a per-CPU symbol at 0 for every reader.) */
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512];
    unsigned long long text = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char name[256];
        unsigned long long a;
        char ty;
        if (sscanf(line, "%llx %c %255s", &a, &ty, name) == 3 && (ty == 'T' || ty == 't') && !strcmp(name, "_text")) {
            text = a;
            break;
        }
    }
    if (f)
        fclose(f);
    int privileged = geteuid() == 0 && text != 0;

    struct ksym_table *first = ksym_table_open(&o);
    struct ksym_table *second = ksym_table_open(&o);
    struct ksym_table *plain = ksym_table_open(&no);
    CHECK(first && second && plain);
    if (!first || !second || !plain)
        return;
    CHECK((stats_flags(plain) & (KSYM_STATS_SNAPSHOT | KSYM_STATS_SNAPSHOT_WRITTEN)) == 0);
    if (privileged) {
        CHECK(stats_flags(first) & KSYM_STATS_SNAPSHOT_WRITTEN);
        CHECK(stats_flags(second) & KSYM_STATS_SNAPSHOT);
    } else {
        KERNEL_SKIP("snapshots need root and real addresses in /proc/kallsyms");
        CHECK((stats_flags(second) & (KSYM_STATS_SNAPSHOT | KSYM_STATS_SNAPSHOT_WRITTEN)) == 0);
    }
    /* The note names the snapshot either way. */
    int noted = 0;
    for (size_t i = 0; i < ksym_table_diagnostic_count(second); i++)
        noted |= strstr(ksym_table_diagnostic(second, i), "snapshot:") != NULL;
    CHECK(noted);
    /* Same answers, the pseudo-module's (read fresh) included. */
    static const char *const queries[] = { "bar", "crc_itu_t`foo", "foo", "dup", "bpf_prog_0123456789abcdef_x",
                                           "bpf`bpf_prog_0123456789abcdef_x", "nope" };
    for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
        struct ksym_symbol a, b;
        int ra = ksym_lookup(second, queries[i], &a), rb = ksym_lookup(plain, queries[i], &b);
        CHECK(ra == rb);
        if (ra == 0 || ra == KSYM_ERR_AMBIGUOUS)
            CHECK(a.addr == b.addr && !strcmp(a.name, b.name) && !strcmp(a.module, b.module));
    }
    struct ksym_symbol a, b;
    uint64_t oa, ob;
    CHECK(ksym_symbolize(second, 0xffffffffc0002000ull, &a, &oa) == 0 &&
          ksym_symbolize(plain, 0xffffffffc0002000ull, &b, &ob) == 0 && !strcmp(a.name, b.name) && oa == ob);
    CHECK(ksym_table_module_count(second) == ksym_table_module_count(plain));
    /* Both orders from a snapshot: its own symbols, and the fresh read's pseudo-module ones. */
    check_orders(second);
    ksym_table_free(first);
    ksym_table_free(second);
    ksym_table_free(plain);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/ksym-ctest-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_version_and_errors();
    test_lookup();
    test_symbolize();
    test_foreach();
    test_foreach_order();
    test_null_arguments();
    test_opts();
    test_file_errors();
    test_snapshot();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return finish("test_table");
}
