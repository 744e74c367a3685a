/*
 * test_libbpf_prepare.c's comparisons of an object's maps (creation
 * parameters, whole initial values, .kconfig) and of its BTF (as the
 * kernel holds what libbpf loaded) between libbpf and libksym, and their
 * counts.
 */
#ifndef KSYM_CTEST_PREPARE_MAPS_BTF_H
#define KSYM_CTEST_PREPARE_MAPS_BTF_H

#include "prepare_libbpf.h"

static size_t n_maps, n_maps_same, n_values, n_kconfig;
static size_t n_btf, n_btf_same, n_btf_changed, n_btf_refused;

static void compare_maps(const char *file, struct bpf_object *lb, struct ksym_bpf_object *o)
{
    size_t nm = ksym_bpf_object_map_count(o), nk = 0, kcfg_same = 1;
    size_t ne = ksym_bpf_object_extern_count(o);
    for (size_t i = 0; i < ne; i++) {
        struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
        if (ksym_bpf_extern_info(o, i, &e) == 0 && e.kind == KSYM_BPF_EXTERN_KCONFIG)
            nk++;
    }
    for (size_t m = 0; m < nm; m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        CHECK(ksym_bpf_map_info(o, m, &mi) == 0);
        struct bpf_map *bm = bpf_object__find_map_by_name(lb, mi.name);
        n_maps++;
        if (!bm) {
            fprintf(stderr, "MAP %s `%s`: libbpf has no such map\n", file, mi.name);
            CHECK(0);
            continue;
        }
        /* A perf event array of 0 entries gets one per possible CPU when
         * created: libbpf has it in max_entries after prepare, libksym
         * leaves it to the loader (tools/bpf_loader.h does the same). So
         * are the sizes size_as_a_loader gave libbpf: libksym says 0, as
         * the object does. */
        uint32_t max = mi.max_entries, value = mi.value_size;
        if (mi.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && max == 0)
            max = (uint32_t)libbpf_num_possible_cpus();
        else if (max == 0 && mi.name[0] != '.')
            max = loader_max_entries(mi.type);
        if (mi.type == BPF_MAP_TYPE_STACK_TRACE && value == 0)
            value = 127 * sizeof(uint64_t);
        int same = mi.type == bpf_map__type(bm) && mi.key_size == bpf_map__key_size(bm) &&
                   value == bpf_map__value_size(bm) && max == bpf_map__max_entries(bm) &&
                   mi.map_flags == bpf_map__map_flags(bm) && mi.map_extra == bpf_map__map_extra(bm) &&
                   mi.numa_node == bpf_map__numa_node(bm);
        if (!same)
            fprintf(stderr,
                    "MAP %s `%s`: libksym type %u key %u value %u max %u flags %#x extra %llu numa %u, "
                    "libbpf %u %u %u %u %#x %llu %u\n",
                    file, mi.name, mi.type, mi.key_size, mi.value_size, mi.max_entries, mi.map_flags,
                    (unsigned long long)mi.map_extra, mi.numa_node, bpf_map__type(bm), bpf_map__key_size(bm),
                    bpf_map__value_size(bm), bpf_map__max_entries(bm), bpf_map__map_flags(bm),
                    (unsigned long long)bpf_map__map_extra(bm), bpf_map__numa_node(bm));
        /* A data section's initial value (libbpf's is its mmap'ed copy,
         * filled in by prepare for .kconfig). */
        size_t lsize = 0;
        const void *lval = NULL;
        int data = !strncmp(mi.name, ".data", 5) || !strncmp(mi.name, ".rodata", 7) || !strcmp(mi.name, ".kconfig") ||
                   !strncmp(mi.name, ".bss", 4);
        if (data && (lval = bpf_map__initial_value(bm, &lsize)) != NULL) {
            int vsame;
            /* The whole value, of the map's size in both. */
            if (mi.initial_value)
                vsame = lsize == mi.initial_value_size && lsize == mi.value_size &&
                        !memcmp(lval, mi.initial_value, lsize);
            else {
                /* .bss: zero. */
                vsame = lsize == mi.value_size;
                for (size_t k = 0; k < lsize; k++)
                    vsame &= ((const unsigned char *)lval)[k] == 0;
            }
            if (!vsame)
                fprintf(stderr, "MAP %s `%s`: initial value differs from libbpf's (libksym %zu bytes of a %u-byte "
                                "value, libbpf %zu)\n",
                        file, mi.name, mi.initial_value_size, mi.value_size, lsize);
            same &= vsame;
            n_values += vsame;
            if (!strcmp(mi.name, ".kconfig"))
                kcfg_same = vsame;
        }
        CHECK(same);
        n_maps_same += same;
        CHECK(ksym_bpf_object_set_map_fd(o, m, bpf_map__fd(bm) >= 0 ? bpf_map__fd(bm) : 30000 + (int)m) == 0);
    }
    if (kcfg_same)
        n_kconfig += nk;
}

/* The BTF libbpf loaded for prepared `lb`, as the kernel holds it (the
 * very bytes BPF_BTF_LOAD was given), against libksym's BTF for the same
 * features. */
static void compare_btf(const char *file, struct bpf_object *lb, struct ksym_bpf_object *o)
{
    size_t size = 0;
    const unsigned char *ours = ksym_bpf_object_btf_for(o, btf_feats, &size);
    int fd = bpf_object__btf_fd(lb);
    if (!bpf_object__btf(lb)) {
        /* No .BTF: nothing for either. */
        CHECK(!ours && ksym_last_error() == KSYM_ERR_NOT_FOUND);
        return;
    }
    n_btf++;
    if (fd < 0) {
        /* libbpf loads no BTF on a kernel without it: libksym has none
         * for it. Where the kernel refused libbpf's BTF (libbpf goes on
         * without: a corpus object made to fail), it must refuse
         * libksym's too. */
        int refused = -1, same;
        if (btf_feats & KSYM_BTF_FEAT_BTF) {
            int kfd = ours ? bpf_btf_load(ours, size, NULL) : -1;
            refused = kfd < 0;
            if (kfd >= 0)
                close(kfd);
            same = ours && refused;
            n_btf_refused += same;
        } else {
            same = !ours && ksym_last_error() == KSYM_ERR_UNSUPPORTED;
        }
        if (!same)
            fprintf(stderr, "BTF %s: libbpf loaded no BTF (features %s), libksym: %s\n", file,
                    feature_text(btf_feats), ours ? "BTF the kernel takes" : ksym_last_error_message());
        CHECK(same);
        n_btf_same += same;
        return;
    }
    struct bpf_btf_info info;
    uint32_t len = sizeof(info);
    memset(&info, 0, sizeof(info));
    CHECK(bpf_btf_get_info_by_fd(fd, &info, &len) == 0);
    uint32_t want_size = info.btf_size;
    unsigned char *want = malloc(want_size + 1);
    memset(&info, 0, sizeof(info));
    info.btf = (uint64_t)(uintptr_t)want;
    info.btf_size = want_size;
    len = sizeof(info);
    int got = want && bpf_btf_get_info_by_fd(fd, &info, &len) == 0;
    CHECK(got);
    int same = got && ours && size == want_size && !memcmp(ours, want, size);
    if (!same) {
        size_t at = 0;
        while (ours && got && at < size && at < want_size && ours[at] == want[at])
            at++;
        fprintf(stderr, "BTF %s (features %s): libksym %zu bytes%s%s, libbpf loaded %u; first difference at byte %zu\n",
                file, feature_text(btf_feats), size, ours ? "" : ": ", ours ? "" : ksym_last_error_message(),
                want_size, at);
    }
    /* Did anything change from the BTF of a kernel with every kind? */
    size_t full_size = 0;
    const unsigned char *full = ksym_bpf_object_btf(o, &full_size);
    n_btf_changed += same && (full_size != size || memcmp(full, ours, size));
    CHECK(same);
    n_btf_same += same;
    free(want);
}

#endif
