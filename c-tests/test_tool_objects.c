/*
 * Objects in the style of real tracing tools (c-tests/bpf: alternatives,
 * placeholders, guards, kversion, optional, twins), each with the loader a
 * tool would write for it: the object prepared (ksym_bpf_object_resolve_btf
 * succeeds though some of its programs' targets are missing), the loader's
 * choices applied (ksym_bpf_program_set_autoload,
 * ksym_bpf_program_set_attach_target, before and after resolve_btf), then
 * the chosen programs loaded, attached and run through the bundled loader
 * (tools/bpf_loader.h). The oracles are the kernel (it loads what the
 * verifier accepts, and the programs count what they see: the test's own
 * syscalls, one exec of its child), tracefs (which tracepoints exist),
 * /proc/kallsyms, read naively here, the vDSO's LINUX_VERSION_CODE note
 * (the kernel's own version code), and the 6.1 kernel's BTF of
 * tests/data for a kernel without the newer targets (checked by hand:
 * bpftool btf dump of it has no btf_trace_sched_prepare_exec, no
 * bpf_task_from_pid).
 */
#define _GNU_SOURCE

#include "check.h"
#include "../tools/bpf_loader.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/syscall.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/wait.h>

static const char *objdir;
static int live; /* bpf() works here */

/* The `.bss` of every object (c-tests/bpf/tool_style.h). */
struct tool_state {
    uint32_t tgid;
    uint32_t version;
    uint64_t hits[8];
};

static struct ksym_bpf_object *open_obj(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", objdir, name);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    return o;
}

static size_t prog(struct ksym_bpf_object *o, const char *name)
{
    size_t i = (size_t)-1;
    CHECK(ksym_bpf_object_find_program(o, name, &i) == 0);
    return i;
}

/* The 6.1 kernel's BTF of tests/data (no modules); NULL with a SKIP. */
static struct ksym_btf *open_61(void)
{
    static char path[512];
    const char *data = getenv("KSYM_TESTDATA");
    if (!data) {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no 6.1 kernel BTF");
        return NULL;
    }
    snprintf(path, sizeof(path), "%s/linux-6.1-cloud/btf/vmlinux", data);
    KSYM_OPTS(ksym_btf_opts, bo, .vmlinux_btf_path = path, .module_btf_dir = "", .filter_functions_path = "");
    struct ksym_btf *b = ksym_btf_open(&bo);
    CHECK(b != NULL);
    return b;
}

/* ksym_bpf_program_attach_info's return, with `out` written either way. */
static int attach_of(struct ksym_bpf_object *o, size_t i, struct ksym_bpf_attach *at)
{
    memset(at, 0, sizeof(*at));
    at->sz = sizeof(*at);
    return ksym_bpf_program_attach_info(o, i, at);
}

static size_t bss_of(struct ksym_bpf_object *o)
{
    size_t m = (size_t)-1;
    CHECK(ksym_bpf_object_find_map(o, ".bss", &m) == 0);
    return m;
}

static void set_state(struct kl_loaded *l, size_t bss, uint32_t tgid)
{
    struct tool_state s;
    uint32_t zero = 0;
    memset(&s, 0, sizeof(s));
    s.tgid = tgid;
    CHECK(kl_map_update(l->map_fds[bss], &zero, &s) == 0);
}

static struct tool_state get_state(struct kl_loaded *l, size_t bss)
{
    struct tool_state s;
    uint32_t zero = 0;
    memset(&s, 0, sizeof(s));
    CHECK(kl_map_lookup(l->map_fds[bss], &zero, &s) == 0);
    return s;
}

/* Forks a child that waits for the word, then execs /bin/true; the
 * state's tgid is set to the child's pid before the word is given.
 * Returns after it exited. */
static void exec_child(struct kl_loaded *l, size_t bss)
{
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
            _exit(126);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    set_state(l, bss, (uint32_t)pid);
    CHECK(write(p[1], "x", 1) == 1);
    close(p[1]);
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A few syscalls of this process. */
static void some_syscalls(void)
{
    for (int k = 0; k < 5; k++)
        (void)getppid();
}

/* Prepares `o` for the running kernel and loads the programs whose
 * autoload is on; 0 when all of them loaded. */
static int load(struct ksym_bpf_object *o, struct ksym_btf *btf, struct kl_loaded *l)
{
    char why[4096];
    int err = kl_prepare(o, NULL, btf, l, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", why);
        return err;
    }
    return (int)kl_load_autoload(o, l, stdout);
}

static int tracefs_has(const char *event, int *known)
{
    char path[256];
    const char *roots[2] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
    for (int r = 0; r < 2; r++) {
        if (access(roots[r], F_OK) != 0)
            continue;
        *known = 1;
        snprintf(path, sizeof(path), "%s/%s", roots[r], event);
        return access(path, F_OK) == 0;
    }
    *known = 0;
    return 0;
}

/* Alternatives: sched_prepare_exec where the kernel has it, else
 * sched_process_exec. The loader tries the newer one's attach info. */
static size_t choose_exec(struct ksym_bpf_object *o, size_t newer, size_t older)
{
    struct ksym_bpf_attach at;
    if (attach_of(o, newer, &at) == 0) {
        CHECK(ksym_bpf_program_set_autoload(o, older, false) == 0);
        return newer;
    }
    CHECK(at.error == KSYM_ERR_NOT_FOUND && strstr(at.error_message, "sched_prepare_exec"));
    CHECK(ksym_bpf_program_set_autoload(o, newer, false) == 0);
    return older;
}

static void test_alternatives(struct ksym_btf *btf, struct ksym_btf *b61)
{
    if (b61) {
        /* A 6.1 kernel: no sched_prepare_exec; the older one is chosen. */
        struct ksym_bpf_object *o = open_obj("alternatives.bpf.o");
        if (o) {
            CHECK(ksym_bpf_object_resolve_btf(o, b61) == 0);
            size_t n = prog(o, "exec_new"), d = prog(o, "exec_old");
            CHECK(choose_exec(o, n, d) == d);
            CHECK(!ksym_bpf_program_autoload(o, n) && ksym_bpf_program_autoload(o, d));
            struct ksym_bpf_attach at;
            CHECK(attach_of(o, d, &at) == 0 && at.attach_btf_id > 0 && !at.error);
            /* Autoload off: its error is kept, not returned. */
            CHECK(attach_of(o, n, &at) == 0 && at.error == KSYM_ERR_NOT_FOUND && at.attach_btf_id == 0);
        }
        ksym_bpf_object_free(o);
    }
    struct ksym_bpf_object *o = open_obj("alternatives.bpf.o");
    if (!o || !btf)
        goto out;
    CHECK(ksym_bpf_object_resolve_btf(o, btf) == 0);
    size_t n = prog(o, "exec_new"), d = prog(o, "exec_old");
    size_t chosen = choose_exec(o, n, d);
    int known = 0, has = tracefs_has("sched/sched_prepare_exec", &known);
    if (known)
        CHECK((chosen == n) == has);
    else
        NEED_SKIP("tracefs", "no tracefs events: which exec tracepoint this kernel has is not checked");
    printf("  alternatives: %s chosen\n", chosen == n ? "sched_prepare_exec" : "sched_process_exec");
    if (!live)
        goto out;
    struct kl_loaded l;
    size_t bss = bss_of(o);
    if (load(o, btf, &l) == 0) {
        CHECK(l.prog_fds[chosen == n ? d : n] == -ENOENT);
        CHECK(kl_attach(o, &l, chosen) >= 0);
        exec_child(&l, bss);
        struct tool_state s = get_state(&l, bss);
        /* One exec of the child, seen by the chosen program only. */
        CHECK(s.hits[chosen == n ? 0 : 1] == 1 && s.hits[chosen == n ? 1 : 0] == 0);
    }
    kl_unload(&l);
out:
    ksym_bpf_object_free(o);
}

/* /proc/kallsyms' address of core function `name` (a naive reader). */
static uint64_t kallsyms_addr(const char *name)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], type;
    unsigned long long a;
    uint64_t found = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name) && !strchr(line, '\t') &&
            (!found || a < found))
            found = a;
    fclose(f);
    return found;
}

static void test_placeholders(struct ksym_btf *btf, struct ksym_btf *b61)
{
    struct ksym_bpf_attach at;
    if (b61) {
        /* Every program's target missing: the object still prepares, and
         * each program reports its own. */
        struct ksym_bpf_object *o = open_obj("placeholders.bpf.o");
        if (o) {
            CHECK(ksym_bpf_object_resolve_btf(o, b61) == 0);
            const char *names[3] = { "tp_placeholder", "raw_placeholder", "fentry_placeholder" };
            const char *targets[3] = { "dummy_tracepoint", "dummy_raw_tracepoint", "dummy_fentry" };
            for (int k = 0; k < 3; k++) {
                size_t i = prog(o, names[k]);
                CHECK(attach_of(o, i, &at) == KSYM_ERR_NOT_FOUND);
                CHECK_MSG(names[k]);
                CHECK_MSG(targets[k]);
                CHECK(at.error == KSYM_ERR_NOT_FOUND && strstr(at.error_message, targets[k]));
                CHECK(at.attach_btf_id == 0 && at.target && !strcmp(at.target, targets[k]));
                /* What needs the target at load: all but the raw_tp. */
                CHECK(!!(at.flags & KSYM_ATTACH_TARGET_AT_LOAD) == (k != 1));
            }
            /* They still relocate, as libbpf's do. */
            size_t bss = bss_of(o), cnt = 0;
            CHECK(ksym_bpf_object_set_map_fd(o, bss, 100) == 0);
            CHECK(ksym_bpf_object_relocate(o) == 0);
            CHECK(ksym_bpf_program_insns(o, prog(o, "fentry_placeholder"), &cnt) != NULL && cnt > 0);
        }
        ksym_bpf_object_free(o);
    }
    struct ksym_bpf_object *o = open_obj("placeholders.bpf.o");
    if (!o || !btf)
        goto out;
    size_t tp = prog(o, "tp_placeholder"), raw = prog(o, "raw_placeholder"), fe = prog(o, "fentry_placeholder");
    /* Retargeted before resolve_btf... */
    CHECK(ksym_bpf_program_set_attach_target(o, tp, "sys_enter", btf) == 0);
    CHECK(ksym_bpf_object_resolve_btf(o, btf) == 0);
    CHECK(attach_of(o, tp, &at) == 0 && at.target && !strcmp(at.target, "sys_enter") && at.attach_btf_id > 0);
    uint32_t tp_id = at.attach_btf_id;
    CHECK(attach_of(o, raw, &at) == KSYM_ERR_NOT_FOUND && !(at.flags & KSYM_ATTACH_TARGET_AT_LOAD));
    CHECK(attach_of(o, fe, &at) == KSYM_ERR_NOT_FOUND && (at.flags & KSYM_ATTACH_TARGET_AT_LOAD));
    /* ...and after: each one's attach info follows, the others' stay. */
    CHECK(ksym_bpf_program_set_attach_target(o, raw, "sys_enter", btf) == 0);
    CHECK(attach_of(o, raw, &at) == 0 && at.target && !strcmp(at.target, "sys_enter") && !at.error);
    CHECK(ksym_bpf_program_set_attach_target(o, fe, "vfs_read", btf) == 0);
    CHECK(attach_of(o, fe, &at) == 0 && at.attach_btf_id > 0 && at.module && !strcmp(at.module, "vmlinux"));
    uint64_t want = kallsyms_addr("vfs_read");
    if (want)
        CHECK(at.addr == want);
    else
        KERNEL_SKIP("no address of vfs_read in /proc/kallsyms");
    CHECK(attach_of(o, tp, &at) == 0 && at.attach_btf_id == tp_id);
    /* Bad input: a clear error, the program as it was. */
    CHECK(ksym_bpf_program_set_attach_target(o, fe, "sched_switch", btf) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("is a tracepoint, not a kernel function");
    CHECK(ksym_bpf_program_set_attach_target(o, tp, "vfs_read", btf) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("is a kernel function, not a tracepoint");
    CHECK(ksym_bpf_program_set_attach_target(o, fe, "", btf) == KSYM_ERR_INVALID);
    CHECK_MSG("empty");
    CHECK(ksym_bpf_program_set_attach_target(o, fe, NULL, btf) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_program_set_attach_target(o, 999, "vfs_read", btf) == KSYM_ERR_NOT_FOUND);
    CHECK(attach_of(o, fe, &at) == 0 && at.target && !strcmp(at.target, "vfs_read"));
    CHECK(ksym_bpf_program_set_autoload(o, 999, false) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_program_set_autoload(NULL, 0, false) == KSYM_ERR_INVALID);
    CHECK(!ksym_bpf_program_autoload(o, 999) && ksym_last_error() == KSYM_ERR_NOT_FOUND);
    CHECK(!ksym_bpf_program_autoload(NULL, 0) && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_program_autoload(o, fe) && ksym_last_error() == 0);
    CHECK(ksym_bpf_program_attach_info(o, 999, &at) == KSYM_ERR_NOT_FOUND);
    if (!live)
        goto out;
    struct kl_loaded l;
    size_t bss = bss_of(o);
    char why[4096];
    if (kl_prepare(o, NULL, btf, &l, why, sizeof(why)) != 0) {
        CHECK(0);
        fprintf(stderr, "prepare: %s\n", why);
        goto unload;
    }
    CHECK(kl_load_prog(o, &l, tp, stdout) >= 0 && kl_attach(o, &l, tp) >= 0);
    CHECK(kl_load_prog(o, &l, raw, stdout) >= 0 && kl_attach(o, &l, raw) >= 0);
    int fd = kl_load_prog(o, &l, fe, NULL);
    int fentry = fd >= 0 && kl_attach(o, &l, fe) >= 0;
    if (fd == -EPERM || fd == -EOPNOTSUPP || fd == -524)
        NEED_SKIP("fentry", "this kernel refuses fentry programs (%s): the retargeted one is not run", strerror(-fd));
    else
        CHECK(fentry);
    set_state(&l, bss, (uint32_t)getpid());
    some_syscalls();
    char buf[16];
    int f = open("/proc/self/stat", 0);
    CHECK(f >= 0 && read(f, buf, sizeof(buf)) > 0); /* vfs_read */
    close(f);
    struct tool_state s = get_state(&l, bss);
    CHECK(s.hits[0] >= 5 && s.hits[1] >= 5);
    if (fentry)
        CHECK(s.hits[2] >= 1);
    printf("  placeholders: tp_btf ran %llu, raw_tp %llu, fentry %llu times\n", (unsigned long long)s.hits[0],
           (unsigned long long)s.hits[1], (unsigned long long)s.hits[2]);
unload:
    kl_unload(&l);
out:
    ksym_bpf_object_free(o);
}

/* The instruction of the call to `kfunc`, from its relocation. */
static const struct ksym_bpf_insn *kfunc_call(struct ksym_bpf_object *o, size_t p, const char *kfunc)
{
    size_t n = ksym_bpf_program_reloc_count(o, p), cnt = 0;
    const struct ksym_bpf_insn *insns = ksym_bpf_program_insns(o, p, &cnt);
    for (size_t r = 0; insns && r < n; r++) {
        struct ksym_bpf_reloc rl = { .sz = sizeof(rl) };
        if (ksym_bpf_program_reloc(o, p, r, &rl) == 0 && rl.kind == KSYM_BPF_RELOC_KFUNC &&
            !strcmp(rl.symbol, kfunc) && rl.insn_idx < cnt)
            return &insns[rl.insn_idx];
    }
    return NULL;
}

static void test_guards(struct ksym_btf *btf, struct ksym_btf *b61)
{
    /* libbpf's poisoned call: `call 2002000000 + n`, n the extern's
     * index in libbpf's order (by name: bpf_kfunc_no_kernel_has 0,
     * bpf_task_from_pid 1, bpf_task_release 2). */
    const int32_t poison = 2002000000;
    if (b61) {
        /* 6.1 has neither bpf_task_from_pid nor bpf_task_release. */
        struct ksym_bpf_object *o = open_obj("guards.bpf.o");
        if (o) {
            CHECK(ksym_bpf_object_resolve_btf(o, b61) == 0);
            CHECK(ksym_bpf_object_set_map_fd(o, bss_of(o), 100) == 0 && ksym_bpf_object_relocate(o) == 0);
            const struct ksym_bpf_insn *c = kfunc_call(o, 0, "bpf_task_from_pid");
            CHECK(c && c->code == 0x85 && c->regs == 0 && c->imm == poison + 1);
            c = kfunc_call(o, 0, "bpf_task_release");
            CHECK(c && c->code == 0x85 && c->regs == 0 && c->imm == poison + 2);
        }
        ksym_bpf_object_free(o);
    }
    struct ksym_bpf_object *o = open_obj("guards.bpf.o");
    if (!o || !btf)
        goto out;
    CHECK(ksym_bpf_object_resolve_btf(o, btf) == 0);
    size_t ne = ksym_bpf_object_extern_count(o), present = 0;
    for (size_t i = 0; i < ne; i++) {
        struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
        CHECK(ksym_bpf_extern_info(o, i, &e) == 0 && e.weak);
        if (!strcmp(e.name, "bpf_kfunc_no_kernel_has"))
            CHECK(!e.resolved);
        else
            present += e.resolved;
    }
    if (!live)
        goto out;
    struct kl_loaded l;
    size_t bss = bss_of(o);
    /* The verifier accepts it: the poisoned call is pruned. */
    if (load(o, btf, &l) == 0) {
        const struct ksym_bpf_insn *c = kfunc_call(o, 0, "bpf_kfunc_no_kernel_has");
        CHECK(c && c->code == 0x85 && c->regs == 0 && c->imm == poison);
        CHECK(kl_attach(o, &l, 0) >= 0);
        set_state(&l, bss, (uint32_t)getpid());
        some_syscalls();
        struct tool_state s = get_state(&l, bss);
        /* Every syscall of this process: the present kfunc's path ran
         * (bpf_task_from_pid found this process) where the kernel has it,
         * the absent one's never did. */
        CHECK(s.hits[2] >= 5 && s.hits[1] == 0);
        CHECK(s.hits[0] == (present == 2 ? s.hits[2] : 0));
        printf("  guards: %zu of 2 kfuncs present; guarded path ran %llu times, missing one's 0\n", present,
               (unsigned long long)s.hits[0]);
    }
    kl_unload(&l);
out:
    ksym_bpf_object_free(o);
}

/* The running kernel's LINUX_VERSION_CODE, from the kernel itself: the
 * "Linux" ELF note of the vDSO it maps into every process. (uname's
 * release is not it on every distro: Debian's 6.1.0-57-amd64 is 6.1.192.)
 * 0 if there is no vDSO or no note. */
static uint32_t vdso_note(void)
{
    const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    if (!base || memcmp(base, ELFMAG, SELFMAG) != 0 || base[EI_CLASS] != ELFCLASS64)
        return 0;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)base;
    for (int i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *ph = (const Elf64_Phdr *)(const void *)(base + eh->e_phoff + (size_t)i * eh->e_phentsize);
        if (ph->p_type != PT_NOTE)
            continue;
        /* The vDSO is mapped as its file: offsets are addresses from base. */
        const unsigned char *n = base + ph->p_offset, *end = n + ph->p_filesz;
        while (n + sizeof(Elf64_Nhdr) <= end) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(const void *)n;
            const unsigned char *name = n + sizeof(*nh);
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == 0 && nh->n_namesz == 6 && !memcmp(name, "Linux", 6) && nh->n_descsz >= 4) {
                uint32_t v;
                memcpy(&v, desc, 4);
                return v;
            }
            n = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

/* valgrind unmaps the vDSO of the program it runs; a program it execs runs
 * natively (no --trace-children), so this test's own binary, run again with
 * KSYM_TEST_PRINT_VDSO_VERSION set, reads the note and prints it. */
static uint32_t vdso_version(void)
{
    uint32_t v = vdso_note();
    if (v || getauxval(AT_SYSINFO_EHDR))
        return v;
    char self[4096], cmd[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return 0;
    self[n] = 0;
    snprintf(cmd, sizeof(cmd), "KSYM_TEST_PRINT_VDSO_VERSION=1 '%s'", self);
    FILE *p = popen(cmd, "r");
    unsigned long got = 0;
    if (!p)
        return 0;
    if (fscanf(p, "%lu", &got) != 1)
        got = 0;
    pclose(p);
    return (uint32_t)got;
}

static void test_kversion(struct ksym_btf *btf)
{
    struct ksym_bpf_object *o = open_obj("kversion.bpf.o");
    if (!o || !btf)
        goto out;
    CHECK(ksym_bpf_object_resolve_btf(o, btf) == 0);
    uint32_t want = vdso_version();
    CHECK(want != 0);
    size_t kc = (size_t)-1;
    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    CHECK(ksym_bpf_object_find_map(o, ".kconfig", &kc) == 0 && ksym_bpf_map_info(o, kc, &m) == 0);
    uint32_t v = 0;
    CHECK(m.initial_value && m.initial_value_size == 4);
    if (m.initial_value)
        memcpy(&v, m.initial_value, 4);
    if (v != want)
        fprintf(stderr, "kversion: LINUX_KERNEL_VERSION %#x, the vDSO's note says %#x\n", v, want);
    CHECK(v == want);
    if (!live)
        goto out;
    struct kl_loaded l;
    size_t bss = bss_of(o);
    /* Loads only if the verifier pruned the branch for kernels before 5.0
     * (a poisoned call), knowing the version from the frozen .kconfig. */
    if (load(o, btf, &l) == 0) {
        CHECK(kl_attach(o, &l, 0) >= 0);
        set_state(&l, bss, (uint32_t)getpid());
        some_syscalls();
        struct tool_state s = get_state(&l, bss);
        CHECK(s.version == v && s.hits[0] == 0);
        int newer = v >= ((6u << 16) + (10u << 8));
        CHECK(s.hits[newer ? 1 : 2] >= 5 && s.hits[newer ? 2 : 1] == 0);
        printf("  kversion: LINUX_KERNEL_VERSION %u.%u.%u, the %s branch ran\n", v >> 16, (v >> 8) & 255, v & 255,
               newer ? ">= 6.10" : "< 6.10");
    }
    kl_unload(&l);
out:
    ksym_bpf_object_free(o);
}

static void test_optional(struct ksym_btf *btf)
{
    struct ksym_bpf_object *o = open_obj("optional.bpf.o");
    if (!o)
        return;
    size_t al = prog(o, "always"), en = prog(o, "opt_enter"), fe = prog(o, "opt_fentry"),
           mi = prog(o, "opt_missing");
    struct ksym_bpf_attach at;
    /* `?` sections: autoload off, the section's type without the `?`. */
    CHECK(ksym_bpf_program_autoload(o, al) && !ksym_bpf_program_autoload(o, en) &&
          !ksym_bpf_program_autoload(o, fe) && !ksym_bpf_program_autoload(o, mi));
    CHECK(attach_of(o, en, &at) == 0 && (at.flags & KSYM_ATTACH_OPTIONAL) && at.prog_type == KL_PROG_TRACING);
    CHECK(attach_of(o, al, &at) == 0 && !(at.flags & KSYM_ATTACH_OPTIONAL));
    if (!btf)
        goto out;
    CHECK(ksym_bpf_object_resolve_btf(o, btf) == 0);
    /* Its target is missing, but autoload is off: no failure, the error kept. */
    CHECK(attach_of(o, mi, &at) == 0 && at.error == KSYM_ERR_NOT_FOUND &&
          strstr(at.error_message, "no_kernel_has_this_tracepoint"));
    CHECK(ksym_bpf_program_set_autoload(o, mi, true) == 0);
    CHECK(attach_of(o, mi, &at) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("opt_missing");
    CHECK(ksym_bpf_program_set_autoload(o, mi, false) == 0 && !ksym_bpf_program_autoload(o, mi));
    /* The loader's choice. */
    CHECK(ksym_bpf_program_set_autoload(o, en, true) == 0 && ksym_bpf_program_autoload(o, en));
    if (!live)
        goto out;
    struct kl_loaded l;
    size_t bss = bss_of(o);
    if (load(o, btf, &l) == 0) {
        CHECK(l.prog_fds[fe] == -ENOENT && l.prog_fds[mi] == -ENOENT);
        CHECK(kl_attach(o, &l, al) >= 0 && kl_attach(o, &l, en) >= 0);
        exec_child(&l, bss);
        struct tool_state s = get_state(&l, bss);
        /* The child's exec, and its syscalls (read, execve...). */
        CHECK(s.hits[0] == 1 && s.hits[1] >= 2 && s.hits[2] == 0 && s.hits[3] == 0);
    }
    kl_unload(&l);
out:
    ksym_bpf_object_free(o);
}

/* Twins: the tp_btf program where the kernel's BTF has the tracepoint
 * (here), the raw_tp one on a kernel without: both run here, one at a
 * time. Without kernel BTF at all (kl_prepare given none), the raw_tp twin
 * still loads: the tp_btf one, autoload off, needs nothing. */
static void test_twins(struct ksym_btf *btf)
{
    for (int pass = 0; pass < 2; pass++) {
        struct ksym_bpf_object *o = open_obj("twins.bpf.o");
        if (!o)
            return;
        size_t b = prog(o, "exec_btf"), r = prog(o, "exec_raw");
        struct ksym_btf *use = pass == 0 ? btf : NULL;
        if (pass == 0) {
            struct ksym_bpf_attach at;
            CHECK(btf && ksym_bpf_object_resolve_btf(o, btf) == 0);
            CHECK(attach_of(o, b, &at) == 0 && at.attach_btf_id > 0);
            CHECK(ksym_bpf_program_set_autoload(o, r, false) == 0);
        } else {
            CHECK(ksym_bpf_program_set_autoload(o, b, false) == 0);
        }
        size_t chosen = pass == 0 ? b : r;
        if (live && (use || pass == 1)) {
            struct kl_loaded l;
            size_t bss = bss_of(o);
            if (load(o, use, &l) == 0) {
                CHECK(l.prog_fds[pass == 0 ? r : b] == -ENOENT);
                CHECK(kl_attach(o, &l, chosen) >= 0);
                exec_child(&l, bss);
                struct tool_state s = get_state(&l, bss);
                CHECK(s.hits[pass] == 1 && s.hits[1 - pass] == 0);
            }
            kl_unload(&l);
        }
        ksym_bpf_object_free(o);
    }
}

/* The tracefs events directory this process sees, or NULL. */
static const char *events_root(void)
{
    const char *roots[2] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
    for (int r = 0; r < 2; r++)
        if (access(roots[r], F_OK) == 0)
            return roots[r];
    return NULL;
}

static int by_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* A tracepoint program expanded over tracefs (ksym_bpf_program_expand of
 * a `tp/` program): one alias for exactly the events tracefs lists under
 * syscalls/ that fnmatch(3) matches, in name order, each attached by its
 * own category and name (kl_attach), all sharing one body that counts
 * this process's syscalls by number: getppid 7 times and getpgid 5 times,
 * each counted by its own alias (the root, on getppid too, is not
 * loaded). */
static void test_tracepoint_wildcard(struct ksym_btf *btf)
{
    const char *root = events_root();
    char dir[512];
    int known = 0;
    if (!root || !tracefs_has("syscalls/sys_enter_getppid", &known)) {
        NEED_SKIP("tracefs", "no tracefs with syscalls/ events here: tracepoint expansion not run");
        return;
    }
    /* The oracle: tracefs' own directory, matched with fnmatch(3). */
    const char *glob = "sys_enter_getp[gp]id";
    char want[8][256];
    size_t nwant = 0;
    snprintf(dir, sizeof(dir), "%s/syscalls", root);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (e->d_type == DT_DIR && fnmatch(glob, e->d_name, 0) == 0 && nwant < 8)
            snprintf(want[nwant++], sizeof(want[0]), "%s", e->d_name);
    if (d)
        closedir(d);
    qsort(want, nwant, sizeof(want[0]), by_name);
    CHECK(nwant == 2);
    struct ksym_bpf_object *o = open_obj("tp_wildcard.bpf.o");
    if (!o)
        return;
    size_t p = prog(o, "count_syscalls"), n0 = ksym_bpf_object_program_count(o);
    CHECK(ksym_bpf_program_expand(o, p, "syscalls/sys_enter_getp[gp]id", btf) == (int)nwant);
    CHECK(ksym_bpf_object_program_count(o) == n0 + nwant);
    for (size_t k = 0; k < nwant; k++) {
        struct ksym_bpf_attach at;
        struct ksym_bpf_program_info pi = { .sz = sizeof(pi) };
        CHECK(attach_of(o, n0 + k, &at) == 0 && at.prog_type == 5);
        CHECK(at.tp_category && !strcmp(at.tp_category, "syscalls") && at.target && !strcmp(at.target, want[k]));
        CHECK(ksym_bpf_program_info(o, n0 + k, &pi) == 0 && pi.alias_of == p);
        CHECK(!strncmp(pi.name, "count_syscalls/syscalls/", 24) && !strcmp(pi.name + 24, want[k]));
    }
    CHECK(ksym_bpf_program_expand(o, p, "syscalls/", btf) == KSYM_ERR_INVALID);
    CHECK_MSG("category/name");
    CHECK(ksym_bpf_program_set_autoload(o, p, false) == 0);
    if (!live) {
        ksym_bpf_object_free(o);
        return;
    }
    struct kl_loaded l;
    CHECK(load(o, btf, &l) == 0);
    size_t bss = bss_of(o);
    set_state(&l, bss, (uint32_t)getpid());
    int attached = 1;
    for (size_t k = 0; k < nwant; k++) {
        int fd = kl_attach(o, &l, n0 + k);
        if (fd < 0)
            fprintf(stderr, "attach %s: %s\n", want[k], strerror(-fd));
        CHECK(fd >= 0);
        attached &= fd >= 0;
    }
    for (int k = 0; k < 7; k++)
        (void)syscall(SYS_getppid);
    for (int k = 0; k < 5; k++)
        (void)syscall(SYS_getpgid, 0);
    struct tool_state st = get_state(&l, bss);
    printf("  tracepoint aliases: getppid counted %llu times, getpgid %llu\n",
           (unsigned long long)st.hits[SYS_getppid & 7], (unsigned long long)st.hits[SYS_getpgid & 7]);
    CHECK(attached && st.hits[SYS_getppid & 7] == 7 && st.hits[SYS_getpgid & 7] == 5);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

int main(void)
{
    if (getenv("KSYM_TEST_PRINT_VDSO_VERSION")) {
        printf("%lu\n", (unsigned long)vdso_note());
        return 0;
    }
    objdir = getenv("KSYM_BPF_OBJECTS");
    if (!objdir)
        objdir = "c-tests/bpf";
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf)
        KERNEL_SKIP("no kernel BTF (%s): the running kernel's part", ksym_last_error_message());
    int avail = kl_bpf_available();
    live = btf && avail == 0;
    if (btf && !live)
        KERNEL_SKIP("bpf() is not available (%s): nothing is loaded", strerror(-avail));
    private_tracefs();
    struct ksym_btf *b61 = open_61();
    test_alternatives(btf, b61);
    test_placeholders(btf, b61);
    test_guards(btf, b61);
    test_kversion(btf);
    test_optional(btf);
    test_twins(btf);
    test_tracepoint_wildcard(btf);
    ksym_btf_free(b61);
    ksym_btf_free(btf);
    return finish("test_tool_objects");
}
