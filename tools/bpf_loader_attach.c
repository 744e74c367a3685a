/*
 * The bundled loader's attachment (tools/bpf_loader.h): kprobes and
 * tracepoints through perf events, raw tracepoints and BTF-attached
 * programs through bpf(), struct_ops maps registered or linked.
 */
#define _GNU_SOURCE

#include "bpf_loader.h"

int kl_perf_attach(uint32_t type, uint64_t config, uint64_t config1, uint64_t config2, int prog_fd)
{
    struct kl_perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = type;
    a.size = sizeof(a);
    a.config = config;
    a.config1 = config1;
    a.config2 = config2;
    long fd = syscall(SYS_perf_event_open, &a, -1, 0, -1, KL_PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (ioctl((int)fd, KL_PERF_EVENT_IOC_SET_BPF, prog_fd) != 0 || ioctl((int)fd, KL_PERF_EVENT_IOC_ENABLE, 0) != 0) {
        int err = -errno;
        close((int)fd);
        return err;
    }
    return (int)fd;
}

int kl_attach_kprobe(const char *func, uint64_t offset, int ret, int prog_fd)
{
    int pmu = kl_read_int("/sys/bus/event_source/devices/kprobe/type", "%d");
    int bit = ret ? kl_read_int("/sys/bus/event_source/devices/kprobe/format/retprobe", "config:%d") : 0;
    if (pmu < 0 || bit < 0 || bit > 63)
        return -EOPNOTSUPP;
    return kl_perf_attach((uint32_t)pmu, ret ? 1ull << bit : 0, (uint64_t)(uintptr_t)func, offset, prog_fd);
}

int kl_attach_tracepoint(const char *category, const char *name, int prog_fd)
{
    const char *root = kl_tracefs();
    char path[512];
    if (!root)
        return -ENOENT;
    snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, category, name);
    int id = kl_read_int(path, "%d");
    if (id < 0)
        return -ENOENT;
    return kl_perf_attach(KL_PERF_TYPE_TRACEPOINT, (uint64_t)id, 0, 0, prog_fd);
}

int kl_attach(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i)
{
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    if (l->prog_fds[i] < 0)
        return -EBADF;
    if (ksym_bpf_program_attach_info(obj, i, &at) != 0)
        return ksym_last_error();
    long fd;
    if (at.prog_type == KL_PROG_KPROBE && at.target) {
        return l->link_fds[i] =
                   kl_attach_kprobe(at.target, at.target_offset, (at.flags & KSYM_ATTACH_RETPROBE) != 0, l->prog_fds[i]);
    } else if (at.prog_type == KL_PROG_TRACEPOINT) {
        if (!at.target)
            return l->link_fds[i] = -EOPNOTSUPP; /* `SEC("tracepoint")`: no target */
        if (!at.tp_category)
            return l->link_fds[i] = -EINVAL;
        return l->link_fds[i] = kl_attach_tracepoint(at.tp_category, at.target, l->prog_fds[i]);
    } else if (at.prog_type == KL_PROG_RAW_TRACEPOINT || at.prog_type == KL_PROG_RAW_TRACEPOINT_WRITABLE) {
        struct kl_raw_tp_open a;
        memset(&a, 0, sizeof(a));
        a.name = kl_ptr(at.target);
        a.prog_fd = (uint32_t)l->prog_fds[i];
        fd = kl_bpf(KL_RAW_TRACEPOINT_OPEN, &a, sizeof(a));
    } else if (at.prog_type == KL_PROG_TRACING || at.prog_type == KL_PROG_LSM || at.prog_type == KL_PROG_EXT) {
        struct kl_raw_tp_open a;
        memset(&a, 0, sizeof(a));
        a.prog_fd = (uint32_t)l->prog_fds[i];
        fd = kl_bpf(KL_RAW_TRACEPOINT_OPEN, &a, sizeof(a));
        if (fd < 0) {
            struct kl_link_create c;
            memset(&c, 0, sizeof(c));
            c.prog_fd = (uint32_t)l->prog_fds[i];
            c.attach_type = at.expected_attach_type;
            fd = kl_bpf(KL_LINK_CREATE, &c, sizeof(c));
        }
    } else {
        return l->link_fds[i] = -EOPNOTSUPP;
    }
    return l->link_fds[i] = fd < 0 ? -errno : (int)fd;
}

int kl_attach_struct_ops(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, char *why,
                         size_t why_size)
{
    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    if (ksym_bpf_map_info(obj, i, &m) != 0) {
        snprintf(why, why_size, "map %zu: %s", i, ksym_last_error_message());
        return ksym_last_error();
    }
    if (m.type != KL_MAP_STRUCT_OPS || !m.struct_ops_value) {
        snprintf(why, why_size, "map `%s`: %s", m.name,
                 m.type != KL_MAP_STRUCT_OPS ? "not a struct_ops map"
                                             : "its kernel value is unknown: call kl_prepare with kernel BTF");
        return -EINVAL;
    }
    if (l->map_fds[i] < 0) {
        snprintf(why, why_size, "struct_ops map `%s` was not created", m.name);
        return -EBADF;
    }
    unsigned char *value = malloc(m.struct_ops_value_size);
    if (!value) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    memcpy(value, m.struct_ops_value, m.struct_ops_value_size);
    int err = 0;
    for (size_t j = 0; j < m.slot_count && !err; j++) {
        struct ksym_bpf_map_slot s = { .sz = sizeof(s) };
        if (ksym_bpf_map_slot(obj, i, j, &s) != 0) {
            snprintf(why, why_size, "map `%s` slot %zu: %s", m.name, j, ksym_last_error_message());
            err = ksym_last_error();
        } else if (s.kind == KSYM_BPF_SLOT_STRUCT_OPS) {
            if (l->prog_fds[s.target] < 0) {
                struct ksym_bpf_program_info p = { .sz = sizeof(p) };
                ksym_bpf_program_info(obj, s.target, &p);
                snprintf(why, why_size, "struct_ops `%s`: program `%s` is not loaded", m.name, p.name);
                err = -EBADF;
            } else {
                uint64_t fd = (uint64_t)l->prog_fds[s.target];
                memcpy(value + s.index, &fd, sizeof(fd));
            }
        }
    }
    uint32_t zero = 0;
    if (!err && (err = kl_map_update(l->map_fds[i], &zero, value)) != 0)
        snprintf(why, why_size, "registering struct_ops `%s` (BPF_MAP_UPDATE_ELEM): %s", m.name, strerror(-err));
    free(value);
    if (err)
        return err;
    if (!(m.map_flags & KL_F_LINK)) {
        l->map_link_fds[i] = KL_REGISTERED;
        return 0;
    }
    struct kl_link_create c;
    memset(&c, 0, sizeof(c));
    c.prog_fd = (uint32_t)l->map_fds[i]; /* the map, for a struct_ops link */
    c.attach_type = KL_ATTACH_STRUCT_OPS;
    long fd = kl_bpf(KL_LINK_CREATE, &c, sizeof(c));
    if (fd < 0) {
        err = -errno;
        snprintf(why, why_size, "attaching struct_ops `%s` (BPF_LINK_CREATE): %s", m.name, strerror(errno));
        return err;
    }
    l->map_link_fds[i] = (int)fd;
    return 0;
}
