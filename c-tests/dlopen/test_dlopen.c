/*
 * libksym loaded with dlopen (as a plugin would), used through dlsym from
 * several threads at once, then dlclose'd: every answer right, the
 * thread-local error per thread, valgrind clean. Not linked with
 * -lksym on purpose: $KSYM_LIB names the library to load.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ksym.h>

/* The header for the types; the functions through dlsym only. */
#define sym ksym_symbol
static __typeof__(ksym_table_from_buffer) *from_buffer;
static __typeof__(ksym_lookup) *lookup;
static __typeof__(ksym_table_free) *table_free;
static __typeof__(ksym_last_error) *last_error;
static __typeof__(ksym_last_error_message) *last_message;

static const char TEXT[] = "ffffffff81000000 T _text\nffffffff81000100 T vfs_read\nffffffffc0000000 t mod_fn\t[mymod]\n";
static int failures;

static void *worker(void *arg)
{
    struct ksym_table *t = arg;
    for (int i = 0; i < 2000; i++) {
        struct sym s;
        if (lookup(t, "vfs_read", &s) != 0 || s.addr != 0xffffffff81000100ull || strcmp(s.name, "vfs_read"))
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        /* An error in this thread, seen in this thread only. */
        if (lookup(t, "no_such_symbol", &s) != -2 || last_error() != -2 || !strstr(last_message(), "no_such_symbol"))
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        if (lookup(t, "mymod`mod_fn", &s) != 0 || last_error() != 0)
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void)
{
    const char *lib = getenv("KSYM_LIB");
    if (!lib) {
        fprintf(stderr, "KSYM_LIB is not set\n");
        return 2;
    }
    for (int round = 0; round < 3; round++) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
            return 1;
        }
        *(void **)&from_buffer = dlsym(h, "ksym_table_from_buffer");
        *(void **)&lookup = dlsym(h, "ksym_lookup");
        *(void **)&table_free = dlsym(h, "ksym_table_free");
        *(void **)&last_error = dlsym(h, "ksym_last_error");
        *(void **)&last_message = dlsym(h, "ksym_last_error_message");
        if (!from_buffer || !lookup || !table_free || !last_error || !last_message) {
            fprintf(stderr, "dlsym: %s\n", dlerror());
            return 1;
        }
        struct ksym_table *t = from_buffer(TEXT, sizeof(TEXT) - 1, NULL);
        if (!t) {
            fprintf(stderr, "ksym_table_from_buffer: %s\n", last_message());
            return 1;
        }
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, worker, t);
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        table_free(t);
        if (dlclose(h) != 0) {
            fprintf(stderr, "dlclose: %s\n", dlerror());
            return 1;
        }
    }
    /* Whether the last dlclose unmapped it: glibc keeps a library whose
     * thread-local destructors this thread registered (the last error). */
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int mapped = 0;
    while (maps && fgets(line, sizeof(line), maps))
        mapped |= strstr(line, "libksym") != NULL;
    if (maps)
        fclose(maps);
    printf("test_dlopen: 3 rounds of dlopen, 4 threads x 2000 x 3 lookups, dlclose (%s): %d failures\n",
           mapped ? "kept mapped: thread-local destructors pending" : "unmapped", failures);
    return failures != 0;
}
