/*
 * Differential test against libbpf on real objects nobody here wrote: the
 * kernel's BPF selftests (tests/data/bpf-selftests-6.1, built by
 * tools/corpus/build.sh). For every program that libbpf (1.7, build/libbpf-1.7) loads
 * on this kernel:
 *   - libksym's final instructions equal libbpf's (bpf_program__insns after
 *     bpf_object__load), libksym given libbpf's map fds so that every byte
 *     compares: CO-RE, typed ksyms, kfuncs, .kconfig, subprograms, maps;
 *   - the program loads through the bundled loader (tools/bpf_loader.h),
 *     which creates the maps itself from what libksym says of them;
 *   - its func_info and line_info, as the kernel reports them for the two
 *     loaded programs (same instructions, so the same verifier rewrites),
 *     are libbpf's: every record's instruction, column, function name,
 *     file name and source line (names through each program's BTF).
 * The counts are printed (the README reports them). libbpf is given each
 * object whole first; when that fails (a program this kernel refuses), one
 * program at a time, the others not autoloaded.
 */
#define _GNU_SOURCE
#include "../check.h"
#include "corpus.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "../../tools/bpf_loader.h"

static struct ksym_cache *cache;
static struct ksym_btf *kbtf;
static int verbose;

static size_t n_objects, n_programs, n_libbpf_loaded, n_identical, n_bundled;
static size_t n_ksym_open_fail, n_libbpf_open_fail;
/* Initial slots of maps of maps and program arrays, checked against what
 * libbpf put in them. */
static size_t n_slots;
/* Maps of maps whose inner template's shape and BTF ids libbpf and
 * libksym agree on, before loading. */
static size_t n_inner;
/* struct_ops programs whose attach BTF id and member index (expected
 * attach type) are libbpf's, and struct_ops maps whose kernel value type
 * is. */
static size_t n_struct_ops, n_struct_ops_maps;
/* Programs whose func_info and line_info the kernel reports the same for
 * libbpf's and the bundled loader's, and how many records they hold. */
static size_t n_debug_same, n_debug_records;

/* The func_info and line_info the kernel holds for a loaded program, as
 * text: "F <insn> <func name>" and "L <insn> <col> <file> | <line>" lines,
 * names read through the program's BTF (the ids and string offsets of two
 * loads differ; what they name must not). NULL when it cannot be read;
 * `*records`: how many. */
static char *kernel_debug_info(int fd, size_t *records)
{
    struct bpf_prog_info info;
    uint32_t len = sizeof(info);
    memset(&info, 0, sizeof(info));
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
        return NULL;
    uint32_t nf = info.nr_func_info, nl = info.nr_line_info, btf_id = info.btf_id;
    struct bpf_func_info *fi = calloc(nf + 1, sizeof(*fi));
    struct bpf_line_info *li = calloc(nl + 1, sizeof(*li));
    memset(&info, 0, sizeof(info));
    info.nr_func_info = nf;
    info.func_info_rec_size = sizeof(*fi);
    info.func_info = (uint64_t)(uintptr_t)fi;
    info.nr_line_info = nl;
    info.line_info_rec_size = sizeof(*li);
    info.line_info = (uint64_t)(uintptr_t)li;
    len = sizeof(info);
    struct btf *btf = btf_id ? btf__load_from_kernel_by_id(btf_id) : NULL;
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && f && (btf || (nf == 0 && nl == 0))) {
        for (uint32_t i = 0; i < nf; i++) {
            const struct btf_type *t = btf__type_by_id(btf, fi[i].type_id);
            fprintf(f, "F %u %s\n", fi[i].insn_off, t ? btf__name_by_offset(btf, t->name_off) : "?");
        }
        for (uint32_t i = 0; i < nl; i++) {
            const char *file = btf__name_by_offset(btf, li[i].file_name_off);
            const char *line = btf__name_by_offset(btf, li[i].line_off);
            fprintf(f, "L %u %u %s | %s\n", li[i].insn_off, li[i].line_col, file ? file : "?", line ? line : "?");
        }
        *records = nf + nl;
    } else if (f) {
        fclose(f);
        free(out);
        f = NULL;
        out = NULL;
    }
    if (f)
        fclose(f);
    btf__free(btf);
    free(fi);
    free(li);
    return out;
}

/* What the kernel reported of libbpf's programs of the object under test,
 * by name, for the bundled loader's to be compared with. */
struct debug_seen {
    char *name, *info;
};
static struct debug_seen *seen;
static size_t n_seen;

static void forget_debug_info(void)
{
    for (size_t i = 0; i < n_seen; i++) {
        free(seen[i].name);
        free(seen[i].info);
    }
    free(seen);
    seen = NULL;
    n_seen = 0;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    if (verbose && level != LIBBPF_DEBUG)
        return vfprintf(stderr, fmt, ap);
    return 0;
}

/* libksym's view of one object, relocated with the fds of `lb`'s maps. */
struct ksym_side {
    struct ksym_bpf_object *o;
    int resolve_err; /* resolve_ksyms / resolve_btf */
    char why[512];
};

static void ksym_side_open(struct ksym_side *k, const char *path)
{
    memset(k, 0, sizeof(*k));
    k->o = ksym_bpf_object_open(path);
    if (!k->o) {
        snprintf(k->why, sizeof(k->why), "open: %s", ksym_last_error_message());
        return;
    }
    /* A program whose attach target this kernel lacks makes resolve_btf
     * fail for it, not for the others: relocate is the judge. */
    if ((k->resolve_err = ksym_bpf_object_resolve_ksyms(k->o, cache)) != 0)
        snprintf(k->why, sizeof(k->why), "%s", ksym_last_error_message());
    else if (ksym_bpf_object_resolve_btf(k->o, kbtf) != 0)
        snprintf(k->why, sizeof(k->why), "%s", ksym_last_error_message());
}

/* Compares program `name` of loaded libbpf object `lb` with libksym's. */
static void compare(const char *file, struct bpf_object *lb, struct bpf_program *lp, struct ksym_side *k)
{
    const char *name = bpf_program__name(lp);
    const struct bpf_insn *want = bpf_program__insns(lp);
    size_t want_cnt = bpf_program__insn_cnt(lp);
    n_libbpf_loaded++;
    if (!k->o || k->resolve_err) {
        fprintf(stderr, "DIFF %s %s: libbpf loads it, libksym: %s\n", file, name, k->why);
        CHECK(0);
        return;
    }
    size_t nmaps = ksym_bpf_object_map_count(k->o);
    for (size_t m = 0; m < nmaps; m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_map_info(k->o, m, &mi) == 0);
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        int fd = bm ? bpf_map__fd(bm) : -1;
        /* The map as libbpf created it (a perf event array of 0 entries
         * gets one per CPU when created). */
        if (bm) {
            int same = mi.type == bpf_map__type(bm) && mi.key_size == bpf_map__key_size(bm) &&
                       mi.value_size == bpf_map__value_size(bm) && mi.map_flags == bpf_map__map_flags(bm) &&
                       (mi.max_entries == bpf_map__max_entries(bm) ||
                        (mi.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && mi.max_entries == 0));
            if (!same)
                fprintf(stderr, "MAP %s `%s`: libksym type %u key %u value %u max %u flags %#x, libbpf %u %u %u %u %#x\n",
                        file, mi.name, mi.type, mi.key_size, mi.value_size, mi.max_entries, mi.map_flags,
                        bpf_map__type(bm), bpf_map__key_size(bm), bpf_map__value_size(bm),
                        bpf_map__max_entries(bm), bpf_map__map_flags(bm));
            CHECK(same);
        }
        /* A struct_ops map: the kernel's value type libbpf created it with. */
        if (bm && mi.type == BPF_MAP_TYPE_STRUCT_OPS) {
            struct bpf_map_info info;
            uint32_t len = sizeof(info);
            memset(&info, 0, sizeof(info));
            int ok = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
                     info.btf_vmlinux_value_type_id == mi.btf_vmlinux_value_type_id && mi.struct_ops_value &&
                     mi.struct_ops_value_size == mi.value_size;
            if (!ok)
                fprintf(stderr, "MAP %s `%s`: struct_ops value type %u, libbpf's %u\n", file, mi.name,
                        mi.btf_vmlinux_value_type_id, info.btf_vmlinux_value_type_id);
            CHECK(ok);
            n_struct_ops_maps += ok;
        }
        /* A map libbpf did not create: any distinct value shows its uses. */
        CHECK(ksym_bpf_object_set_map_fd(k->o, m, fd >= 0 ? fd : 30000 + (int)m) == 0);
    }
    size_t idx = 0, cnt = 0;
    if (ksym_bpf_object_find_program(k->o, name, &idx) != 0 || ksym_bpf_object_relocate(k->o) != 0) {
        fprintf(stderr, "DIFF %s %s: libbpf loads it, libksym: %s (resolve_btf: %s)\n", file, name,
                ksym_last_error_message(), k->why);
        CHECK(0);
        return;
    }
    if (bpf_program__type(lp) == BPF_PROG_TYPE_STRUCT_OPS) {
        /* Its member of the kernel struct, as libbpf set it from the
         * struct_ops map and the kernel loaded it. */
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        struct bpf_prog_info info;
        uint32_t len = sizeof(info);
        memset(&info, 0, sizeof(info));
        int ok = ksym_bpf_program_attach_info(k->o, idx, &at) == 0 &&
                 bpf_obj_get_info_by_fd(bpf_program__fd(lp), &info, &len) == 0 &&
                 at.attach_btf_id == info.attach_btf_id && at.attach_btf_id != 0 &&
                 at.expected_attach_type == (uint32_t)bpf_program__expected_attach_type(lp);
        if (!ok)
            fprintf(stderr, "ATTACH %s %s: libksym btf id %u member %u, libbpf %u %u\n", file, name,
                    at.attach_btf_id, at.expected_attach_type, info.attach_btf_id,
                    (unsigned)bpf_program__expected_attach_type(lp));
        CHECK(ok);
        n_struct_ops += ok;
    }
    size_t records = 0;
    char *dbg = kernel_debug_info(bpf_program__fd(lp), &records);
    if (dbg) {
        seen = realloc(seen, (n_seen + 1) * sizeof(*seen));
        seen[n_seen].name = strdup(name);
        seen[n_seen++].info = dbg;
    }
    const struct ksym_bpf_insn *got = ksym_bpf_program_insns(k->o, idx, &cnt);
    CHECK(got != NULL);
    if (got && cnt == want_cnt && !memcmp(got, want, cnt * sizeof(*got))) {
        n_identical++;
        return;
    }
    CHECK(0);
    fprintf(stderr, "DIFF %s %s: %zu insns (libbpf %zu)\n", file, name, cnt, want_cnt);
    for (size_t i = 0, shown = 0; got && i < cnt && i < want_cnt && shown < 4; i++) {
        const unsigned char *a = (const void *)&got[i], *b = (const void *)&want[i];
        if (memcmp(a, b, 8)) {
            fprintf(stderr, "  insn %zu: libksym %02x %02x %02x%02x %02x%02x%02x%02x, "
                            "libbpf %02x %02x %02x%02x %02x%02x%02x%02x\n",
                    i, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], b[0], b[1], b[2], b[3], b[4], b[5], b[6],
                    b[7]);
            shown++;
        }
    }
    size_t nr = ksym_bpf_program_reloc_count(k->o, idx);
    for (size_t r = 0; r < nr && verbose; r++) {
        struct ksym_bpf_reloc rl = { .sz = sizeof(rl) };
        if (ksym_bpf_program_reloc(k->o, idx, r, &rl) == 0)
            fprintf(stderr, "    reloc %zu: insn %zu kind %d %s -> %lld flags %u\n", r, rl.insn_idx, rl.kind,
                    rl.symbol, (long long)rl.addend, rl.flags);
    }
}

/* The id of a map or program fd (bpf_map_info and bpf_prog_info both
 * start with type, id). */
static uint32_t fd_id(int fd)
{
    uint32_t info[2] = { 0, 0 };
    uint32_t len = sizeof(info);
    return bpf_obj_get_info_by_fd(fd, info, &len) ? 0 : info[1];
}

/* Before loading: each map of maps' inner template as libbpf has it
 * (bpf_map__inner_map: gone once loaded), shape and BTF key/value ids. */
static void compare_inner(const char *file, struct bpf_object *lb, struct ksym_side *k)
{
    size_t nmaps = ksym_bpf_object_map_count(k->o);
    for (size_t m = 0; m < nmaps; m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_map_info(k->o, m, &mi) == 0);
        if (mi.type != BPF_MAP_TYPE_ARRAY_OF_MAPS && mi.type != BPF_MAP_TYPE_HASH_OF_MAPS)
            continue;
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        struct bpf_map *in = bm ? bpf_map__inner_map(bm) : NULL;
        /* No `__array(values, ...)`: no template on either side (the
         * loader passes an inner map fd of its own). */
        if (bm && !in && mi.inner_type == 0)
            continue;
        int ok = in && bpf_map__type(in) == mi.inner_type && bpf_map__key_size(in) == mi.inner_key_size &&
                 bpf_map__value_size(in) == mi.inner_value_size &&
                 bpf_map__max_entries(in) == mi.inner_max_entries && bpf_map__map_flags(in) == mi.inner_map_flags &&
                 bpf_map__btf_key_type_id(in) == mi.inner_btf_key_type_id &&
                 bpf_map__btf_value_type_id(in) == mi.inner_btf_value_type_id;
        if (!ok)
            fprintf(stderr, "INNER %s: map `%s`: libbpf's inner template differs from libksym's\n", file, mi.name);
        CHECK(ok);
        n_inner += ok;
    }
}

/* After libbpf loaded the whole object: every slot of its maps of maps and
 * program arrays holds what libksym says, and libksym names every slot
 * libbpf filled (the kernel gives the id of what is in a slot). */
static void compare_slots(const char *file, struct bpf_object *lb, struct ksym_side *k)
{
    size_t nmaps = ksym_bpf_object_map_count(k->o);
    for (size_t m = 0; m < nmaps; m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_map_info(k->o, m, &mi) == 0);
        if (mi.type != BPF_MAP_TYPE_ARRAY_OF_MAPS && mi.type != BPF_MAP_TYPE_HASH_OF_MAPS &&
            mi.type != BPF_MAP_TYPE_PROG_ARRAY)
            continue;
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        CHECK(bm != NULL);
        if (!bm)
            continue;
        /* libbpf's inner map template: the same shape. */
        CHECK((mi.inner_type != 0) == (mi.type != BPF_MAP_TYPE_PROG_ARRAY));
        size_t filled = 0;
        for (uint32_t key = 0; key < mi.max_entries && key < 4096; key++) {
            uint32_t id = 0;
            if (bpf_map_lookup_elem(bpf_map__fd(bm), &key, &id) == 0)
                filled++;
        }
        CHECK(filled == mi.slot_count);
        for (size_t j = 0; j < mi.slot_count; j++) {
            struct ksym_bpf_map_slot s = { .sz = sizeof(s) };
            uint32_t id = 0;
            int want_fd = -1;
            CHECK(ksym_bpf_map_slot(k->o, m, j, &s) == 0);
            if (s.kind == KSYM_BPF_SLOT_MAP) {
                struct ksym_bpf_map_info t = { .sz = sizeof(t) };
                CHECK(ksym_bpf_map_info(k->o, s.target, &t) == 0);
                struct bpf_map *tm = bpf_object__find_map_by_name(lb, t.name);
                want_fd = tm ? bpf_map__fd(tm) : -1;
            } else {
                struct ksym_bpf_program_info p = { .sz = sizeof(p) };
                CHECK(ksym_bpf_program_info(k->o, s.target, &p) == 0);
                struct bpf_program *tp = bpf_object__find_program_by_name(lb, p.name);
                want_fd = tp ? bpf_program__fd(tp) : -1;
            }
            int ok = want_fd >= 0 && bpf_map_lookup_elem(bpf_map__fd(bm), &s.index, &id) == 0 && id == fd_id(want_fd);
            if (!ok)
                fprintf(stderr, "SLOT %s: map `%s` slot [%u]: libbpf's differs from libksym's\n", file, mi.name,
                        s.index);
            CHECK(ok);
            n_slots += ok;
        }
    }
}

/* Loads the programs libbpf loaded through the bundled loader. */
static void bundled(const char *file, const char *path, char **names, size_t n)
{
    static char why[1 << 16];
    struct kl_loaded l;
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    if (!o)
        return;
    int err = kl_prepare(o, cache, kbtf, &l, why, sizeof(why));
    for (size_t i = 0; i < n; i++) {
        size_t idx;
        if (err || ksym_bpf_object_find_program(o, names[i], &idx) != 0) {
            fprintf(stderr, "LOAD %s %s: bundled loader: %s\n", file, names[i], err ? why : "no such program");
            CHECK(0);
            continue;
        }
        FILE *report = verbose ? stderr : NULL;
        if (kl_load_prog(o, &l, idx, report) >= 0) {
            n_bundled++;
            /* The kernel's func_info and line_info of this load and of
             * libbpf's. */
            const char *want = NULL;
            for (size_t s = 0; s < n_seen; s++)
                if (!strcmp(seen[s].name, names[i]))
                    want = seen[s].info;
            size_t records = 0;
            char *got = kernel_debug_info(l.prog_fds[idx], &records);
            int same = want && got && !strcmp(want, got);
            if (!same)
                fprintf(stderr, "DEBUG %s %s: func_info/line_info differ from libbpf's\n--- libbpf\n%.2000s--- "
                                "libksym\n%.2000s",
                        file, names[i], want ? want : "(none)\n", got ? got : "(none)\n");
            CHECK(same);
            n_debug_same += same;
            n_debug_records += same ? records : 0;
            free(got);
        } else {
            fprintf(stderr, "LOAD %s %s: bundled loader: %s\n", file, names[i], strerror(-l.prog_fds[idx]));
            CHECK(0);
        }
    }
    /* Program arrays get the programs that loaded. */
    if (!err && kl_fill_slots(o, &l, KSYM_BPF_SLOT_PROGRAM, why, sizeof(why)) != 0) {
        fprintf(stderr, "LOAD %s: bundled loader: %s\n", file, why);
        CHECK(0);
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

static void check_object(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    n_objects++;
    struct ksym_side k;
    ksym_side_open(&k, path);
    struct bpf_object *lb = bpf_object__open_file(path, NULL);
    if (!lb) {
        n_libbpf_open_fail++;
        if (!k.o)
            n_ksym_open_fail++;
        ksym_bpf_object_free(k.o);
        return;
    }
    if (!k.o) {
        n_ksym_open_fail++;
        fprintf(stderr, "OPEN %s: libbpf opens it, libksym: %s\n", file, k.why);
        CHECK(0);
    }
    if (k.o)
        compare_inner(file, lb, &k);
    size_t np = 0;
    struct bpf_program *p;
    bpf_object__for_each_program(p, lb) np++;
    n_programs += np;
    char **names = calloc(np ? np : 1, sizeof(char *)), **loaded = calloc(np ? np : 1, sizeof(char *));
    size_t nl = 0, i = 0;
    bpf_object__for_each_program(p, lb) names[i++] = strdup(bpf_program__name(p));
    /* The whole object first; then, one at a time, every program it did
     * not load (its load failed, or its section starts with `?`: not
     * autoloaded). */
    char *done = calloc(np ? np : 1, 1);
    if (bpf_object__load(lb) == 0) {
        i = 0;
        bpf_object__for_each_program(p, lb)
        {
            if (bpf_program__fd(p) >= 0) {
                compare(file, lb, p, &k);
                loaded[nl++] = names[i];
                done[i] = 1;
            }
            i++;
        }
        if (k.o)
            compare_slots(file, lb, &k);
    }
    bpf_object__close(lb);
    for (i = 0; i < np; i++) {
        if (done[i])
            continue;
        struct bpf_object *one = bpf_object__open_file(path, NULL);
        if (!one)
            continue;
        struct bpf_program *target = NULL;
        bpf_object__for_each_program(p, one)
        {
            int me = !strcmp(bpf_program__name(p), names[i]);
            bpf_program__set_autoload(p, me);
            if (me)
                target = p;
        }
        if (target && bpf_object__load(one) == 0) {
            compare(file, one, target, &k);
            loaded[nl++] = names[i];
        }
        bpf_object__close(one);
    }
    free(done);
    if (k.o && nl)
        bundled(file, path, loaded, nl);
    forget_debug_info();
    for (i = 0; i < np; i++)
        free(names[i]);
    free(names);
    free(loaded);
    ksym_bpf_object_free(k.o);
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
        return finish("test_libbpf_corpus");
    }
    libbpf_set_print(quiet);
    if (kl_bpf_available() != 0) {
        KERNEL_SKIP("bpf() is not available: libbpf cannot load the corpus");
        return finish("test_libbpf_corpus");
    }
    kbtf = ksym_btf_open(NULL);
    cache = ksym_cache_new(NULL);
    if (!kbtf || !cache) {
        KERNEL_SKIP("no kernel BTF or kallsyms: %s", ksym_last_error_message());
        return finish("test_libbpf_corpus");
    }
    /* KSYM_CORPUS_ONLY=a,b,...: only the objects whose names contain one
     * of these (the guest's selection). */
    const char *only = getenv("KSYM_CORPUS_ONLY");
    CHECK(corpus_each(dir, check_object) > 400);
    printf("  corpus: %zu objects (libbpf cannot open %zu, libksym %zu), %zu programs; libbpf %s loads %zu: "
           "%zu identical in libksym, %zu load through the bundled loader; %zu initial slots of maps of maps "
           "and program arrays as libbpf fills them; %zu inner map templates as libbpf's; %zu struct_ops programs attach to libbpf's kernel member, "
           "%zu struct_ops maps have its kernel value type; %zu have libbpf's func_info and line_info "
           "(%zu records) as the kernel reports them\n",
           n_objects, n_libbpf_open_fail, n_ksym_open_fail, n_programs, libbpf_version_string(),
           n_libbpf_loaded, n_identical, n_bundled, n_slots, n_inner, n_struct_ops, n_struct_ops_maps, n_debug_same,
           n_debug_records);
    /* Every program libbpf loads is identical and loads through the
     * bundled loader. */
    if (only) {
        CHECK(n_libbpf_loaded > 0);
    } else {
        CHECK(n_libbpf_loaded > 400);
        CHECK(n_slots > 0);
        CHECK(n_inner > 0);
        CHECK(n_struct_ops > 0 && n_struct_ops_maps > 0);
    }
    CHECK(n_identical == n_libbpf_loaded);
    CHECK(n_bundled == n_identical);
    CHECK(n_debug_same == n_bundled && n_debug_records > (only ? 0 : 10000));
    ksym_cache_free(cache);
    ksym_btf_free(kbtf);
    return finish("test_libbpf_corpus");
}
