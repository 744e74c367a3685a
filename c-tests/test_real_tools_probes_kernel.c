/*
 * Real tools' objects, loaded the way their own loaders load them, and run
 * (tests/data/libbpf-tools-0.26: the objects Debian's libbpf-tools 0.26
 * ships inside its tools, compiled by Debian for every kernel at once).
 * Each tool's loader (bcc's libbpf-tools/<tool>.c) makes its choices
 * through libbpf before loading: its options written into `.rodata`
 * (skel->rodata->x), alternatives chosen by what the kernel has (tp_btf or
 * raw_tp, fentry or kprobe), placeholders retargeted
 * (bpf_program__set_attach_target, or a kprobe attached by name). Here
 * the same choices go through libksym (ksym_bpf_object_set_var,
 * ksym_bpf_program_set_autoload, ksym_bpf_program_set_attach_target), the
 * bundled loader (tools/bpf_loader.h) loads and attaches, and a workload
 * of known size runs, and the same work again in a child process, which
 * the tool's pid filter must leave out. The oracle is the kernel: what the
 * tool's own programs count in their maps must be this process's
 * workload, exactly where the programs count every event, at least where
 * the kernel adds its own. Here the kprobe and fentry tools (the
 * tracepoint ones are test_real_tools_kernel.c's, the helpers both use
 * real_tools.h):
 *   - funclatency (kprobe and kretprobe placeholders retargeted, as
 *     funclatency -p PID FUNC): N reads for vfs_read, N reads of a dummy
 *     device's statistics for a module function (dummy_get_stats64);
 *   - fsdist (ext4dist, xfsdist: fentry/fexit placeholders retargeted
 *     where the kernel has fentry, else kprobes attached by name; both
 *     run here): opens, writes, fsyncs, reads and stats of a file on an
 *     ext4 and an xfs file system on loop devices (in the guest both are
 *     modules: the fentry programs attach through their BTF objects);
 *   - tcpconnect -c (kprobe and kretprobe on tcp_v4_connect): N connects
 *     to a local listener.
 * What the kernel cannot do here (no kprobes, no fentry, no modules: the
 * development VM) is a visible skip (NEED_SKIP), a failure under
 * KSYM_REQUIRE; the qemu guest (make test-guest) runs all of it.
 */
#define _GNU_SOURCE

#include "real_tools.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>

/* ---- funclatency: kprobe/dummy_kprobe, kretprobe/dummy_kretprobe -------- */

static int have_kprobes(void)
{
    return kl_read_int("/sys/bus/event_source/devices/kprobe/type", "%d") >= 0;
}

/* funclatency -p PID [-m] FUNC, its hist after `work`. */
static uint64_t funclatency(const char *func, void (*work)(int), int n, int *ok)
{
    struct ksym_bpf_object *o = open_tool("funclatency");
    uint64_t total = 0;
    *ok = 0;
    if (!o)
        return 0;
    set_u32(o, "targ_tgid", (uint32_t)getpid());
    /* funclatency.c: bpf_program__attach_kprobe(obj->progs.dummy_kprobe,
     * false, env.funcname): the placeholder gets the function. */
    CHECK(ksym_bpf_program_set_attach_target(o, prog(o, "dummy_kprobe"), func, NULL) == 0);
    CHECK(ksym_bpf_program_set_attach_target(o, prog(o, "dummy_kretprobe"), func, NULL) == 0);
    struct kl_loaded l;
    int err = run(o, &l, func);
    CHECK(err == 0);
    if (!err) {
        work(n);
        in_child(work, 5);
        uint32_t h[25], zero = 0;
        CHECK(kl_map_lookup(l.map_fds[map(o, ".bss")], &zero, h) == 0);
        total = sum_u32(h, 25);
        *ok = 1;
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
    return total;
}

static void reads(int n)
{
    int fd = open("/proc/self/stat", O_RDONLY);
    char c;
    CHECK(fd >= 0);
    for (int k = 0; k < n; k++)
        CHECK(pread(fd, &c, 1, 0) == 1);
    close(fd);
}

static void dummy_stats(int n)
{
    char buf[64];
    for (int k = 0; k < n; k++) {
        int fd = open("/sys/class/net/ksymtool0/statistics/rx_packets", O_RDONLY);
        CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) > 0);
        close(fd);
    }
}

static void test_funclatency(void)
{
    if (!have_kprobes()) {
        NEED_SKIP("kprobes", "funclatency: no kprobe PMU here");
        return;
    }
    int ok;
    uint64_t n = funclatency("vfs_read", reads, 33, &ok);
    if (ok && n != 33)
        fprintf(stderr, "funclatency vfs_read: %llu returns for 33 reads\n", (unsigned long long)n);
    CHECK(!ok || n == 33);
    if (system("modprobe dummy 2>/dev/null && { ip link del ksymtool0 2>/dev/null; ip link add ksymtool0 type dummy; }"
               " 2>/dev/null") != 0) {
        NEED_SKIP("modules", "funclatency: no dummy module here to probe a module function of");
        return;
    }
    n = funclatency("dummy`dummy_get_stats64", dummy_stats, 21, &ok);
    if (ok && n != 21)
        fprintf(stderr, "funclatency dummy_get_stats64: %llu returns for 21 reads\n", (unsigned long long)n);
    CHECK(!ok || n == 21);
    CHECK(system("ip link del ksymtool0") == 0);
}

/* ---- fsdist: fentry/fexit or kprobes on a file system's file ops -------- */

enum { F_READ, F_WRITE, F_OPEN, F_FSYNC, F_GETATTR, F_MAX };
static const char *const fentry_progs[F_MAX][2] = {
    { "file_read_fentry", "file_read_fexit" },   { "file_write_fentry", "file_write_fexit" },
    { "file_open_fentry", "file_open_fexit" },   { "file_sync_fentry", "file_sync_fexit" },
    { "getattr_fentry", "getattr_fexit" },
};
static const char *const kprobe_progs[F_MAX][2] = {
    { "file_read_entry", "file_read_exit" },   { "file_write_entry", "file_write_exit" },
    { "file_open_entry", "file_open_exit" },   { "file_sync_entry", "file_sync_exit" },
    { "getattr_entry", "getattr_exit" },
};

/* fsdist's fs_configs: the file operations of each file system. */
struct fs_config {
    const char *fs;
    const char *ops[F_MAX];
};
static const struct fs_config ext4 = { "ext4",
                                       { "ext4_file_read_iter", "ext4_file_write_iter", "ext4_file_open",
                                         "ext4_sync_file", "ext4_file_getattr" } };
static const struct fs_config xfs = {
    "xfs", { "xfs_file_read_iter", "xfs_file_write_iter", "xfs_file_open", "xfs_file_fsync", NULL }
};

/* The workload on a file of `dir`: how many of each operation. */
static const int fs_work[F_MAX] = { 7, 5, 3, 2, 4 };

static void file_ops(const char *dir)
{
    char path[512], buf[16] = "libksym";
    struct stat st;
    snprintf(path, sizeof(path), "%s/f", dir);
    int fd = -1;
    for (int k = 0; k < fs_work[F_OPEN]; k++) {
        if (fd >= 0)
            close(fd);
        fd = open(path, O_RDWR | O_CREAT, 0600);
        CHECK(fd >= 0);
    }
    for (int k = 0; k < fs_work[F_WRITE]; k++)
        CHECK(pwrite(fd, buf, sizeof(buf), 16 * k) == (ssize_t)sizeof(buf));
    for (int k = 0; k < fs_work[F_FSYNC]; k++)
        CHECK(fsync(fd) == 0);
    for (int k = 0; k < fs_work[F_READ]; k++)
        CHECK(pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
    for (int k = 0; k < fs_work[F_GETATTR]; k++)
        CHECK(stat(path, &st) == 0);
    close(fd);
}

static const char *ops_dir;

static void file_ops_of(int unused)
{
    (void)unused;
    file_ops(ops_dir);
}

/* The module of kernel function `name` in /proc/kallsyms ("vmlinux" for
 * the core), read here. */
static void kallsyms_module(const char *name, char *module, size_t size)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], mod[128];
    unsigned long long a;
    char type;
    snprintf(module, size, "?");
    while (f && fgets(line, sizeof(line), f)) {
        mod[0] = 0;
        if (sscanf(line, "%llx %c %255s [%127[^]]]", &a, &type, sym, mod) >= 3 && !strcmp(sym, name)) {
            snprintf(module, size, "%s", mod[0] ? mod : "vmlinux");
            break;
        }
    }
    if (f)
        fclose(f);
}

/* fsdist -t FS -p PID with fentry (`use_fentry`, as where
 * fentry_can_attach says yes) or kprobes (as elsewhere). */
static void fsdist_once(const struct fs_config *cfg, const char *dir, int use_fentry)
{
    struct ksym_bpf_object *o = open_tool("fsdist");
    if (!o)
        return;
    set_u32(o, "target_pid", (uint32_t)getpid());
    ops_dir = dir;
    for (int op = 0; op < F_MAX; op++) {
        for (int e = 0; e < 2; e++) {
            size_t f = prog(o, fentry_progs[op][e]), k = prog(o, kprobe_progs[op][e]);
            /* fentry_set_attach_target / attach_kprobes: the operation's
             * function, or autoload off where the file system has none. */
            size_t chosen = use_fentry ? f : k, other = use_fentry ? k : f;
            CHECK(ksym_bpf_program_set_autoload(o, other, false) == 0);
            if (cfg->ops[op])
                CHECK(ksym_bpf_program_set_attach_target(o, chosen, cfg->ops[op], NULL) == 0);
            else
                CHECK(ksym_bpf_program_set_autoload(o, chosen, false) == 0);
        }
    }
    char what[64];
    snprintf(what, sizeof(what), "fsdist -t %s (%s)", cfg->fs, use_fentry ? "fentry" : "kprobes");
    struct kl_loaded l;
    int err = run(o, &l, what);
    if (use_fentry && (err == -EPERM || err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */)) {
        NEED_SKIP("fentry", "%s: this kernel refuses fentry programs (%s)", what, strerror(-err));
        kl_unload(&l);
        ksym_bpf_object_free(o);
        return;
    }
    CHECK(err == 0);
    if (!err) {
        file_ops(dir);
        in_child(file_ops_of, 0);
        /* struct hist { u32 slots[32]; } hists[MAX_OP] in .bss. */
        uint32_t h[F_MAX][32], zero = 0;
        CHECK(kl_map_lookup(l.map_fds[map(o, ".bss")], &zero, h) == 0);
        for (int op = 0; op < F_MAX; op++) {
            uint64_t want = cfg->ops[op] ? (uint64_t)fs_work[op] : 0, got = sum_u32(h[op], 32);
            if (got != want)
                fprintf(stderr, "%s: operation %d (%s) counted %llu times, done %llu times\n", what, op,
                        cfg->ops[op] ? cfg->ops[op] : "none", (unsigned long long)got, (unsigned long long)want);
            CHECK(got == want);
        }
    }
    /* A module's function is attached through its BTF object, the
     * kernel's through vmlinux (0): the module /proc/kallsyms names. */
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    if (!err && use_fentry) {
        char module[128];
        kallsyms_module(cfg->ops[F_READ], module, sizeof(module));
        CHECK(ksym_bpf_program_attach_info(o, prog(o, fentry_progs[F_READ][0]), &at) == 0);
        if (strcmp(at.module, module))
            fprintf(stderr, "%s: %s in %s (obj fd %d), /proc/kallsyms: %s\n", what, at.target, at.module,
                    at.attach_btf_obj_fd, module);
        CHECK(!strcmp(at.module, module));
        CHECK((at.attach_btf_obj_fd > 0) == (strcmp(module, "vmlinux") != 0));
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* A file system of type `fs` made by `mkfs` on a file of the tmpfs `dir`,
 * mounted through a loop device at dir/mnt-FS; 0 when it is. */
static int mount_fs(const char *dir, const char *fs, const char *mkfs, char *mnt, size_t size)
{
    char cmd[4096];
    snprintf(mnt, size, "%s/mnt-%s", dir, fs);
    snprintf(cmd, sizeof(cmd),
             "modprobe loop 2>/dev/null; modprobe %s 2>/dev/null; truncate -s 320M %s/%s.img && "
             "%s %s/%s.img > /dev/null 2>&1 && mkdir -p %s && mount -o loop %s/%s.img %s",
             fs, dir, fs, mkfs, dir, fs, mnt, dir, fs, mnt);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_fsdist(void)
{
    char dir[] = "/tmp/ksym-tools-XXXXXX", mnt[64], cmd[128];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    const struct fs_config *cfgs[2] = { &ext4, &xfs };
    const char *mkfs[2] = { "mkfs.ext4 -q -F", "mkfs.xfs -q -f" };
    for (int c = 0; c < 2; c++) {
        if (mount_fs(dir, cfgs[c]->fs, mkfs[c], mnt, sizeof(mnt)) != 0) {
            NEED_SKIP("modules", "fsdist -t %s: cannot mount an %s file system on a loop device here", cfgs[c]->fs,
                      cfgs[c]->fs);
            continue;
        }
        /* The kernel BTF again: xfs may have been loaded just now. */
        ksym_btf_free(kbtf);
        kbtf = ksym_btf_open(NULL);
        CHECK(kbtf != NULL);
        /* fsdist.c's check_fentry: every operation's function in the
         * kernel's BTF. libksym: their attach info resolves. */
        if (kl_bpf_available() == 0 && have_kprobes())
            fsdist_once(cfgs[c], mnt, 0);
        else
            NEED_SKIP("kprobes", "fsdist -t %s: no kprobe PMU here", cfgs[c]->fs);
        /* Where the file system is a module and the kernel has no module
         * BTF (5.10), fentry_can_attach fails and fsdist runs with kprobes
         * (above): libksym's answer to the same question says why. */
        char module[128];
        kallsyms_module(cfgs[c]->ops[F_READ], module, sizeof(module));
        if (strcmp(module, "vmlinux") && kernel_has("module_btf") == 0) {
            struct ksym_bpf_object *o = open_tool("fsdist");
            size_t f = o ? prog(o, fentry_progs[F_READ][0]) : 0;
            CHECK(o && ksym_bpf_program_set_attach_target(o, f, cfgs[c]->ops[F_READ], kbtf) == KSYM_ERR_NOT_FOUND);
            CHECK_MSG("loaded but without BTF");
            NEED_SKIP("module_btf", "fsdist -t %s: %s is in module %s, which has no BTF here: fsdist takes kprobes",
                      cfgs[c]->fs, cfgs[c]->ops[F_READ], module);
            ksym_bpf_object_free(o);
        } else {
            fsdist_once(cfgs[c], mnt, 1);
        }
        snprintf(cmd, sizeof(cmd), "umount %s", mnt);
        CHECK(system(cmd) == 0);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* ---- tcpconnect -c: kprobe/kretprobe tcp_v4_connect -------------------- */

static void test_tcpconnect(void)
{
    if (!have_kprobes()) {
        NEED_SKIP("kprobes", "tcpconnect: no kprobe PMU here");
        return;
    }
    struct ksym_bpf_object *o = open_tool("tcpconnect");
    if (!o)
        return;
    /* tcpconnect -c -p PID */
    set_u32(o, "filter_pid", (uint32_t)getpid());
    set_bool(o, "do_count", true);
    struct kl_loaded l;
    int err = run(o, &l, "tcpconnect");
    CHECK(err == 0);
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(srv >= 0 && bind(srv, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(srv, 16) == 0);
    CHECK(getsockname(srv, (struct sockaddr *)&a, &alen) == 0);
    enum { N = 6 };
    if (!err) {
        for (int k = 0; k < N; k++) {
            int c = socket(AF_INET, SOCK_STREAM, 0);
            CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, sizeof(a)) == 0);
            close(c);
        }
        /* struct ipv4_flow_key { u32 saddr, daddr; u16 sport, dport; } -> u64 */
        struct {
            uint32_t saddr, daddr;
            uint16_t sport, dport;
        } key = { a.sin_addr.s_addr, a.sin_addr.s_addr, 0, a.sin_port };
        uint64_t count = 0;
        CHECK(kl_map_lookup(l.map_fds[map(o, "ipv4_count")], &key, &count) == 0);
        if (count != N)
            fprintf(stderr, "tcpconnect: %llu connects counted to port %u, %d made\n", (unsigned long long)count,
                    ntohs(a.sin_port), N);
        CHECK(count == N);
    }
    close(srv);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

int main(void)
{
    if (!real_tools_ready())
        return finish("test_real_tools_probes_kernel");
    private_tracefs();
    test_funclatency();
    test_fsdist();
    test_tcpconnect();
    ksym_btf_free(kbtf);
    return finish("test_real_tools_probes_kernel");
}
