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

static int finish(const char *name)
{
    printf("%s: %d checks, %d failures, %d skipped\n", name, checks, failures, skips);
    return failures ? 1 : 0;
}

#endif
