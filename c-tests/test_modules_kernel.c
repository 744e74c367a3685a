/*
 * kprobe sections of c-tests/bpf/kprobes.bpf.o, loaded and attached with
 * only what ksym_bpf_program_attach_info reports (issue 21): the program
 * type, the target and its module and address. The program is loaded
 * through the bundled loader (tools/bpf_loader.h) and attached through
 * perf_event_open of the kprobe PMU (/sys/bus/event_source/devices/kprobe/
 * type): the core target by name, the module target (dummy's
 * dummy_get_stats64) by the reported address. Oracles: /proc/kallsyms for
 * the address and module, and the kernel itself (the programs' counters in
 * .bss grow when the functions run: nanosleep(2), and reading the
 * statistics of a dummy device the test creates and removes with ip(8)).
 *
 * Needs the dummy module and kprobes: the qemu guest (make test-guest);
 * elsewhere a visible skip (NEED_SKIP "modules" / "kprobes").
 */
#define _GNU_SOURCE

#include "check.h"
#include "../tools/bpf_loader.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>

#define PROG_KPROBE 2 /* BPF_PROG_TYPE_KPROBE */

/* The address of `name` of `module` ("" for the core) in /proc/kallsyms. */
static uint64_t kallsyms_addr(const char *module, const char *name)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], mod[128], type;
    unsigned long long a;
    uint64_t found = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        mod[0] = 0;
        int n = sscanf(line, "%llx %c %255s [%127[^]]]", &a, &type, sym, mod);
        if (n >= 3 && !strcmp(sym, name) && !strcmp(mod, module)) {
            found = a;
            break;
        }
    }
    fclose(f);
    return found;
}

static int read_int(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* The kprobe PMU's retprobe bit: "config:N" in its format directory. */
static int retprobe_bit(void)
{
    FILE *f = fopen("/sys/bus/event_source/devices/kprobe/format/retprobe", "r");
    int bit = -1;
    if (f) {
        if (fscanf(f, "config:%d", &bit) != 1)
            bit = -1;
        fclose(f);
    }
    return bit;
}

/* perf_event_open of a kprobe on `func` (by name) or `addr` (name NULL);
 * a return probe when `ret`. */
static int kprobe_event(int pmu, const char *func, uint64_t addr, int ret)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = (uint32_t)pmu;
    if (ret) {
        int bit = retprobe_bit();
        CHECK(bit >= 0 && bit < 64);
        if (bit < 0 || bit >= 64)
            return -ENOENT;
        a.config |= 1ull << bit;
    }
    a.config1 = func ? (uint64_t)(uintptr_t)func : 0; /* kprobe_func */
    a.config2 = func ? 0 : addr;                      /* probe_offset / kprobe_addr */
    long fd = syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

static uint64_t counter(struct ksym_bpf_object *o, struct kl_loaded *l, int which)
{
    size_t bss;
    uint32_t zero = 0;
    uint64_t c[3] = { 0, 0, 0 };
    CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0);
    CHECK(kl_map_lookup(l->map_fds[bss], &zero, c) == 0);
    return c[which];
}

static void read_stats(int times)
{
    char buf[64];
    for (int k = 0; k < times; k++) {
        FILE *f = fopen("/sys/class/net/ksymdummy0/statistics/rx_packets", "r");
        CHECK(f != NULL);
        if (!f)
            return;
        CHECK(fgets(buf, sizeof(buf), f) != NULL);
        fclose(f);
    }
}

static void test_kprobes(struct ksym_btf *btf, const char *objdir, int pmu)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/kprobes.bpf.o", objdir);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    if (!o)
        return;
    const char *names[3] = { "on_nanosleep", "on_dummy_stats", "on_dummy_stats_return" };
    const char *targets[3] = { "do_nanosleep", "dummy_get_stats64", "dummy_get_stats64" };
    const char *modules[3] = { "vmlinux", "dummy", "dummy" };
    const int ret[3] = { 0, 0, 1 };
    struct kl_loaded l;
    char why[4096];
    int err = kl_prepare(o, NULL, btf, &l, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", why);
        ksym_bpf_object_free(o);
        return;
    }
    int ev[3] = { -1, -1, -1 };
    for (int k = 0; k < 3; k++) {
        size_t i = (size_t)-1;
        CHECK(ksym_bpf_object_find_program(o, names[k], &i) == 0);
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        CHECK(ksym_bpf_program_attach_info(o, i, &at) == 0);
        uint64_t want = kallsyms_addr(k ? "dummy" : "", targets[k]);
        printf("  %-15s type %u target %s module %s addr %#llx (kallsyms %#llx)\n", names[k], at.prog_type,
               at.target ? at.target : "(null)", at.module ? at.module : "(null)", (unsigned long long)at.addr,
               (unsigned long long)want);
        CHECK(at.prog_type == PROG_KPROBE);
        CHECK(at.target && !strcmp(at.target, targets[k]));
        CHECK(at.module && !strcmp(at.module, modules[k]));
        CHECK(want != 0 && at.addr == want);
        CHECK(!(at.flags & KSYM_ATTACH_TARGET_AT_LOAD));
        /* A return probe says so: the section's kret prefix, as libbpf. */
        CHECK(!!(at.flags & KSYM_ATTACH_RETPROBE) == ret[k]);
        if (at.prog_type != PROG_KPROBE || !at.target)
            continue;
        int fd = kl_load_prog(o, &l, i, stdout);
        CHECK(fd >= 0);
        if (fd < 0)
            continue;
        /* The core target by name, the module's by the reported address. */
        ev[k] = kprobe_event(pmu, k ? NULL : at.target, at.addr, !!(at.flags & KSYM_ATTACH_RETPROBE));
        if (ev[k] < 0)
            fprintf(stderr, "perf_event_open kprobe %s: %s\n", at.target, strerror(-ev[k]));
        CHECK(ev[k] >= 0);
        if (ev[k] < 0)
            continue;
        CHECK(ioctl(ev[k], PERF_EVENT_IOC_SET_BPF, fd) == 0);
        CHECK(ioctl(ev[k], PERF_EVENT_IOC_ENABLE, 0) == 0);
    }
    uint64_t core0 = counter(o, &l, 0), mod0 = counter(o, &l, 1), ret0 = counter(o, &l, 2);
    struct timespec ts = { 0, 1000 };
    for (int k = 0; k < 5; k++)
        nanosleep(&ts, NULL);
    read_stats(7);
    uint64_t core1 = counter(o, &l, 0), mod1 = counter(o, &l, 1), ret1 = counter(o, &l, 2);
    printf("  do_nanosleep ran %llu times, dummy_get_stats64 %llu, returned %llu\n",
           (unsigned long long)(core1 - core0), (unsigned long long)(mod1 - mod0), (unsigned long long)(ret1 - ret0));
    /* Other processes may sleep too: at least ours. */
    CHECK(core1 - core0 >= 5);
    CHECK(mod1 - mod0 >= 7);
    /* The return probe ran once per call that returned. */
    CHECK(ret1 - ret0 >= 7);
    for (int k = 0; k < 3; k++)
        if (ev[k] >= 0)
            close(ev[k]);
    /* Detached: no more runs. */
    read_stats(3);
    CHECK(counter(o, &l, 1) == mod1);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* trace.bpf.o's `kprobe/do_nanosleep+0x4`: the offset is reported
 * (ksym_bpf_attach.target_offset) and kl_attach puts the probe there. The
 * kernel says where its probe is: /sys/kernel/debug/kprobes/list names it
 * `do_nanosleep+0x4`; or, where +4 is not an instruction boundary, the
 * kernel refuses the probe point (EILSEQ), which it never does at +0:
 * either way the offset reached it. */
static void test_kprobe_offset(struct ksym_btf *btf, const char *objdir)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/trace.bpf.o", objdir);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    if (!o)
        return;
    struct kl_loaded l;
    char why[4096];
    size_t i = (size_t)-1;
    CHECK(ksym_bpf_object_find_program(o, "on_kprobe", &i) == 0);
    int err = kl_prepare(o, NULL, btf, &l, why, sizeof(why));
    CHECK(err == 0);
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    CHECK(ksym_bpf_program_attach_info(o, i, &at) == 0);
    CHECK(at.target && !strcmp(at.target, "do_nanosleep") && at.target_offset == 4);
    if (!err && kl_load_prog(o, &l, i, NULL) >= 0) {
        int link = kl_attach(o, &l, i);
        int listed = 0;
        FILE *f = fopen("/sys/kernel/debug/kprobes/list", "r");
        char line[512];
        while (link >= 0 && f && fgets(line, sizeof(line), f))
            listed |= strstr(line, " do_nanosleep+0x4") != NULL;
        if (f)
            fclose(f);
        printf("  kprobe/do_nanosleep+0x4: %s\n",
               link >= 0 ? (listed ? "listed by the kernel at do_nanosleep+0x4" : "attached, not listed")
                         : strerror(-link));
        CHECK((link >= 0 && listed) || link == -EILSEQ);
    } else {
        CHECK(0);
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

int main(void)
{
    const char *objdir = getenv("KSYM_BPF_OBJECTS");
    if (!objdir)
        objdir = "c-tests/bpf";
    if (access("/proc/modules", F_OK) != 0) {
        NEED_SKIP("modules", "this kernel has no loadable modules (/proc/modules)");
        return finish("test_modules_kernel");
    }
    int pmu = read_int("/sys/bus/event_source/devices/kprobe/type");
    if (pmu < 0) {
        NEED_SKIP("kprobes", "no kprobe PMU (/sys/bus/event_source/devices/kprobe/type)");
        return finish("test_modules_kernel");
    }
    int avail = kl_bpf_available();
    if (avail) {
        KERNEL_SKIP("bpf() is not permitted here (%s)", strerror(-avail));
        return finish("test_modules_kernel");
    }
    if (!kallsyms_addr("", "_text")) {
        KERNEL_SKIP("/proc/kallsyms hides addresses");
        return finish("test_modules_kernel");
    }
    if (!kallsyms_addr("dummy", "dummy_get_stats64") && system("modprobe dummy") != 0) {
        NEED_SKIP("modules", "cannot load the dummy module");
        return finish("test_modules_kernel");
    }
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf) {
        KERNEL_SKIP("no kernel BTF: %s", ksym_last_error_message());
        return finish("test_modules_kernel");
    }
    /* dummy makes no device by default (numdummies=0): one of ours. */
    if (system("ip link add ksymdummy0 type dummy") != 0) {
        NEED_SKIP("modules", "cannot create a dummy device (ip link add ksymdummy0 type dummy)");
    } else {
        test_kprobes(btf, objdir, pmu);
        CHECK(system("ip link del ksymdummy0") == 0);
    }
    test_kprobe_offset(btf, objdir);
    ksym_btf_free(btf);
    return finish("test_modules_kernel");
}
