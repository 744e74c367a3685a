/*
 * libksym-bcc: the types bcc's API and the kernel cache share. Nothing the
 * headers of bcc/ declare is exported but what libksym-bcc.map names.
 */
#ifndef KSYM_BCC_TYPES_H
#define KSYM_BCC_TYPES_H

#include <stdint.h>

/* bcc's public struct, as bcc_syms.h lays it out. */
struct bcc_symbol {
    const char *name;
    const char *demangle_name;
    const char *module;
    uint64_t offset;
};

/* Passed through to bcc untouched (user-space caches only). */
struct bcc_symbol_option;

/* One kernel symbol as bcc keeps it: its address, name and module string. */
struct ksent {
    uint64_t addr;
    const char *name;
    const char *module;
};

#endif
