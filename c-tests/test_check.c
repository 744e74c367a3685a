/*
 * The harness's own rules (check.h), against values worked out by hand:
 * which needs KSYM_REQUIRE requires (words trimmed as the Rust tests'
 * Need::required trims them; "data" whenever anything is required; the
 * older KSYM_REQUIRE_KERNEL/_FENTRY), and the line a skip appends to
 * KSYM_SKIP_LOG. The environment is the test's own: it is set and unset
 * here, and put back at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <unistd.h>

static void set(const char *var, const char *value)
{
    if (value)
        setenv(var, value, 1);
    else
        unsetenv(var);
}

/* need_required(need) under KSYM_REQUIRE=req (NULL: unset), the older
 * variables unset. */
static int required(const char *req, const char *need)
{
    set("KSYM_REQUIRE", req);
    return need_required(need);
}

static char *saved(const char *var)
{
    const char *v = getenv(var);
    if (!v)
        return NULL;
    char *copy = malloc(strlen(v) + 1);
    if (copy)
        strcpy(copy, v);
    return copy;
}

int main(void)
{
    const char *vars[] = { "KSYM_REQUIRE", "KSYM_REQUIRE_KERNEL", "KSYM_REQUIRE_FENTRY", "KSYM_SKIP_LOG",
                           "KSYM_SKIP_TEST" };
    char *old[5];
    for (int i = 0; i < 5; i++) {
        old[i] = saved(vars[i]);
        unsetenv(vars[i]);
    }

    /* Words, exactly or trimmed of blanks (spaces, tabs, CR, LF, VT, FF:
     * what Rust's str::trim removes of ASCII). */
    CHECK(!required(NULL, "kernel"));
    CHECK(!required("", "kernel"));
    CHECK(required("kernel", "kernel"));
    CHECK(required("fentry,kernel", "kernel"));
    CHECK(required("kernel, fentry", "fentry"));
    CHECK(required(" kernel ,\tfentry\t", "kernel"));
    CHECK(required(" kernel ,\tfentry\t", "fentry"));
    CHECK(required("modules,\r\n tracefs \v\f", "tracefs"));
    CHECK(required(" all ", "kprobes"));
    /* Not a prefix, not a word with blanks inside, not a blank word. */
    CHECK(!required("kernel", "kern"));
    CHECK(!required("kern", "kernel"));
    CHECK(!required("kernels", "kernel"));
    CHECK(!required("ker nel", "kernel"));
    CHECK(!required("fentry", "kernel"));
    CHECK(!required(" , ,", "kernel"));
    CHECK(!required("alll", "kernel"));
    /* "data": whenever any word is there. */
    CHECK(!required(NULL, "data"));
    CHECK(!required("", "data"));
    CHECK(!required(" , \t", "data"));
    CHECK(required("kernel", "data"));
    CHECK(required(" tracefs ", "data"));
    CHECK(required("data", "data"));
    CHECK(required("all", "data"));
    /* The older spellings (exactly "1"), "data" with them. */
    unsetenv("KSYM_REQUIRE");
    set("KSYM_REQUIRE_KERNEL", "1");
    CHECK(need_required("kernel") && need_required("data") && !need_required("fentry"));
    set("KSYM_REQUIRE_KERNEL", "yes");
    CHECK(!need_required("kernel") && !need_required("data"));
    unsetenv("KSYM_REQUIRE_KERNEL");
    set("KSYM_REQUIRE_FENTRY", "1");
    CHECK(need_required("fentry") && need_required("data") && !need_required("kernel"));
    unsetenv("KSYM_REQUIRE_FENTRY");

    /* The skip log: one line per skip, appended, naming need and test. */
    char dir[] = "/tmp/ksym-check-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char log[64];
    snprintf(log, sizeof(log), "%s/skipped", dir);
    need_skip_log("fentry", "no log set: nothing written");
    set("KSYM_SKIP_LOG", log);
    need_skip_log("kernel", "first");
    set("KSYM_SKIP_TEST", "test_x");
    need_skip_log("data", "KSYM_TESTDATA not set");
    char text[256] = { 0 };
    FILE *f = fopen(log, "r");
    CHECK(f != NULL);
    if (f) {
        size_t n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = 0;
        fclose(f);
    }
    if (strcmp(text, "SKIP kernel ?: first\nSKIP data test_x: KSYM_TESTDATA not set\n") != 0)
        fprintf(stderr, "skip log:\n%s", text);
    CHECK(!strcmp(text, "SKIP kernel ?: first\nSKIP data test_x: KSYM_TESTDATA not set\n"));
    remove(log);

    /* The kernel table: a row by KSYM_KERNEL, a host row by its release
     * pattern (uname -r), yes/no, -1 for an unknown column or no row. */
    char table[64];
    snprintf(table, sizeof(table), "%s/kernels.txt", dir);
    struct utsname u;
    CHECK(uname(&u) == 0);
    f = fopen(table, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "# a comment\nname suite root release fentry cookies\n"
                   "5.10 bullseye host 5.10.* yes no   # trailing\n"
                   "\n"
                   "other - - no-such-release* no no\n"
                   "here - - %s no yes\n", u.release);
        fclose(f);
    }
    char *old_table = saved("KSYM_KERNEL_TABLE"), *old_kernel = saved("KSYM_KERNEL");
    char row[32] = "";
    set("KSYM_KERNEL_TABLE", table);
    set("KSYM_KERNEL", "5.10");
    CHECK(kernel_has_row("fentry", row) == 1 && !strcmp(row, "5.10"));
    CHECK(kernel_has("cookies") == 0);
    CHECK(kernel_has("tracing_multi") == -1);
    CHECK(kernel_has("suite") == -1);
    set("KSYM_KERNEL", "7.3");
    CHECK(kernel_has("fentry") == -1);
    unsetenv("KSYM_KERNEL");
    CHECK(kernel_has_row("cookies", row) == 1 && !strcmp(row, "here"));
    CHECK(kernel_has("fentry") == 0);
    /* Not a guest's row for the host, whatever its pattern. */
    set("KSYM_KERNEL_TABLE", "/nonexistent/kernels.txt");
    CHECK(kernel_has("fentry") == -1);
    set("KSYM_KERNEL_TABLE", old_table);
    set("KSYM_KERNEL", old_kernel);
    free(old_table);
    free(old_kernel);
    remove(table);
    rmdir(dir);

    for (int i = 0; i < 5; i++) {
        set(vars[i], old[i]);
        free(old[i]);
    }
    return finish("test_check");
}
