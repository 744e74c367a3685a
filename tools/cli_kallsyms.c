/*
 * The ksym CLI's commands on kallsyms without a table (tools/cli.h):
 * resolve (one streaming pass, through a cache) and addresses (does this
 * process see the kernel's addresses).
 */
#define _GNU_SOURCE

#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int cmd_resolve(const struct options *o, int argc, char **argv)
{
    KSYM_OPTS(ksym_table_opts, opts, .kallsyms_path = o->kallsyms, .builtin_ranges_path = o->ranges,
              .modules_path = o->modules);
    long repeat = o->repeat ? strtol(o->repeat, NULL, 10) : 1; /* checked when parsed */
    struct ksym_cache *c = ksym_cache_new(&opts);
    if (!c)
        return fail("cannot create the cache");
    uint64_t *addrs = calloc((size_t)argc, sizeof(*addrs));
    int *errs = calloc((size_t)argc, sizeof(*errs));
    int rc = 0;
    if (!addrs || !errs) {
        fprintf(stderr, "ksym: out of memory\n");
        rc = 1;
        goto out;
    }
    for (long r = 0; r < repeat; r++) {
        struct ksym_cache_stats before = { .sz = sizeof(before) };
        struct ksym_cache_stats after = { .sz = sizeof(after) };
        ksym_cache_stats(c, &before);
        int n = ksym_cache_resolve(c, (const char *const *)argv, (size_t)argc, addrs, errs);
        if (n < 0) {
            rc = fail("resolve");
            goto out;
        }
        ksym_cache_stats(c, &after);
        for (int i = 0; i < argc && r == 0; i++) {
            if (errs[i] == 0)
                printf("%016" PRIx64 " %s\n", addrs[i], argv[i]);
            else if (errs[i] == KSYM_ERR_AMBIGUOUS)
                printf("%016" PRIx64 " %s (ambiguous: the lowest of several addresses)\n", addrs[i], argv[i]);
            else
                printf("%16s %s (%s)\n", "-", argv[i], ksym_strerror(errs[i]));
            if (errs[i])
                rc = 1;
        }
        fprintf(stderr, "round %ld: %d of %d resolved, %" PRIu64 " pass(es) over kallsyms, %" PRIu64
                " hits, %" PRIu64 " misses, %" PRIu64 " cached\n",
                r + 1, n, argc, after.passes - before.passes, after.hits - before.hits,
                after.misses - before.misses, after.entries);
    }
out:
    free(addrs);
    free(errs);
    ksym_cache_free(c);
    return rc;
}

/* Whether this process sees the kernel's addresses: exit 0 yes, 1 no, 2
 * when the file cannot be read (ksym_kallsyms_shows_addresses). */
int cmd_addresses(const struct options *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *path = o->kallsyms ? o->kallsyms : "/proc/kallsyms";
    int r = ksym_kallsyms_shows_addresses(path);
    if (r < 0) {
        fail("cannot judge the addresses");
        return 2;
    }
    if (r)
        printf("real: %s shows this process the kernel's addresses\n", path);
    else
        printf("hidden: %s shows this process every address as 0 (kernel.kptr_restrict, CAP_SYSLOG)\n", path);
    return r ? 0 : 1;
}
