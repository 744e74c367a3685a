/* Minimal test harness for the C tests: CHECK counts, reports and goes on. */
#ifndef KSYM_CHECK_H
#define KSYM_CHECK_H

#include <ksym.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static int checks, failures, skips;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n    last error %d: %s\n", __FILE__, __LINE__, \
                    #cond, ksym_last_error(), ksym_last_error_message());                          \
        }                                                                                          \
    } while (0)

/* The last error's message contains `needle`. */
#define CHECK_MSG(needle) CHECK(strstr(ksym_last_error_message(), (needle)) != NULL)

/* Is `need` required by the environment? KSYM_REQUIRE is a comma-separated
 * list of kernel features ("kernel", "fentry", "modules", "kprobes",
 * "kallsyms_all", "tracefs") or "all"; blanks around each word do not
 * count (as Rust's str::trim: spaces, tabs, CR, LF, VT, FF).
 * KSYM_REQUIRE_KERNEL=1 and KSYM_REQUIRE_FENTRY=1 are the older spellings
 * of "kernel" and "fentry". "data" (the bundled data sets, KSYM_TESTDATA)
 * is required whenever anything is: the Makefile always provides them, so
 * a run that says what the machine must have is a full run, where a
 * missing data set is a broken setup. The Rust tests read the same
 * variable (tests/common: Need). */
/* Writes TEXT to DIR/NAME (exit 2 when it cannot) and returns the path,
 * which stays valid for the next 15 calls. */
static inline const char *check_write_file(const char *dir, const char *name, const char *text)
{
    static char paths[16][192];
    static int n;
    char *p = paths[n++ % 16];
    snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) {
        perror(p);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
    return p;
}

static inline int need_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline int need_required(const char *need)
{
    int data = !strcmp(need, "data");
    const char *kernel = getenv("KSYM_REQUIRE_KERNEL"), *fentry = getenv("KSYM_REQUIRE_FENTRY");
    if (kernel && !strcmp(kernel, "1") && (data || !strcmp(need, "kernel")))
        return 1;
    if (fentry && !strcmp(fentry, "1") && (data || !strcmp(need, "fentry")))
        return 1;
    const char *req = getenv("KSYM_REQUIRE");
    size_t n = strlen(need);
    while (req && *req) {
        size_t w = strcspn(req, ",");
        const char *word = req;
        size_t len = w;
        while (len && need_blank(*word))
            word++, len--;
        while (len && need_blank(word[len - 1]))
            len--;
        if (len && (data || (len == n && !strncmp(word, need, n)) || (len == 3 && !strncmp(word, "all", 3))))
            return 1;
        req += w;
        if (*req == ',')
            req++;
    }
    return 0;
}

/* Appends "SKIP <need> <test>: <why>" to the file KSYM_SKIP_LOG names, if
 * any: c-tests/run.sh points it, for the plain run of each test, at the
 * log the Rust tests append theirs to (target/tmp/ksym-skipped), which
 * make test prints; KSYM_SKIP_TEST names the test binary. */
static inline void need_skip_log(const char *need, const char *why)
{
    const char *log = getenv("KSYM_SKIP_LOG"), *test = getenv("KSYM_SKIP_TEST");
    if (!log || !*log)
        return;
    FILE *f = fopen(log, "a");
    if (!f) {
        fprintf(stderr, "KSYM_SKIP_LOG %s cannot be opened: the skip below is not logged\n", log);
        return;
    }
    fprintf(f, "SKIP %s %s: %s\n", need, test && *test ? test : "?", why);
    fclose(f);
}

/* The kernel table (tests/kernels.txt; $KSYM_KERNEL_TABLE names another
 * copy): does the running kernel have `feature` (a column: "fentry",
 * "modules", "module_btf", "cookies", "func_ip", "kprobes",
 * "kprobe_multi", "kallsyms_all", "tracefs_lists", "struct_ops_link",
 * "tracing_multi")? 1 or 0 as its row says; -1 when no row is the running
 * kernel's or the table does not declare it. The row is $KSYM_KERNEL's
 * (the guests set it), else the host row (suite "-") whose release
 * pattern matches uname -r. `row` (if not NULL, 32 bytes) gets its name.
 * tests/common: kernel_has is the Rust side. */
static inline int kernel_has_row(const char *feature, char row[32])
{
    const char *path = getenv("KSYM_KERNEL_TABLE");
    FILE *f = fopen(path && *path ? path : "tests/kernels.txt", "r");
    if (!f)
        return -1;
    const char *want = getenv("KSYM_KERNEL");
    struct utsname u;
    if (uname(&u) != 0)
        u.release[0] = 0;
    char line[1024], head[64][32];
    int ncol = 0, col = -1, suite = -1, release = -1, has = -1;
    while (fgets(line, sizeof(line), f)) {
        char *hash = strchr(line, '#'), *p = line;
        char cell[64][32];
        int n = 0;
        if (hash)
            *hash = 0;
        /* Words split by hand: strtok_r needs POSIX feature macros that a
         * test including this header may not define. */
        while (n < 64) {
            p += strspn(p, " \t\r\n");
            size_t len = strcspn(p, " \t\r\n");
            if (!len)
                break;
            snprintf(cell[n++], 32, "%.*s", (int)len, p);
            p += len;
        }
        if (!n)
            continue;
        if (!ncol) {
            for (ncol = 0; ncol < n; ncol++) {
                memcpy(head[ncol], cell[ncol], 32);
                if (!strcmp(cell[ncol], feature))
                    col = ncol;
                if (!strcmp(cell[ncol], "suite"))
                    suite = ncol;
                if (!strcmp(cell[ncol], "release"))
                    release = ncol;
            }
            continue;
        }
        if (suite < 0 || release < 0 || n != ncol)
            break;
        if (want && *want ? strcmp(cell[0], want) != 0
                          : strcmp(cell[suite], "-") != 0 || fnmatch(cell[release], u.release, 0) != 0)
            continue;
        if (row)
            memcpy(row, cell[0], 32);
        if (col >= 0 && (!strcmp(cell[col], "yes") || !strcmp(cell[col], "no")))
            has = !strcmp(cell[col], "yes");
        break;
    }
    fclose(f);
    return has;
}

static inline int kernel_has(const char *feature)
{
    return kernel_has_row(feature, NULL);
}

/* A need's column in the kernel table ("tracefs" is "tracefs_lists"; the
 * kernel itself and "data" have none). */
static inline const char *need_column(const char *need)
{
    return !strcmp(need, "tracefs") ? "tracefs_lists" : need;
}

/* A part that needs `need` (a kernel feature, or "data") cannot run here.
 * Where the kernel table declares it: a kernel that has it must not get
 * here (a failure); a kernel that lacks it gets here as the table says,
 * and the caller has checked what such a kernel does (its documented
 * error or fallback): one passed check, "checked: not on this kernel".
 * Elsewhere: a failure when the environment requires it, otherwise the
 * one line "SKIP <need>: <why>", also appended to the skip log
 * (need_skip_log). */
#define NEED_SKIP(need, ...)                                                                       \
    do {                                                                                           \
        char why_[1024], row_[32] = "";                                                            \
        int has_ = kernel_has_row(need_column(need), row_);                                        \
        snprintf(why_, sizeof(why_), __VA_ARGS__);                                                 \
        if (has_ == 1) {                                                                           \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: the kernel table says %s has %s, but: %s\n", __FILE__, __LINE__,  \
                    row_, need, why_);                                                             \
        } else if (has_ == 0) {                                                                    \
            checks++;                                                                              \
            printf("checked: not on this kernel (%s): %s: %s\n", row_, need, why_);                  \
        } else if (need_required(need)) {                                                          \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: %s is required here (KSYM_REQUIRE=%s), but: %s\n", __FILE__, __LINE__, \
                    need, getenv("KSYM_REQUIRE") ? getenv("KSYM_REQUIRE") : "", why_);                    \
        } else {                                                                                   \
            skips++;                                                                               \
            printf("SKIP %s: %s\n", need, why_);                                                   \
            need_skip_log(need, why_);                                                             \
        }                                                                                          \
    } while (0)

/* A part that needs the kernel itself (root, bpf(), kallsyms addresses,
 * BTF). */
#define KERNEL_SKIP(...) NEED_SKIP("kernel", __VA_ARGS__)

/* The bundled 6.12 kernel's table (modules loaded; no built-in ranges),
 * its kallsyms path written to `path`; NULL with a NEED_SKIP("data") when
 * KSYM_TESTDATA is not set (the Makefile sets it). */
static inline struct ksym_table *open_bundled_6_12(char *path, size_t size)
{
    const char *data = getenv("KSYM_TESTDATA");
    if (!data) {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no bundled kernel data");
        return NULL;
    }
    snprintf(path, size, "%s/linux-6.12-cloud/kallsyms", data);
    KSYM_OPTS(ksym_table_opts, o, .kallsyms_path = path, .builtin_ranges_path = "");
    struct ksym_table *t = ksym_table_open(&o);
    CHECK(t != NULL);
    return t;
}

#ifdef _GNU_SOURCE
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

/* tracefs, where nothing mounted it (the development VM), in a mount
 * namespace of this process alone: the tracepoints' ids and names are
 * there. Needs root; without it the tests say what they skip. */
static inline void private_tracefs(void)
{
    if (access("/sys/kernel/tracing/events", F_OK) == 0 || access("/sys/kernel/debug/tracing/events", F_OK) == 0)
        return;
    if (unshare(CLONE_NEWNS) != 0)
        return;
    if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0)
        mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
}
#endif

/* The address of `name` in /proc/kallsyms, in `module` ("vmlinux": the
 * core kernel), read naively: the oracle of addresses libksym gives. 0
 * when absent (or hidden). */
static inline uint64_t check_kallsyms_addr(const char *module, const char *name)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], mod[128], type;
    unsigned long long a;
    uint64_t found = 0;
    int core = !strcmp(module, "vmlinux");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        int n = sscanf(line, "%llx %c %255s [%127[^]]]", &a, &type, sym, mod);
        if (n < 3 || strcmp(sym, name) || type == 'a' || type == 'A')
            continue;
        if ((core && n == 3) || (!core && n == 4 && !strcmp(mod, module))) {
            found = a;
            break;
        }
    }
    fclose(f);
    return found;
}

static int finish(const char *name)
{
    printf("%s: %d checks, %d failures, %d skipped\n", name, checks, failures, skips);
    return failures ? 1 : 0;
}

#endif
