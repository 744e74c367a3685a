/*
 * ksym_resolve and ksym_cache through the C API: answers equal ksym_lookup's,
 * every error path, counters, module changes followed.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <stdint.h>
#include <unistd.h>

static char dir[64];

static const char *path_of(const char *name)
{
    static char paths[8][128];
    static int n;
    char *p = paths[n++ % 8];
    snprintf(p, 128, "%s/%s", dir, name);
    return p;
}

/* Writes `text` to dir/name atomically (write a temporary, rename). */
static const char *put(const char *name, const char *text)
{
    char tmp[160];
    const char *p = path_of(name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    FILE *f = fopen(tmp, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, p) != 0) {
        perror(p);
        exit(2);
    }
    return p;
}

#define CORE                                                                                       \
    "ffffffff81000000 T _text\n"                                                                   \
    "ffffffff81000100 T common\n"                                                              \
    "ffffffff81000200 T schedule\n"

static void test_resolve_errors(void)
{
    const char *k = put("kallsyms", CORE "ffffffffc0001000 t alpha_fn\t[alpha]\n");
    const char *qs[] = { "schedule", "alpha`alpha_fn", "nope", "vmlinux`alpha_fn" };
    uint64_t addrs[4];
    int errs[4];
    CHECK(ksym_resolve(k, qs, 4, addrs, errs) == 2);
    CHECK(errs[0] == 0 && addrs[0] == 0xffffffff81000200ull);
    CHECK(errs[1] == 0 && addrs[1] == 0xffffffffc0001000ull);
    CHECK(errs[2] == KSYM_ERR_NOT_FOUND && addrs[2] == 0);
    CHECK(errs[3] == KSYM_ERR_NOT_FOUND);

    CHECK(ksym_resolve(k, NULL, 0, NULL, NULL) == 0);
    CHECK(ksym_resolve(k, NULL, 1, addrs, errs) == KSYM_ERR_INVALID);
    CHECK(ksym_resolve(k, qs, 1, NULL, errs) == KSYM_ERR_INVALID);
    CHECK(ksym_resolve(k, qs, 1, addrs, NULL) == KSYM_ERR_INVALID);
    const char *with_null[] = { "schedule", NULL };
    CHECK(ksym_resolve(k, with_null, 2, addrs, errs) == KSYM_ERR_INVALID);
    CHECK_MSG("queries[1]");
    const char *bad[] = { "schedule", "a`b`c" };
    CHECK(ksym_resolve(k, bad, 2, addrs, errs) == KSYM_ERR_INVALID);
    CHECK_MSG("a`b`c");
    CHECK(ksym_resolve(path_of("missing"), qs, 1, addrs, errs) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("missing");
    const char *r = put("restricted", "0000000000000000 T _text\n0000000000000000 T schedule\n");
    CHECK(ksym_resolve(r, qs, 1, addrs, errs) == KSYM_ERR_RESTRICTED);
    CHECK_MSG("kptr_restrict");
    const char *m = put("malformed", "ffffffff81000000 T _text\nnot a line\n");
    CHECK(ksym_resolve(m, qs, 1, addrs, errs) == KSYM_ERR_FORMAT);
    CHECK_MSG(":2:");
}

/* Every name of a real kernel, resolved in one call, agrees with the table. */
static void test_resolve_matches_lookup(void)
{
    char path[512];
    struct ksym_table *t = open_bundled_6_12(path, sizeof(path));
    if (!t)
        return;
    static const char *names[] = { "schedule",   "xfs`xfs_file_open", "vmlinux`schedule", "cleanup_module",
                                   "nft_register_chain_type", "xfs_file_open.cold", "vmlinux`xfs_file_open",
                                   "bridge`br_dev_xmit", "_text", "fixed_percpu_data" };
    size_t n = sizeof(names) / sizeof(names[0]);
    uint64_t addrs[16];
    int errs[16];
    int resolved = ksym_resolve(path, names, n, addrs, errs);
    int want_resolved = 0;
    for (size_t i = 0; i < n; i++) {
        struct ksym_symbol s;
        int e = ksym_lookup(t, names[i], &s);
        CHECK(errs[i] == e);
        if (e == 0 || e == KSYM_ERR_AMBIGUOUS)
            CHECK(addrs[i] == s.addr);
        want_resolved += e == 0;
    }
    CHECK(resolved == want_resolved && resolved >= 6);
    ksym_table_free(t);
}

static void test_cache(void)
{
    const char *k = put("kallsyms", CORE "ffffffffc0001000 t alpha_fn\t[alpha]\n");
    const char *mods = put("modules", "alpha 16384 0 - Live 0xffffffffc0001000\n");
    KSYM_OPTS(ksym_table_opts, o, .kallsyms_path = k, .modules_path = mods, .builtin_ranges_path = "");
    struct ksym_cache *c = ksym_cache_new(&o);
    CHECK(c != NULL);
    const char *qs[] = { "alpha_fn", "common", "vmlinux`schedule" };
    uint64_t addrs[3];
    int errs[3];
    struct ksym_cache_stats st = { .sz = sizeof(st) };

    CHECK(ksym_cache_resolve(c, qs, 3, addrs, errs) == 3);
    CHECK(addrs[0] == 0xffffffffc0001000ull && errs[1] == 0);
    CHECK(ksym_cache_stats(c, &st) == 0);
    CHECK(st.passes == 1 && st.misses == 3 && st.hits == 0 && st.entries == 3);

    CHECK(ksym_cache_resolve(c, qs, 3, addrs, errs) == 3);
    CHECK(ksym_cache_stats(c, &st) == 0 && st.passes == 1 && st.hits == 3);

    /* alpha unloaded; beta loaded, with its own `common`. */
    put("kallsyms", CORE "ffffffffc0002000 t common\t[beta]\n");
    put("modules", "beta 16384 0 - Live 0xffffffffc0002000\n");
    CHECK(ksym_cache_resolve(c, qs, 3, addrs, errs) == 1);
    CHECK(errs[0] == KSYM_ERR_NOT_FOUND && addrs[0] == 0);
    CHECK(errs[1] == KSYM_ERR_AMBIGUOUS && addrs[1] == 0xffffffff81000100ull);
    CHECK(errs[2] == 0);
    CHECK(ksym_cache_stats(c, &st) == 0 && st.passes == 2 && st.dropped == 2);

    ksym_cache_invalidate(c);
    CHECK(ksym_cache_stats(c, &st) == 0 && st.entries == 0);
    ksym_cache_invalidate(NULL);

    /* Errors. */
    CHECK(ksym_cache_resolve(NULL, qs, 1, addrs, errs) == KSYM_ERR_INVALID);
    CHECK(ksym_cache_resolve(c, qs, 1, NULL, errs) == KSYM_ERR_INVALID);
    CHECK(ksym_cache_stats(c, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_cache_stats(NULL, &st) == KSYM_ERR_INVALID);
    const char *bad[] = { "x y" };
    CHECK(ksym_cache_resolve(c, bad, 1, addrs, errs) == KSYM_ERR_INVALID);
    ksym_cache_free(c);
    ksym_cache_free(NULL);

    KSYM_OPTS(ksym_table_opts, r, .kallsyms_path = put("restricted", "0000000000000000 T _text\n"),
              .modules_path = mods);
    c = ksym_cache_new(&r);
    CHECK(c != NULL);
    CHECK(ksym_cache_resolve(c, qs, 1, addrs, errs) == KSYM_ERR_RESTRICTED);
    ksym_cache_free(c);
    KSYM_OPTS(ksym_table_opts, f, .flags = 7);
    CHECK(ksym_cache_new(&f) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/ksym-ctest-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_resolve_errors();
    test_resolve_matches_lookup();
    test_cache();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return finish("test_resolve");
}
