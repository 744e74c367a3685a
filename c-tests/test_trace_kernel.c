/*
 * Aliases attached to targets of their own in the running kernel, through
 * the bundled loader (tools/bpf_loader.h), checked by the kernel's own
 * counters:
 *
 * - tp_btf: on_tp and its aliases on_exec, on_exit, on_enter of
 *   trace.bpf.o, each given its own tracepoint with
 *   ksym_bpf_program_set_attach_target, loaded from the one instruction
 *   copy, attached, triggered by fork + exec + exit; every alias's run
 *   count (BPF_ENABLE_STATS) must have grown by at least what the test
 *   did, a loaded but unattached one must not run, and the shared `.bss`
 *   counter must equal the sum of the run counts.
 * - ksym_bpf_program_expand of count_tp over `sched_process_*`: every
 *   alias loads and attaches; the fork/exec/exit ones run.
 * - fentry: on_fentry and its aliases on bpf_fentry_test1..8: the attach
 *   info of each is checked against /proc/kallsyms (the address) and the
 *   kernel's answer to loading it; where the kernel allows fentry, all are
 *   attached, BPF_PROG_TEST_RUN of one runs bpf_fentry_test1..8, and
 *   bpf_get_func_ip() must have recorded exactly each alias's own
 *   function. Kernels that refuse fentry (EPERM, as these VMs do) get a
 *   visible skip of that live part (a failure when KSYM_REQUIRE has fentry).
 */
#define _GNU_SOURCE

#include "check.h"
#include "../tools/bpf_loader.h"

#include <sys/wait.h>
#include <time.h>

static const char *objdir;

static struct ksym_bpf_object *open_obj(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", objdir, name);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    return o;
}

/* The address of core symbol `name` in /proc/kallsyms (a naive reader). */
static uint64_t kallsyms_addr(const char *name)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], type;
    unsigned long long a;
    uint64_t found = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name) && !strchr(line, '\t')) {
            found = a;
            break;
        }
    fclose(f);
    return found;
}

static size_t prog(struct ksym_bpf_object *o, const char *name)
{
    size_t i = (size_t)-1;
    CHECK(ksym_bpf_object_find_program(o, name, &i) == 0);
    return i;
}

/* Forks `n` children that exec /bin/true (fork, exec, exit each). */
static void fork_exec(int n)
{
    for (int k = 0; k < n; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int st = 0;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
}

static uint64_t runs(struct kl_loaded *l, size_t i)
{
    uint64_t c = 0;
    CHECK(kl_run_count(l->prog_fds[i], &c) == 0);
    return c;
}

static void test_tracepoint_aliases(struct ksym_btf *btf)
{
    struct ksym_bpf_object *o = open_obj("trace.bpf.o");
    if (!o)
        return;
    const char *names[4] = { "on_tp", "on_exec", "on_exit", "on_enter" };
    const char *tps[4] = { "sched_process_fork", "sched_process_exec", "sched_process_exit", "sys_enter" };
    size_t idx[4];
    for (int k = 0; k < 4; k++) {
        idx[k] = prog(o, names[k]);
        if (k > 0)
            CHECK(ksym_bpf_program_set_attach_target(o, idx[k], tps[k], btf) == 0);
    }
    struct kl_loaded l;
    char why[4096];
    int err = kl_prepare(o, NULL, btf, &l, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", why);
        goto out;
    }
    /* Counting from before the first attach: every run is counted. */
    int stats = kl_enable_stats();
    CHECK(stats >= 0);
    size_t cnt0, cnt;
    const struct ksym_bpf_insn *copy = ksym_bpf_program_insns(o, idx[0], &cnt0);
    for (int k = 0; k < 4; k++) {
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        CHECK(ksym_bpf_program_attach_info(o, idx[k], &at) == 0);
        CHECK(at.prog_type == KL_PROG_TRACING && at.expected_attach_type == 23 /* BPF_TRACE_RAW_TP */);
        CHECK(at.target && !strcmp(at.target, tps[k]) && at.module && !strcmp(at.module, "vmlinux"));
        CHECK(at.attach_btf_id > 0 && at.attach_btf_obj_fd == 0);
        CHECK(ksym_bpf_program_insns(o, idx[k], &cnt) == copy && cnt == cnt0);
        CHECK(kl_load_prog(o, &l, idx[k], stdout) >= 0);
        CHECK(kl_attach(o, &l, idx[k]) >= 0);
    }
    /* Loaded, not attached: must never run. */
    size_t idle = prog(o, "count_tp");
    CHECK(ksym_bpf_program_set_attach_target(o, idle, "sched_process_fork", btf) == 0);
    CHECK(kl_load_prog(o, &l, idle, NULL) >= 0);
    uint64_t before[4];
    for (int k = 0; k < 4; k++)
        before[k] = runs(&l, idx[k]);
    fork_exec(3);
    uint64_t after[4], sum = 0;
    for (int k = 0; k < 4; k++) {
        close(l.link_fds[idx[k]]); /* detach: counts stop */
        l.link_fds[idx[k]] = -1;
    }
    /* A run another CPU was in when its link closed still ends (the
     * kernel frees the link after an RCU grace period), adding to .bss
     * before its run count: read both again until the run counts stay
     * the same across the read of .bss. */
    size_t bss;
    uint32_t zero = 0;
    uint64_t counters[2] = { 0, 0 };
    CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0);
    for (int tries = 0; tries < 100; tries++) {
        uint64_t again = 0;
        sum = 0;
        for (int k = 0; k < 4; k++)
            sum += after[k] = runs(&l, idx[k]);
        CHECK(kl_map_lookup(l.map_fds[bss], &zero, counters) == 0);
        for (int k = 0; k < 4; k++)
            again += runs(&l, idx[k]);
        if (again == sum && counters[0] == sum)
            break;
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
    for (int k = 0; k < 4; k++) {
        printf("  %-9s on %-20s ran %llu times (+%llu)\n", names[k], tps[k], (unsigned long long)after[k],
               (unsigned long long)(after[k] - before[k]));
        /* 3 forks, 3 execs, 3 exits, and many more syscalls than 3. */
        CHECK(after[k] - before[k] >= 3);
    }
    CHECK(runs(&l, idle) == 0);
    /* tp_total: every run of the four programs added one. */
    if (counters[0] != sum)
        fprintf(stderr, "tp_total %llu, count_total %llu, sum of runs %llu\n", (unsigned long long)counters[0],
                (unsigned long long)counters[1], (unsigned long long)sum);
    CHECK(counters[0] == sum);
    if (stats >= 0)
        close(stats);
out:
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

static void test_expand_tracepoints(struct ksym_btf *btf)
{
    struct ksym_bpf_object *o = open_obj("trace.bpf.o");
    if (!o)
        return;
    size_t base = ksym_bpf_object_program_count(o), body = prog(o, "count_tp");
    int n = ksym_bpf_program_expand(o, body, "sched_process_*", btf);
    CHECK(n >= 5);
    struct kl_loaded l;
    char why[4096];
    int err = kl_prepare(o, NULL, btf, &l, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", why);
        goto out;
    }
    int stats = kl_enable_stats();
    size_t cnt0, cnt, fork_i = 0, exec_i = 0, exit_i = 0, attached = 0;
    const struct ksym_bpf_insn *copy = ksym_bpf_program_insns(o, body, &cnt0);
    for (size_t i = base; n > 0 && i < base + (size_t)n; i++) {
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        CHECK(ksym_bpf_program_attach_info(o, i, &at) == 0 && ksym_bpf_program_info(o, i, &p) == 0);
        CHECK(p.alias_of == body && ksym_bpf_program_insns(o, i, &cnt) == copy && cnt == cnt0);
        if (!strcmp(at.target, "sched_process_fork"))
            fork_i = i;
        if (!strcmp(at.target, "sched_process_exec"))
            exec_i = i;
        if (!strcmp(at.target, "sched_process_exit"))
            exit_i = i;
        if (kl_load_prog(o, &l, i, NULL) >= 0 && kl_attach(o, &l, i) >= 0)
            attached++;
        else
            fprintf(stderr, "  %s (%s): %s\n", p.name, at.target, strerror(-l.prog_fds[i]));
    }
    printf("  expanded count_tp over sched_process_*: %d aliases, %zu attached, one copy of %zu insns\n", n,
           attached, cnt0);
    CHECK(attached == (size_t)n);
    CHECK(fork_i && exec_i && exit_i);
    fork_exec(2);
    if (fork_i && exec_i && exit_i) {
        CHECK(runs(&l, fork_i) >= 2 && runs(&l, exec_i) >= 2 && runs(&l, exit_i) >= 2);
    }
    if (stats >= 0)
        close(stats);
out:
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

static void test_fentry(struct ksym_btf *btf)
{
    struct ksym_bpf_object *o = open_obj("trace.bpf.o");
    if (!o)
        return;
    const char *names[8] = { "on_fentry", "on_fentry2", "on_fentry3", "on_fentry4",
                             "on_fentry5", "on_fentry6", "on_fentry7", "on_fentry8" };
    size_t idx[8];
    uint64_t want[8];
    for (int k = 0; k < 8; k++) {
        char fn[32];
        snprintf(fn, sizeof(fn), "bpf_fentry_test%d", k + 1);
        idx[k] = prog(o, names[k]);
        if (k > 0)
            CHECK(ksym_bpf_program_set_attach_target(o, idx[k], fn, btf) == 0);
        want[k] = kallsyms_addr(fn);
        CHECK(want[k] != 0);
    }
    struct kl_loaded l;
    char why[4096];
    int err = kl_prepare(o, NULL, btf, &l, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", why);
        goto out;
    }
    for (int k = 0; k < 8; k++) {
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        CHECK(ksym_bpf_program_attach_info(o, idx[k], &at) == 0);
        CHECK(at.prog_type == KL_PROG_TRACING && at.expected_attach_type == 24 /* BPF_TRACE_FENTRY */);
        CHECK(at.attach_btf_id > 0 && at.addr == want[k]);
    }
    int fd = kl_load_prog(o, &l, idx[0], NULL);
    if (fd == -EPERM || fd == -EOPNOTSUPP || fd == -524 /* ENOTSUPP */) {
        NEED_SKIP("fentry", "fentry live part: this kernel refuses fentry programs (%s); their attach info was checked",
                  strerror(-fd));
        goto out;
    }
    /* The body records bpf_get_func_ip(), which fentry has from 5.15: the
     * verifier refuses it before (EINVAL). */
    if (fd == -EINVAL && kernel_has("func_ip") == 0) {
        NEED_SKIP("func_ip", "fentry live part: the body calls bpf_get_func_ip(), which this kernel's fentry "
                             "lacks (BPF_PROG_LOAD: EINVAL); their attach info was checked");
        goto out;
    }
    CHECK(fd >= 0);
    int ok = 1;
    for (int k = 1; k < 8; k++)
        ok &= kl_load_prog(o, &l, idx[k], NULL) >= 0;
    for (int k = 0; k < 8; k++)
        ok &= kl_attach(o, &l, idx[k]) >= 0;
    CHECK(ok);
    /* BPF_PROG_TEST_RUN of any fentry program calls bpf_fentry_test1..8. */
    struct kl_test_run a;
    memset(&a, 0, sizeof(a));
    a.prog_fd = (uint32_t)l.prog_fds[idx[0]];
    a.repeat = 1;
    CHECK(kl_bpf(KL_PROG_TEST_RUN, &a, sizeof(a)) == 0);
    size_t ips;
    CHECK(ksym_bpf_object_find_map(o, "ips", &ips) == 0);
    for (int k = 0; k < 8; k++) {
        uint64_t hits = 0;
        CHECK(kl_map_lookup(l.map_fds[ips], &want[k], &hits) == 0 && hits == 1);
    }
out:
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

int main(void)
{
    objdir = getenv("KSYM_BPF_OBJECTS");
    if (!objdir)
        objdir = "c-tests/bpf";
    int avail = kl_bpf_available();
    if (avail) {
        KERNEL_SKIP("bpf() is not permitted here (%s)", strerror(-avail));
        return finish("test_trace_kernel");
    }
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf) {
        KERNEL_SKIP("no kernel BTF: %s", ksym_last_error_message());
        return finish("test_trace_kernel");
    }
    if (!kallsyms_addr("_text")) {
        KERNEL_SKIP("/proc/kallsyms hides addresses");
        ksym_btf_free(btf);
        return finish("test_trace_kernel");
    }
    test_tracepoint_aliases(btf);
    test_expand_tracepoints(btf);
    test_fentry(btf);
    ksym_btf_free(btf);
    return finish("test_trace_kernel");
}
