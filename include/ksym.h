/*
 * libksym: kernel symbol lookup, module`symbol resolution, BPF ELF objects
 * relocated once for all their aliases, the kernel's BTF and attach targets.
 *
 * The main flows, in the order a program calls them (each function is
 * described in its section below):
 *
 * Kernel symbols (docs/symbols.md):
 *   ksym_table_open -> ksym_lookup, ksym_symbolize, ksym_foreach_match,
 *   ksym_table_foreach ... -> ksym_table_free
 * Many names in one pass over kallsyms, no table kept:
 *   ksym_resolve; or ksym_cache_new -> ksym_cache_resolve ... ->
 *   ksym_cache_free
 * A BPF object with aliases, loaded by the caller with bpf(2)
 * (docs/bpf-objects.md, examples/aliases.c):
 *   1. ksym_bpf_object_open
 *   2. the loader's choices: ksym_bpf_object_set_var (`.rodata` options),
 *      ksym_bpf_program_set_autoload, and with a ksym_btf_open handle
 *      ksym_bpf_program_set_attach_target or ksym_bpf_program_expand
 *   3. BPF_BTF_LOAD of ksym_bpf_object_btf_for(obj, features), the
 *      features of ksym_btf_probe_features (ksym_bpf_object_btf: the BTF
 *      of a kernel that has every kind)
 *   4. ksym_bpf_object_resolve_ksyms (untyped __ksym externs), then
 *      ksym_bpf_object_resolve_btf (attach targets, CO-RE, typed ksyms,
 *      kfuncs, `.kconfig` values)
 *   5. each map: ksym_bpf_map_info -> BPF_MAP_CREATE, its initial value
 *      written and `.rodata`/`.kconfig` frozen -> ksym_bpf_object_set_map_fd
 *      (maps of maps: ksym_bpf_map_slot)
 *   6. ksym_bpf_object_relocate
 *   7. each program whose ksym_bpf_program_autoload is on:
 *      ksym_bpf_program_attach_info, ksym_bpf_program_insns (an alias:
 *      its target's very copy; a program with per-alias constants:
 *      ksym_bpf_program_alias_insns), ksym_bpf_program_func_info, _line_info,
 *      _fd_array -> BPF_PROG_LOAD -> attach (BPF_RAW_TRACEPOINT_OPEN,
 *      BPF_LINK_CREATE, a perf event)
 *   8. ksym_bpf_object_free, ksym_btf_free (fds and links are the
 *      caller's)
 *
 * Generated from capi/src/ffi/ by cbindgen, laid out by topic by
 * capi/tools/header_layout.rs (do not edit: run `make header`). Each
 * section opens with a comment; the first, errors and conventions, holds
 * the rules every function follows. Documentation: docs/c-api.md and
 * docs/.
 */

#ifndef KSYM_H
#define KSYM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * Errors and conventions. An `int` result is 0 (or a count) on success
 * and a negative `KSYM_ERR_*` code or `-errno` on failure; a pointer
 * result is NULL on failure. Every failure records a thread-local error,
 * `ksym_last_error()` and `ksym_last_error_message()` (the file, line,
 * symbol, program or instruction and near matches), which the next
 * successful call clears. NULL where a pointer is required is
 * `KSYM_ERR_INVALID`, never a crash. Out-parameters are written only on
 * success, except where stated. Option and output structs start with
 * `size_t sz`: declare them with `KSYM_OPTS` (or set `sz` to their
 * `sizeof`). Strings returned are borrowed from their handle and live
 * until it is freed; `*_free(NULL)` does nothing. docs/c-api.md has the
 * rules in full.
 * ======================================================================== */

/* Error codes: negative errno values (capi/src/ffi/error.rs; a test keeps them in sync). */
#define KSYM_ERR_NOT_FOUND (-2)      /* -ENOENT: no such symbol / program / map / file */
#define KSYM_ERR_INVALID (-22)       /* -EINVAL: bad argument, malformed query, unknown flag, bad opts tail */
#define KSYM_ERR_AMBIGUOUS (-76)     /* -ENOTUNIQ: a name matches symbols at different addresses */
#define KSYM_ERR_RESTRICTED (-13)    /* -EACCES: addresses hidden (kptr_restrict, no CAP_SYSLOG) */
#define KSYM_ERR_FORMAT (-74)        /* -EBADMSG: malformed input (kallsyms line, ranges file, ELF, BTF) */
#define KSYM_ERR_UNSUPPORTED (-95)   /* -EOPNOTSUPP: valid input libksym does not handle (yet) */
#define KSYM_ERR_NOMEM (-12)         /* -ENOMEM: allocation failed */
#define KSYM_ERR_INTERNAL (-131)     /* -ENOTRECOVERABLE: a bug inside libksym caught at the boundary */

/*
 * Declares `struct TYPE NAME`, zero-initialised except for the fields given,
 * with NAME.sz = sizeof(struct TYPE), like libbpf's LIBBPF_OPTS:
 *
 *     KSYM_OPTS(ksym_table_opts, opts, .kallsyms_path = "/tmp/kallsyms");
 *     struct ksym_table *t = ksym_table_open(&opts);
 */
#define KSYM_OPTS(...) KSYM_OPTS_(__VA_ARGS__, )
#define KSYM_OPTS_(TYPE, NAME, ...) struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

/**
 * The code of the last failing call on this thread, 0 if the last call
 * succeeded.
 */
int ksym_last_error(void);

/**
 * A human-readable message for the last error on this thread (with file,
 * line, symbol, program, instruction index, near matches as they apply);
 * "no error" after a successful call. Valid until the next libksym call on
 * this thread (other than ksym_last_error and this function).
 */
const char *ksym_last_error_message(void);

/**
 * A static description of an error code (any negative errno works too).
 */
const char *ksym_strerror(int err);

/* ===========================================================================
 * Versions: `KSYM_VERSION_MAJOR`, `_MINOR` and `_PATCH` are the version of
 * the header, `ksym_version()` the version of the library the program
 * runs with. The soname (`libksym.so.0`) changes only when the ABI breaks;
 * while it only grows, a program built against an older header runs with
 * a newer library (see docs/c-api.md, "Versions and the soname").
 * ======================================================================== */

/**
 * Version of the header: Cargo.toml's (a build fails when they differ).
 */
#define KSYM_VERSION_MAJOR 0

#define KSYM_VERSION_MINOR 2

#define KSYM_VERSION_PATCH 0

/**
 * Version string "MAJOR.MINOR.PATCH" of the library. Static.
 */
const char *ksym_version(void);

/* ===========================================================================
 * The kernel symbol table: /proc/kallsyms (or /proc/kallmodsyms, or a file
 * or buffer of either format) read once and indexed. Lookups by `name`,
 * `module`name` or `vmlinux`name`, addresses to symbols, glob patterns.
 * A table is immutable: any number of threads may use it at once. The
 * first open of a boot (as root) writes a snapshot that later opens map
 * instead of reading /proc (docs/symbols.md, docs/snapshots.md).
 * ======================================================================== */

/**
 * A kernel symbol table (opaque). Immutable once opened: any number of
 * threads may use it at once.
 */
struct ksym_table;

/**
 * Options of `ksym_table_open` and `ksym_cache_new`. Declare with
 * `KSYM_OPTS(ksym_table_opts, opts, .field = value)`; NULL means defaults.
 */
struct ksym_table_opts {
    /**
     * sizeof(struct ksym_table_opts), set by KSYM_OPTS.
     */
    size_t sz;
    /**
     * NULL: /proc/kallmodsyms if it exists, else /proc/kallsyms; either
     * format, recognised from the content.
     */
    const char *kallsyms_path;
    /**
     * NULL: /lib/modules/$(uname -r)/modules.builtin.ranges if it exists
     * (ksym_table_open only; buffers use none unless named); "": none.
     */
    const char *builtin_ranges_path;
    /**
     * NULL: none; path of a vmlinux ELF for exact sizes.
     */
    const char *vmlinux_path;
    /**
     * NULL: /proc/modules; what ksym_cache watches to notice module changes.
     */
    const char *modules_path;
    /**
     * KSYM_TABLE_* flags (KSYM_TABLE_NO_SNAPSHOT).
     */
    unsigned int flags;
    /**
     * Reserved: must be zero (KSYM_OPTS makes it so).
     */
    unsigned int reserved;
    /**
     * Where table snapshots live. NULL: /run/ksym. It must be a
     * directory owned by the effective uid (0) with no group or other
     * permission, or not exist (it is then made 0700).
     */
    const char *snapshot_dir;
};

/**
 * ksym_table_opts.flags: neither read nor write a table snapshot.
 *
 * By default ksym_table_open, as root reading real addresses, maps a
 * snapshot of the table written by an earlier open in the same boot
 * (checked against the boot id, the kernel, the source file and the
 * loadable modules of /proc/modules) instead of reading /proc/kallsyms,
 * and writes one when there is none. The answers are the same: queries
 * that may involve BPF, ftrace or kprobe symbols (a pseudo-module, their
 * name shapes, a pattern that may match them, an address outside the
 * kernel's and its modules' ranges, the module list) are answered from a
 * fresh read, made when first needed.
 */
#define KSYM_TABLE_NO_SNAPSHOT 1

/**
 * All `KSYM_TABLE_*` flags this version knows.
 */
#define KSYM_TABLE_FLAGS_ALL KSYM_TABLE_NO_SNAPSHOT

/**
 * Reads and indexes the kernel symbol table. NULL on failure (see
 * ksym_last_error): KSYM_ERR_RESTRICTED when addresses are hidden,
 * KSYM_ERR_FORMAT for a malformed line (the message names it), a negative
 * errno for I/O.
 *
 * # Safety
 * `opts` is NULL or points to a `struct ksym_table_opts` of at least `opts->sz` bytes whose
 * strings are NULL or NUL-terminated.
 */
struct ksym_table *ksym_table_open(const struct ksym_table_opts *opts);

/**
 * Indexes a copy of `len` bytes of kallsyms (or kallmodsyms) text. The
 * caller's buffer is not kept. opts->kallsyms_path is ignored.
 *
 * # Safety
 * `buf` is NULL or readable for `len` bytes; `opts` is NULL or points to a `struct
 * ksym_table_opts` of at least `opts->sz` bytes whose strings are NULL or NUL-terminated.
 */
struct ksym_table *ksym_table_from_buffer(const char *buf,
                                          size_t len,
                                          const struct ksym_table_opts *opts);

/**
 * Frees a table (NULL is a no-op). Strings it returned become invalid.
 *
 * # Safety
 * `table` is NULL or a handle from `ksym_table_open` or `ksym_table_from_buffer`, not freed
 * already; it is not used afterwards.
 */
void ksym_table_free(struct ksym_table *table);

/**
 * Number of symbols (lines of the file). 0 for NULL.
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 */
size_t ksym_table_count(const struct ksym_table *table);

/**
 * A symbol. Strings are borrowed from the table and live until it is freed.
 */
struct ksym_symbol {
    uint64_t addr;
    /**
     * 0 when unknown; see flags.
     */
    uint64_t size;
    const char *name;
    /**
     * "vmlinux" for the core kernel, else the module (loadable, built-in or pseudo).
     */
    const char *module;
    /**
     * nm letter as printed by the kernel: 't', 'T', 'd', 'W', ...
     */
    char type;
    /**
     * Reserved: written zero.
     */
    uint8_t reserved[3];
    /**
     * KSYM_SYM_BUILTIN (module is built in), KSYM_SYM_SIZE_EXACT (size from ELF or
     * kallmodsyms).
     */
    unsigned int flags;
};

/**
 * `ksym_symbol.flags`: the module is built into the kernel.
 */
#define KSYM_SYM_BUILTIN 1

/**
 * `ksym_symbol.flags`: the size is exact (vmlinux ELF or kallmodsyms).
 */
#define KSYM_SYM_SIZE_EXACT 2

/**
 * Looks up "name", "module`name" or "vmlinux`name" exactly.
 * 0: found (all matches share one address; out = the first in kernel
 * order); KSYM_ERR_AMBIGUOUS: matches at different addresses (out = the one
 * at the lowest address); KSYM_ERR_NOT_FOUND (the message lists near
 * matches); KSYM_ERR_INVALID for a malformed query.
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 * `query` is NULL or a NUL-terminated string; `out` is NULL or points to a writable `struct
 * ksym_symbol`.
 */
int ksym_lookup(const struct ksym_table *table, const char *query, struct ksym_symbol *out);

/**
 * Writes up to `cap` matches (ordered by address) and returns the total
 * number of matches, which may exceed `cap`; 0 when none. `out` may be NULL
 * when `cap` is 0. Identical duplicate lines count once.
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 * `query` is NULL or a NUL-terminated string; `out` is NULL or points to `cap` writable
 * `struct ksym_symbol`.
 */
int ksym_lookup_all(const struct ksym_table *table,
                    const char *query,
                    struct ksym_symbol *out,
                    size_t cap);

/**
 * addr -> the symbol containing it and the offset into it (`offset` may be
 * NULL). KSYM_ERR_NOT_FOUND below the first symbol, past the last symbol of
 * a region (module, pseudo-module, core image) and, with exact sizes, in a
 * gap between symbols. Among several names at one address: global before
 * local, then not `__pfx_`, then kernel order.
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 * `out` is NULL or points to a writable `struct ksym_symbol`; `offset` is NULL or points to a
 * writable `uint64_t`.
 */
int ksym_symbolize(const struct ksym_table *table,
                   uint64_t addr,
                   struct ksym_symbol *out,
                   uint64_t *offset);

/**
 * A stack: every address of `addrs[0..n]` (any order, repeats allowed)
 * symbolized as ksym_symbolize would, in one call. For each `i`: `errs[i]`
 * is 0 and `out[i]` (and `offsets[i]`, when `offsets` is not NULL) the
 * symbol and offset, or `errs[i]` is the code ksym_symbolize returns for
 * that address (KSYM_ERR_NOT_FOUND below the first symbol, past the end of
 * a region, in a gap) and `out[i]`, `offsets[i]` are left as they were:
 * one bad frame fails no other. Returns how many addresses were found, or
 * a negative code when the call itself fails (NULL `table`, NULL `addrs`,
 * `out` or `errs` with `n` > 0, `n` > INT_MAX: KSYM_ERR_INVALID), then
 * writing nothing. A failed frame records no message: ksym_symbolize of
 * its address gives it. The addresses are searched in groups whose memory
 * loads overlap: a stack costs less than its addresses one call each
 * (docs/performance.md) (0.3).
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed). `addrs` is NULL or readable for `n` values; `out` and `errs` are NULL or writable
 * for `n` elements; `offsets` is NULL or writable for `n` values.
 */
int ksym_symbolize_stack(const struct ksym_table *table,
                         const uint64_t *addrs,
                         size_t n,
                         struct ksym_symbol *out,
                         uint64_t *offsets,
                         int *errs);

/**
 * Does this process see the kernel's real addresses in `kallsyms_path`
 * (NULL: /proc/kallsyms)? Judged from its first lines, as snapshots are
 * (at most 4 KiB read, and a reader that sees them stops at the first
 * line with a non-zero address): a restricted reader sees every address as
 * zero; the first line alone cannot tell (on x86-64 distribution kernels
 * it is `0000000000000000 A fixed_percpu_data` even for root). 1: real
 * addresses; 0: all zero (kernel.kptr_restrict, no CAP_SYSLOG:
 * ksym_table_open would fail with KSYM_ERR_RESTRICTED); KSYM_ERR_FORMAT
 * when the first line is not a kallsyms line; a negative errno when the
 * file cannot be read. `ksym addresses` is this call on the command line
 * (0.3).
 *
 * # Safety
 * `kallsyms_path` is NULL or a NUL-terminated string.
 */
int ksym_kallsyms_shows_addresses(const char *kallsyms_path);

/**
 * The callback of ksym_foreach_match: return non-zero to stop.
 */
typedef int (*ksym_match_cb)(const struct ksym_symbol *sym, void *ctx);

/**
 * Calls `cb` for every symbol matching `pattern` ("glob" or
 * "modglob`glob", with * ? [...]), absolute symbols first, then in address
 * order. Stops early and returns cb's value when cb returns non-zero;
 * returns 0 after the last one.
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 * `pattern` is NULL or a NUL-terminated string; `cb`, if not NULL, may be called with `ctx`
 * and a symbol valid during the call.
 */
int ksym_foreach_match(const struct ksym_table *table,
                       const char *pattern,
                       ksym_match_cb cb,
                       void *ctx);

/**
 * ksym_table_foreach flags: the order of the source file (the kernel's
 * order) instead of the table's (absolute symbols first, then by address)
 * (0.3).
 */
#define KSYM_FOREACH_FILE_ORDER 1

/**
 * ksym_table_foreach flags: without the pseudo-module symbols (BPF
 * programs, ftrace trampolines, kprobe pages), which come and go while the
 * system runs; a table from a snapshot then answers itself, with no read
 * (0.3).
 */
#define KSYM_FOREACH_NO_PSEUDO 2

/**
 * All `KSYM_FOREACH_*` flags this version knows.
 */
#define KSYM_FOREACH_FLAGS_ALL (KSYM_FOREACH_FILE_ORDER | KSYM_FOREACH_NO_PSEUDO)

/**
 * Calls `cb` for every symbol of the table (0.3): in table order, or with
 * KSYM_FOREACH_FILE_ORDER in the order of the lines of the source file,
 * which is what an unstable sort by address (bcc's) needs to be reproduced.
 * A table from a snapshot calls it with a fresh read's symbols (made when
 * first needed) unless KSYM_FOREACH_NO_PSEUDO leaves out the only ones a
 * snapshot cannot vouch for. Stops early and returns cb's value when cb
 * returns non-zero; returns 0 after the last one. KSYM_ERR_INVALID for
 * unknown flags.
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed); `cb`, if not NULL, may be called with `ctx` and a symbol valid during the call.
 */
int ksym_table_foreach(const struct ksym_table *table,
                       unsigned int flags,
                       ksym_match_cb cb,
                       void *ctx);

/**
 * Facts about a table. Output struct: set `sz`.
 */
struct ksym_table_stats {
    /**
     * sizeof(struct ksym_table_stats), set by the caller.
     */
    size_t sz;
    size_t symbols;
    size_t modules;
    /**
     * Bytes of kallsyms text.
     */
    size_t file_bytes;
    /**
     * Bytes of memory the table holds.
     */
    size_t memory_bytes;
    /**
     * Time to read the file (0 for buffers).
     */
    uint64_t read_ns;
    /**
     * Time spent parsing (overlapping the read, for files) and indexing.
     */
    uint64_t parse_ns;
    /**
     * Time spent on built-in module attribution and sizes.
     */
    uint64_t attribution_ns;
    /**
     * KSYM_STATS_* bits.
     */
    unsigned int flags;
    /**
     * Reserved: written zero.
     */
    unsigned int reserved;
};

/**
 * ksym_table_stats.flags: the table was read from /proc/kallmodsyms text.
 */
#define KSYM_STATS_KALLMODSYMS 1

/**
 * ksym_table_stats.flags: a modules.builtin.ranges file was applied.
 */
#define KSYM_STATS_BUILTIN_RANGES 2

/**
 * ksym_table_stats.flags: sizes come from a vmlinux ELF.
 */
#define KSYM_STATS_VMLINUX_SIZES 4

/**
 * ksym_table_stats.flags: this table came from a snapshot.
 */
#define KSYM_STATS_SNAPSHOT 8

/**
 * ksym_table_stats.flags: this open writes a new snapshot: its text while
 * the source was read, the rest in a thread of the library after the open
 * returned, done before the process's next ksym_table_open and before it
 * exits.
 */
#define KSYM_STATS_SNAPSHOT_WRITTEN 16

/**
 * Fills `out` (set out->sz first) with counts, memory and timings.
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_table_stats(const struct ksym_table *table, struct ksym_table_stats *out);

/**
 * Number of diagnostics: notes about the table that were not errors (a
 * built-in ranges section skipped because its anchor is missing, ...).
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 */
size_t ksym_table_diagnostic_count(const struct ksym_table *table);

/**
 * Diagnostic `i`, borrowed from the table; NULL when out of range.
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 */
const char *ksym_table_diagnostic(const struct ksym_table *table, size_t i);

/* ===========================================================================
 * Modules of a table: the core kernel (module 0, `vmlinux`), loadable
 * modules, modules built into the kernel image (from /proc/kallmodsyms or
 * modules.builtin.ranges) and pseudo-modules (`[bpf]`,
 * `[__builtin__ftrace]`), each with its kind, symbol count and address
 * range.
 * ======================================================================== */

/**
 * Number of modules of a table, `vmlinux` included (it is module 0).
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 */
size_t ksym_table_module_count(const struct ksym_table *table);

/**
 * What a module is (ksym_module_info.kind).
 */
enum ksym_module_kind {
    /**
     * The core kernel.
     */
    KSYM_MODULE_VMLINUX = 0,
    /**
     * A loadable module ([ext4] in /proc/kallsyms).
     */
    KSYM_MODULE_LOADABLE = 1,
    /**
     * Built into the kernel image (kallmodsyms or modules.builtin.ranges).
     */
    KSYM_MODULE_BUILTIN = 2,
    /**
     * [bpf], [__builtin__ftrace], [__builtin__kprobes].
     */
    KSYM_MODULE_PSEUDO = 3,
};

/**
 * A module of a table. Output struct: set `sz`.
 */
struct ksym_module_info {
    /**
     * sizeof(struct ksym_module_info), set by the caller.
     */
    size_t sz;
    /**
     * Borrowed from the table.
     */
    const char *name;
    /**
     * enum ksym_module_kind.
     */
    int kind;
    /**
     * Reserved: written zero.
     */
    unsigned int reserved;
    /**
     * Symbols attributed to it.
     */
    size_t symbols;
    /**
     * Lowest and highest symbol address (absolute symbols excluded; 0 when none).
     */
    uint64_t lo;
    uint64_t hi;
};

/**
 * Describes module `i` (0 is vmlinux, then in order of appearance).
 *
 * # Safety
 * `table` is NULL or a live handle (from `ksym_table_open` or `ksym_table_from_buffer`, not
 * freed).
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_table_module(const struct ksym_table *table, size_t i, struct ksym_module_info *out);

/* ===========================================================================
 * Batch resolution and the cache. `ksym_resolve` answers many queries in
 * one streaming pass over kallsyms and keeps nothing; a `ksym_cache`
 * keeps the answers asked for, serves them again without I/O, and drops
 * exactly those a module load or unload affects. A cache is internally
 * synchronised (docs/symbols.md).
 * ======================================================================== */

/**
 * One streaming pass over `kallsyms_path` (NULL: /proc/kallsyms, with
 * /lib/modules/$(uname -r)/modules.builtin.ranges when it exists) for `n`
 * queries, keeping no table. `addrs[i]` and `errs[i]` (0,
 * KSYM_ERR_NOT_FOUND, KSYM_ERR_AMBIGUOUS) are written for every i; a query
 * not found gets address 0, an ambiguous one the lowest address. Returns
 * the number of queries resolved, or a negative code when the whole call
 * failed (I/O, restricted, malformed file, malformed query).
 *
 * # Safety
 * `kallsyms_path` is NULL or a NUL-terminated string; `queries` is NULL or points to `n`
 * pointers, each NULL or a NUL-terminated string; `addrs` and `errs` are NULL or point to `n`
 * writable elements each.
 */
int ksym_resolve(const char *kallsyms_path,
                 const char *const *queries,
                 size_t n,
                 uint64_t *addrs,
                 int *errs);

/**
 * A pull-through cache of resolved names (opaque). Internally synchronised:
 * any number of threads may use one at once.
 */
struct ksym_cache;

/**
 * A cache reading what `opts` names (NULL: defaults): kallsyms_path,
 * builtin_ranges_path and modules_path (what it watches to notice module
 * changes); vmlinux_path is not used. Reads nothing until the first call.
 *
 * # Safety
 * `opts` is NULL or points to a `struct ksym_table_opts` of at least `opts->sz` bytes whose
 * strings are NULL or NUL-terminated.
 */
struct ksym_cache *ksym_cache_new(const struct ksym_table_opts *opts);

/**
 * Frees a cache (NULL is a no-op).
 *
 * # Safety
 * `cache` is NULL or a handle from `ksym_cache_new`, not freed already; it is not used
 * afterwards.
 */
void ksym_cache_free(struct ksym_cache *cache);

/**
 * Same contract as ksym_resolve. Answers already cached cost no read of
 * kallsyms; the misses of one call are resolved in one pass; only
 * requested names are kept, and only as long as the modules they depend on
 * do not change (checked against /proc/modules on each call).
 *
 * # Safety
 * `cache` is NULL or a live handle from `ksym_cache_new`, not freed.
 * `queries` is NULL or points to `n` pointers, each NULL or a NUL-terminated string; `addrs`
 * and `errs` are NULL or point to `n` writable elements each.
 */
int ksym_cache_resolve(struct ksym_cache *cache,
                       const char *const *queries,
                       size_t n,
                       uint64_t *addrs,
                       int *errs);

/**
 * Drops every cached answer (NULL is a no-op).
 *
 * # Safety
 * `cache` is NULL or a live handle from `ksym_cache_new`, not freed.
 */
void ksym_cache_invalidate(struct ksym_cache *cache);

/**
 * Counters of a cache. Output struct: set `sz`.
 */
struct ksym_cache_stats {
    /**
     * sizeof(struct ksym_cache_stats), set by the caller.
     */
    size_t sz;
    /**
     * Queries answered from the cache.
     */
    uint64_t hits;
    /**
     * Queries that needed a pass over kallsyms.
     */
    uint64_t misses;
    /**
     * Passes over kallsyms.
     */
    uint64_t passes;
    /**
     * Answers held now.
     */
    uint64_t entries;
    /**
     * Answers dropped because modules changed.
     */
    uint64_t dropped;
    /**
     * Reads of the modules file.
     */
    uint64_t module_checks;
};

/**
 * Fills `out` (set out->sz first) with the cache's counters.
 *
 * # Safety
 * `cache` is NULL or a live handle from `ksym_cache_new`, not freed.
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_cache_stats(const struct ksym_cache *cache, struct ksym_cache_stats *out);

/* ===========================================================================
 * Kernel BTF: vmlinux's BTF and the modules', checked once (or mapped from
 * the boot's snapshot) and indexed by name. Types by `name`,
 * `module`name` or `vmlinux`name`, with the kernel's BTF object ids and
 * fds. A `ksym_btf` is what attach targets, CO-RE, typed ksyms and
 * kfuncs are resolved against; any number of threads and objects may
 * share one (docs/btf-and-attach.md).
 * ======================================================================== */

/**
 * The kernel's BTF (opaque): vmlinux's and the modules'. Internally
 * synchronised: any number of threads and objects may share one. The
 * module BTF fds it hands out (ksym_btf_type.obj_fd,
 * ksym_bpf_attach.attach_btf_obj_fd) stay open until it is freed and no
 * object resolved against it is left.
 */
struct ksym_btf;

/**
 * Options of `ksym_btf_open`. Declare with `KSYM_OPTS(ksym_btf_opts, opts,
 * ...)`; NULL means the running kernel's.
 */
struct ksym_btf_opts {
    /**
     * sizeof(struct ksym_btf_opts), set by KSYM_OPTS.
     */
    size_t sz;
    /**
     * NULL: /sys/kernel/btf/vmlinux; raw BTF or an ELF with .BTF.
     */
    const char *vmlinux_btf_path;
    /**
     * NULL: /sys/kernel/btf; "": no module BTF. Files named by module.
     */
    const char *module_btf_dir;
    /**
     * NULL: tracefs available_filter_functions(_addrs) (an unreadable
     * tracefs is no error: see ksym_btf_stats); "": do not check.
     */
    const char *filter_functions_path;
    /**
     * NULL: /proc/config.gz, else /boot/config-$(uname -r); "": none.
     */
    const char *kconfig_path;
    /**
     * KSYM_BTF_* flags (KSYM_BTF_NO_SNAPSHOT).
     */
    unsigned int flags;
    /**
     * Reserved: must be zero (KSYM_OPTS makes it so).
     */
    unsigned int reserved;
    /**
     * NULL: the running kernel's symbols (/proc/kallsyms); kallsyms text
     * for the addresses of function targets.
     */
    const char *kallsyms_path;
    /**
     * Where the snapshot of vmlinux's checked and indexed BTF lives (NULL:
     * /run/ksym; the same ownership and permission rules apply to it).
     * The running kernel's BTF gets one in /run/ksym; a vmlinux_btf_path
     * only in a snapshot_dir named here.
     */
    const char *snapshot_dir;
    /**
     * The release of the kernel the BTF is of ("6.1.0-13-amd64"; NULL:
     * the running kernel's, `uname -r`): its BPF trampoline's rules are
     * what ksym_bpf_program_expand leaves out for fentry, fexit and
     * fmod_ret (more than 6 argument registers before 6.6 on x86-64,
     * structs by value before 6.1...). Set it with another kernel's
     * vmlinux_btf_path; a release that does not start with a version
     * leaves nothing out. Nothing else reads it (name that kernel's
     * config in kconfig_path).
     */
    const char *kernel_release;
};

/**
 * ksym_btf_opts.flags: neither read nor write a snapshot of vmlinux's
 * checked and indexed BTF.
 */
#define KSYM_BTF_NO_SNAPSHOT 1

/**
 * Every KSYM_BTF_* flag of ksym_btf_opts.
 */
#define KSYM_BTF_FLAGS_ALL KSYM_BTF_NO_SNAPSHOT

/**
 * Opens the kernel's BTF: vmlinux's is read now; each module's when first
 * needed. NULL on failure: KSYM_ERR_NOT_FOUND when there is no BTF (the
 * message says what to pass), KSYM_ERR_FORMAT for malformed BTF.
 *
 * # Safety
 * `opts` is NULL or points to a `struct ksym_btf_opts` of at least
 * `opts->sz` bytes whose strings are NULL or NUL-terminated.
 */
struct ksym_btf *ksym_btf_open(const struct ksym_btf_opts *opts);

/**
 * Frees a ksym_btf (NULL is a no-op). Objects resolved against it keep
 * what they need (the module BTF fds) until they are freed.
 *
 * # Safety
 * `btf` is NULL or a handle from `ksym_btf_open`, not freed already; it
 * is not used afterwards.
 */
void ksym_btf_free(struct ksym_btf *btf);

/**
 * A BTF type (output struct: set `sz`).
 */
struct ksym_btf_type {
    /**
     * sizeof(struct ksym_btf_type), set by the caller.
     */
    size_t sz;
    /**
     * Id in its BTF (module ids continue after vmlinux's, as in the kernel).
     */
    uint32_t type_id;
    /**
     * Kernel BTF object id; 0 for vmlinux or when not known (files).
     */
    uint32_t obj_id;
    /**
     * Fd of that BTF object for BPF_PROG_LOAD (0 for vmlinux; -1 when not available).
     */
    int obj_fd;
    /**
     * BTF_KIND_*.
     */
    uint32_t kind;
    /**
     * Borrowed from the ksym_btf handle.
     */
    const char *name;
    /**
     * "vmlinux" or the module; borrowed from the handle.
     */
    const char *module;
};

/**
 * Finds a type: query "name", "module`name" or "vmlinux`name" (BTF names
 * may hold spaces: "unsigned int"); kind: BTF_KIND_* or 0 for any.
 * "name" is vmlinux's if it has one (libbpf's order), else the one
 * module's that has it (KSYM_ERR_AMBIGUOUS when several do). Within one
 * BTF, the lowest id of that name and kind. KSYM_ERR_NOT_FOUND says where
 * the name is if elsewhere (another kind, another module).
 *
 * # Safety
 * `btf` is NULL or a live handle; `query` is NULL or a NUL-terminated
 * string; `out` is NULL or points to a writable struct of at least
 * `out->sz` bytes.
 */
int ksym_btf_find(struct ksym_btf *btf,
                  const char *query,
                  uint32_t kind,
                  struct ksym_btf_type *out);

/**
 * Facts about a ksym_btf (output struct: set `sz`).
 */
struct ksym_btf_stats {
    /**
     * sizeof(struct ksym_btf_stats), set by the caller.
     */
    size_t sz;
    /**
     * Types in vmlinux's BTF.
     */
    uint32_t vmlinux_types;
    /**
     * KSYM_BTF_STATS_* bits.
     */
    uint32_t flags;
    /**
     * Modules with BTF, and how many of them were read so far.
     */
    size_t modules;
    size_t modules_read;
    /**
     * Bytes of memory held by the BTF read so far.
     */
    size_t memory_bytes;
    /**
     * Functions that ksym_bpf_program_expand (fentry, fexit, fmod_ret)
     * left out so far with this handle because the running kernel's BPF
     * trampoline cannot take their prototype (too many arguments for its
     * registers, a struct of more than 16 bytes by value, a struct
     * return, variadic: docs/btf-and-attach.md). Added in 0.3.0: a
     * caller whose sz ends before it does not get it.
     */
    size_t trampoline_refused;
};

/**
 * ksym_btf_stats.flags: the filter functions were read (fentry targets
 * are checked against them).
 */
#define KSYM_BTF_STATS_FILTER_FUNCTIONS 1

/**
 * ksym_btf_stats.flags: they came with addresses (the `_addrs` file).
 */
#define KSYM_BTF_STATS_FILTER_ADDRS 2

/**
 * ksym_btf_stats.flags: tracefs could not be read (not mounted, or
 * refused): targets rely on BTF and kallsyms alone.
 */
#define KSYM_BTF_STATS_FILTER_UNAVAILABLE 4

/**
 * ksym_btf_stats.flags: the kernel's BTF object ids could be listed.
 */
#define KSYM_BTF_STATS_OBJECT_IDS 8

/**
 * ksym_btf_stats.flags: vmlinux's BTF was checked and indexed by an
 * earlier process of this boot: its snapshot was used.
 */
#define KSYM_BTF_STATS_SNAPSHOT 16

/**
 * ksym_btf_stats.flags: this open wrote that snapshot.
 */
#define KSYM_BTF_STATS_SNAPSHOT_WRITTEN 32

/**
 * Fills `out` (set out->sz first) with sizes and what was read.
 *
 * # Safety
 * `btf` is NULL or a live handle; `out` is NULL or points to a writable
 * struct of at least `out->sz` bytes.
 */
int ksym_btf_stats(const struct ksym_btf *btf, struct ksym_btf_stats *out);

/* ===========================================================================
 * BPF ELF objects: opening, programs and their aliases (symbols at one
 * address: one function, many attach points), relocation into one copy
 * of the instructions that every alias shares, the loadable BTF and each
 * program's func_info and line_info. An object is used by one thread at a
 * time (docs/bpf-objects.md; maps and externs, attach targets: the next
 * sections).
 * ======================================================================== */

/**
 * A BPF ELF object (opaque). Used by one thread at a time.
 */
struct ksym_bpf_object;

/**
 * Opens a BPF ELF object file (64-bit little-endian EM_BPF relocatable).
 * NULL on failure: KSYM_ERR_FORMAT for malformed input (the message says
 * what and where), KSYM_ERR_UNSUPPORTED for what libksym does not handle
 * yet (legacy `maps` section definitions, maps of maps of maps...).
 *
 * # Safety
 * `path` is NULL or a NUL-terminated string.
 */
struct ksym_bpf_object *ksym_bpf_object_open(const char *path);

/**
 * Opens an object from `len` bytes in memory (copied: the buffer is not kept).
 *
 * # Safety
 * `buf` is NULL or readable for `len` bytes.
 */
struct ksym_bpf_object *ksym_bpf_object_open_mem(const void *buf, size_t len);

/**
 * Frees an object (NULL is a no-op).
 *
 * # Safety
 * `obj` is NULL or a handle from `ksym_bpf_object_open*`, not freed already; it is not used
 * afterwards.
 */
void ksym_bpf_object_free(struct ksym_bpf_object *obj);

/**
 * The contents of the "license" section ("" when there is none).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
const char *ksym_bpf_object_license(const struct ksym_bpf_object *obj);

/**
 * Number of programs, aliases included.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
size_t ksym_bpf_object_program_count(const struct ksym_bpf_object *obj);

/**
 * A program (output struct: set `sz`).
 */
struct ksym_bpf_program_info {
    /**
     * sizeof(struct ksym_bpf_program_info), set by the caller.
     */
    size_t sz;
    /**
     * The symbol's name: an alias has its own name.
     */
    const char *name;
    /**
     * ELF section name, e.g. "socket", "fentry/vfs_read".
     */
    const char *section;
    /**
     * Index of the program whose instructions this one shares; its own index if none.
     */
    size_t alias_of;
    /**
     * Offset in the section, in instructions.
     */
    size_t insn_off;
    /**
     * Instructions of the function itself (before subprograms are appended).
     */
    size_t insn_cnt;
};

/**
 * Describes program `prog` (set out->sz first).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_bpf_program_info(const struct ksym_bpf_object *obj,
                          size_t prog,
                          struct ksym_bpf_program_info *out);

/**
 * Finds a program by (symbol) name.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `name` is NULL or a NUL-terminated string; `prog` is NULL or points to a writable `size_t`.
 */
int ksym_bpf_object_find_program(const struct ksym_bpf_object *obj, const char *name, size_t *prog);

/**
 * Resolves every untyped __ksym extern of the object in one pass. `cache`
 * may be NULL (one pass over /proc/kallsyms, nothing kept). A strong
 * extern not found is KSYM_ERR_NOT_FOUND (the message names it, with near
 * matches); a weak one gets 0; an ambiguous one is KSYM_ERR_AMBIGUOUS; a
 * restricted kallsyms is KSYM_ERR_RESTRICTED unless every extern is weak.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `cache` is NULL or a live handle from `ksym_cache_new` (which any thread may use at the same
 * time).
 */
int ksym_bpf_object_resolve_ksyms(struct ksym_bpf_object *obj, struct ksym_cache *cache);

/**
 * Number of relocations of a program (an alias reports its target's).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
size_t ksym_bpf_program_reloc_count(const struct ksym_bpf_object *obj, size_t prog);

/**
 * What a relocation writes.
 */
enum ksym_bpf_reloc_kind {
    /**
     * ld_imm64 <- kernel address of an extern.
     */
    KSYM_BPF_RELOC_KSYM = 1,
    /**
     * ld_imm64 <- map fd (src_reg BPF_PSEUDO_MAP_FD).
     */
    KSYM_BPF_RELOC_MAP_FD = 2,
    /**
     * ld_imm64 <- data-section map + offset (BPF_PSEUDO_MAP_VALUE).
     */
    KSYM_BPF_RELOC_MAP_VALUE = 3,
    /**
     * bpf-to-bpf call to a subprogram.
     */
    KSYM_BPF_RELOC_CALL = 4,
    /**
     * ld_imm64 <- address of a subprogram (BPF_PSEUDO_FUNC, callbacks).
     */
    KSYM_BPF_RELOC_FUNC = 5,
    /**
     * A CO-RE relocation: symbol is the local type and access string
     * as libbpf prints them ("<byte_off> [4] struct task_struct.pid (0:61
     * @ offset 2344)"), target the `enum bpf_core_relo_kind`, addend the
     * value written (after ksym_bpf_object_resolve_btf; see flags).
     */
    KSYM_BPF_RELOC_CORE = 6,
    /**
     * ld_imm64 <- BTF id of a typed ksym (BPF_PSEUDO_BTF_ID) and its
     * module's BTF fd: target the extern, addend the BTF id.
     */
    KSYM_BPF_RELOC_KSYM_BTF = 7,
    /**
     * call <- BTF id of a kfunc (BPF_PSEUDO_KFUNC_CALL; insn.off indexes
     * the fd array): target the extern, addend the BTF id.
     */
    KSYM_BPF_RELOC_KFUNC = 8,
    /**
     * ld_imm64 <- the `.kconfig` map + the extern's offset
     * (BPF_PSEUDO_MAP_VALUE): target the extern, addend the offset.
     */
    KSYM_BPF_RELOC_KCONFIG = 9,
    /**
     * ld_imm64 <- a per-alias constant (`ksym_alias_value`,
     * `ksym_alias_addr`): 0 in the shared copy, each program's or alias's
     * own value from ksym_bpf_program_alias_insns; target the extern.
     */
    KSYM_BPF_RELOC_ALIAS = 10,
};

/**
 * A relocation of a program (output struct: set `sz`).
 */
struct ksym_bpf_reloc {
    /**
     * sizeof(struct ksym_bpf_reloc), set by the caller.
     */
    size_t sz;
    /**
     * Index in the program's final instruction array.
     */
    size_t insn_idx;
    /**
     * enum ksym_bpf_reloc_kind.
     */
    int kind;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved;
    /**
     * Extern, map, data section or subprogram name.
     */
    const char *symbol;
    /**
     * Map index (MAP_*), extern index (KSYM, KSYM_BTF, KFUNC, KCONFIG),
     * final insn index of the callee (CALL, FUNC), or the CO-RE
     * relocation kind (CORE).
     */
    size_t target;
    /**
     * MAP_VALUE: the offset in the data section (`insn[1].imm`); KCONFIG:
     * the offset in the `.kconfig` map; after ksym_bpf_object_resolve_btf,
     * CORE: the value written, KSYM_BTF and KFUNC: the kernel's BTF id.
     */
    int64_t addend;
    /**
     * KSYM_BPF_RELOC_RESOLVED, KSYM_BPF_RELOC_POISONED.
     */
    uint32_t flags;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved2;
};

/**
 * ksym_bpf_reloc.flags: the value (addend) is final: resolved by
 * ksym_bpf_object_resolve_btf.
 */
#define KSYM_BPF_RELOC_RESOLVED 1

/**
 * ksym_bpf_reloc.flags: a CO-RE relocation that failed on this kernel the
 * way libbpf lets pass: its instruction becomes a call to the invalid
 * helper 0xbad2310, which the verifier reports if it is reached.
 */
#define KSYM_BPF_RELOC_POISONED 2

/**
 * Relocation `i` of a program, in final instruction indices (set out->sz first).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_bpf_program_reloc(const struct ksym_bpf_object *obj,
                           size_t prog,
                           size_t i,
                           struct ksym_bpf_reloc *out);

/**
 * Applies everything: subprograms appended (done at open), calls patched,
 * CO-RE results, map fds, data-section values, resolved ksyms, BTF ids of
 * typed ksyms and kfuncs, `.kconfig` offsets written, each time from the
 * pristine instructions: it can be called again (after changing fds).
 * Needs an fd for every map a program uses (the `.kconfig` map included),
 * ksym_bpf_object_resolve_ksyms if a program uses untyped externs, and
 * ksym_bpf_object_resolve_btf if it has CO-RE relocations, typed ksyms,
 * kfunc calls or `.kconfig` externs: KSYM_ERR_INVALID naming the program,
 * instruction and the call to make otherwise. A CO-RE relocation that
 * failed (ambiguous, an instruction that does not match its record) is
 * reported again here.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
int ksym_bpf_object_relocate(struct ksym_bpf_object *obj);

/**
 * One instruction, layout-compatible with `struct bpf_insn` from
 * `<linux/bpf.h>` (dst_reg in the low nibble of `regs`, src_reg in the high).
 */
struct ksym_bpf_insn {
    uint8_t code;
    uint8_t regs;
    int16_t off;
    int32_t imm;
};

/**
 * After relocate: the final instructions of a program and their count. An
 * alias returns the very same pointer as the program it aliases: one copy,
 * however many aliases. NULL with KSYM_ERR_INVALID before relocate.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `insn_cnt` is NULL or points to a writable `size_t`.
 */
const struct ksym_bpf_insn *ksym_bpf_program_insns(const struct ksym_bpf_object *obj,
                                                   size_t prog,
                                                   size_t *insn_cnt);

/**
 * The object's .BTF made loadable by BPF_BTF_LOAD (DATASEC sizes and VAR
 * offsets filled in from the ELF, extern VARs/FUNCs the kernel refuses
 * rewritten, as libbpf does). NULL with KSYM_ERR_NOT_FOUND when the object
 * has no BTF.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `size` is NULL or points to a writable `size_t`.
 */
const void *ksym_bpf_object_btf(const struct ksym_bpf_object *obj, size_t *size);

/**
 * The func_info records of a program's final instructions (struct
 * bpf_func_info: insn_off in final instruction indices, type_id), ready
 * for BPF_PROG_LOAD. An alias gets its target's. NULL with
 * KSYM_ERR_NOT_FOUND when the object has no BTF.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `rec_size` and `cnt` are NULL or point to a writable `size_t` each.
 */
const void *ksym_bpf_program_func_info(const struct ksym_bpf_object *obj,
                                       size_t prog,
                                       size_t *rec_size,
                                       size_t *cnt);

/**
 * The line_info records of a program's final instructions (struct
 * bpf_line_info), as for func_info.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `rec_size` and `cnt` are NULL or point to a writable `size_t` each.
 */
const void *ksym_bpf_program_line_info(const struct ksym_bpf_object *obj,
                                       size_t prog,
                                       size_t *rec_size,
                                       size_t *cnt);

/**
 * The fd array of a program's BPF_PROG_LOAD (`fd_array`): the module
 * BTF fds of its kfunc calls, which `insn.off` indexes (index 0 unused,
 * as libbpf leaves it). NULL with `*cnt` = 0 when the program calls no
 * module kfunc (or before ksym_bpf_object_resolve_btf). The array lives
 * as long as the object, until the next resolve_btf.
 *
 * # Safety
 * `obj` is NULL or a live handle; `cnt` is NULL or writable.
 */
const int *ksym_bpf_program_fd_array(const struct ksym_bpf_object *obj, size_t prog, size_t *cnt);

/* ===========================================================================
 * BTF for the running kernel: what BTF it takes (KSYM_BTF_FEAT_*, probed
 * as libbpf 1.7 probes it) and an object's loadable BTF rewritten for
 * those features, as libbpf rewrites it before BPF_BTF_LOAD. A kernel
 * refuses a whole BTF blob for one kind it does not know (5.10 has no
 * FLOAT, DECL_TAG, TYPE_TAG or ENUM64): a loader gives
 * ksym_bpf_object_btf_for(obj, features) to BPF_BTF_LOAD, with the
 * features of ksym_btf_probe_features(), and passes func_info and
 * line_info to BPF_PROG_LOAD only when they include KSYM_BTF_FEAT_FUNC.
 * ksym_bpf_object_btf() stays the BTF of a kernel that has every kind.
 * ======================================================================== */

/**
 * BTF at all (BPF_BTF_LOAD of an INT, 4.18). Without it the kernel takes
 * no BTF: load maps and programs without, as libbpf does.
 */
#define KSYM_BTF_FEAT_BTF 1

/**
 * FUNC and FUNC_PROTO (5.0); func_info and line_info with them.
 */
#define KSYM_BTF_FEAT_FUNC 2

/**
 * FUNC of global linkage (5.6).
 */
#define KSYM_BTF_FEAT_GLOBAL_FUNC 4

/**
 * VAR and DATASEC (5.2).
 */
#define KSYM_BTF_FEAT_DATASEC 8

/**
 * FLOAT (5.13).
 */
#define KSYM_BTF_FEAT_FLOAT 16

/**
 * DECL_TAG (5.16).
 */
#define KSYM_BTF_FEAT_DECL_TAG 32

/**
 * TYPE_TAG (5.17).
 */
#define KSYM_BTF_FEAT_TYPE_TAG 64

/**
 * ENUM64 and signed ENUMs (6.0).
 */
#define KSYM_BTF_FEAT_ENUM64 128

/**
 * DATASEC names that start with '?' (6.10).
 */
#define KSYM_BTF_FEAT_QMARK_DATASEC 256

/**
 * Every feature above: a kernel whose BTF needs no rewriting.
 */
#define KSYM_BTF_FEAT_ALL 511

/**
 * Writes the running kernel's BTF features (KSYM_BTF_FEAT_*) to
 * `*features`: libbpf 1.7's probes, each a tiny BTF blob given to
 * BPF_BTF_LOAD. Probed once per process (later calls cost nothing); safe
 * from any thread. 0 for a kernel that takes no BTF at all. Needs
 * CAP_BPF (or root): without, the kernel's -EPERM (nothing is written or
 * kept, where libbpf would take every feature for missing).
 *
 * # Safety
 * `features` is NULL or points to a writable `uint32_t`.
 */
int ksym_btf_probe_features(uint32_t *features);

/**
 * The object's loadable BTF (ksym_bpf_object_btf) as a kernel with only
 * `features` (KSYM_BTF_FEAT_*) takes it, what libbpf 1.7 gives
 * BPF_BTF_LOAD there: VAR and DECL_TAG become 1-byte INTs, DATASEC a
 * STRUCT (no DATASEC), FUNC_PROTO an ENUM and FUNC a TYPEDEF (no FUNC),
 * global FUNCs static, FLOAT an empty STRUCT, TYPE_TAG a CONST, ENUM64 a
 * UNION of one added INT (and ENUMs unsigned), a leading '?' of a DATASEC
 * name '_', each where the feature is missing. Every type keeps its id:
 * map key and value type ids and func_info stay valid. With every kind
 * (KSYM_BTF_FEAT_ALL), the very bytes of ksym_bpf_object_btf. The bytes
 * live as long as the object. NULL with KSYM_ERR_NOT_FOUND without
 * .BTF, KSYM_ERR_INVALID for an unknown bit, KSYM_ERR_UNSUPPORTED when
 * `features` lacks KSYM_BTF_FEAT_BTF (such a kernel takes no BTF: load
 * maps and programs without it, as libbpf does).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `size` is NULL or points to a writable `size_t`.
 */
const void *ksym_bpf_object_btf_for(const struct ksym_bpf_object *obj,
                                    uint32_t features,
                                    size_t *size);

/* ===========================================================================
 * Maps and externs of a BPF object: each map as BPF_MAP_CREATE needs it
 * (BTF-defined `.maps`, data sections, `.kconfig`, maps of maps, program
 * arrays, struct_ops), the initial slots a loader fills, and the
 * `__ksym` and `.kconfig` externs, resolved in one pass over kallsyms
 * (docs/bpf-objects.md).
 * ======================================================================== */

/**
 * Number of maps: `.maps` variables, then data sections.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
size_t ksym_bpf_object_map_count(const struct ksym_bpf_object *obj);

/**
 * A map (output struct: set `sz`).
 */
struct ksym_bpf_map_info {
    /**
     * sizeof(struct ksym_bpf_map_info), set by the caller.
     */
    size_t sz;
    /**
     * ".maps" variable name, or the data section name (".bss", ".data", ".rodata", ...).
     */
    const char *name;
    const char *section;
    uint32_t type;
    uint32_t key_size;
    uint32_t value_size;
    uint32_t max_entries;
    uint32_t map_flags;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved;
    /**
     * Data sections: initial contents (NULL for .bss and `.maps` maps);
     * `.kconfig`: its values, after ksym_bpf_object_resolve_btf.
     */
    const void *initial_value;
    size_t initial_value_size;
    /**
     * BPF_MAP_CREATE's btf_key_type_id and btf_value_type_id (with the fd
     * of ksym_bpf_object_btf loaded): the `__type(key, ...)` and
     * `__type(value, ...)` types, a data section's DATASEC. Map
     * types that take no BTF (perf event arrays, sockmaps...) ignore
     * them, as libbpf does.
     */
    uint32_t btf_key_type_id;
    uint32_t btf_value_type_id;
    /**
     * `__uint(map_extra, ...)` (bloom filters) and `__uint(numa_node, ...)`.
     */
    uint64_t map_extra;
    uint32_t numa_node;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved2;
    /**
     * Maps of maps (`__array(values, struct inner)`): the inner map's
     * type, key and value sizes, max entries and flags, for the template
     * map whose fd BPF_MAP_CREATE's inner_map_fd takes; all zero
     * otherwise.
     */
    uint32_t inner_type;
    uint32_t inner_key_size;
    uint32_t inner_value_size;
    uint32_t inner_max_entries;
    uint32_t inner_map_flags;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved3;
    /**
     * Maps of maps and program arrays: the initial slots the object gives
     * (`.values = { [i] = &map }`); struct_ops maps (after
     * ksym_bpf_object_resolve_btf): their programs. For ksym_bpf_map_slot.
     */
    size_t slot_count;
    /**
     * struct_ops maps (`SEC(".struct_ops")` variables, type 26): after
     * ksym_bpf_object_resolve_btf, BPF_MAP_CREATE's
     * btf_vmlinux_value_type_id (the kernel's `struct
     * bpf_struct_ops_<name>`, whose size `value_size` then is; create the
     * map with the object's BTF fd and key/value type ids 0), 0 otherwise.
     */
    uint32_t btf_vmlinux_value_type_id;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved4;
    /**
     * struct_ops maps, after ksym_bpf_object_resolve_btf: the value that
     * registers them (the object's data at the kernel's offsets), to be
     * written with BPF_MAP_UPDATE_ELEM at key 0 once the programs are
     * loaded and their fds put at the KSYM_BPF_SLOT_STRUCT_OPS slots, not
     * when the map is created (registering is attaching); with
     * `map_flags` BPF_F_LINK (`.struct_ops.link`), BPF_LINK_CREATE on the
     * map then attaches it. NULL otherwise.
     */
    const void *struct_ops_value;
    size_t struct_ops_value_size;
    /**
     * Maps of maps: the inner map's `__type(key, ...)` and `__type(value,
     * ...)` BTF ids, for the template map as libbpf creates it (with the
     * object's BTF fd). Kernels check an inner map's BTF-described fields
     * (timers, kptrs) against the template's, and some map types (task,
     * inode, socket storage) cannot be created without BTF at all. 0
     * otherwise.
     */
    uint32_t inner_btf_key_type_id;
    uint32_t inner_btf_value_type_id;
};

/**
 * Describes map `map` (set out->sz first).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_bpf_map_info(const struct ksym_bpf_object *obj, size_t map, struct ksym_bpf_map_info *out);

/**
 * What an initial slot holds (`ksym_bpf_map_slot.kind`).
 */
enum ksym_bpf_slot_kind {
    /**
     * A map of the object (a map of maps): put its fd in the slot.
     */
    KSYM_BPF_SLOT_MAP = 1,
    /**
     * A program of the object (a program array): put its fd in the slot.
     */
    KSYM_BPF_SLOT_PROGRAM = 2,
    /**
     * A program of a struct_ops map (after ksym_bpf_object_resolve_btf):
     * its fd, as a 64-bit integer, goes at byte `index` of a copy of
     * `struct_ops_value`, which BPF_MAP_UPDATE_ELEM (key 0) then writes
     * to register the struct_ops.
     */
    KSYM_BPF_SLOT_STRUCT_OPS = 3,
};

/**
 * An initial slot of a map of maps or a program array (output struct:
 * set `sz`): after creating the maps (and, for programs, loading them),
 * the loader writes `target`'s fd at key `index`, as libbpf does.
 */
struct ksym_bpf_map_slot {
    /**
     * sizeof(struct ksym_bpf_map_slot), set by the caller.
     */
    size_t sz;
    /**
     * The key (slot) to set.
     */
    uint32_t index;
    enum ksym_bpf_slot_kind kind;
    /**
     * A map index (KSYM_BPF_SLOT_MAP) or program index (KSYM_BPF_SLOT_PROGRAM).
     */
    size_t target;
};

/**
 * Describes initial slot `slot` of map `map` (set out->sz first); slots
 * are in key order.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_bpf_map_slot(const struct ksym_bpf_object *obj,
                      size_t map,
                      size_t slot,
                      struct ksym_bpf_map_slot *out);

/**
 * Finds a map by name.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `name` is NULL or a NUL-terminated string; `map` is NULL or points to a writable `size_t`.
 */
int ksym_bpf_object_find_map(const struct ksym_bpf_object *obj, const char *name, size_t *map);

/**
 * Gives map `map` the fd of the kernel map created for it (used by
 * ksym_bpf_object_relocate; libksym does not own or close it).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
int ksym_bpf_object_set_map_fd(struct ksym_bpf_object *obj, size_t map, int fd);

/**
 * Number of externs: `__ksym` (untyped and typed), kfuncs and `.kconfig`
 * (ksym_bpf_extern_info says which).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
size_t ksym_bpf_object_extern_count(const struct ksym_bpf_object *obj);

/**
 * What an extern is (`ksym_bpf_extern_info.kind`).
 */
enum ksym_bpf_extern_kind {
    /**
     * `extern const void x __ksym;`: its address, by ksym_bpf_object_resolve_ksyms.
     */
    KSYM_BPF_EXTERN_KSYM = 1,
    /**
     * A typed `__ksym` variable: its BTF id, by ksym_bpf_object_resolve_btf.
     */
    KSYM_BPF_EXTERN_KSYM_BTF = 2,
    /**
     * A kfunc (an extern function in `.ksyms`): its BTF id, by resolve_btf.
     */
    KSYM_BPF_EXTERN_KFUNC = 3,
    /**
     * A `.kconfig` variable: its value in the `.kconfig` map, by resolve_btf.
     */
    KSYM_BPF_EXTERN_KCONFIG = 4,
    /**
     * `extern const void ksym_alias_value __ksym __weak;`: a per-alias
     * constant, each program's or alias's value (ksym_bpf_program_alias_insns).
     */
    KSYM_BPF_EXTERN_ALIAS_VALUE = 5,
    /**
     * `extern const void ksym_alias_addr __ksym __weak;`: a per-alias
     * constant, the address of the function each program or alias attaches to.
     */
    KSYM_BPF_EXTERN_ALIAS_ADDR = 6,
};

/**
 * An extern of the object (output struct: set `sz`).
 */
struct ksym_bpf_extern_info {
    /**
     * sizeof(struct ksym_bpf_extern_info), set by the caller.
     */
    size_t sz;
    /**
     * May be module-qualified ("ext4`ext4_file_open") via an asm label.
     */
    const char *name;
    bool weak;
    /**
     * KSYM: found in kallsyms by ksym_bpf_object_resolve_ksyms; KSYM_BTF,
     * KFUNC: found in the kernel's BTF; KCONFIG: its value was set (both
     * by ksym_bpf_object_resolve_btf); ALIAS_*: always (libksym writes them).
     */
    bool resolved;
    /**
     * Reserved: written zero.
     */
    uint8_t reserved[6];
    /**
     * KSYM: after ksym_bpf_object_resolve_ksyms (0 for a weak extern not found).
     */
    uint64_t addr;
    /**
     * enum ksym_bpf_extern_kind.
     */
    uint32_t kind;
    /**
     * KSYM_BTF, KFUNC: the kernel's BTF id (0: not resolved).
     */
    uint32_t btf_id;
    /**
     * KSYM_BTF, KFUNC: 0 for vmlinux, the module's BTF fd, -1 when it has
     * none here (BTF read from files).
     */
    int btf_obj_fd;
    /**
     * KCONFIG: the offset of its value in the `.kconfig` map; KFUNC: the
     * index of its module's fd in the program's fd array (0 for vmlinux).
     */
    uint32_t offset;
    /**
     * KSYM_BTF, KFUNC: "vmlinux" or the module it was found in; NULL
     * before resolution or when not found.
     */
    const char *module;
};

/**
 * Describes extern `ext` (set out->sz first).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_bpf_extern_info(const struct ksym_bpf_object *obj,
                         size_t ext,
                         struct ksym_bpf_extern_info *out);

/* ===========================================================================
 * Variables of a BPF object's data sections (`.rodata`, `.data`, `.bss`
 * and their `.name` variants): where each lives in its section's map, and
 * how a loader sets them before it creates that map, as a libbpf
 * skeleton's `obj->rodata->targ_pid = pid` does. A tool's options are
 * often `const volatile` variables in `.rodata`, which the verifier reads
 * as constants: set them here, then create the map from
 * `ksym_bpf_map_info.initial_value` (docs/bpf-objects.md, "Variables").
 * ======================================================================== */

/**
 * The variable is global (`BTF_VAR_GLOBAL_ALLOCATED`): not `static`, not
 * hidden (`ksym_bpf_var_info.flags`).
 */
#define KSYM_BPF_VAR_GLOBAL 1

/**
 * Number of variables in the object's data sections, by map, then offset.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
size_t ksym_bpf_object_var_count(const struct ksym_bpf_object *obj);

/**
 * A variable of a data section (output struct: set `sz`).
 */
struct ksym_bpf_var_info {
    /**
     * sizeof(struct ksym_bpf_var_info), set by the caller.
     */
    size_t sz;
    const char *name;
    /**
     * The data section's map (ksym_bpf_map_info: its name is the section's).
     */
    size_t map;
    /**
     * Where it is in the map's value, in bytes, as the object's BTF
     * places it (offsets from the ELF where clang left them zero, as libbpf
     * fixes them).
     */
    size_t offset;
    size_t size;
    /**
     * Its type in the object's BTF (ksym_bpf_object_btf).
     */
    uint32_t btf_type_id;
    /**
     * KSYM_BPF_VAR_*.
     */
    uint32_t flags;
};

/**
 * Describes variable `var` (set out->sz first).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `out` is NULL or points to a writable struct of at least `out->sz` bytes.
 */
int ksym_bpf_var_info(const struct ksym_bpf_object *obj, size_t var, struct ksym_bpf_var_info *out);

/**
 * Finds a variable by name. KSYM_ERR_NOT_FOUND lists the object's
 * variables; KSYM_ERR_AMBIGUOUS when several share the name (`static`
 * ones of files linked into one object), saying where each is: set their
 * section with ksym_bpf_map_set_initial_value then.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `name` is NULL or a NUL-terminated string; `var` is NULL or points to a writable `size_t`.
 */
int ksym_bpf_object_find_var(const struct ksym_bpf_object *obj, const char *name, size_t *var);

/**
 * Sets variable `name` to the `size` bytes at `value` (`size` must be the
 * variable's) in its map's initial value, which ksym_bpf_map_info then
 * gives: call it before creating that map (after
 * ksym_bpf_object_set_map_fd it is KSYM_ERR_INVALID). A `.bss` variable
 * gives `.bss` an initial value (zero elsewhere), which the loader writes
 * with BPF_MAP_UPDATE_ELEM as for any data section. Not for `.kconfig`
 * externs, which ksym_bpf_object_resolve_btf fills in.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `name` is NULL or a NUL-terminated string; `value` is NULL or readable for `size` bytes.
 */
int ksym_bpf_object_set_var(struct ksym_bpf_object *obj,
                            const char *name,
                            const void *value,
                            size_t size);

/**
 * Sets the whole initial value of data-section map `map` (`size` must be
 * its value size), before creating it, as libbpf's
 * bpf_map__set_initial_value; KSYM_ERR_INVALID for a map that is not a
 * data section's (`.maps` maps, `.kconfig`) or was created already.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `data` is NULL or readable for `size` bytes.
 */
int ksym_bpf_map_set_initial_value(struct ksym_bpf_object *obj,
                                   size_t map,
                                   const void *data,
                                   size_t size);

/* ===========================================================================
 * Attach targets. `ksym_bpf_object_resolve_btf` resolves all of an object
 * that needs the kernel's BTF (attach targets, CO-RE, typed ksyms,
 * kfuncs, `.kconfig`); each program and alias then says where it
 * attaches. A program or alias can be given its own target, or expanded
 * into one alias per kernel function or tracepoint matching a pattern
 * (docs/btf-and-attach.md).
 * ======================================================================== */

/**
 * Everything that needs the kernel's BTF, for every program and alias
 * of the object, in one call: attach targets (BTF ids of fentry/fexit/
 * fmod_ret/lsm/iter/tp_btf targets, with the module BTF fd; addresses of
 * function targets from kallsyms); CO-RE relocations, as libbpf resolves
 * them (candidates by essential name in vmlinux, else in the modules),
 * each instruction once however many programs and aliases share it;
 * typed ksyms and kfuncs (BTF ids checked against the local types, module
 * BTF fds, the fd array); `.kconfig` externs (the `.kconfig` map's
 * initial value: call this before creating that map). `btf` NULL: the
 * running kernel's, opened inside the call (the object keeps what it
 * needs of it). Every part is tried; the first failure is reported
 * (KSYM_ERR_NOT_FOUND naming program, section and target, and where the
 * name is if elsewhere; KSYM_ERR_FORMAT for CO-RE records that do not fit
 * the object; KSYM_ERR_NOT_FOUND for a strong extern missing), and
 * ksym_bpf_object_relocate reports a CO-RE or extern failure again.
 *
 * # Safety
 * `obj` is NULL or a live handle used by no other thread during the call;
 * `btf` is NULL or a live `ksym_btf` handle.
 */
int ksym_bpf_object_resolve_btf(struct ksym_bpf_object *obj, struct ksym_btf *btf);

/**
 * Where a program or alias attaches (output struct: set `sz`).
 */
struct ksym_bpf_attach {
    /**
     * sizeof(struct ksym_bpf_attach), set by the caller.
     */
    size_t sz;
    /**
     * enum bpf_prog_type (0: a section libbpf does not know).
     */
    uint32_t prog_type;
    /**
     * enum bpf_attach_type.
     */
    uint32_t expected_attach_type;
    /**
     * 0 when the type needs none (or before ksym_bpf_object_resolve_btf).
     */
    uint32_t attach_btf_id;
    /**
     * 0 for vmlinux; -1 when the module's BTF object has no fd (BTF from files).
     */
    int attach_btf_obj_fd;
    /**
     * "vfs_read", "sched_switch", ...; NULL if none. A tracepoint section
     * (`tracepoint/sched/sched_switch`, `tp/...`) gives the event's name
     * here and its category in tp_category.
     */
    const char *target;
    /**
     * Module of the target, "vmlinux" for the core (known after resolution
     * unless the section names one); NULL if none.
     */
    const char *module;
    /**
     * Kernel address of a function target (after resolution); 0 if none.
     */
    uint64_t addr;
    /**
     * KSYM_ATTACH_*.
     */
    uint32_t flags;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved;
    /**
     * Why the target did not resolve, whatever the program's autoload: 0
     * when it did (or was not asked yet), else the code the call returns
     * for a program to be loaded.
     */
    int error;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved2;
    /**
     * The message of `error` (program, section, target, near matches);
     * NULL when `error` is 0. Valid until the program's target changes
     * (resolve_btf, set_attach_target) or the object is freed.
     */
    const char *error_message;
    /**
     * A kprobe section's offset into its function (`kprobe/func+0x10`:
     * 0x10, read as libbpf reads it), where the probe goes (the kprobe
     * PMU's probe_offset); 0 otherwise, and for a target set with
     * ksym_bpf_program_set_attach_target. A `kretprobe` section with an
     * offset is the program's error (libbpf refuses to attach it).
     */
    uint64_t target_offset;
    /**
     * A tracepoint section's category, known from the section alone:
     * `tracepoint/sched/sched_switch` (or `tp/sched/sched_switch`) gives
     * "sched", and target "sched_switch": the event is tracefs'
     * `events/sched/sched_switch` (its `id` is the perf event config of a
     * PERF_TYPE_TRACEPOINT event, as libbpf attaches it). NULL for other
     * sections, and for a tracepoint section with no category
     * (`tp/sched_switch`, which libbpf cannot attach: that program's error,
     * KSYM_ERR_INVALID, after ksym_bpf_object_resolve_btf; it still loads).
     */
    const char *tp_category;
};

/**
 * ksym_bpf_attach.flags: the program is sleepable (BPF_F_SLEEPABLE).
 */
#define KSYM_ATTACH_SLEEPABLE 1

/**
 * ksym_bpf_attach.flags: an XDP program that handles fragments
 * (BPF_F_XDP_HAS_FRAGS).
 */
#define KSYM_ATTACH_XDP_FRAGS 2

/**
 * ksym_bpf_attach.flags: the section starts with `?` (`SEC("?tc")`):
 * libbpf does not load the program unless asked (its autoload is off);
 * the program type is the section's without the `?`.
 */
#define KSYM_ATTACH_OPTIONAL 4

/**
 * ksym_bpf_attach.flags: the kernel needs the target to load the program
 * (it loads with attach_btf_id: fentry, fexit, fmod_ret, lsm, iter,
 * tp_btf, freplace, struct_ops; or, for a multi section that names a
 * module, `fentry.multi/9p:v9fs_*`, with that module's BTF object, in
 * which the kernel reads the link's ids), so a program whose target did
 * not resolve cannot load; without this flag the target matters only
 * when attaching (kprobe, raw_tp), and the program loads whatever its
 * error says.
 */
#define KSYM_ATTACH_TARGET_AT_LOAD 8

/**
 * ksym_bpf_attach.flags: a return probe (kretprobe, uretprobe and their
 * `.multi` forms): attach it as one (the kprobe or uprobe PMU's
 * `retprobe` config bit, `BPF_F_KPROBE_MULTI_RETURN`, or tracefs' `r:`).
 */
#define KSYM_ATTACH_RETPROBE 16

/**
 * Where program `prog` attaches (it attaches nothing itself; set out->sz
 * first). The section-only fields (prog_type, expected_attach_type,
 * flags, the target the section names, a tracepoint's tp_category) work before
 * ksym_bpf_object_resolve_btf; BTF ids, module and address after it. A
 * section libbpf does not know gives prog_type 0 (and an error only when
 * a target is asked for: set_attach_target, expand).
 *
 * A program whose target did not resolve (not in this kernel's BTF or
 * kallsyms, no target named where the kernel needs one, or a tracepoint
 * section with no category) keeps that
 * error, which fails no other program: this call returns it (the code,
 * KSYM_ERR_NOT_FOUND or KSYM_ERR_INVALID, and the thread-local message
 * naming program, section and target) when the program's autoload is
 * on; with autoload off it returns 0. Either way, and unlike other calls,
 * `out` is written, with the section-only fields, target and module as
 * named, attach_btf_id and addr 0, and out->error / out->error_message
 * set. Whether the program can still load is out->flags'
 * KSYM_ATTACH_TARGET_AT_LOAD: without it (kprobe, raw_tp, tracepoint) libbpf loads
 * it too, and only attaching fails.
 *
 * # Safety
 * `obj` is NULL or a live handle; `out` is NULL or points to a writable
 * struct of at least `out->sz` bytes.
 */
int ksym_bpf_program_attach_info(const struct ksym_bpf_object *obj,
                                 size_t prog,
                                 struct ksym_bpf_attach *out);

/**
 * Whether a loader loads program `prog` (libbpf's bpf_program__autoload):
 * true unless its section starts with `?` (`SEC("?tp_btf/...")`) or
 * ksym_bpf_program_set_autoload turned it off. An alias has its own;
 * aliases made by ksym_bpf_program_expand start on. false, with
 * KSYM_ERR_NOT_FOUND (or KSYM_ERR_INVALID for a NULL object) recorded,
 * when there is no such program.
 *
 * # Safety
 * `obj` is NULL or a live handle.
 */
bool ksym_bpf_program_autoload(const struct ksym_bpf_object *obj, size_t prog);

/**
 * Sets whether a loader loads program `prog` (libbpf's
 * bpf_program__set_autoload), before or after resolve_btf and relocate.
 * A program with autoload off is neither required to resolve nor
 * reported as failing: its target error (ksym_bpf_program_attach_info)
 * is returned only while autoload is on; resolve_btf fails for a CO-RE
 * relocation, and relocate for a missing map fd or step, only when a
 * program with autoload on holds the instruction (the others are
 * relocated when they can be: ksym_bpf_program_insns says why not). The
 * bundled loader (`ksym obj --load`, `ksym trace`) loads only programs
 * with autoload on. 0, or KSYM_ERR_NOT_FOUND for no such program,
 * KSYM_ERR_INVALID for a NULL object.
 *
 * # Safety
 * `obj` is NULL or a live handle used by no other thread during the call.
 */
int ksym_bpf_program_set_autoload(struct ksym_bpf_object *obj, size_t prog, bool autoload);

/**
 * Sets the attach target of one program or alias: "func", "module`func"
 * (or libbpf's "module:func"), or a tracepoint name for tp_btf/raw_tp,
 * resolved now in `btf` (NULL: the running kernel's). An alias lives in
 * its target's ELF section, so the section name cannot tell where an
 * alias attaches: the loader says it here (libbpf:
 * bpf_program__set_attach_target). Works before and after
 * ksym_bpf_object_resolve_btf: only this program changes (its attach
 * info follows the new target, its error goes), nothing else is resolved
 * again. KSYM_ERR_UNSUPPORTED for a program whose section has no kernel
 * target; KSYM_ERR_INVALID for a NULL or empty target; KSYM_ERR_NOT_FOUND
 * for a target that is not there (the message says when it names another
 * kind: a tracepoint given to fentry, a function to tp_btf), the program
 * then left as it was; KSYM_ERR_NOT_FOUND for no such program.
 *
 * # Safety
 * `obj` is NULL or a live handle used by no other thread during the call;
 * `target` is NULL or a NUL-terminated string; `btf` is NULL or a live
 * `ksym_btf` handle.
 */
int ksym_bpf_program_set_attach_target(struct ksym_bpf_object *obj,
                                       size_t prog,
                                       const char *target,
                                       struct ksym_btf *btf);

/**
 * Adds an alias of `prog` for every attachable kernel function
 * (tracepoint, for tp_btf/raw_tp; LSM hook, for lsm) matching `pattern`
 * ("glob" or "modglob`glob"); returns how many (their indices follow the
 * existing programs, in address order; by name for tracepoints), 0 when
 * none match. A function is attachable when it is a text symbol of
 * kallsyms with a BTF FUNC in vmlinux or its module (fentry/fexit/
 * fmod_ret; kprobes need no BTF), listed by tracefs'
 * available_filter_functions when it can be read, and not a compiler
 * artifact (`__pfx_`, `.cold`, `.isra.0`, ...) unless the pattern names
 * one exactly. Every alias is named "<prog>/<target>" (or
 * "<prog>/<module>:<target>"), shares the program's single instruction
 * copy and has its own attach target.
 *
 * A `tracepoint`/`tp` program is expanded over the running kernel's
 * tracefs events instead (/sys/kernel/tracing/events, else
 * /sys/kernel/debug/tracing/events): `pattern` is "catglob/nameglob"
 * ("syscalls/sys_enter_*"), or "nameglob" for any category; one alias per
 * event directory, by category then name, named
 * "<prog>/<category>/<name>", whose attach info gives tp_category and
 * target. One body serves events whose records it reads alike (every
 * syscalls/sys_enter_* has `__syscall_nr` at offset 8). `btf` is not
 * used for them (NULL still opens the running kernel's).
 * KSYM_ERR_NOT_FOUND when tracefs is not mounted; KSYM_ERR_INVALID for a
 * pattern with an empty category or name.
 *
 * # Safety
 * `obj` is NULL or a live handle used by no other thread during the call;
 * `pattern` is NULL or a NUL-terminated string; `btf` is NULL or a live
 * `ksym_btf` handle.
 */
int ksym_bpf_program_expand(struct ksym_bpf_object *obj,
                            size_t prog,
                            const char *pattern,
                            struct ksym_btf *btf);

/* ===========================================================================
 * The kernel's multi-attach (Linux 7.3): one program on many kernel
 * functions through `tracing_multi` links, and which way the running
 * kernel attaches one body to many functions (ksym_bpf_program_way:
 * multi links, or aliases from ksym_bpf_program_expand). A loader lists
 * the functions with ksym_bpf_program_multi_attach, then for each link
 * (one per BTF object) loads the program with the link's
 * attach_btf_obj_fd and creates a BPF_LINK_CREATE link with its attach
 * type, ids, cookies and count (docs/btf-and-attach.md).
 * ======================================================================== */

/**
 * ksym_bpf_attach.flags: a multi program (`fentry.multi`, `fexit.multi`,
 * `fsession.multi` and their `.s` forms, or a `fentry`/`fexit`/
 * `fsession` program given functions with
 * ksym_bpf_program_multi_attach): it loads with no attach target
 * (attach_btf_id 0; the kernel gives it its `bpf_multi_func` prototype)
 * and attaches through `tracing_multi` links (ksym_bpf_program_multi_link).
 * With KSYM_ATTACH_TARGET_AT_LOAD only when its section names a module:
 * it loads with that module's BTF object.
 */
#define KSYM_ATTACH_MULTI 32

/**
 * ksym_bpf_program_way: one program, one `tracing_multi` link per BTF
 * object (the kernel loads a multi program of this kind: Linux 7.3).
 */
#define KSYM_WAY_MULTI 1

/**
 * ksym_bpf_program_way: the body loaded once per function from its one
 * relocated copy, one link each (aliases: ksym_bpf_program_expand).
 */
#define KSYM_WAY_ALIASES 2

/**
 * Which way the running kernel attaches program `prog`'s one body to
 * many functions, probed as libbpf probes a feature (a two-instruction
 * program is loaded), never by version: KSYM_WAY_MULTI when it loads a
 * multi program of the program's kind (a `.multi` section, or the multi
 * form of `fentry`, `fexit`, `fsession`); else KSYM_WAY_ALIASES for a
 * `fentry`, `fexit` or `fsession` program when it loads one on a kernel
 * function of `btf` (NULL: the running kernel's). KSYM_ERR_UNSUPPORTED
 * when neither, with the errno of each probe in the message: a `.multi`
 * section on a kernel without multi links (every kernel before 7.3), a
 * kernel that refuses trampolines, a section with no multi form
 * (kprobe, lsm, ...). KSYM_ERR_NOT_FOUND for no such program. Whether
 * the verifier takes a plain body with the multi prototype (no typed
 * arguments: `bpf_multi_func` has none) is the load's answer: load it as
 * multi, and on refusal expand it into aliases.
 *
 * # Safety
 * `obj` is NULL or a live handle; `btf` is NULL or a live `ksym_btf`
 * handle.
 */
int ksym_bpf_program_way(const struct ksym_bpf_object *obj, size_t prog, struct ksym_btf *btf);

/**
 * Lists the kernel functions program `prog` attaches to through
 * `tracing_multi` links: those `pattern` matches ("glob" or
 * "modglob`glob", libbpf's "module:glob" too; NULL: the section's,
 * `fentry.multi/<glob>`), chosen as ksym_bpf_program_expand chooses
 * fentry targets: text symbols of kallsyms with a BTF FUNC, listed by
 * tracefs' available_filter_functions where it can be read, whose
 * prototype the trampoline takes, no compiler artifact. So `__init` and
 * notrace functions, which libbpf's glob takes from BTF and the kernel
 * refuses (failing the whole link with ENOENT), are left out. A
 * `fentry`, `fexit` or `fsession` program becomes a multi program
 * (KSYM_ATTACH_MULTI; its target goes). Returns how many links, one per
 * BTF object (vmlinux first, then each module): the kernel reads a
 * link's BTF ids in the object the program was loaded with, so each is
 * one load and one link. 0, with nothing changed, when nothing matches.
 * KSYM_ERR_UNSUPPORTED for a program with no multi form;
 * KSYM_ERR_INVALID for an empty pattern, or NULL when the section names
 * none.
 *
 * # Safety
 * `obj` is NULL or a live handle used by no other thread during the call;
 * `pattern` is NULL or a NUL-terminated string; `btf` is NULL or a live
 * `ksym_btf` handle.
 */
int ksym_bpf_program_multi_attach(struct ksym_bpf_object *obj,
                                  size_t prog,
                                  const char *pattern,
                                  struct ksym_btf *btf);

/**
 * One `tracing_multi` link of a multi program (output struct: set `sz`).
 */
struct ksym_bpf_multi_link {
    /**
     * sizeof(struct ksym_bpf_multi_link), set by the caller.
     */
    size_t sz;
    /**
     * expected_attach_type at BPF_PROG_LOAD and attach_type at
     * BPF_LINK_CREATE (BPF_TRACE_FENTRY_MULTI, _FEXIT_MULTI,
     * _FSESSION_MULTI).
     */
    uint32_t attach_type;
    /**
     * attach_btf_obj_fd at BPF_PROG_LOAD: 0 for vmlinux, the module's BTF
     * object fd (owned by the ksym_btf handle), -1 when it has none (BTF
     * from files). The kernel reads the link's ids in this object.
     */
    int attach_btf_obj_fd;
    /**
     * "vmlinux" or the module.
     */
    const char *module;
    /**
     * The kernel's id of the BTF object (0 for vmlinux, or unknown).
     */
    uint32_t btf_obj_id;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved;
    /**
     * How many functions: link_create.tracing_multi.cnt.
     */
    size_t count;
    /**
     * Their BTF ids: link_create.tracing_multi.ids.
     */
    const uint32_t *btf_ids;
    /**
     * One cookie per function, its index over the program's functions
     * (ksym_bpf_program_multi_function): link_create.tracing_multi.cookies.
     */
    const uint64_t *cookies;
    /**
     * Their kallsyms addresses (what bpf_get_func_ip() returns).
     */
    const uint64_t *addrs;
};

/**
 * Link `link` (0 to the count ksym_bpf_program_multi_attach returned) of
 * multi program `prog`: what BPF_PROG_LOAD and BPF_LINK_CREATE need. The
 * arrays live until the program's functions are listed again or the
 * object is freed. KSYM_ERR_NOT_FOUND for no such program or link, or
 * when no functions were listed.
 *
 * # Safety
 * `obj` is NULL or a live handle; `out` is NULL or points to a writable
 * struct of at least `out->sz` bytes.
 */
int ksym_bpf_program_multi_link(const struct ksym_bpf_object *obj,
                                size_t prog,
                                size_t link,
                                struct ksym_bpf_multi_link *out);

/**
 * The function a multi program's cookie names (output struct: set `sz`).
 */
struct ksym_bpf_multi_function {
    /**
     * sizeof(struct ksym_bpf_multi_function), set by the caller.
     */
    size_t sz;
    /**
     * The function's name.
     */
    const char *name;
    /**
     * "vmlinux" or its module.
     */
    const char *module;
    /**
     * Its kallsyms address.
     */
    uint64_t addr;
    /**
     * Its BTF id in its object.
     */
    uint32_t btf_id;
    /**
     * Reserved: written zero.
     */
    uint32_t reserved;
    /**
     * The link that attaches it (ksym_bpf_program_multi_link).
     */
    size_t link;
};

/**
 * The function cookie `cookie` names in multi program `prog` (what
 * bpf_get_attach_cookie() returns in it). KSYM_ERR_NOT_FOUND for no such
 * program or cookie, or when no functions were listed.
 *
 * # Safety
 * `obj` is NULL or a live handle; `out` is NULL or points to a writable
 * struct of at least `out->sz` bytes.
 */
int ksym_bpf_program_multi_function(const struct ksym_bpf_object *obj,
                                    size_t prog,
                                    uint64_t cookie,
                                    struct ksym_bpf_multi_function *out);

/* ===========================================================================
 * Per-alias constants: one body shared by a program and its aliases, and
 * in each copy a loader hands to BPF_PROG_LOAD the values of that one
 * program or alias. An object marks the immediates with an ld_imm64 of a
 * reserved untyped extern, `extern const void ksym_alias_value __ksym
 * __weak;` (the alias's value: its program index, or what
 * ksym_bpf_program_set_alias_value gave it) or `ksym_alias_addr` (the
 * kernel address of the function it attaches to), read as
 * `(__u64)&ksym_alias_value`. The shared copy (ksym_bpf_program_insns)
 * holds 0 there, as libbpf gives a weak extern it cannot find; a loader
 * loads ksym_bpf_program_alias_insns instead. This is how one body knows
 * its function on kernels without attach cookies or bpf_get_func_ip
 * (docs/bpf-objects.md, "Per-alias constants").
 * ======================================================================== */

/**
 * Sets the `ksym_alias_value` of program or alias `prog`: what its copy
 * from ksym_bpf_program_alias_insns loads. Until it is set, a program's
 * value is its index in the object. KSYM_ERR_NOT_FOUND for no such
 * program.
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 */
int ksym_bpf_program_set_alias_value(struct ksym_bpf_object *obj, size_t prog, uint64_t value);

/**
 * After relocate: writes up to `cap` of the final instructions of program
 * or alias `prog` into `buf`, with its own per-alias constants written
 * (`ksym_alias_value`, `ksym_alias_addr`), and returns how many it has,
 * which may exceed `cap` (call again with a larger buffer). `buf` may be
 * NULL when `cap` is 0. A program that loads no per-alias constant gets
 * the very instructions of ksym_bpf_program_insns. Errors: those of
 * ksym_bpf_program_insns; KSYM_ERR_NOT_FOUND, naming the program, when it
 * loads `ksym_alias_addr` and has no function address (its target did
 * not resolve or is not a kernel function, or kallsyms hides addresses).
 *
 * # Safety
 * `obj` is NULL or a live handle from `ksym_bpf_object_open` or `ksym_bpf_object_open_mem`,
 * not freed, used by no other thread during the call.
 * `buf` is NULL or points to `cap` writable `struct ksym_bpf_insn`.
 */
int ksym_bpf_program_alias_insns(const struct ksym_bpf_object *obj,
                                 size_t prog,
                                 struct ksym_bpf_insn *buf,
                                 size_t cap);

/* ===========================================================================
 * Names of kernel kinds: `enum bpf_prog_type`, `enum bpf_attach_type` and
 * `enum bpf_map_type` values as libbpf spells them ("tracing",
 * "trace_fentry", "hash"), BTF kinds as the kernel does ("STRUCT"). Static
 * strings; NULL for a value this version does not know. Like
 * ksym_strerror, they neither set nor clear the last error, so they may
 * be called while an error is being reported.
 * ======================================================================== */

/**
 * The name of an `enum bpf_prog_type` value (libbpf_bpf_prog_type_str's).
 */
const char *ksym_bpf_prog_type_str(uint32_t prog_type);

/**
 * The name of an `enum bpf_attach_type` value (libbpf_bpf_attach_type_str's).
 */
const char *ksym_bpf_attach_type_str(uint32_t attach_type);

/**
 * The name of an `enum bpf_map_type` value (libbpf_bpf_map_type_str's).
 */
const char *ksym_bpf_map_type_str(uint32_t map_type);

/**
 * The name of a BTF kind (`BTF_KIND_*`), as the kernel and bpftool print it.
 */
const char *ksym_btf_kind_str(uint32_t kind);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* KSYM_H */
