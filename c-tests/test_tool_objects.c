/*
 * Objects in the style of real tracing tools (c-tests/bpf: alternatives,
 * placeholders, guards; kversion, optional, twins and tp_wildcard are
 * test_tool_sections.c's, the helpers both use tool_objects.h), each with the loader a
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

#include "tool_objects.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/syscall.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/wait.h>

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

int main(void)
{
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
    ksym_btf_free(b61);
    ksym_btf_free(btf);
    return finish("test_tool_objects");
}
