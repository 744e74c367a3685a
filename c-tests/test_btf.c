/*
 * Kernel BTF and attach targets through the C ABI, on the bundled BTF of
 * the Debian 6.1 kernel (vmlinux and 30 modules) and its kallsyms: lookups
 * (module-qualified, duplicates, errors), struct sizes, attach info of
 * every section kind of sections.bpf.o before and after resolution,
 * targets set per alias, expansion, and every argument error.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char btfdir[512], vmlinux[600], kallsyms[512];
static const char *objdir;

static struct ksym_btf *open_61(void)
{
    KSYM_OPTS(ksym_btf_opts, o, .vmlinux_btf_path = vmlinux, .module_btf_dir = btfdir,
              .filter_functions_path = "", .kallsyms_path = kallsyms);
    struct ksym_btf *b = ksym_btf_open(&o);
    CHECK(b != NULL);
    return b;
}

static struct ksym_bpf_object *open_obj(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", objdir, name);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    return o;
}

static void test_find(void)
{
    struct ksym_btf *b = open_61();
    if (!b)
        return;
    struct ksym_btf_type t = { .sz = sizeof(t) };
    CHECK(ksym_btf_find(b, "vfs_read", 12 /* FUNC */, &t) == 0);
    CHECK(t.kind == 12 && !strcmp(t.name, "vfs_read") && !strcmp(t.module, "vmlinux"));
    CHECK(t.obj_id == 0 && t.obj_fd == 0 && t.type_id > 0);
    uint32_t vfs_read = t.type_id;
    CHECK(ksym_btf_find(b, "vmlinux`vfs_read", 0, &t) == 0 && t.type_id == vfs_read);
    /* A module's: ids continue after vmlinux's; no kernel object for files. */
    CHECK(ksym_btf_find(b, "xfs`xfs_file_open", 12, &t) == 0);
    CHECK(!strcmp(t.module, "xfs") && t.type_id > vfs_read && t.obj_id == 0 && t.obj_fd == -1);
    CHECK(ksym_btf_find(b, "xfs_file_open", 12, &t) == 0 && !strcmp(t.module, "xfs"));
    /* Names with spaces (INT types). */
    CHECK(ksym_btf_find(b, "unsigned int", 1 /* INT */, &t) == 0 && !strcmp(t.name, "unsigned int"));
    /* Two modules: ambiguous unless qualified. */
    CHECK(ksym_btf_find(b, "fat_mount_options", 4, &t) == KSYM_ERR_AMBIGUOUS);
    CHECK_MSG("`vfat`fat_mount_options`");
    CHECK(ksym_btf_find(b, "vfat`fat_mount_options", 4, &t) == 0 && !strcmp(t.module, "vfat"));
    /* Not found: says where it is. */
    struct ksym_btf_type untouched = { .sz = sizeof(untouched), .type_id = 77 };
    CHECK(ksym_btf_find(b, "xfs`vfs_read", 12, &untouched) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("FUNC `vmlinux`vfs_read`");
    CHECK(untouched.type_id == 77);
    CHECK(ksym_btf_find(b, "ext4`ext4_file_open", 12, &t) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("no BTF for module `ext4`");
    /* Arguments. */
    CHECK(ksym_btf_find(NULL, "vfs_read", 0, &t) == KSYM_ERR_INVALID);
    CHECK(ksym_btf_find(b, NULL, 0, &t) == KSYM_ERR_INVALID);
    CHECK(ksym_btf_find(b, "vfs_read", 0, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_btf_find(b, "a`b`c", 0, &t) == KSYM_ERR_INVALID);
    /* An older caller's smaller struct: only its fields are written. */
    struct {
        size_t sz;
        uint32_t type_id, obj_id;
        uint32_t canary;
    } small = { 16, 0, 0, 0xdeadbeef };
    CHECK(ksym_btf_find(b, "vfs_read", 12, (struct ksym_btf_type *)(void *)&small) == 0);
    CHECK(small.type_id == vfs_read && small.canary == 0xdeadbeef);
    small.sz = 4;
    CHECK(ksym_btf_find(b, "vfs_read", 12, (struct ksym_btf_type *)(void *)&small) == KSYM_ERR_INVALID);
    /* Stats: vmlinux's types, 30 modules, those read so far. */
    struct ksym_btf_stats st = { .sz = sizeof(st) };
    CHECK(ksym_btf_stats(b, &st) == 0);
    printf("  6.1 BTF: %u vmlinux types, %zu modules (%zu read), %zu bytes\n", st.vmlinux_types, st.modules,
           st.modules_read, st.memory_bytes);
    CHECK(st.vmlinux_types > 90000 && st.modules == 30 && st.modules_read >= 3 && st.memory_bytes > 4000000);
    CHECK(!(st.flags & KSYM_BTF_STATS_FILTER_FUNCTIONS) && !(st.flags & KSYM_BTF_STATS_FILTER_UNAVAILABLE));
    CHECK(ksym_btf_stats(NULL, &st) == KSYM_ERR_INVALID);
    CHECK(ksym_btf_stats(b, NULL) == KSYM_ERR_INVALID);
    ksym_btf_free(b);
    ksym_btf_free(NULL);
}

static void test_open_errors(void)
{
    KSYM_OPTS(ksym_btf_opts, missing, .vmlinux_btf_path = "/nonexistent/vmlinux", .module_btf_dir = "");
    CHECK(ksym_btf_open(&missing) == NULL && ksym_last_error() == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("/nonexistent/vmlinux");
    KSYM_OPTS(ksym_btf_opts, notbtf, .vmlinux_btf_path = kallsyms, .module_btf_dir = "");
    CHECK(ksym_btf_open(&notbtf) == NULL && ksym_last_error() == KSYM_ERR_FORMAT);
    KSYM_OPTS(ksym_btf_opts, flags, .vmlinux_btf_path = vmlinux, .flags = ~KSYM_BTF_FLAGS_ALL);
    CHECK(ksym_btf_open(&flags) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK_MSG("flags");
    KSYM_OPTS(ksym_btf_opts, reserved, .vmlinux_btf_path = vmlinux, .reserved = 1);
    CHECK(ksym_btf_open(&reserved) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    KSYM_OPTS(ksym_btf_opts, filter, .vmlinux_btf_path = vmlinux, .module_btf_dir = "",
              .filter_functions_path = "/nonexistent/available_filter_functions", .kallsyms_path = kallsyms);
    struct ksym_btf *b = ksym_btf_open(&filter);
    CHECK(b != NULL);
    struct ksym_btf_stats st = { .sz = sizeof(st) };
    /* An explicit filter file that cannot be read is an error when used. */
    struct ksym_bpf_object *o = open_obj("trace.bpf.o");
    size_t count;
    CHECK(o && ksym_bpf_object_find_program(o, "count", &count) == 0);
    CHECK(ksym_bpf_program_expand(o, count, "vfs_*", b) == -ENOENT);
    CHECK_MSG("available_filter_functions");
    CHECK(ksym_btf_stats(b, &st) == 0);
    ksym_bpf_object_free(o);
    ksym_btf_free(b);
    /* A larger struct with a non-zero tail is from a newer caller. */
    struct {
        struct ksym_btf_opts o;
        uint64_t extra;
    } big;
    memset(&big, 0, sizeof(big));
    big.o.sz = sizeof(big);
    big.o.vmlinux_btf_path = vmlinux;
    big.o.module_btf_dir = "";
    big.extra = 1;
    CHECK(ksym_btf_open(&big.o) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    big.extra = 0;
    b = ksym_btf_open(&big.o);
    CHECK(b != NULL);
    ksym_btf_free(b);
}

static void test_attach(void)
{
    struct ksym_btf *b = open_61();
    struct ksym_bpf_object *o = open_obj("sections.bpf.o");
    if (!b || !o)
        goto out;
    size_t fexit, socket, unknown, tp;
    CHECK(ksym_bpf_object_find_program(o, "p_fexit_mod", &fexit) == 0);
    CHECK(ksym_bpf_object_find_program(o, "p_socket", &socket) == 0);
    CHECK(ksym_bpf_object_find_program(o, "p_unknown", &unknown) == 0);
    CHECK(ksym_bpf_object_find_program(o, "p_tp_btf", &tp) == 0);
    struct ksym_bpf_attach a = { .sz = sizeof(a) };
    /* From the section alone. */
    CHECK(ksym_bpf_program_attach_info(o, fexit, &a) == 0);
    CHECK(a.prog_type == 26 && a.expected_attach_type == 25 && a.attach_btf_id == 0);
    CHECK(!strcmp(a.target, "xfs_file_open") && !strcmp(a.module, "xfs"));
    CHECK(ksym_bpf_program_attach_info(o, unknown, &a) == 0 && a.prog_type == 0 && a.target == NULL);
    CHECK(ksym_bpf_object_resolve_btf(o, b) == 0);
    struct ksym_btf_type t = { .sz = sizeof(t) };
    CHECK(ksym_btf_find(b, "xfs`xfs_file_open", 12, &t) == 0);
    CHECK(ksym_bpf_program_attach_info(o, fexit, &a) == 0);
    CHECK(a.attach_btf_id == t.type_id && a.attach_btf_obj_fd == -1 && a.addr != 0);
    CHECK(ksym_btf_find(b, "btf_trace_sched_switch", 8, &t) == 0);
    CHECK(ksym_bpf_program_attach_info(o, tp, &a) == 0 && a.attach_btf_id == t.type_id && a.addr == 0);
    /* Setting a target. */
    CHECK(ksym_bpf_program_set_attach_target(o, tp, "sched_process_exec", b) == 0);
    CHECK(ksym_btf_find(b, "btf_trace_sched_process_exec", 8, &t) == 0);
    CHECK(ksym_bpf_program_attach_info(o, tp, &a) == 0 && a.attach_btf_id == t.type_id);
    CHECK(!strcmp(a.target, "sched_process_exec"));
    CHECK(ksym_bpf_program_set_attach_target(o, tp, "no_such_tracepoint", b) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("no_such_tracepoint");
    CHECK(ksym_bpf_program_set_attach_target(o, socket, "vfs_read", b) == KSYM_ERR_UNSUPPORTED);
    CHECK(ksym_bpf_program_set_attach_target(o, unknown, "vfs_read", b) == KSYM_ERR_UNSUPPORTED);
    CHECK_MSG("my_own_section/thing");
    /* Arguments. */
    CHECK(ksym_bpf_program_attach_info(NULL, 0, &a) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_program_attach_info(o, 0, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_program_attach_info(o, 999, &a) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_program_set_attach_target(o, tp, NULL, b) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_program_set_attach_target(o, 999, "x", b) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_program_set_attach_target(NULL, 0, "x", b) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_resolve_btf(NULL, b) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_program_expand(o, tp, NULL, b) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_program_expand(o, 999, "x", b) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_program_expand(NULL, 0, "x", b) == KSYM_ERR_INVALID);
    /* The attach struct of an older caller. */
    struct {
        size_t sz;
        uint32_t prog_type, eat;
        uint32_t canary;
    } small = { 16, 0, 0, 0xfeedf00d };
    CHECK(ksym_bpf_program_attach_info(o, fexit, (struct ksym_bpf_attach *)(void *)&small) == 0);
    CHECK(small.prog_type == 26 && small.eat == 25 && small.canary == 0xfeedf00d);
out:
    ksym_bpf_object_free(o);
    ksym_btf_free(b);
}

static void test_expand(void)
{
    struct ksym_btf *b = open_61();
    struct ksym_bpf_object *o = open_obj("trace.bpf.o");
    if (!b || !o)
        goto out;
    size_t count, count_tp, before = ksym_bpf_object_program_count(o);
    CHECK(ksym_bpf_object_find_program(o, "count", &count) == 0);
    CHECK(ksym_bpf_object_find_program(o, "count_tp", &count_tp) == 0);
    int n = ksym_bpf_program_expand(o, count, "vmlinux`vfs_r*", b);
    CHECK(n > 3);
    CHECK(ksym_bpf_object_program_count(o) == before + (size_t)n);
    uint64_t last = 0;
    for (size_t i = before; n > 0 && i < before + (size_t)n; i++) {
        struct ksym_bpf_attach a = { .sz = sizeof(a) };
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        CHECK(ksym_bpf_program_attach_info(o, i, &a) == 0 && ksym_bpf_program_info(o, i, &p) == 0);
        char want[128];
        snprintf(want, sizeof(want), "count/%s", a.target);
        CHECK(!strcmp(p.name, want) && p.alias_of == count && !strncmp(a.target, "vfs_r", 5));
        CHECK(a.addr > last && a.attach_btf_id > 0);
        last = a.addr;
    }
    int m = ksym_bpf_program_expand(o, count_tp, "sched_switch", b);
    CHECK(m == 1);
    CHECK(ksym_bpf_program_expand(o, count, "nothing_is_called_this_*", b) == 0);
    CHECK(ksym_bpf_program_expand(o, count, "[", b) == KSYM_ERR_INVALID);
    /* What no kernel's trampoline takes is no target, and is counted:
     * bpf_trace_run12 has 13 arguments (MAX_BPF_FUNC_ARGS is 12), _printk
     * is variadic; kprobes are not affected (tests/trampoline.rs has the
     * rules that depend on the kernel's version). */
    struct ksym_btf_stats st = { .sz = sizeof(st) };
    CHECK(ksym_btf_stats(b, &st) == 0 && st.trampoline_refused == 0);
    CHECK(ksym_bpf_program_expand(o, count, "bpf_trace_run12", b) == 0);
    CHECK(ksym_bpf_program_expand(o, count, "_printk", b) == 0);
    CHECK(ksym_btf_stats(b, &st) == 0 && st.trampoline_refused == 2);
    size_t maps = ksym_bpf_object_map_count(o);
    for (size_t i = 0; i < maps; i++)
        CHECK(ksym_bpf_object_set_map_fd(o, i, 100 + (int)i) == 0);
    CHECK(ksym_bpf_object_relocate(o) == 0);
    size_t c1, c2;
    const struct ksym_bpf_insn *base = ksym_bpf_program_insns(o, count, &c1);
    CHECK(base != NULL && ksym_bpf_program_insns(o, before, &c2) == base && c1 == c2);
out:
    ksym_bpf_object_free(o);
    ksym_btf_free(b);
}

/* The snapshot of vmlinux's checked and indexed BTF (root only): written
 * by the first open with snapshot_dir, used by the second, with the same
 * answers; KSYM_BTF_NO_SNAPSHOT neither reads nor writes it. */
static void test_snapshot(void)
{
    if (geteuid() != 0) {
        KERNEL_SKIP("BTF snapshots are for root only");
        return;
    }
    char dir[] = "/tmp/ksym-btfsnap-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        failures++;
        return;
    }
    struct ksym_btf_type a = { .sz = sizeof(a) }, b2 = { .sz = sizeof(b2) };
    struct ksym_btf_stats st = { .sz = sizeof(st) };
    KSYM_OPTS(ksym_btf_opts, off, .vmlinux_btf_path = vmlinux, .module_btf_dir = "", .snapshot_dir = dir,
              .flags = KSYM_BTF_NO_SNAPSHOT);
    struct ksym_btf *b = ksym_btf_open(&off);
    CHECK(b && ksym_btf_stats(b, &st) == 0 && !(st.flags & (KSYM_BTF_STATS_SNAPSHOT | KSYM_BTF_STATS_SNAPSHOT_WRITTEN)));
    CHECK(b && ksym_btf_find(b, "vfs_read", 12, &a) == 0);
    ksym_btf_free(b);
    /* No file was written: the directory is still empty. */
    CHECK(rmdir(dir) == 0 && mkdir(dir, 0700) == 0);
    KSYM_OPTS(ksym_btf_opts, on, .vmlinux_btf_path = vmlinux, .module_btf_dir = "", .snapshot_dir = dir);
    b = ksym_btf_open(&on);
    CHECK(b && ksym_btf_stats(b, &st) == 0 && (st.flags & KSYM_BTF_STATS_SNAPSHOT_WRITTEN) &&
          !(st.flags & KSYM_BTF_STATS_SNAPSHOT));
    ksym_btf_free(b);
    b = ksym_btf_open(&on);
    CHECK(b && ksym_btf_stats(b, &st) == 0 && (st.flags & KSYM_BTF_STATS_SNAPSHOT) &&
          !(st.flags & KSYM_BTF_STATS_SNAPSHOT_WRITTEN));
    CHECK(b && ksym_btf_find(b, "vfs_read", 12, &b2) == 0 && a.type_id == b2.type_id && !strcmp(b2.name, "vfs_read"));
    CHECK(b && ksym_btf_find(b, "task_struct", 4, &b2) == 0 && !strcmp(b2.module, "vmlinux"));
    ksym_btf_free(b);
    /* A directory others may write is not trusted: neither read nor written. */
    CHECK(chmod(dir, 0777) == 0);
    b = ksym_btf_open(&on);
    CHECK(b && ksym_btf_stats(b, &st) == 0 && !(st.flags & (KSYM_BTF_STATS_SNAPSHOT | KSYM_BTF_STATS_SNAPSHOT_WRITTEN)));
    ksym_btf_free(b);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    const char *data = getenv("KSYM_TESTDATA");
    objdir = getenv("KSYM_BPF_OBJECTS");
    if (!objdir)
        objdir = "c-tests/bpf";
    if (!data) {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no bundled kernel data");
        return finish("test_btf");
    }
    snprintf(btfdir, sizeof(btfdir), "%s/linux-6.1-cloud/btf", data);
    snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", btfdir);
    snprintf(kallsyms, sizeof(kallsyms), "%s/linux-6.1-cloud/kallsyms", data);
    test_find();
    test_open_errors();
    test_attach();
    test_expand();
    test_snapshot();
    return finish("test_btf");
}
