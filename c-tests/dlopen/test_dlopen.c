/*
 * libksym loaded with dlopen (as a plugin would), used through dlsym from
 * several threads at once, then dlclose'd: every answer right, the
 * thread-local error per thread, valgrind clean. Then (as root, with real
 * addresses) a table opened for the first time in a snapshot directory,
 * freed and the library dlclose'd at once, while a thread of the library
 * is still writing the snapshot: the process goes on (the library is
 * never unmapped under it) and the snapshot is written. Not linked with
 * -lksym on purpose: $KSYM_LIB names the library to load.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    /* dlclose while the snapshot's writer runs (root, real addresses). */
    char dir[64] = "/tmp/ksym-dlopen-XXXXXX";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    __typeof__(ksym_table_open) *open_table = h ? (__typeof__(ksym_table_open) *)dlsym(h, "ksym_table_open") : NULL;
    __typeof__(ksym_table_stats) *stats = h ? (__typeof__(ksym_table_stats) *)dlsym(h, "ksym_table_stats") : NULL;
    *(void **)&table_free = h ? dlsym(h, "ksym_table_free") : NULL;
    if (!open_table || !stats || !table_free || !mkdtemp(dir)) {
        fprintf(stderr, "dlopen/dlsym/mkdtemp for the snapshot round failed\n");
        return 1;
    }
    KSYM_OPTS(ksym_table_opts, o, .snapshot_dir = dir);
    struct ksym_table *t = open_table(&o);
    KSYM_OPTS(ksym_table_stats, st);
    int writing = t && stats(t, &st) == 0 && (st.flags & KSYM_STATS_SNAPSHOT_WRITTEN);
    table_free(t);
    dlclose(h);
    if (writing) {
        /* The writer finishes on its own; the process must outlive it. */
        int found = 0;
        for (int i = 0; i < 20000 && !found; i++) {
            char cmd[160];
            snprintf(cmd, sizeof(cmd), "ls %s/table-*.snap > /dev/null 2>&1", dir);
            found = system(cmd) == 0;
            if (!found)
                usleep(1000);
        }
        printf("test_dlopen: dlclose while the snapshot was being written: %s\n",
               found ? "written, process alive" : "NOT written");
        failures += !found;
    } else {
        printf("test_dlopen: no snapshot round (needs root and real addresses)\n");
    }
    char rm[96];
    snprintf(rm, sizeof(rm), "rm -rf %s", dir);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
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
