/*
 * The bundled loader's preparation of an object (tools/bpf_loader.h): its
 * BTF loaded, its externs and kernel BTF resolved, its maps created with
 * their initial values and slots, its programs relocated (kl_prepare);
 * and everything closed again (kl_unload).
 */
#define _GNU_SOURCE

#include "bpf_loader.h"

/* Map types the kernel creates without BTF key/value types: libbpf clears
 * them for these (perf event, cgroup and stack trace arrays, maps of maps,
 * dev/cpu/xsk maps, sockmaps, queues, stacks). */
static int kl_map_takes_btf(uint32_t type)
{
    switch (type) {
    case 4: case 7: case 8: case 12: case 13: case 14: case 15: case 16: case 17: case 18: case 22: case 23: case 25:
        return 0;
    default:
        return 1;
    }
}

void kl_unload(struct kl_loaded *l)
{
    for (size_t i = 0; i < l->nprogs; i++) {
        if (l->link_fds && l->link_fds[i] >= 0)
            close(l->link_fds[i]);
        if (l->prog_fds && l->prog_fds[i] >= 0)
            close(l->prog_fds[i]);
    }
    for (size_t i = 0; i < l->nmaps; i++) {
        if (l->map_link_fds && l->map_link_fds[i] >= 0)
            close(l->map_link_fds[i]);
        if (l->map_link_fds && l->map_link_fds[i] == KL_REGISTERED) {
            /* Unregister, as libbpf's struct_ops link detach does: a
             * registered struct_ops outlives its map fd otherwise. */
            struct kl_map_elem a;
            uint32_t zero = 0;
            memset(&a, 0, sizeof(a));
            a.map_fd = (uint32_t)l->map_fds[i];
            a.key = kl_ptr(&zero);
            kl_bpf(KL_MAP_DELETE_ELEM, &a, sizeof(a));
        }
        if (l->map_fds[i] >= 0)
            close(l->map_fds[i]);
    }
    if (l->btf_fd >= 0)
        close(l->btf_fd);
    free(l->map_fds);
    free(l->prog_fds);
    free(l->link_fds);
    free(l->map_link_fds);
    memset(l, 0, sizeof(*l));
    l->btf_fd = -1;
}

int kl_fill_slots(struct ksym_bpf_object *obj, struct kl_loaded *l, enum ksym_bpf_slot_kind kind,
                  char *why, size_t why_size)
{
    for (size_t i = 0; i < l->nmaps; i++) {
        struct ksym_bpf_map_info m = { .sz = sizeof(m) };
        if (l->map_fds[i] < 0)
            continue; /* not created (left out, or a struct_ops map without kernel BTF) */
        if (ksym_bpf_map_info(obj, i, &m) != 0) {
            snprintf(why, why_size, "map %zu: %s", i, ksym_last_error_message());
            return ksym_last_error();
        }
        for (size_t j = 0; j < m.slot_count; j++) {
            struct ksym_bpf_map_slot s = { .sz = sizeof(s) };
            if (ksym_bpf_map_slot(obj, i, j, &s) != 0) {
                snprintf(why, why_size, "map `%s` slot %zu: %s", m.name, j, ksym_last_error_message());
                return ksym_last_error();
            }
            if (s.kind != kind)
                continue;
            int fd = kind == KSYM_BPF_SLOT_MAP ? l->map_fds[s.target] : l->prog_fds[s.target];
            if (fd < 0)
                continue;
            int err = kl_map_update(l->map_fds[i], &s.index, &fd);
            if (err) {
                snprintf(why, why_size, "map `%s`: slot [%u]: %s", m.name, s.index, strerror(-err));
                return err;
            }
        }
    }
    return 0;
}

static int kl_skips_map(const struct kl_prepare_opts *opts, const char *name)
{
    for (const char *const *s = opts ? opts->skip_maps : NULL; s && *s; s++)
        if (!strcmp(*s, name))
            return 1;
    return 0;
}

/* Kernels before 5.11 charge BPF maps and programs to RLIMIT_MEMLOCK
 * (later ones to the memory cgroup): as libbpf does when the kernel lacks
 * memcg accounting, raise it, here to the hard limit (unlimited for root),
 * before the first map. A failure leaves the limit as it was: the kernel
 * then says EPERM at BPF_MAP_CREATE, which names the map. */
static void kl_raise_memlock(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_MEMLOCK, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
        struct rlimit want = { RLIM_INFINITY, RLIM_INFINITY };
        if (setrlimit(RLIMIT_MEMLOCK, &want) != 0 && r.rlim_cur < r.rlim_max) {
            r.rlim_cur = r.rlim_max;
            (void)setrlimit(RLIMIT_MEMLOCK, &r);
        }
    }
}

/* `l` empty, sized for the object: every fd -1, every program -ENOENT. */
static int kl_loaded_init(struct ksym_bpf_object *obj, struct kl_loaded *l, char *why, size_t why_size)
{
    memset(l, 0, sizeof(*l));
    l->btf_fd = -1;
    l->nmaps = ksym_bpf_object_map_count(obj);
    l->nprogs = ksym_bpf_object_program_count(obj);
    l->map_fds = calloc(l->nmaps ? l->nmaps : 1, sizeof(int));
    l->prog_fds = calloc(l->nprogs ? l->nprogs : 1, sizeof(int));
    l->link_fds = calloc(l->nprogs ? l->nprogs : 1, sizeof(int));
    l->map_link_fds = calloc(l->nmaps ? l->nmaps : 1, sizeof(int));
    if (!l->map_fds || !l->prog_fds || !l->link_fds || !l->map_link_fds) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < l->nmaps; i++)
        l->map_fds[i] = l->map_link_fds[i] = -1;
    for (size_t i = 0; i < l->nprogs; i++)
        l->prog_fds[i] = -ENOENT, l->link_fds[i] = -1;
    return 0;
}

/* The object's BTF (`size` bytes, as this kernel takes it) loaded into
 * l->btf_fd; 0 or -errno, the kernel's log in `why`. */
static int kl_load_btf(const void *obj_btf, size_t size, struct kl_loaded *l, char *why, size_t why_size)
{
    static char log[1 << 16];
    struct kl_btf_load a;
    memset(&a, 0, sizeof(a));
    a.btf = kl_ptr(obj_btf);
    a.btf_size = (uint32_t)size;
    log[0] = 0;
    long fd = kl_bpf(KL_BTF_LOAD, &a, sizeof(a));
    if (fd < 0) {
        int err = -errno;
        /* Again with the kernel's log, to say why. */
        a.btf_log_buf = kl_ptr(log);
        a.btf_log_size = sizeof(log);
        a.btf_log_level = 1;
        if (kl_bpf(KL_BTF_LOAD, &a, sizeof(a)) >= 0)
            log[0] = 0;
        snprintf(why, why_size, "BPF_BTF_LOAD: %s\n%.4000s", strerror(errno), log);
        return err;
    }
    l->btf_fd = (int)fd;
    return 0;
}

/* A map of maps' inner map template: the kernel takes the inner maps'
 * shape from a template map, created, passed and closed, as libbpf does.
 * Its fd, or -errno (said in `why`). */
static int kl_inner_template(const struct ksym_bpf_map_info *m, const struct kl_loaded *l, char *why,
                             size_t why_size)
{
    struct kl_map_create t;
    memset(&t, 0, sizeof(t));
    t.map_type = m->inner_type;
    t.key_size = m->inner_key_size;
    t.value_size = m->inner_value_size;
    t.max_entries = m->inner_max_entries;
    t.map_flags = m->inner_map_flags;
    /* With its BTF, as libbpf: the kernel compares an inner map's
     * timers and kptrs with the template's, and storage maps
     * (task, inode, sk) are not created without BTF. */
    if (l->btf_fd >= 0 && kl_map_takes_btf(m->inner_type) &&
        (m->inner_btf_key_type_id || m->inner_btf_value_type_id)) {
        t.btf_fd = (uint32_t)l->btf_fd;
        t.btf_key_type_id = m->inner_btf_key_type_id;
        t.btf_value_type_id = m->inner_btf_value_type_id;
    }
    long tfd = kl_bpf(KL_MAP_CREATE, &t, sizeof(t));
    if (tfd < 0 && (t.btf_key_type_id || t.btf_value_type_id)) {
        t.btf_fd = t.btf_key_type_id = t.btf_value_type_id = 0;
        tfd = kl_bpf(KL_MAP_CREATE, &t, sizeof(t));
    }
    if (tfd < 0) {
        int err = -errno;
        snprintf(why, why_size, "BPF_MAP_CREATE `%s`'s inner map template: %s", m->name, strerror(errno));
        return err;
    }
    return (int)tfd;
}

/* Its initial value written and, read-only to programs (.rodata,
 * .kconfig), the map frozen, as libbpf does: the verifier then knows its
 * values. 0 or -errno (said in `why`). */
static int kl_map_initial_value(const struct ksym_bpf_map_info *m, int fd, char *why, size_t why_size)
{
    uint32_t zero = 0;
    int err;
    if ((err = kl_map_update(fd, &zero, m->initial_value)) != 0) {
        snprintf(why, why_size, "initial value of `%s`: %s", m->name, strerror(-err));
        return err;
    }
    if (m->map_flags & KL_F_RDONLY_PROG) {
        uint32_t freeze[1] = { (uint32_t)fd };
        if (kl_bpf(KL_MAP_FREEZE, freeze, sizeof(freeze)) < 0) {
            err = -errno;
            snprintf(why, why_size, "BPF_MAP_FREEZE `%s`: %s", m->name, strerror(errno));
            return err;
        }
    }
    return 0;
}

/* Map `i` created (unless left out) with its initial value, its fd in
 * l->map_fds[i] and given to the object. 0 or a negative code (said in
 * `why`). */
static int kl_create_map(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, char *why, size_t why_size,
                         const struct kl_prepare_opts *opts)
{
    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    struct kl_map_create a;
    int err = 0;
    if (ksym_bpf_map_info(obj, i, &m) != 0) {
        snprintf(why, why_size, "map %zu: %s", i, ksym_last_error_message());
        return ksym_last_error();
    }
    if (kl_skips_map(opts, m.name))
        return 0;
    memset(&a, 0, sizeof(a));
    a.map_type = m.type;
    a.key_size = m.key_size;
    a.value_size = m.value_size;
    a.max_entries = m.max_entries;
    a.map_flags = m.map_flags;
    a.map_extra = m.map_extra;
    a.numa_node = m.numa_node;
    /* A perf event array sized 0 gets one slot per possible CPU, as libbpf does. */
    if (m.type == KL_MAP_PERF_EVENT_ARRAY && !a.max_entries)
        a.max_entries = (uint32_t)kl_possible_cpus();
    kl_object_name(a.map_name, m.name);
    if (m.type == KL_MAP_STRUCT_OPS) {
        /* Its value type is the kernel's: known after resolve_btf
         * only. Without it, the map is not created (kl_attach_struct_ops
         * says why); its programs cannot load either. */
        if (!m.btf_vmlinux_value_type_id)
            return 0;
        a.btf_vmlinux_value_type_id = m.btf_vmlinux_value_type_id;
    }
    if (l->btf_fd >= 0 && kl_map_takes_btf(m.type)) {
        a.btf_fd = (uint32_t)l->btf_fd;
        a.btf_key_type_id = m.btf_key_type_id;
        a.btf_value_type_id = m.btf_value_type_id;
    }
    int inner_fd = -1;
    if (m.inner_type) {
        if ((inner_fd = kl_inner_template(&m, l, why, why_size)) < 0)
            return inner_fd;
        a.inner_map_fd = (uint32_t)inner_fd;
    }
    long fd = kl_bpf(KL_MAP_CREATE, &a, sizeof(a));
    if (fd < 0 && (a.btf_key_type_id || a.btf_value_type_id)) {
        /* Retry without BTF, as libbpf does. */
        a.btf_fd = a.btf_key_type_id = a.btf_value_type_id = 0;
        fd = kl_bpf(KL_MAP_CREATE, &a, sizeof(a));
    }
    if (fd < 0)
        err = -errno;
    if (inner_fd >= 0)
        close(inner_fd);
    if (fd < 0) {
        snprintf(why, why_size, "BPF_MAP_CREATE `%s`: %s", m.name, strerror(-err));
        return err;
    }
    l->map_fds[i] = (int)fd;
    if (m.initial_value && (err = kl_map_initial_value(&m, (int)fd, why, why_size)) != 0)
        return err;
    if ((err = ksym_bpf_object_set_map_fd(obj, i, (int)fd)) != 0) {
        snprintf(why, why_size, "%s", ksym_last_error_message());
        return err;
    }
    return 0;
}

int kl_prepare_opts(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct ksym_btf *btf,
                    struct kl_loaded *l, char *why, size_t why_size, const struct kl_prepare_opts *opts)
{
    size_t btf_size = 0;
    /* The BTF this kernel takes, as libbpf rewrites it (without bpf() the
     * features stay all, and BPF_BTF_LOAD below says why). */
    uint32_t btf_feats = KSYM_BTF_FEAT_ALL;
    ksym_btf_probe_features(&btf_feats);
    const void *obj_btf = ksym_bpf_object_btf_for(obj, btf_feats, &btf_size);
    int err = 0;

    if (why_size)
        why[0] = 0;
    kl_raise_memlock();
    if ((err = kl_loaded_init(obj, l, why, why_size)) != 0)
        return err;
    if (obj_btf && (err = kl_load_btf(obj_btf, btf_size, l, why, why_size)) != 0)
        return err;
    /* Externs and kernel BTF before the maps: resolve_btf fills in the
     * .kconfig map's initial value. A program whose attach target is not
     * in this kernel does not fail resolve_btf (as with libbpf, it fails
     * when loaded: kl_load_prog); what does fail it (a strong extern
     * missing...) is kept in `why`, and relocate reports what stops
     * relocation. */
    if ((err = ksym_bpf_object_resolve_ksyms(obj, cache)) != 0) {
        snprintf(why, why_size, "%s", ksym_last_error_message());
        return err;
    }
    if (btf && ksym_bpf_object_resolve_btf(obj, btf) != 0)
        snprintf(why, why_size, "%s", ksym_last_error_message());
    for (size_t i = 0; i < l->nmaps; i++)
        if ((err = kl_create_map(obj, l, i, why, why_size, opts)) != 0)
            return err;
    if ((err = kl_fill_slots(obj, l, KSYM_BPF_SLOT_MAP, why, why_size)) != 0)
        return err;
    if ((err = ksym_bpf_object_relocate(obj)) != 0) {
        snprintf(why, why_size, "%s", ksym_last_error_message());
        return err;
    }
    return 0;
}

int kl_prepare(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct ksym_btf *btf, struct kl_loaded *l,
               char *why, size_t why_size)
{
    return kl_prepare_opts(obj, cache, btf, l, why, why_size, NULL);
}
