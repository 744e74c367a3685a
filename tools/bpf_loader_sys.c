/*
 * The bundled loader's calls into the kernel (tools/bpf_loader.h): bpf()
 * and perf_event_open's neighbours, map elements, test runs and run
 * counters, and the sysfs and tracefs files it reads.
 */
#define _GNU_SOURCE

#include "bpf_loader.h"

long kl_bpf(int cmd, void *attr, unsigned int size)
{
    return syscall(SYS_bpf, cmd, attr, size);
}

uint64_t kl_ptr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

int kl_possible_cpus(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
    int n = 0, a, b;
    char sep;
    if (!f)
        return 1;
    while (fscanf(f, "%d", &a) == 1) {
        b = a;
        if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
            if (fscanf(f, "%d", &b) != 1)
                break;
            if (fscanf(f, "%c", &sep) != 1)
                sep = 0;
        }
        n += b - a + 1;
        if (sep != ',')
            break;
    }
    fclose(f);
    return n > 0 ? n : 1;
}

int kl_bpf_available(void)
{
    /* r0 = 0; exit */
    static const struct ksym_bpf_insn prog[2] = { { 0xb7, 0, 0, 0 }, { 0x95, 0, 0, 0 } };
    struct kl_prog_load a;
    memset(&a, 0, sizeof(a));
    a.prog_type = KL_PROG_SOCKET_FILTER;
    a.insn_cnt = 2;
    a.insns = kl_ptr(prog);
    a.license = kl_ptr("GPL");
    long fd = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
    if (fd < 0)
        return -errno;
    close((int)fd);
    return 0;
}

int kl_map_update(int fd, const void *key, const void *value)
{
    struct kl_map_elem a;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)fd;
    a.key = kl_ptr(key);
    a.value = kl_ptr(value);
    return kl_bpf(KL_MAP_UPDATE_ELEM, &a, sizeof(a)) < 0 ? -errno : 0;
}

int kl_map_lookup(int fd, const void *key, void *value)
{
    struct kl_map_elem a;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)fd;
    a.key = kl_ptr(key);
    a.value = kl_ptr(value);
    return kl_bpf(KL_MAP_LOOKUP_ELEM, &a, sizeof(a)) < 0 ? -errno : 0;
}

int kl_test_run(int prog_fd, uint32_t *ret)
{
    unsigned char pkt[64], out[64];
    struct kl_test_run a;
    memset(pkt, 0, sizeof(pkt));
    memset(&a, 0, sizeof(a));
    a.prog_fd = (uint32_t)prog_fd;
    a.data_in = kl_ptr(pkt);
    a.data_size_in = sizeof(pkt);
    /* The kernel accepts no output buffer; valgrind's model of bpf() does not. */
    a.data_out = kl_ptr(out);
    a.data_size_out = sizeof(out);
    a.repeat = 1;
    if (kl_bpf(KL_PROG_TEST_RUN, &a, sizeof(a)) < 0)
        return -errno;
    *ret = a.retval;
    return 0;
}

int kl_enable_stats(void)
{
    struct kl_enable_stats a = { 0 }; /* BPF_STATS_RUN_TIME */
    long fd = kl_bpf(KL_ENABLE_STATS, &a, sizeof(a));
    return fd < 0 ? -errno : (int)fd;
}

int kl_run_count(int prog_fd, uint64_t *cnt)
{
    struct kl_prog_info info;
    struct kl_obj_info a;
    memset(&info, 0, sizeof(info));
    memset(&a, 0, sizeof(a));
    a.bpf_fd = (uint32_t)prog_fd;
    a.info_len = sizeof(info);
    a.info = kl_ptr(&info);
    if (kl_bpf(KL_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0)
        return -errno;
    *cnt = info.run_cnt;
    return 0;
}

int kl_read_int(const char *path, const char *fmt)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, fmt, &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

const char *kl_tracefs(void)
{
    static const char *const roots[2] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
    char path[64];
    for (int r = 0; r < 2; r++) {
        snprintf(path, sizeof(path), "%s/events", roots[r]);
        if (access(path, F_OK) == 0)
            return roots[r];
    }
    return NULL;
}

void kl_object_name(char out[16], const char *name)
{
    size_t j = 0;
    memset(out, 0, 16);
    for (size_t k = 0; name[k] && j < 15; k++) {
        char c = name[k];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')
            out[j++] = c;
    }
}
