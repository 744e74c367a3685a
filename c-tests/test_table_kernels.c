/*
 * The symbol tables of real kernels through the C API: the bundled 6.12
 * kernel (its kallsyms, built-in ranges and vmlinux sizes) and the running
 * kernel's /proc/kallsyms. The API's contract on hand-made tables is
 * test_table.c's.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <stdint.h>
#include <unistd.h>

static void test_real_kernel(void)
{
    char path[512];
    struct ksym_table *t = open_bundled_6_12(path, sizeof(path));
    if (!t)
        return;
    CHECK(ksym_table_count(t) == 182005);
    struct ksym_symbol s;
    CHECK(ksym_lookup(t, "xfs`xfs_file_open", &s) == 0 && !strcmp(s.module, "xfs"));
    uint64_t off;
    struct ksym_symbol back;
    CHECK(ksym_symbolize(t, s.addr + 1, &back, &off) == 0 && off == 1);
    CHECK(!strcmp(back.name, "xfs_file_open") && !strcmp(back.module, "xfs"));
    CHECK(ksym_lookup(t, "vmlinux`schedule", &s) == 0);

    struct ksym_table_stats st = { .sz = sizeof(st) };
    CHECK(ksym_table_stats(t, &st) == 0);
    CHECK(st.symbols == 182005 && st.file_bytes > 8000000 && st.memory_bytes < 2 * st.file_bytes);
    /* An older caller's smaller stats struct gets only what it knows. */
    struct {
        size_t sz, symbols, modules, canary;
    } old = { 3 * sizeof(size_t), 0, 0, 77 };
    CHECK(ksym_table_stats(t, (struct ksym_table_stats *)&old) == 0);
    CHECK(old.symbols == 182005 && old.modules == st.modules && old.canary == 77);

    size_t n = ksym_table_module_count(t);
    CHECK(n == st.modules && n > 30);
    int loadable = 0, pseudo = 0;
    for (size_t i = 0; i < n; i++) {
        struct ksym_module_info m = { .sz = sizeof(m) };
        CHECK(ksym_table_module(t, i, &m) == 0);
        loadable += m.kind == KSYM_MODULE_LOADABLE;
        pseudo += m.kind == KSYM_MODULE_PSEUDO;
        if (i == 0)
            CHECK(!strcmp(m.name, "vmlinux") && m.kind == KSYM_MODULE_VMLINUX);
    }
    CHECK(loadable == 32 && pseudo == 3);
    struct ksym_module_info m = { .sz = sizeof(m) };
    CHECK(ksym_table_module(t, n, &m) == KSYM_ERR_NOT_FOUND);
    /* Every symbol is some module's; xfs's range holds xfs_file_open. */
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(ksym_table_module(t, i, &m) == 0);
        total += m.symbols;
        if (!strcmp(m.name, "xfs")) {
            CHECK(ksym_lookup(t, "xfs`xfs_file_open", &s) == 0);
            CHECK(m.symbols > 1000 && m.lo <= s.addr && s.addr <= m.hi && m.kind == KSYM_MODULE_LOADABLE);
        }
    }
    CHECK(total == st.symbols);
    /* Plain kallsyms, no ranges, no vmlinux: none of those flags. */
    CHECK((st.flags & (KSYM_STATS_KALLMODSYMS | KSYM_STATS_BUILTIN_RANGES | KSYM_STATS_VMLINUX_SIZES)) == 0);
    ksym_table_free(t);
}

/* Built-in modules and exact sizes through the C ABI: a ranges file, a
 * kallmodsyms file (tests/fixtures/builtin, see its README). */
static void test_builtin_and_sizes(void)
{
    KSYM_OPTS(ksym_table_opts, r, .kallsyms_path = "tests/fixtures/builtin/kallsyms",
              .builtin_ranges_path = "tests/fixtures/builtin/modules.builtin.ranges");
    struct ksym_table *t = ksym_table_open(&r);
    CHECK(t != NULL);
    if (!t)
        return;
    struct ksym_table_stats st = { .sz = sizeof(st) };
    CHECK(ksym_table_stats(t, &st) == 0 && (st.flags & KSYM_STATS_BUILTIN_RANGES) &&
          !(st.flags & KSYM_STATS_KALLMODSYMS));
    struct ksym_symbol s;
    /* ext4_file_open lies in ext4's .text range: built in. */
    CHECK(ksym_lookup(t, "ext4`ext4_file_open", &s) == 0 && !strcmp(s.module, "ext4") &&
          (s.flags & KSYM_SYM_BUILTIN) && !(s.flags & KSYM_SYM_SIZE_EXACT));
    int builtin = 0;
    for (size_t i = 0; i < ksym_table_module_count(t); i++) {
        struct ksym_module_info m = { .sz = sizeof(m) };
        CHECK(ksym_table_module(t, i, &m) == 0);
        builtin += m.kind == KSYM_MODULE_BUILTIN;
    }
    CHECK(builtin >= 3);
    /* The .rodata range is skipped (its anchor is missing): a diagnostic. */
    int noted = 0;
    for (size_t i = 0; i < ksym_table_diagnostic_count(t); i++)
        noted |= strstr(ksym_table_diagnostic(t, i), "rodata") != NULL;
    CHECK(noted);
    CHECK(ksym_table_diagnostic(t, 999) == NULL && ksym_last_error() == KSYM_ERR_NOT_FOUND);
    ksym_table_free(t);

    KSYM_OPTS(ksym_table_opts, k, .kallsyms_path = "tests/fixtures/builtin/kallmodsyms", .builtin_ranges_path = "");
    t = ksym_table_open(&k);
    CHECK(t != NULL);
    if (!t)
        return;
    struct ksym_table_stats st2 = { .sz = sizeof(st2) };
    CHECK(ksym_table_stats(t, &st2) == 0 && (st2.flags & KSYM_STATS_KALLMODSYMS));
    /* kallmodsyms gives sizes: exact. */
    CHECK(ksym_lookup(t, "ext4`ext4_file_open", &s) == 0 && (s.flags & KSYM_SYM_SIZE_EXACT) && s.size > 0);
    ksym_table_free(t);

    /* Sizes from a vmlinux ELF (the bundled 6.1 kernel's symbol table). */
    const char *data = getenv("KSYM_TESTDATA");
    if (!data) {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no bundled vmlinux");
        return;
    }
    char kpath[512], vpath[512];
    snprintf(kpath, sizeof(kpath), "%s/linux-6.1-cloud/kallsyms", data);
    snprintf(vpath, sizeof(vpath), "%s/linux-6.1-cloud/vmlinux.symbols", data);
    KSYM_OPTS(ksym_table_opts, v, .kallsyms_path = kpath, .builtin_ranges_path = "", .vmlinux_path = vpath);
    t = ksym_table_open(&v);
    CHECK(t != NULL);
    if (!t)
        return;
    struct ksym_table_stats st3 = { .sz = sizeof(st3) };
    CHECK(ksym_table_stats(t, &st3) == 0 && (st3.flags & KSYM_STATS_VMLINUX_SIZES));
    CHECK(ksym_lookup(t, "vmlinux`vfs_read", &s) == 0 && (s.flags & KSYM_SYM_SIZE_EXACT) && s.size > 16);
    ksym_table_free(t);
    /* Another kernel's vmlinux is refused, saying so. */
    snprintf(kpath, sizeof(kpath), "%s/linux-6.12-cloud/kallsyms", data);
    CHECK(ksym_table_open(&v) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK_MSG("does not match");
}

static void test_live_kernel(void)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[256];
    int visible = 0;
    if (f) {
        for (int i = 0; i < 50 && fgets(line, sizeof(line), f); i++)
            if (strncmp(line, "0000000000000000", 16) != 0)
                visible = 1;
        fclose(f);
    }
    if (!visible) {
        KERNEL_SKIP("/proc/kallsyms is unreadable or hides addresses");
        return;
    }
    KSYM_OPTS(ksym_table_opts, o, .kallsyms_path = "/proc/kallsyms", .builtin_ranges_path = "");
    struct ksym_table *t = ksym_table_open(&o);
    CHECK(t != NULL);
    struct ksym_symbol s;
    CHECK(ksym_lookup(t, "vmlinux`_text", &s) == 0 && s.addr != 0);
    uint64_t off;
    CHECK(ksym_symbolize(t, s.addr, &s, &off) == 0 && off == 0);
    ksym_table_free(t);
}

int main(void)
{
    test_real_kernel();
    test_live_kernel();
    test_builtin_and_sizes();
    return finish("test_table_kernels");
}
