/*
 * libksym-bcc: bcc's own library in the process (real.c): its functions,
 * for the caches of processes, and its version, whose answers the kernel
 * caches give.
 */
#ifndef KSYM_BCC_REAL_H
#define KSYM_BCC_REAL_H

#include "types.h"

struct bcc_api {
    void *(*symcache_new)(int, struct bcc_symbol_option *);
    void (*free_symcache)(void *, int);
    int (*resolve)(void *, uint64_t, struct bcc_symbol *);
    int (*resolve_no_demangle)(void *, uint64_t, struct bcc_symbol *);
    int (*resolve_name)(void *, const char *, const char *, uint64_t *);
    void (*refresh)(void *);
};

/* This library's own bcc_symcache_new (shim.c's), which a library that
 * only passes ours on (the interposer) exports too: given once, by shim.c's
 * constructor, before anything here is asked (real.c then names nothing
 * of shim.c's). */
void ksym_bcc_real_own(void *(*symcache_new)(int, struct bcc_symbol_option *));

/* bcc's functions: from the bcc library already in the process (the
 * preloaded tool's, or the one behind the interposer), else from
 * KSYM_BCC_FORWARD_LIB, libbcc_bpf.so.0 or libbcc.so.0, loaded. Found once;
 * when none is, the members are NULL and one line on stderr (naming `pid`)
 * says why. */
const struct bcc_api *ksym_bcc_real_api(int pid);

/* Which bcc's answers the kernel caches give. */
struct bcc_version {
    int major, minor, patch;  /* -1 when unknown */
    const char *source;       /* "KSYM_BCC_BCC_VERSION", the library's path, or why unknown */
};

/* KSYM_BCC_BCC_VERSION=X.Y[.Z], else the version in the file name of the
 * bcc library the process has loaded (libbcc.so.0.31.0: 0.31.0), found
 * with dl_iterate_phdr (never loaded for this). Kept once known; while
 * no bcc library is in the process, looked for again at every call. */
const struct bcc_version *ksym_bcc_version(void);

/* bcc before 0.29 (commit 0fcb3461) reads /proc/kallsyms only with
 * effective uid 0; from 0.29 on any caller reads it, and lines whose
 * address it sees as 0 (kptr_restrict, no CAP_SYSLOG) are skipped. An
 * unknown version gets the newest rule. */
int ksym_bcc_reads_as_root_only(const struct bcc_version *v);

#endif
