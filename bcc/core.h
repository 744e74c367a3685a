/*
 * libksym-bcc: the core level of a kernel cache (core.c): the core
 * kernel's symbols bcc keeps, from libksym's table, compact (12 bytes a
 * symbol: an offset from the first address and the name).
 */
#ifndef KSYM_BCC_CORE_H
#define KSYM_BCC_CORE_H

#include <ksym.h>
#include <stddef.h>
#include <stdint.h>

struct core_level {
    uint64_t base;      /* the first address */
    uint32_t *off;      /* address - base, ascending */
    const char **name;  /* the table's strings */
    size_t n;
};

/* Builds it from `t`: 0, or -1 with `why` set when there is none (out of
 * memory, the table cannot be listed, a symbol of a loadable module lies
 * inside its range, or it spans 4 GiB or more). */
int core_build(struct core_level *c, const struct ksym_table *t, const char **why);
void core_free(struct core_level *c);

/* bcc's answer for `addr` when the core level can give it: 1 with the name
 * of the last symbol at or below it and the offset; 0 when the address is
 * outside the core's range, or the symbol found shares its address with
 * another name (the order of bcc's unstable sort decides there). */
int core_floor(const struct core_level *c, uint64_t addr, const char **name, uint64_t *offset);

#endif
