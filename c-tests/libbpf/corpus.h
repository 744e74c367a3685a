/* The corpora the libbpf oracle tests walk: the `*.bpf.o` objects of a
 * directory, in name order. */
#ifndef KSYM_CORPUS_H
#define KSYM_CORPUS_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static int corpus_by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int corpus_is_object(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 6 && !strcmp(d->d_name + n - 6, ".bpf.o");
}

/* Is `name` selected by `only` (NULL: all; else comma-separated parts,
 * one of which `name` contains)? */
static int corpus_selected(const char *only, const char *name)
{
    if (!only)
        return 1;
    for (const char *p = only; *p;) {
        size_t w = strcspn(p, ",");
        char part[256];
        if (w > 0 && w < sizeof(part)) {
            memcpy(part, p, w);
            part[w] = 0;
            if (strstr(name, part))
                return 1;
        }
        p += w;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* Calls check(dir, file) for each object of `dir` in name order that
 * KSYM_CORPUS_ONLY selects (a selection, e.g. the guest's: loading the
 * whole corpus under qemu's emulation takes too long). Returns how many
 * objects `dir` has, selected or not; -1 when it cannot be read. */
static int corpus_each(const char *dir, void (*check)(const char *dir, const char *file))
{
    struct dirent **ents;
    const char *only = getenv("KSYM_CORPUS_ONLY");
    int n = scandir(dir, &ents, corpus_is_object, corpus_by_name);
    for (int i = 0; i < n; i++) {
        if (corpus_selected(only, ents[i]->d_name))
            check(dir, ents[i]->d_name);
        free(ents[i]);
    }
    if (n >= 0)
        free(ents);
    return n;
}

#endif
