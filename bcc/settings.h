/* libksym-bcc: the settings read from the environment (settings.c). */
#ifndef KSYM_BCC_SETTINGS_H
#define KSYM_BCC_SETTINGS_H

/* The better answers asked for with KSYM_BCC_FIX (docs/bcc.md). */
enum {
    FIX_SYMBOLIZE = 1, /* libksym's symbolization: extents, data symbols, a stable alias */
    FIX_BUILTIN = 2,   /* built-in modules by name instead of "kernel" */
    FIX_MODULE = 4,    /* resolve_name honours its module argument */
};

struct settings {
    unsigned fixes;           /* FIX_* */
    int debug;                /* KSYM_BCC_DEBUG: 1 the "active" and exit lines, 2 also one per load */
    const char *snapshot_dir; /* KSYM_BCC_SNAPSHOT_DIR; NULL: libksym's default */
    int no_snapshot;          /* KSYM_BCC_SNAPSHOT_DIR=none */
    const char *forward_lib;  /* KSYM_BCC_FORWARD_LIB: bcc's library for user-space pids */
    const char *bcc_version;  /* KSYM_BCC_BCC_VERSION: whose answers, instead of the loaded bcc's */
};
extern struct settings ksym_bcc_settings;

/* Reads them (the library's constructor calls it first). */
void ksym_bcc_settings_read(void);

/* The fixes as words ("symbolize builtin"), or "none (bcc's answers)". */
const char *ksym_bcc_fixes_text(unsigned fixes);

#endif
