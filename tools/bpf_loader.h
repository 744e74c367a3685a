/*
 * A minimal BPF loader on top of libksym, without libbpf: what a C loader
 * does with a struct ksym_bpf_object. Used by the `ksym obj --load` and
 * `ksym trace` commands and by the kernel tests (c-tests/test_*_kernel.c).
 * Internal to this project: not installed, no API promise (a loader of
 * one's own starts from examples/aliases.c; docs/bpf-objects.md).
 *
 * Steps: kl_prepare (the object's BTF loaded; untyped externs, then the
 * kernel's BTF, resolved before the maps so that `.kconfig` has its
 * values; each map created with its initial value, `.rodata` and
 * `.kconfig` frozen, its fd given to the object; maps of maps' slots
 * filled; relocation), then kl_load_prog for each program wanted (its
 * type, attach type and target from ksym_bpf_program_attach_info),
 * kl_fill_slots(KSYM_BPF_SLOT_PROGRAM) for program arrays, kl_attach to
 * attach it (kl_attach_struct_ops for a struct_ops map); kl_load does the
 * first three for every program.
 *
 * The code, by job, each file on the ones before it:
 *   bpf_abi.h             the kernel's layouts and numbers (bpf_attr, perf)
 *   bpf_loader_sys.c      bpf() and perf_event_open, map elements, test
 *                         runs, run counters, sysfs and tracefs reads
 *   bpf_loader_prepare.c  kl_prepare: the object's BTF, its maps, their
 *                         slots, relocation; kl_unload
 *   bpf_loader_load.c     the programs' loads (kl_load_prog, kl_load)
 *   bpf_loader_attach.c   kl_attach, kl_attach_struct_ops
 * The tools, tests and bench that include this header link those files
 * (the Makefile, mk/bench-guest.mk, c-tests/run.sh).
 */
#ifndef KSYM_BPF_LOADER_H
#define KSYM_BPF_LOADER_H

#include <ksym.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf_abi.h"

/* ---- bpf_loader_sys.c: the kernel's calls ---------------------------- */

/* bpf(cmd, attr, size): the fd or 0, or -1 with errno. */
long kl_bpf(int cmd, void *attr, unsigned int size);
/* A pointer as bpf_attr's u64 fields take it. */
uint64_t kl_ptr(const void *p);
/* Possible CPUs (/sys/devices/system/cpu/possible, "0-3,8-11"), as
 * libbpf counts them; 1 if unreadable. */
int kl_possible_cpus(void);
/* Can this process load BPF programs? 0 if so, else -errno. */
int kl_bpf_available(void);
/* BPF_MAP_UPDATE_ELEM and BPF_MAP_LOOKUP_ELEM: 0 or -errno. */
int kl_map_update(int fd, const void *key, const void *value);
int kl_map_lookup(int fd, const void *key, void *value);
/* Runs a socket filter once on a zeroed 64-byte packet; its return value in *ret. */
int kl_test_run(int prog_fd, uint32_t *ret);
/* Turns on the kernel's per-program run counters while the returned fd is
 * open (BPF_ENABLE_STATS); -errno if it cannot. */
int kl_enable_stats(void);
/* How many times the kernel ran a program (with stats enabled). */
int kl_run_count(int prog_fd, uint64_t *cnt);
/* The first number of a sysfs or tracefs file read with `fmt` (one
 * conversion); -1 if unreadable. */
int kl_read_int(const char *path, const char *fmt);
/* The tracefs directory that has events/ (/sys/kernel/tracing, else
 * debugfs' tracing/), or NULL when neither is mounted. */
const char *kl_tracefs(void);
/* The kernel allows [A-Za-z0-9_.] in object names, 15 of them. */
void kl_object_name(char out[16], const char *name);

/* ---- bpf_loader_prepare.c: the object's BTF and maps --------------------- */

/* What was loaded for an object. */
struct kl_loaded {
    int btf_fd;
    size_t nmaps, nprogs;
    int *map_fds;
    int *prog_fds; /* -errno for a program that did not load, -ENOENT if not asked */
    int *link_fds; /* -1 when not attached */
    /* struct_ops maps: -1 not registered, KL_REGISTERED (deleted at
     * unload), or the fd of the link that registered it (closed at unload). */
    int *map_link_fds;
};

#define KL_REGISTERED (-2)

/* What kl_prepare_opts may leave out, as a libbpf loader does with
 * bpf_map__set_autocreate(map, false): maps this kernel cannot create
 * (e.g. `.struct_ops.link` maps before Linux 6.4). Their fds stay -1. */
struct kl_prepare_opts {
    const char *const *skip_maps; /* map names, NULL-terminated; NULL: none */
};

/*
 * Loads the object's BTF, resolves its externs through `cache` (may be
 * NULL) and, when `btf` is not NULL, everything that needs kernel BTF
 * (attach targets, CO-RE, typed ksyms, kfuncs, .kconfig), creates its maps
 * (data sections and .kconfig get their initial values; kl_prepare_opts
 * leaves out the maps opts->skip_maps names), then relocates. Returns 0, or the negative libksym/-errno code
 * of the step that failed (a message in `why`). `l` is set up for
 * kl_load_prog either way: kl_unload it.
 */
int kl_prepare_opts(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct ksym_btf *btf,
                    struct kl_loaded *l, char *why, size_t why_size, const struct kl_prepare_opts *opts);
int kl_prepare(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct ksym_btf *btf, struct kl_loaded *l,
               char *why, size_t why_size);

/*
 * Writes the initial slots of `kind` the object gives its maps of maps
 * (KSYM_BPF_SLOT_MAP: after the maps are created) or program arrays
 * (KSYM_BPF_SLOT_PROGRAM: after the programs are loaded), as libbpf does;
 * a program that did not load leaves its slot empty. Returns 0 or the
 * negative code of the first failure (a message in `why`).
 */
int kl_fill_slots(struct ksym_bpf_object *obj, struct kl_loaded *l, enum ksym_bpf_slot_kind kind, char *why,
                  size_t why_size);

/* Closes every fd of `l` (unregistering its struct_ops) and frees it. */
void kl_unload(struct kl_loaded *l);

/* ---- bpf_loader_load.c: the programs ------------------------------------- */

/*
 * Loads program `i` (after kl_prepare) with its type, expected attach
 * type and attach target as ksym_bpf_program_attach_info gives them (a
 * section libbpf does not know loads as a socket filter), its func_info
 * and line_info. Stores its fd (or -errno) in l->prog_fds[i] and returns
 * it; the verifier's verdict goes to `report` (may be NULL). A program
 * whose target did not resolve is not loaded when the kernel needs the
 * target to load it (KSYM_ATTACH_TARGET_AT_LOAD: its error is returned);
 * otherwise (a kprobe, a raw_tp) it loads, as with libbpf, and only
 * attaching it fails.
 */
int kl_load_prog(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, FILE *report);

/* Whether program `i` loads a per-alias constant (ksym_alias_value,
 * ksym_alias_addr): then it loads its own copy,
 * ksym_bpf_program_alias_insns, not the shared one (kl_load_prog does). */
int kl_uses_alias_values(const struct ksym_bpf_object *obj, size_t i);

/* kl_load_prog_btf's btf_obj_fd: the one attach info gives. */
#define KL_ATTACH_INFO_FD (-2)

/* kl_load_prog, loaded with attach_btf_obj_fd `btf_obj_fd` (0: vmlinux)
 * instead of attach info's unless KL_ATTACH_INFO_FD: a multi program
 * loads once per link, each with its BTF object (tools/bpf_multi.h). */
int kl_load_prog_btf(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, FILE *report, int btf_obj_fd);

/*
 * Loads (kl_load_prog) every program whose autoload is on
 * (ksym_bpf_program_autoload: off for `?` sections and where the loader
 * turned it off), aliases included; the others keep -ENOENT in
 * l->prog_fds and are reported as skipped. Returns how many did not load.
 */
size_t kl_load_autoload(struct ksym_bpf_object *obj, struct kl_loaded *l, FILE *report);

/*
 * Loads the object (kl_prepare, without kernel BTF) and every program
 * whose autoload is on, aliases included, with func_info and line_info.
 * Each program's verifier verdict goes to `report` (may be NULL). Returns
 * 0 when all of them loaded, 1 when some did not (see l->prog_fds), or
 * the negative code of the first step that failed (a message in `why`).
 */
int kl_load(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct kl_loaded *l, FILE *report, char *why,
            size_t why_size);

/* ---- bpf_loader_attach.c: attachment ------------------------------------- */

/* A perf event of `type` and `config`s (config1, config2: a kprobe's
 * function name and offset) with BPF program `prog_fd` on it,
 * enabled: the attachment lives as long as the returned fd. -errno if not. */
int kl_perf_attach(uint32_t type, uint64_t config, uint64_t config1, uint64_t config2, int prog_fd);
/* A kprobe (a kretprobe when `ret`) on kernel function `func` at
 * `offset` through the kprobe PMU (/sys/bus/event_source/devices/kprobe,
 * Linux 4.17+), as libbpf's bpf_program__attach_kprobe; -errno if not. */
int kl_attach_kprobe(const char *func, uint64_t offset, int ret, int prog_fd);
/* Tracepoint `category/name` (its tracefs id); -errno if not. */
int kl_attach_tracepoint(const char *category, const char *name, int prog_fd);

/*
 * Attaches loaded program `i` where its attach info says: raw tracepoints
 * by name, BTF-attached programs (fentry, fexit, tp_btf, lsm...) to their
 * BTF target (BPF_RAW_TRACEPOINT_OPEN with no name, which every kernel
 * with BTF attach has; BPF_LINK_CREATE as a second try), kprobes and
 * kretprobes to their function by name and offset (the kprobe PMU),
 * tracepoints to their category and name (ksym_bpf_attach.tp_category and
 * target: tracefs' events/<category>/<name>/id, as libbpf attaches them;
 * tracefs must be mounted; -EINVAL for a section that names no category,
 * as libbpf). Stores the link (or perf event) fd in l->link_fds[i] and
 * returns it, or -errno (-EOPNOTSUPP for types this loader does not
 * attach).
 */
int kl_attach(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i);

/*
 * Registers struct_ops map `i` (after kl_prepare with kernel BTF and
 * kl_load_prog of its programs): its value with each program's fd at the
 * offset its KSYM_BPF_SLOT_STRUCT_OPS slot gives, written at key 0 (and,
 * for a `.struct_ops.link` map, attached through BPF_LINK_CREATE), as
 * libbpf's bpf_map__attach_struct_ops does. kl_unload unregisters it.
 * Returns 0 or a negative code (a message in `why`).
 */
int kl_attach_struct_ops(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, char *why, size_t why_size);

#endif
