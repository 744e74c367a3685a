/*
 * (Built twice by c-tests/run.sh: against libbpf 1.7, and as
 * test_libbpf_prepare_next against libbpf's newest source, which knows
 * Linux 7.3's fentry.multi, fexit.multi and fsession.multi sections of
 * c-tests/bpf/multi.bpf.o.)
 *
 * libbpf 1.7 as the oracle of every program of the corpus, loaded by this
 * kernel or not (tests/data/bpf-selftests-6.1, and the c-tests/bpf
 * objects): libbpf opens each object with every program's autoload on
 * and runs bpf_object__prepare(), which resolves externs, CO-RE, .kconfig
 * and relocates, then creates the maps; libksym does the same (autoload
 * on, resolve_ksyms, resolve_btf, relocate with libbpf's map fds). Then:
 *   - every program's instructions are libbpf's (bpf_program__insns);
 *   - every map's creation parameters are libbpf's (type, key, value,
 *     max entries, flags, map_extra, numa node), and so is the whole
 *     initial value of every data section, of the map's value size
 *     (.data, .rodata, .kconfig: every .kconfig value; .bss is zero);
 *   - each program's load attributes are what libbpf passes to
 *     BPF_PROG_LOAD: program type, expected attach type, attach BTF id and
 *     object, sleepable and XDP-frags flags, instruction count; an error
 *     libksym reports for a target needed only to attach must be what
 *     attaching would meet (attach_oracle.h: the kernel's raw tracepoints
 *     and /proc/kallsyms; a tracepoint section without a category). libbpf
 *     resolves attach targets only when it loads, so bpf_object__load is
 *     run with syscall() wrapped (-Wl,--wrap=syscall): each BPF_PROG_LOAD
 *     of the object's programs is recorded and answered with a dup of a
 *     trivial program's fd instead of reaching the kernel, so that every
 *     program is seen, whether the kernel would take it or not. A program
 *     libbpf cannot load for want of a target (its load preparation
 *     fails) must be one libksym reports an error for, with
 *     KSYM_ATTACH_TARGET_AT_LOAD; libbpf is then run again without it;
 *   - the BTF libbpf loaded (rewritten for the kernel's BTF features: its
 *     bpf_object__sanitize_btf), as the kernel holds it (read back from
 *     libbpf's BTF fd), is byte for byte ksym_bpf_object_btf_for() with
 *     libksym's probe of the same kernel (ksym_btf_probe_features).
 *     KSYM_BTF_FEATURES=name,... (btf, func, global_func, datasec, float,
 *     decl_tag, type_tag, enum64, qmark_datasec) plays an older kernel
 *     instead: every BPF_BTF_LOAD of this process, libbpf's probes
 *     included, is refused (EINVAL) when it holds a kind the list lacks,
 *     as that kernel's BTF checker refuses it, and libksym is given the
 *     same list.
 * Differences are printed (DIFF, MAP, ATTACH, BTF lines) and fail the
 * test; the counts are printed at the end (docs/bpf-objects.md reports
 * them). libbpf's side (the features played, the wrapped syscall, its
 * prepare) is prepare_libbpf.h; the maps' and the BTF's comparisons are
 * prepare_maps_btf.h; the programs' are here.
 */
#define _GNU_SOURCE
#include "../check.h"
#include "corpus.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../tools/bpf_loader.h"
#include "attach_oracle.h"
#include "prepare_libbpf.h"
#include "prepare_maps_btf.h"

static struct ksym_cache *cache;
static struct ksym_btf *kbtf;

static size_t n_objects, n_programs, n_compared, n_identical, n_attach_same, n_no_target;
/* Of n_attach_same: loaded with a module's BTF object, the same in both. */
static size_t n_module_obj;
/* Programs identical but for libbpf's BTF id 0 of a weak typed ksym (see libbpf_btf_id_0). */
static size_t n_btf_id_0;
static size_t n_open_fail, n_prepare_fail, n_prepare_fail_progs, n_prepare_extern, n_not_loadable, n_aliases, n_usdt, n_info;

/* ---- the comparisons ------------------------------------------------ */

/* Program `p` of prepared `lb` against libksym's `idx`: instructions. */
/* libbpf's one known wrong instruction: a weak typed __ksym variable that
 * /proc/kallsyms has (CONFIG_KALLSYMS_ALL) and the kernel's BTF does not (no
 * VARs: Debian 11's 5.10). libbpf's kallsyms pass sets it (is_set, by name,
 * typed or not), then bpf_object__resolve_ksym_var_btf_id() returns 0 for
 * the weak miss without clearing it, and the relocation writes
 * BPF_PSEUDO_BTF_ID with BTF id 0, which the verifier refuses
 * (check_pseudo_btf_id: "invalid btf_id"). libksym leaves the weak extern
 * unresolved (src 0, imm 0: NULL), as libbpf does when kallsyms lacks the
 * name. Accepted only where the kernel table says its BTF has no per-CPU
 * VARs, and only in that exact form; counted and printed. */
static int libbpf_btf_id_0(const struct ksym_bpf_insn *got, const struct bpf_insn *want, size_t cnt)
{
    static int no_vars = -2;
    if (no_vars == -2)
        no_vars = kernel_has("btf_percpu_vars") == 0;
    if (!no_vars)
        return 0;
    int seen = 0;
    for (size_t i = 0; i < cnt; i++) {
        const struct bpf_insn *a = (const void *)&got[i], *b = &want[i];
        if (!memcmp(a, b, sizeof(*a)))
            continue;
        if (i + 1 >= cnt || b->code != (BPF_LD | BPF_IMM | BPF_DW) || b->src_reg != BPF_PSEUDO_BTF_ID ||
            b->imm != 0 || b[1].imm != 0 || a->code != b->code || a->dst_reg != b->dst_reg || a->src_reg != 0 ||
            a->imm != 0 || a->off != b->off || memcmp(&a[1], &b[1], sizeof(*a)))
            return 0;
        seen = 1;
        i++;
    }
    return seen;
}

static int compare_insns(const char *file, struct bpf_program *p, struct ksym_bpf_object *o, size_t idx)
{
    const struct bpf_insn *want = bpf_program__insns(p);
    size_t want_cnt = bpf_program__insn_cnt(p), cnt = 0;
    const struct ksym_bpf_insn *got = ksym_bpf_program_insns(o, idx, &cnt);
    if (got && cnt == want_cnt && !memcmp(got, want, cnt * sizeof(*got)))
        return 1;
    if (got && cnt == want_cnt && libbpf_btf_id_0(got, want, cnt)) {
        fprintf(stderr, "NOTE %s %s: libbpf's BTF id 0 for a weak typed ksym this kernel's BTF lacks; libksym's "
                        "is unresolved\n", file, bpf_program__name(p));
        n_btf_id_0++;
        return 1;
    }
    fprintf(stderr, "DIFF %s %s: %zu insns (libbpf %zu)%s%s\n", file, bpf_program__name(p), cnt, want_cnt,
            got ? "" : ": ", got ? "" : ksym_last_error_message());
    for (size_t i = 0, shown = 0; got && i < cnt && i < want_cnt && shown < 4; i++) {
        const unsigned char *a = (const void *)&got[i], *b = (const void *)&want[i];
        if (memcmp(a, b, 8)) {
            fprintf(stderr, "  insn %zu: libksym %02x %02x %02x%02x %02x%02x%02x%02x, libbpf %02x %02x %02x%02x "
                            "%02x%02x%02x%02x\n",
                    i, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], b[0], b[1], b[2], b[3], b[4], b[5], b[6],
                    b[7]);
            shown++;
        }
    }
    return 0;
}

/* libksym's error `rc` for a program whose target matters only when it
 * attaches (no KSYM_ATTACH_TARGET_AT_LOAD: libbpf loads it all the same):
 * 1 when the kernel or libbpf's own rule says the same, else 0 (printed).
 *   - raw_tp: KSYM_ERR_NOT_FOUND where the kernel refuses
 *     bpf_raw_tracepoint_open() of the target with ENOENT;
 *   - kprobe: KSYM_ERR_NOT_FOUND where /proc/kallsyms lists no such
 *     function (the kprobe PMU, which would say it at attach, is not on
 *     every kernel);
 *   - tracepoint: KSYM_ERR_INVALID where libbpf's section (`sec`) names
 *     no category (`tp/name`: libbpf's attach_tp refuses it, -EINVAL).
 * No other error of such a program is accepted. */
static int attach_error_is_the_kernels(const char *file, const char *name, const char *sec,
                                       const struct ksym_bpf_attach *a, int rc)
{
    const char *oracle = "no error is right for this program type";
    int ok = 0;
    if (*sec == '?')
        sec++;
    if (rc == KSYM_ERR_NOT_FOUND && a->target &&
        (a->prog_type == BPF_PROG_TYPE_RAW_TRACEPOINT || a->prog_type == BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE)) {
        int err = oracle_raw_tp_open(a->target);
        ok = err == -ENOENT;
        oracle = err == 0 ? "the kernel attaches it" : strerror(-err);
    } else if (rc == KSYM_ERR_NOT_FOUND && a->target && a->prog_type == BPF_PROG_TYPE_KPROBE) {
        int has = oracle_kallsyms_has_function(a->target);
        ok = has == 0;
        oracle = has ? "/proc/kallsyms has it" : "";
    } else if (rc == KSYM_ERR_INVALID && a->prog_type == BPF_PROG_TYPE_TRACEPOINT) {
        const char *cat = !strncmp(sec, "tp/", 3) ? sec + 3 : !strncmp(sec, "tracepoint/", 11) ? sec + 11 : NULL;
        ok = cat && !strchr(cat, '/');
        oracle = ok ? "" : "libbpf finds a category in the section";
    }
    if (!ok)
        fprintf(stderr, "ATTACH %s %s (%s): libksym %d (%s), only needed to attach: %s\n", file, name, sec, rc,
                a->error_message ? a->error_message : "", oracle);
    return ok;
}

/* What libbpf passed to BPF_PROG_LOAD for program `name` against
 * libksym's attach info: 1 the same, 2 the same but for the usdt attach
 * type (counted apart), 0 different. */
static int compare_load(const char *file, const char *name, const char *sec, const struct seen_load *w,
                        struct ksym_bpf_object *o, size_t idx)
{
    struct ksym_bpf_attach a = { .sz = sizeof(a) };
    int rc = ksym_bpf_program_attach_info(o, idx, &a);
    uint32_t flags = 0;
    if (a.flags & KSYM_ATTACH_SLEEPABLE)
        flags |= BPF_F_SLEEPABLE;
    if (a.flags & KSYM_ATTACH_XDP_FRAGS)
        flags |= BPF_F_XDP_HAS_FRAGS;
    size_t cnt = 0;
    ksym_bpf_program_insns(o, idx, &cnt);
    /* A section libbpf does not know: libbpf never gets to load it. */
    uint32_t pt = a.prog_type;
    /* A target needed only when attaching (raw_tp, kprobe, tracepoint)
     * that this kernel lacks: libksym says so, libbpf loads it all the
     * same; the error must be what attaching would meet. */
    int info = rc != 0 && !(a.flags & KSYM_ATTACH_TARGET_AT_LOAD);
    if (info && !attach_error_is_the_kernels(file, name, sec, &a, rc))
        return 0;
    /* libbpf 1.7 loads usdt programs as BPF_TRACE_UPROBE_MULTI where the
     * kernel has uprobe_multi links (a probe at load time); libksym gives
     * the section's attach type (0), which legacy uprobes take. */
    uint32_t eat = a.expected_attach_type;
    int usdt = w->expected_attach_type == BPF_TRACE_UPROBE_MULTI && eat == 0 && pt == BPF_PROG_TYPE_KPROBE;
    if (usdt)
        eat = BPF_TRACE_UPROBE_MULTI;
    /* The same BTF object (a module's, or none: vmlinux), by the kernel's
     * id of each fd: the fds themselves are each library's own. */
    uint32_t obj_id = btf_obj_id(a.attach_btf_obj_fd);
    int same = (rc == 0 || info) && w->prog_type == pt && w->expected_attach_type == eat &&
               w->attach_btf_id == a.attach_btf_id && w->attach_btf_obj_id == obj_id && w->prog_flags == flags &&
               w->insn_cnt == cnt;
    if (!same)
        fprintf(stderr,
                "ATTACH %s %s: libbpf loads type %u attach %u btf id %u (BTF object %u) flags %#x, %u insns; "
                "libksym %u %u %u (%u) %#x, %zu (%d%s%s)\n",
                file, name, w->prog_type, w->expected_attach_type, w->attach_btf_id, w->attach_btf_obj_id,
                w->prog_flags, w->insn_cnt, a.prog_type, a.expected_attach_type, a.attach_btf_id, obj_id, flags,
                cnt, rc, rc ? ": " : "", rc ? ksym_last_error_message() : "");
    n_module_obj += same && obj_id != 0;
    if (same && usdt)
        n_usdt++;
    else if (same && info)
        n_info++;
    return same ? (usdt ? 2 : 1) : 0;
}

/* libbpf cannot prepare it here: nothing to compare but why. A strong
 * extern this kernel lacks (the selftests' test module's kfuncs and
 * ksyms, a CONFIG_ option) must fail libksym too; the others are maps
 * libbpf cannot create as declared (sized or pinned by the test at run
 * time). */
static void prepare_failed(const char *file, struct ksym_bpf_object *o, int err, size_t np)
{
    n_prepare_fail++;
    n_prepare_fail_progs += np;
    if (strstr(last_warn, "extern")) {
        int kerr = ksym_bpf_object_resolve_ksyms(o, cache);
        if (!kerr)
            kerr = ksym_bpf_object_resolve_btf(o, kbtf);
        if (!kerr)
            fprintf(stderr, "DIFF %s: libbpf: %s", file, last_warn);
        CHECK(kerr != 0);
        n_prepare_extern += kerr != 0;
    } else if (verbose) {
        fprintf(stderr, "PREPARE %s: libbpf: %s (%s)", file, strerror(-err), last_warn);
    }
}

/* Instructions, after prepare, of every program libbpf relocated (all:
 * autoload on; libbpf turns off struct_ops programs no map uses, and so
 * does nothing relocate them). */
static void compare_programs(const char *file, struct bpf_object *lb, struct ksym_bpf_object *o)
{
    struct bpf_program *p;
    bpf_object__for_each_program(p, lb)
    {
        size_t idx;
        const char *name = bpf_program__name(p);
        if (ksym_bpf_object_find_program(o, name, &idx) != 0) {
            fprintf(stderr, "DIFF %s %s: libksym has no such program\n", file, name);
            CHECK(0);
            continue;
        }
        if (!bpf_program__autoload(p)) {
            if (verbose)
                fprintf(stderr, "NOTE %s %s: libbpf turned its autoload off\n", file, name);
            continue;
        }
        struct ksym_bpf_program_info pi = { .sz = sizeof(pi) };
        if (ksym_bpf_program_info(o, idx, &pi) == 0 && pi.alias_of != idx) {
            /* Another symbol of the same code: libbpf relocates only the
             * first program at an offset (its relocations find one
             * program), so its copy of an alias is not relocated. */
            n_aliases++;
            continue;
        }
        n_compared++;
        int same = compare_insns(file, p, o, idx);
        CHECK(same);
        n_identical += same;
    }
}

/* Load attributes: libbpf's load (of `lb`, which this closes), each
 * BPF_PROG_LOAD recorded. libbpf stops at the first program it cannot
 * load; that one is set aside and the object prepared and loaded again,
 * until every program was seen. */
static void compare_loads(const char *file, const char *path, struct bpf_object *lb, struct ksym_bpf_object *o,
                          size_t np)
{
    struct bpf_program *p;
    int err;
    char **failed = calloc(np + 1, sizeof(char *));
    size_t n_failed = 0;
    char **done = calloc(np + 1, sizeof(char *));
    size_t n_done = 0;
    for (int pass = 0; pass < 64 && lb; pass++) {
        n_watch = 0;
        bpf_object__for_each_program(p, lb)
        {
            if (bpf_program__autoload(p) && n_watch < MAX_WATCH) {
                memset(&watch[n_watch], 0, sizeof(watch[0]));
                watch[n_watch++].insns = bpf_program__insns(p);
            }
        }
        capturing = 1;
        bpf_object__load(lb);
        capturing = 0;
        size_t w = 0;
        char *stuck = NULL;
        uint32_t stuck_type = 0;
        bpf_object__for_each_program(p, lb)
        {
            if (!bpf_program__autoload(p) || w >= n_watch)
                continue;
            const char *name = bpf_program__name(p);
            size_t idx, k;
            for (k = 0; k < n_done && strcmp(done[k], name); k++)
                ;
            struct ksym_bpf_program_info pi = { .sz = sizeof(pi) };
            if (watch[w].got && k == n_done && ksym_bpf_object_find_program(o, name, &idx) == 0 &&
                ksym_bpf_program_info(o, idx, &pi) == 0) {
                if (pi.alias_of == idx) {
                    int same = compare_load(file, name, bpf_program__section_name(p), &watch[w], o, idx);
                    CHECK(same != 0);
                    n_attach_same += same == 1;
                }
                done[n_done++] = strdup(name);
            } else if (!watch[w].got && !stuck) {
                stuck = strdup(name);
                stuck_type = bpf_program__type(p);
            }
            w++;
        }
        bpf_object__close(lb);
        lb = NULL;
        if (!stuck)
            break;
        size_t idx;
        struct ksym_bpf_attach a = { .sz = sizeof(a) };
        int rc = ksym_bpf_object_find_program(o, stuck, &idx) == 0 ? ksym_bpf_program_attach_info(o, idx, &a) : 0;
        if (stuck_type == BPF_PROG_TYPE_STRUCT_OPS || stuck_type == BPF_PROG_TYPE_UNSPEC ||
            stuck_type == BPF_PROG_TYPE_EXT) {
            /* libbpf refuses to load a struct_ops program no map uses, a
             * program of a section it does not know, and a freplace one
             * whose target program the loader did not give (an fd):
             * none is a kernel target. */
            n_not_loadable++;
            if (verbose)
                fprintf(stderr, "NOTE %s %s: libbpf does not load it (type %u)\n", file, stuck, stuck_type);
        } else {
            /* No attach target here: libksym must say so, as a target
             * needed at load. */
            if (rc == 0 || !(a.flags & KSYM_ATTACH_TARGET_AT_LOAD))
                fprintf(stderr, "ATTACH %s %s: libbpf cannot load it, libksym: %d\n", file, stuck, rc);
            CHECK(rc != 0 && (a.flags & KSYM_ATTACH_TARGET_AT_LOAD));
            n_no_target += rc != 0;
        }
        failed[n_failed++] = stuck;
        lb = libbpf_prepared(path, failed, n_failed, &err);
    }
    for (size_t k = 0; k < n_done; k++)
        free(done[k]);
    free(done);
    if (lb)
        bpf_object__close(lb);
    for (size_t k = 0; k < n_failed; k++)
        free(failed[k]);
    free(failed);
}

static void check_object(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    n_objects++;
    struct bpf_object *lb0 = bpf_object__open_file(path, NULL);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    if (!lb0) {
        /* libbpf refuses it (the corpus has a few broken on purpose). */
        n_open_fail++;
        ksym_bpf_object_free(o);
        return;
    }
    size_t np = 0;
    struct bpf_program *p;
    bpf_object__for_each_program(p, lb0) np++;
    bpf_object__close(lb0);
    n_programs += np;
    if (!o) {
        fprintf(stderr, "OPEN %s: libbpf opens it, libksym: %s\n", file, ksym_last_error_message());
        CHECK(0);
        return;
    }
    int err;
    last_warn[0] = 0;
    struct bpf_object *lb = libbpf_prepared(path, NULL, 0, &err);
    if (!lb) {
        prepare_failed(file, o, err, np);
        ksym_bpf_object_free(o);
        return;
    }
    size_t nk = ksym_bpf_object_program_count(o);
    for (size_t i = 0; i < nk; i++)
        CHECK(ksym_bpf_program_set_autoload(o, i, true) == 0);
    int kerr = ksym_bpf_object_resolve_ksyms(o, cache);
    if (!kerr)
        kerr = ksym_bpf_object_resolve_btf(o, kbtf);
    if (kerr) {
        fprintf(stderr, "DIFF %s: libbpf prepares it, libksym: %s\n", file, ksym_last_error_message());
        CHECK(0);
    }
    compare_btf(file, lb, o);
    compare_maps(file, lb, o);
    if (ksym_bpf_object_relocate(o) != 0) {
        fprintf(stderr, "DIFF %s: libbpf prepares it, libksym relocate: %s\n", file, ksym_last_error_message());
        CHECK(0);
    }
    compare_programs(file, lb, o);
    compare_loads(file, path, lb, o, np);
    ksym_bpf_object_free(o);
}

static void check_dir(const char *dir)
{
    CHECK(corpus_each(dir, check_object) > 0);
}

int main(int argc, char **argv)
{
    const char *data = getenv("KSYM_TESTDATA");
    char dir[512];
    verbose = getenv("KSYM_CORPUS_VERBOSE") != NULL;
    if (argc > 1)
        snprintf(dir, sizeof(dir), "%s", argv[1]);
    else if (data)
        snprintf(dir, sizeof(dir), "%s/bpf-selftests-6.1", data);
    else {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no corpus");
        return finish("test_libbpf_prepare");
    }
    libbpf_set_print(quiet);
    const char *played = getenv("KSYM_BTF_FEATURES");
    if (played) {
        long bits = parse_features(played);
        if (bits < 0) {
            fprintf(stderr, "KSYM_BTF_FEATURES=%s: names are btf, func, global_func, datasec, float, decl_tag, "
                            "type_tag, enum64, qmark_datasec\n",
                    played);
            return 2;
        }
        btf_feats = (uint32_t)bits;
        btf_played = 1;
    }
    if (kl_bpf_available() != 0) {
        KERNEL_SKIP("bpf() is not available: libbpf cannot prepare the corpus (it creates the maps)");
        return finish("test_libbpf_prepare");
    }
    kbtf = ksym_btf_open(NULL);
    cache = ksym_cache_new(NULL);
    if (!kbtf || !cache) {
        KERNEL_SKIP("no kernel BTF or kallsyms: %s", ksym_last_error_message());
        return finish("test_libbpf_prepare");
    }
    if (!btf_played)
        CHECK(ksym_btf_probe_features(&btf_feats) == 0);
    /* The fd every recorded load gets: a trivial socket filter's. */
    struct bpf_insn ret0[2];
    memset(ret0, 0, sizeof(ret0));
    ret0[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
    ret0[1].code = BPF_JMP | BPF_EXIT;
    fake_fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "fake", "GPL", ret0, 2, NULL);
    CHECK(fake_fd >= 0);
    check_dir(dir);
    size_t corpus_programs = n_programs;
    check_dir(getenv("KSYM_BPF_OBJECTS") ? getenv("KSYM_BPF_OBJECTS") : "c-tests/bpf");
    /* Real tools' objects (tests/data/libbpf-tools-0.26: Debian's
     * libbpf-tools, cut out of its binaries): every one libbpf opens,
     * prepared once its maps are sized as the tools size them, and every
     * program identical. Not with a selection (KSYM_CORPUS_ONLY: the
     * guests take c-tests/bpf/multi.bpf.o and its like, tools/guest/tests.sh). */
    const char *only = getenv("KSYM_CORPUS_ONLY");
    if (data && argc <= 1 && !only) {
        size_t o0 = n_objects, f0 = n_open_fail + n_prepare_fail, p0 = n_programs, c0 = n_compared,
               i0 = n_identical, a0 = n_attach_same, t0 = n_no_target, m0 = n_maps, s0 = n_maps_same;
        snprintf(dir, sizeof(dir), "%s/libbpf-tools-0.26", data);
        check_dir(dir);
        printf("  libbpf-tools 0.26: %zu objects (libbpf opens and prepares all but %zu), %zu programs: %zu compared "
               "after prepare, %zu identical; %zu load with libbpf's attach attributes, %zu lack a target here in "
               "both; %zu of %zu maps with libbpf's parameters\n",
               n_objects - o0, n_open_fail + n_prepare_fail - f0, n_programs - p0, n_compared - c0,
               n_identical - i0, n_attach_same - a0, n_no_target - t0, n_maps_same - s0, n_maps - m0);
        CHECK(n_objects - o0 >= 50 && n_open_fail + n_prepare_fail == f0);
        CHECK(n_compared - c0 == n_programs - p0 && n_identical - i0 == n_compared - c0);
    }
    printf("  libbpf %s prepare: %zu objects (libbpf opens all but %zu, prepares all but %zu: %zu programs; %zu "
           "of them for an extern this kernel lacks, which libksym refuses too, the others for maps libbpf "
           "cannot create as declared), %zu programs (%zu of the corpus): %zu compared after prepare, %zu identical in libksym; %zu load "
           "with libbpf's attach type, BTF id and object (%zu of them a module's) and flags, %zu lack a target here in both, %zu libbpf does not "
           "load (struct_ops no map uses, freplace without a target program, unknown sections), %zu usdt programs "
           "libbpf loads as uprobe_multi; %zu aliases (not relocated by libbpf); libksym also reports %zu "
           "missing targets needed only to attach, each the kernel's answer; %zu maps with libbpf's parameters (%zu initial "
           "values, %zu .kconfig values)\n",
           libbpf_version_string(), n_objects, n_open_fail, n_prepare_fail, n_prepare_fail_progs, n_prepare_extern,
           n_programs,
           corpus_programs, n_compared, n_identical, n_attach_same, n_module_obj, n_no_target, n_not_loadable, n_usdt, n_aliases,
           n_info, n_maps_same, n_values, n_kconfig);
    if (n_btf_id_0)
        printf("  %zu programs identical but for libbpf's BTF id 0 of a weak typed ksym this kernel's BTF lacks "
               "(the verifier refuses id 0; libksym leaves it unresolved)\n",
               n_btf_id_0);
    printf("  BTF for this kernel's features (%s%s): %zu objects' BTF is byte for byte what libbpf loaded, of %zu "
           "(%zu of them rewritten for the kernel); the kernel refuses both libbpf's and libksym's BTF of %zu\n",
           feature_text(btf_feats), btf_played ? ", played" : ", probed", n_btf_same - n_btf_refused, n_btf,
           n_btf_changed, n_btf_refused);
    /* The whole corpus, or what a selection takes: all of it the same. */
    CHECK(n_btf > (only ? 0 : 400) && n_btf_same == n_btf);
    CHECK(n_compared > (only ? 0 : 800) && n_identical == n_compared);
    CHECK(n_maps > 0 && n_maps_same == n_maps && (only || n_kconfig > 0));
    CHECK(n_attach_same + n_no_target + n_not_loadable + n_usdt == n_compared);
    close(fake_fd);
    ksym_cache_free(cache);
    ksym_btf_free(kbtf);
    return finish("test_libbpf_prepare");
}
