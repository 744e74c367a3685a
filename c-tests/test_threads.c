/*
 * One table, many threads: every answer checked against the one computed
 * before the threads started, and each thread's last error is its own.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <pthread.h>
#include <stdint.h>

#define THREADS 4
#define NAMES 2000
#define ROUNDS 20

static struct ksym_table *table;
static char names[NAMES][128];
static uint64_t want_addr[NAMES];
static int nnames;

static int take_name(const struct ksym_symbol *s, void *ctx)
{
    (void)ctx;
    if (nnames >= NAMES)
        return 1;
    struct ksym_symbol u;
    snprintf(names[nnames], sizeof(names[0]), "%s`%s", s->module, s->name);
    /* Keep the names that resolve to one address. */
    if (ksym_lookup(table, names[nnames], &u) == 0 && s->type != 'A' && s->type != 'a') {
        want_addr[nnames] = u.addr;
        nnames++;
    }
    return 0;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    long bad = 0;
    char missing[64];
    snprintf(missing, sizeof(missing), "missing_symbol_of_thread_%ld", id);
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = (int)id; i < nnames; i += 3) {
            struct ksym_symbol s;
            uint64_t off;
            if (ksym_lookup(table, names[i], &s) != 0 || s.addr != want_addr[i])
                bad++;
            if (ksym_symbolize(table, want_addr[i], &s, &off) != 0 || off != 0 || s.addr != want_addr[i])
                bad++;
        }
        /* Errors are per thread: this message names this thread's query. */
        struct ksym_symbol s;
        if (ksym_lookup(table, missing, &s) != KSYM_ERR_NOT_FOUND ||
            !strstr(ksym_last_error_message(), missing))
            bad++;
    }
    return (void *)bad;
}

int main(void)
{
    char path[512];
    table = open_bundled_6_12(path, sizeof(path));
    if (!table)
        return finish("test_threads");
    /* Every 90th symbol or so: a spread over vmlinux and the modules. */
    CHECK(ksym_foreach_match(table, "*`*[0-9]", take_name, NULL) >= 0);
    CHECK(nnames == NAMES);

    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
    for (int i = 0; i < THREADS; i++) {
        void *bad;
        CHECK(pthread_join(th[i], &bad) == 0);
        CHECK(bad == NULL);
    }
    ksym_table_free(table);
    return finish("test_threads");
}
