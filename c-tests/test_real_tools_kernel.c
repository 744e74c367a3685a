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
 * the kernel adds its own. Here the tracepoint tools (the kprobe and fentry
 * ones are test_real_tools_probes_kernel.c's, the helpers both use
 * real_tools.h):
 *   - syscount (tracepoint raw_syscalls, filter_pid): N getppid calls;
 *   - runqlat (tp_btf, and its raw_tp twins as on a kernel without BTF
 *     tracepoints; targ_tgid, targ_per_thread): one latency each time the
 *     thread was switched back in after it blocked, as the kernel counts
 *     its switches (exact under SCHED_FIFO; a preemption adds at most one);
 *   - execsnoop -x (tracepoints, events through a perf event array read
 *     from one ring per CPU): a child's exec of /bin/true with its
 *     arguments, and a failed exec, each reported once with its pid,
 *     parent, arguments, result and name.
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

/* ---- syscount: tracepoint/raw_syscalls/sys_{enter,exit} --------------- */

static void getppids(int n)
{
    for (int k = 0; k < n; k++)
        (void)syscall(SYS_getppid);
}

static void test_syscount(void)
{
    struct ksym_bpf_object *o = open_tool("syscount");
    if (!o)
        return;
    /* syscount -p PID: skel->rodata->filter_pid = env.pid. */
    set_u32(o, "filter_pid", (uint32_t)getpid());
    struct kl_loaded l;
    int err = run(o, &l, "syscount");
    if (err == -ENOENT && !kl_tracefs()) {
        NEED_SKIP("tracefs", "syscount: no tracefs to find raw_syscalls' tracepoint ids in");
    } else {
        CHECK(err == 0);
        if (!err) {
            enum { N = 57 };
            getppids(N);
            in_child(getppids, 13);
            /* struct data_t { u64 count; u64 total_ns; char comm[16]; } keyed by syscall number. */
            uint32_t key = SYS_getppid;
            uint64_t v[4] = { 0 };
            CHECK(kl_map_lookup(l.map_fds[map(o, "data")], &key, v) == 0);
            if (v[0] != N)
                fprintf(stderr, "syscount: getppid counted %llu times, called %d times\n", (unsigned long long)v[0], N);
            CHECK(v[0] == N);
        }
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* ---- runqlat: tp_btf/sched_* or raw_tp/sched_* -------------------------- */

/* This thread's context switches so far, as the kernel counts them
 * (/proc/thread-self/status: voluntary, when it blocked; nonvoluntary,
 * when it was preempted), and its major page faults (/proc/thread-self/
 * stat, the 12th field). 0 when all three were read. */
struct switches {
    long vol, invol, majflt;
};

static int thread_switches(struct switches *s)
{
    char line[256], stat[1024];
    int found = 0;
    FILE *f = fopen("/proc/thread-self/status", "r");
    while (f && fgets(line, sizeof(line), f))
        found += sscanf(line, "voluntary_ctxt_switches: %ld", &s->vol) == 1 ||
                 sscanf(line, "nonvoluntary_ctxt_switches: %ld", &s->invol) == 1;
    if (f)
        fclose(f);
    /* "pid (comm) state ppid ...": the fields after the last ')'. */
    f = fopen("/proc/thread-self/stat", "r");
    const char *rest = f && fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
    if (f)
        fclose(f);
    found += rest && sscanf(rest, ") %*c %*d %*d %*d %*d %*d %*u %*u %*u %ld", &s->majflt) == 1;
    return found == 3 ? 0 : -1;
}

/* The latencies runqlat's histogram of thread `key` holds (its comm
 * left in h[26...]), and in `*s` the thread's switches at that moment:
 * both read with no switch between them (read again until the counts
 * are the same before and after). */
static uint64_t latencies(int hists, uint32_t key, uint32_t h[30], struct switches *s)
{
    uint64_t n = 0;
    for (int tries = 0; tries < 100; tries++) {
        struct switches before = { -1, -1, -1 };
        thread_switches(&before);
        memset(h, 0, 30 * sizeof(*h));
        n = kl_map_lookup(hists, &key, h) == 0 ? sum_u32(h, 26) : 0;
        if (thread_switches(s) == 0 && before.vol == s->vol && before.invol == s->invol)
            break;
    }
    return n;
}

/* `rounds` round trips with a child process through two pipes: this
 * thread writes a byte and blocks reading the answer, the child answers
 * from its own system call. Both run on one CPU, SCHED_FIFO where the
 * kernel allows it (`*fifo` says), so that this thread blocks once per
 * round and nothing preempts it. Pipes, affinity and policy are the
 * caller's before and after. */
struct pingpong {
    int ask[2], answer[2];
    pid_t child;
};

static int pingpong_start(struct pingpong *p, cpu_set_t *saved, int *fifo)
{
    cpu_set_t one;
    int cpu = sched_getcpu();
    CHECK(cpu >= 0 && sched_getaffinity(0, sizeof(*saved), saved) == 0);
    CPU_ZERO(&one);
    CPU_SET(cpu < 0 ? 0 : cpu, &one);
    CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
    struct sched_param sp = { .sched_priority = 1 };
    *fifo = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    if (!*fifo)
        fprintf(stderr, "runqlat: SCHED_FIFO refused (%s): preemptions make the count a range\n", strerror(errno));
    if (pipe(p->ask) != 0 || pipe(p->answer) != 0)
        return -1;
    p->child = fork();
    if (p->child == 0) {
        /* cat(1) writes each byte back as it reads it. */
        if (dup2(p->ask[0], 0) == 0 && dup2(p->answer[1], 1) == 1) {
            close(p->ask[1]);
            close(p->answer[0]);
            execlp("cat", "cat", (char *)NULL);
        }
        _exit(127);
    }
    close(p->ask[0]);
    close(p->answer[1]);
    return p->child > 0 ? 0 : -1;
}

static void pingpong(struct pingpong *p, int rounds)
{
    char c = 'x';
    for (int k = 0; k < rounds; k++)
        CHECK(write(p->ask[1], &c, 1) == 1 && read(p->answer[0], &c, 1) == 1);
}

static void pingpong_stop(struct pingpong *p, const cpu_set_t *saved)
{
    int st = 0;
    close(p->ask[1]);
    close(p->answer[0]);
    CHECK(waitpid(p->child, &st, 0) == p->child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    struct sched_param sp = { .sched_priority = 0 };
    CHECK(sched_setscheduler(0, SCHED_OTHER, &sp) == 0);
    CHECK(sched_setaffinity(0, sizeof(*saved), saved) == 0);
}

static void runqlat_once(int use_btf)
{
    struct ksym_bpf_object *o = open_tool("runqlat");
    if (!o)
        return;
    /* runqlat -L -p PID: targ_per_thread, targ_tgid. */
    set_u32(o, "targ_tgid", (uint32_t)getpid());
    set_bool(o, "targ_per_thread", true);
    const char *btf_progs[3] = { "sched_wakeup", "sched_wakeup_new", "sched_switch" };
    const char *raw_progs[3] = { "handle_sched_wakeup", "handle_sched_wakeup_new", "handle_sched_switch" };
    for (int k = 0; k < 3; k++) {
        autoload(o, btf_progs[k], use_btf);
        autoload(o, raw_progs[k], !use_btf);
    }
    struct kl_loaded l;
    int err = run(o, &l, use_btf ? "runqlat (tp_btf)" : "runqlat (raw_tp)");
    CHECK(err == 0);
    struct pingpong p;
    cpu_set_t saved;
    int fifo = 0;
    if (!err && pingpong_start(&p, &saved, &fifo) == 0) {
        enum { N = 20 };
        /* struct hist { u32 slots[26]; char comm[16]; } keyed by thread id. */
        uint32_t key = (uint32_t)getpid(), h[30];
        int hists = l.map_fds[map(o, "hists")];
        struct switches s0, s1;
        pingpong(&p, 2); /* the code's pages faulted in */
        uint64_t h0 = latencies(hists, key, h, &s0);
        pingpong(&p, N);
        uint64_t n = latencies(hists, key, h, &s1) - h0;
        pingpong_stop(&p, &saved);
        /* runqlat counts a latency when a thread is switched in with a
         * start time: set by sched_wakeup, or by sched_switch when the
         * thread was preempted while runnable. So every switch back in
         * after the thread blocked is one latency: its wakeup came from
         * the child's system call, in task context on the same CPU,
         * where no BPF program of the tool can already be running (the
         * kernel skips a program that an interrupt enters again; a
         * major fault's wakeup comes from one, so each allows one
         * latency less). A preemption adds at most one latency (none when
         * the thread was preempted after it set itself to sleep, which
         * sched_switch does not count as runnable). Under SCHED_FIFO
         * nothing of the normal class preempts the thread, and the count
         * is exact: one latency per block. Either way the thread switched
         * out at least once per round trip. */
        long vol = s1.vol - s0.vol, invol = s1.invol - s0.invol, majflt = s1.majflt - s0.majflt;
        int ok = vol + invol >= N && (long)n >= vol - majflt && (long)n <= vol + invol;
        if (!ok)
            fprintf(stderr,
                    "runqlat: %llu run queue latencies for %ld blocks, %ld preemptions and %ld major faults "
                    "in %d round trips (%s)\n",
                    (unsigned long long)n, vol, invol, majflt, N, fifo ? "SCHED_FIFO" : "SCHED_OTHER");
        CHECK(ok);
        /* The thread's name, as the kernel gives it. */
        char comm[17] = "";
        int fd = open("/proc/self/comm", O_RDONLY);
        ssize_t len = fd >= 0 ? read(fd, comm, 16) : -1;
        if (fd >= 0)
            close(fd);
        CHECK(len > 1);
        if (len > 1)
            comm[len - 1] = 0;
        CHECK(!strncmp((const char *)&h[26], comm, 16));
    } else if (!err) {
        CHECK(0);
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

static void test_runqlat(void)
{
    /* runqlat.c: probe_tp_btf("sched_wakeup") picks the tp_btf programs,
     * else the raw_tp ones. libksym's answer: the tp_btf program's target
     * resolves in this kernel's BTF. Both are run (the second as on a
     * kernel without BTF tracepoints). */
    struct ksym_bpf_object *o = open_tool("runqlat");
    if (!o)
        return;
    CHECK(ksym_bpf_object_resolve_btf(o, kbtf) == 0);
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    CHECK(ksym_bpf_program_attach_info(o, prog(o, "sched_wakeup"), &at) == 0 && at.attach_btf_id > 0);
    ksym_bpf_object_free(o);
    runqlat_once(1);
    runqlat_once(0);
}

/* ---- execsnoop: tracepoint/syscalls/sys_{enter,exit}_execve, events
 * through a perf event array, one ring per CPU as libbpf's perf_buffer
 * makes them ---------------------------------------------------------- */

struct ring {
    int fd;
    unsigned char *base; /* the header page, then `size` bytes of data */
    size_t size;
};

/* A BPF output ring on each CPU that has one, its fd at the CPU's key of
 * perf event array `map_fd`; how many. */
static int rings_open(int map_fd, struct ring *r, int ncpu)
{
    long page = sysconf(_SC_PAGESIZE);
    int n = 0;
    for (int cpu = 0; cpu < ncpu; cpu++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.type = PERF_TYPE_SOFTWARE;
        a.config = PERF_COUNT_SW_BPF_OUTPUT;
        a.sample_type = PERF_SAMPLE_RAW;
        a.sample_period = 1;
        a.wakeup_events = 1;
        int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
            continue; /* a possible CPU that is offline */
        size_t size = 16 * (size_t)page;
        void *base = mmap(NULL, (size_t)page + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        uint32_t key = (uint32_t)cpu;
        CHECK(base != MAP_FAILED && kl_map_update(map_fd, &key, &fd) == 0 &&
              ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0);
        r[n].fd = fd;
        r[n].base = base == MAP_FAILED ? NULL : base;
        r[n].size = size;
        n++;
    }
    return n;
}

/* Each sample's raw data of every ring, to `cb`; the rings emptied. */
static void rings_read(struct ring *r, int n, void (*cb)(const unsigned char *raw, uint32_t size))
{
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < n; i++) {
        if (!r[i].base)
            continue;
        struct perf_event_mmap_page *h = (void *)r[i].base;
        unsigned char *data = r[i].base + page;
        uint64_t head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE), tail = h->data_tail;
        while (tail < head) {
            struct perf_event_header eh;
            unsigned char rec[16384];
            for (size_t k = 0; k < sizeof(eh); k++)
                ((unsigned char *)&eh)[k] = data[(tail + k) % r[i].size];
            if (eh.size < sizeof(eh) || eh.size > sizeof(rec))
                break;
            for (size_t k = 0; k < eh.size; k++)
                rec[k] = data[(tail + k) % r[i].size];
            if (eh.type == PERF_RECORD_SAMPLE) {
                uint32_t raw;
                memcpy(&raw, rec + sizeof(eh), sizeof(raw));
                if (raw <= eh.size - sizeof(eh) - sizeof(raw))
                    cb(rec + sizeof(eh) + sizeof(raw), raw);
            }
            tail += eh.size;
        }
        __atomic_store_n(&h->data_tail, tail, __ATOMIC_RELEASE);
    }
}

static void rings_close(struct ring *r, int n)
{
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < n; i++) {
        if (r[i].base)
            munmap(r[i].base, (size_t)page + r[i].size);
        close(r[i].fd);
    }
}

/* execsnoop's struct event (bpftool's dump of the object's BTF: 7720
 * bytes), the fields read here. */
struct exec_event {
    int32_t pid, ppid;
    uint32_t uid;
    int32_t retval, args_count;
    uint32_t args_size;
    char comm[16];
    char args[7720 - 40];
};

static pid_t exec_child_pid;
static int exec_seen, exec_ok, exec_failed_seen, exec_failing;
static char exec_comm[17];
static char self_path[4096];

static void on_exec(const unsigned char *raw, uint32_t size)
{
    struct exec_event e;
    memset(&e, 0, sizeof(e));
    memcpy(&e, raw, size < sizeof(e) ? size : sizeof(e));
    if (e.pid != exec_child_pid || (exec_failing && e.retval == 0))
        return; /* another process's exec, or the child's of this test */
    exec_seen++;
    static const char args[] = "/bin/true\0ksym-execsnoop\0" "42";
    if (e.retval == 0) {
        /* The filename, then argv[1...] (execsnoop skips argv[0]). */
        exec_ok = e.ppid == getpid() && e.uid == getuid() && e.args_count == 3 &&
                  e.args_size == sizeof(args) && !memcmp(e.args, args, sizeof(args)) &&
                  !strncmp(e.comm, "true", 16);
        if (!exec_ok)
            fprintf(stderr, "execsnoop: pid %d ppid %d uid %u retval %d args %d (%u bytes) comm %.16s\n", e.pid,
                    e.ppid, e.uid, e.retval, e.args_count, e.args_size, e.comm);
    } else {
        static const char bad[] = "/nonexistent/ksym-execsnoop";
        exec_failed_seen = e.retval == -ENOENT && !strncmp(e.args, bad, sizeof(bad)) &&
                           !strncmp(e.comm, exec_comm, 16);
    }
}

/* execv(path) with the arguments `true ksym-execsnoop 42`, copied to the
 * stack first: a tracepoint program reads them without faulting pages in,
 * and a child's pages of the binary's own constants are not mapped until
 * it touches them. */
static void exec_args(const char *path)
{
    char file[64], a0[8], a1[32], a2[8];
    snprintf(file, sizeof(file), "%s", path);
    snprintf(a0, sizeof(a0), "true");
    snprintf(a1, sizeof(a1), "ksym-execsnoop");
    snprintf(a2, sizeof(a2), "42");
    char *argv[4] = { a0, a1, a2, NULL };
    execv(file, argv);
}

/* A child that execs /bin/true once told to; or (`failing`) this test's
 * own binary, which then execs a file that does not exist: run natively
 * even under valgrind (which does not trace children, and answers an
 * execve of a missing file itself, never reaching the kernel). */
static void exec_once(int failing)
{
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
            _exit(126);
        if (failing) {
            setenv("KSYM_TEST_EXEC_MISSING", "1", 1);
            execl(self_path, self_path, (char *)NULL);
        } else {
            exec_args("/bin/true");
        }
        _exit(127);
    }
    close(p[0]);
    exec_child_pid = pid;
    CHECK(write(p[1], "x", 1) == 1);
    close(p[1]);
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
}

static void test_execsnoop(void)
{
    struct ksym_bpf_object *o = open_tool("execsnoop");
    if (!o)
        return;
    /* execsnoop -x: failed execs too (ignore_failed false). */
    set_bool(o, "ignore_failed", false);
    struct kl_loaded l;
    int err = run(o, &l, "execsnoop");
    if (err == -ENOENT && !kl_tracefs()) {
        NEED_SKIP("tracefs", "execsnoop: no tracefs to find the execve tracepoints' ids in");
    } else {
        CHECK(err == 0);
        struct ring r[512];
        int ncpu = kl_possible_cpus();
        int n = err ? 0 : rings_open(l.map_fds[map(o, "events")], r, ncpu < 512 ? ncpu : 512);
        CHECK(err || n > 0);
        /* The failing process's name: this binary's, as the kernel cuts
         * it (15 bytes). */
        const char *base = strrchr(self_path, '/');
        snprintf(exec_comm, sizeof(exec_comm), "%.15s", base ? base + 1 : self_path);
        if (n > 0) {
            exec_once(0);
            rings_read(r, n, on_exec);
            CHECK(exec_seen == 1 && exec_ok);
            exec_seen = 0;
            exec_failing = 1;
            exec_once(1);
            rings_read(r, n, on_exec);
            CHECK(exec_seen == 1 && exec_failed_seen);
            exec_failing = 0;
        }
        rings_close(r, n);
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (getenv("KSYM_TEST_EXEC_MISSING")) {
        exec_args("/nonexistent/ksym-execsnoop");
        return errno == ENOENT ? 3 : 127;
    }
    if (!realpath(argv[0], self_path))
        snprintf(self_path, sizeof(self_path), "%s", argv[0]);
    if (!real_tools_ready())
        return finish("test_real_tools_kernel");
    private_tracefs();
    test_syscount();
    test_runqlat();
    test_execsnoop();
    ksym_btf_free(kbtf);
    return finish("test_real_tools_kernel");
}
