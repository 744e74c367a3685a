/* Minimal test harness for the C tests: CHECK counts, reports and goes on. */
#ifndef KSYM_CHECK_H
#define KSYM_CHECK_H

#include <ksym.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#define SKIP(...)                                                                                  \
    do {                                                                                           \
        skips++;                                                                                   \
        printf("SKIP: ");                                                                          \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
    } while (0)

/* A part that needs this machine's kernel (bpf(), kallsyms addresses,
 * BTF) cannot run: with KSYM_REQUIRE_KERNEL=1 (set by .ci/run as root)
 * that is a failure, otherwise a visible skip. */
#define KERNEL_SKIP(...)                                                                           \
    do {                                                                                           \
        const char *req_ = getenv("KSYM_REQUIRE_KERNEL");                                          \
        if (req_ && !strcmp(req_, "1")) {                                                          \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: KSYM_REQUIRE_KERNEL=1 but: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        } else {                                                                                   \
            SKIP(__VA_ARGS__);                                                                     \
        }                                                                                          \
    } while (0)

/* The bundled 6.12 kernel's table (modules loaded; no built-in ranges),
 * its kallsyms path written to `path`; NULL with a SKIP when KSYM_TESTDATA
 * is not set (the Makefile sets it). */
static inline struct ksym_table *open_bundled_6_12(char *path, size_t size)
{
    const char *data = getenv("KSYM_TESTDATA");
    if (!data) {
        SKIP("KSYM_TESTDATA not set: no bundled kernel data");
        return NULL;
    }
    snprintf(path, size, "%s/linux-6.12-cloud/kallsyms", data);
    KSYM_OPTS(ksym_table_opts, o, .kallsyms_path = path, .builtin_ranges_path = "");
    struct ksym_table *t = ksym_table_open(&o);
    CHECK(t != NULL);
    return t;
}

static int finish(const char *name)
{
    printf("%s: %d checks, %d failures, %d skipped\n", name, checks, failures, skips);
    return failures ? 1 : 0;
}

#endif
