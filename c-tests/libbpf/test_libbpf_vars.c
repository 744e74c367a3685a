/*
 * libbpf 1.7 as the oracle of the data sections' variables, for every
 * object of the corpora (the kernel's BPF selftests, the c-tests/bpf
 * fixtures, Debian's libbpf-tools): after bpf_object__open, libbpf's BTF
 * has its DATASECs fixed up (btf_fixup_datasec), and each internal map
 * (`.rodata`, `.data`, `.bss`, their `.name` variants; `.kconfig` aside)
 * has its DATASEC as value type. libksym's variables must be exactly
 * those: the same names, maps, offsets, sizes, types and linkage, no
 * more and no fewer.
 *
 * Then each variable is set (ksym_bpf_object_set_var) to a pattern, and
 * the same bytes are written where a libbpf skeleton writes them (the
 * map's bpf_map__initial_value, at the variable's offset): the initial
 * values libksym then gives must be libbpf's, byte for byte, `.bss`
 * included. What libbpf refuses, libksym refuses with the same code:
 * bpf_map__set_initial_value of the wrong size, of `.kconfig`, of a
 * `.maps` map (-EINVAL); after the map exists (libbpf: -EBUSY after
 * prepare; libksym: KSYM_ERR_INVALID once its fd is given).
 */
#include "../check.h"
#include "corpus.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>

static size_t n_objects, n_open_fail, n_vars, n_maps_set, n_bss_set, n_static, n_ambiguous;

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    (void)fmt;
    (void)ap;
    return 0;
}

/* libbpf's DATASEC entry of map `bm` for variable `v`, or NULL. */
static const struct btf_var_secinfo *libbpf_var(const struct btf *btf, const struct bpf_map *bm,
                                                const struct ksym_bpf_var_info *v, const struct btf_type **var)
{
    const struct btf_type *ds = btf__type_by_id(btf, bpf_map__btf_value_type_id(bm));
    if (!ds || !btf_is_datasec(ds))
        return NULL;
    const struct btf_var_secinfo *vsi = btf_var_secinfos(ds);
    for (int i = 0; i < btf_vlen(ds); i++, vsi++) {
        const struct btf_type *t = btf__type_by_id(btf, vsi->type);
        if (t && btf_is_var(t) && !strcmp(btf__name_by_offset(btf, t->name_off), v->name) &&
            vsi->offset == v->offset) {
            *var = t;
            return vsi;
        }
    }
    return NULL;
}

/* The variables libbpf sees: every entry of every internal map's
 * DATASEC but `.kconfig`'s. */
static size_t libbpf_var_count(struct bpf_object *lb)
{
    const struct btf *btf = bpf_object__btf(lb);
    struct bpf_map *m;
    size_t n = 0;
    bpf_object__for_each_map(m, lb)
    {
        if (!bpf_map__is_internal(m) || !btf)
            continue;
        const struct btf_type *ds = btf__type_by_id(btf, bpf_map__btf_value_type_id(m));
        if (ds && btf_is_datasec(ds) && strcmp(btf__name_by_offset(btf, ds->name_off), ".kconfig"))
            n += btf_vlen(ds);
    }
    return n;
}

static unsigned char pattern(size_t map, size_t k)
{
    return (unsigned char)(0xa5 ^ (map * 31 + k * 7));
}

static void check_object(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    n_objects++;
    struct bpf_object *lb = bpf_object__open_file(path, NULL);
    if (!lb) {
        n_open_fail++;
        return;
    }
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    if (!o) {
        bpf_object__close(lb);
        return;
    }
    const struct btf *btf = bpf_object__btf(lb);
    size_t nv = ksym_bpf_object_var_count(o);
    size_t want = libbpf_var_count(lb);
    if (nv != want)
        fprintf(stderr, "VARS %s: libksym has %zu variables, libbpf %zu\n", file, nv, want);
    CHECK(nv == want);
    for (size_t i = 0; i < nv; i++) {
        struct ksym_bpf_var_info v = { .sz = sizeof(v) };
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_var_info(o, i, &v) == 0 && ksym_bpf_map_info(o, v.map, &mi) == 0);
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        const struct btf_type *t = NULL;
        const struct btf_var_secinfo *vsi = bm && btf ? libbpf_var(btf, bm, &v, &t) : NULL;
        /* vsi->type is the VAR, whose type v.btf_type_id is. */
        int same = vsi && bpf_map__is_internal(bm) && vsi->size == v.size && t->type == v.btf_type_id &&
               ((btf_var(t)->linkage == BTF_VAR_GLOBAL_ALLOCATED) == !!(v.flags & KSYM_BPF_VAR_GLOBAL));
        if (!same)
            fprintf(stderr, "VAR %s `%s` in `%s` at %zu, %zu bytes, type %u, flags %u: libbpf %s\n", file, v.name,
                    mi.name, v.offset, v.size, v.btf_type_id, v.flags,
                    vsi ? "differs" : "has no such variable there");
        CHECK(same);
        n_vars += same;
        n_static += same && !(v.flags & KSYM_BPF_VAR_GLOBAL);
        size_t found;
        int rc = ksym_bpf_object_find_var(o, v.name, &found);
        CHECK((rc == 0 && found == i) || rc == KSYM_ERR_AMBIGUOUS);
    }
    /* Every variable set, in libksym and where a skeleton writes it. */
    size_t nm = ksym_bpf_object_map_count(o);
    for (size_t i = 0; i < nv; i++) {
        struct ksym_bpf_var_info v = { .sz = sizeof(v) };
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_var_info(o, i, &v) == 0 && ksym_bpf_map_info(o, v.map, &mi) == 0);
        unsigned char buf[256];
        size_t size = v.size < sizeof(buf) ? v.size : sizeof(buf);
        for (size_t k = 0; k < size; k++)
            buf[k] = pattern(v.map, v.offset + k);
        if (size < v.size)
            continue;
        size_t found;
        if (ksym_bpf_object_find_var(o, v.name, &found) == KSYM_ERR_AMBIGUOUS) {
            n_ambiguous++;
            CHECK(ksym_bpf_object_set_var(o, v.name, buf, size) == KSYM_ERR_AMBIGUOUS);
            continue;
        }
        CHECK(ksym_bpf_object_set_var(o, v.name, buf, size) == 0);
        /* The wrong size: refused, nothing written. */
        CHECK(ksym_bpf_object_set_var(o, v.name, buf, size + 1) == KSYM_ERR_INVALID);
        size_t lsize = 0;
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        unsigned char *lval = bm ? bpf_map__initial_value(bm, &lsize) : NULL;
        CHECK(lval && v.offset + size <= lsize);
        if (lval && v.offset + size <= lsize)
            memcpy(lval + v.offset, buf, size);
    }
    for (size_t m = 0; m < nm; m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_map_info(o, m, &mi) == 0);
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        if (!bm || !bpf_map__is_internal(bm) || !strcmp(mi.name, ".kconfig"))
            continue;
        size_t lsize = 0;
        const unsigned char *lval = bpf_map__initial_value(bm, &lsize);
        int same;
        if (mi.initial_value) {
            same = lval && lsize == mi.initial_value_size && !memcmp(lval, mi.initial_value, lsize);
            n_bss_set += same && !strncmp(mi.name, ".bss", 4);
        } else {
            /* Nothing set in it (a `.bss` without variables): zero. */
            same = lval != NULL;
            for (size_t k = 0; same && k < lsize; k++)
                same = lval[k] == 0;
        }
        if (!same)
            fprintf(stderr, "VALUE %s `%s`: the initial value after the variables were set is not libbpf's\n", file,
                    mi.name);
        CHECK(same);
        n_maps_set += same;
    }
    /* What libbpf refuses, refused the same way. */
    for (size_t m = 0; m < nm; m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_map_info(o, m, &mi) == 0);
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        if (!bm)
            continue;
        static unsigned char big[1 << 16];
        size_t vs = mi.value_size < sizeof(big) ? mi.value_size : 0;
        int lrc = bpf_map__set_initial_value(bm, big, vs + 1);
        int krc = ksym_bpf_map_set_initial_value(o, m, big, vs + 1);
        CHECK(lrc == -EINVAL && krc == KSYM_ERR_INVALID);
        if (!bpf_map__is_internal(bm) || !strcmp(mi.name, ".kconfig")) {
            /* Not a data section's: refused whatever the size. */
            lrc = bpf_map__set_initial_value(bm, big, vs);
            krc = ksym_bpf_map_set_initial_value(o, m, big, vs);
            CHECK(lrc == -EINVAL && krc == KSYM_ERR_INVALID);
        } else if (vs) {
            /* Once the map exists: refused. */
            CHECK(ksym_bpf_object_set_map_fd(o, m, 1000) == 0);
            CHECK(ksym_bpf_map_set_initial_value(o, m, big, vs) == KSYM_ERR_INVALID);
            CHECK_MSG("was created already");
        }
    }
    ksym_bpf_object_free(o);
    bpf_object__close(lb);
}

static void check_dir(const char *dir)
{
    CHECK(corpus_each(dir, check_object) > 0);
}

int main(void)
{
    const char *data = getenv("KSYM_TESTDATA");
    char dir[512];
    if (!data) {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no corpus");
        return finish("test_libbpf_vars");
    }
    libbpf_set_print(quiet);
    snprintf(dir, sizeof(dir), "%s/bpf-selftests-6.1", data);
    check_dir(dir);
    check_dir(getenv("KSYM_BPF_OBJECTS") ? getenv("KSYM_BPF_OBJECTS") : "c-tests/bpf");
    snprintf(dir, sizeof(dir), "%s/libbpf-tools-0.26", data);
    check_dir(dir);
    printf("  variables: %zu objects (libbpf %s opens all but %zu): %zu variables as libbpf places them (%zu static), "
           "%zu set as a skeleton sets them (%zu sharing their name with another, refused as ambiguous), %zu data maps "
           "with libbpf's bytes after (%zu .bss)\n",
           n_objects, libbpf_version_string(), n_open_fail, n_vars, n_static, n_vars - n_ambiguous, n_ambiguous,
           n_maps_set, n_bss_set);
    CHECK(n_vars > 500 && n_bss_set > 20);
    return finish("test_libbpf_vars");
}
