/*
 * Kernel BTF and attach targets through the C ABI, on the bundled BTF of
 * the Debian 6.1 kernel (vmlinux and 30 modules) and its kallsyms: lookups
 * (module-qualified, duplicates, errors), struct sizes, attach info of
 * every section kind of sections.bpf.o before and after resolution,
 * targets set per alias, expansion (and its limit by a filter functions
 * list the test writes, against the test's own reading of the BTF), and
 * every argument error.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <errno.h>
#include <fnmatch.h>
#include <stddef.h>
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

/* Tracepoint sections (tracepoints.bpf.o; tests/attach.rs checks every
 * program): category and name from the section alone, split at the first
 * `/` after `tp/` or `tracepoint/` as libbpf's attach_tp splits it; a
 * section with no category is the program's KSYM_ERR_INVALID once
 * resolved, with `out` still written; an older caller's struct (sz 80,
 * before tp_category) gets nothing past its end. */
static void test_tracepoints(void)
{
    struct ksym_btf *b = open_61();
    struct ksym_bpf_object *o = open_obj("tracepoints.bpf.o");
    if (!b || !o)
        goto out;
    size_t sw, deeper, nocat, opt;
    CHECK(ksym_bpf_object_find_program(o, "on_switch", &sw) == 0);
    CHECK(ksym_bpf_object_find_program(o, "deeper", &deeper) == 0);
    CHECK(ksym_bpf_object_find_program(o, "no_category", &nocat) == 0);
    CHECK(ksym_bpf_object_find_program(o, "optional_no_category", &opt) == 0);
    struct ksym_bpf_attach a = { .sz = sizeof(a) };
    CHECK(ksym_bpf_program_attach_info(o, sw, &a) == 0 && a.prog_type == 5 && a.error == 0);
    CHECK(a.tp_category && !strcmp(a.tp_category, "sched") && a.target && !strcmp(a.target, "sched_switch"));
    CHECK(a.module == NULL && !(a.flags & KSYM_ATTACH_TARGET_AT_LOAD));
    CHECK(ksym_bpf_program_attach_info(o, deeper, &a) == 0);
    CHECK(a.tp_category && !strcmp(a.tp_category, "sched") && !strcmp(a.target, "sched_switch/extra"));
    CHECK(ksym_bpf_object_resolve_btf(o, b) == 0);
    CHECK(ksym_bpf_program_attach_info(o, sw, &a) == 0 && a.error == 0 && !strcmp(a.tp_category, "sched"));
    memset(&a, 0xa5, sizeof(a));
    a.sz = sizeof(a);
    CHECK(ksym_bpf_program_attach_info(o, nocat, &a) == KSYM_ERR_INVALID);
    CHECK_MSG("tp/<category>/<name>");
    CHECK(a.error == KSYM_ERR_INVALID && a.error_message && strstr(a.error_message, "`no_category`"));
    CHECK(a.tp_category == NULL && a.target && !strcmp(a.target, "sched_switch"));
    CHECK(ksym_bpf_program_attach_info(o, opt, &a) == 0 && a.error == KSYM_ERR_INVALID);
    /* The struct before tp_category: 80 bytes, the rest untouched. */
    unsigned char buf[sizeof(struct ksym_bpf_attach)];
    memset(buf, 0xa5, sizeof(buf));
    struct ksym_bpf_attach *old = (struct ksym_bpf_attach *)(void *)buf;
    old->sz = offsetof(struct ksym_bpf_attach, tp_category);
    CHECK(old->sz == 80);
    CHECK(ksym_bpf_program_attach_info(o, sw, old) == 0 && !strcmp(old->target, "sched_switch"));
    for (size_t i = 80; i < sizeof(buf); i++)
        CHECK(buf[i] == 0xa5);
out:
    ksym_bpf_object_free(o);
    ksym_btf_free(b);
}

/* The trampoline rules of the kernel the BTF is of, not the running
 * one's (ksym_btf_opts.kernel_release). bpftool's dump of the 6.1 BTF:
 * kmem_cache_create_usercopy (FUNC 12462) takes 7 arguments, every one a
 * pointer or an integer (name, size, align, flags, useroffset, usersize,
 * ctor): 7 registers, which x86-64's trampoline takes from Linux 6.6, not
 * before; kmem_cache_create (12460) takes the first 4 and ctor: 5. */
static void test_release_rules(void)
{
    static const struct {
        const char *release;
        int usercopy; /* aliases expected for kmem_cache_create_usercopy */
    } cases[] = {
        { "6.1.0-57-amd64", 0 }, { "6.5.13", 0 }, { "6.6.0", 1 }, { "6.18.44-fc-v1147", 1 },
        /* No version to read: nothing is left out. */
        { "unknown", 1 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        KSYM_OPTS(ksym_btf_opts, bo, .vmlinux_btf_path = vmlinux, .module_btf_dir = "", .filter_functions_path = "",
                  .kallsyms_path = kallsyms, .kernel_release = cases[c].release);
        struct ksym_btf *b = ksym_btf_open(&bo);
        struct ksym_bpf_object *o = open_obj("trace.bpf.o");
        size_t count = 0;
        CHECK(b && o && ksym_bpf_object_find_program(o, "count", &count) == 0);
        if (b && o) {
            struct ksym_btf_stats st = { .sz = sizeof(st) };
            CHECK(ksym_bpf_program_expand(o, count, "kmem_cache_create_usercopy", b) == cases[c].usercopy);
            CHECK(ksym_bpf_program_expand(o, count, "kmem_cache_create", b) == 1);
            CHECK(ksym_btf_stats(b, &st) == 0 && st.trampoline_refused == (size_t)!cases[c].usercopy);
        }
        ksym_bpf_object_free(o);
        ksym_btf_free(b);
    }
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

/* The names of the FUNC types of the raw BTF at `path` matching the glob
 * `pattern` (fnmatch), each once, in type order, read here without
 * libksym; returns how many (at most `cap`), or -1 if the file is not
 * BTF this reader knows. `*types` gets the number of types. */
static int btf_funcs(const char *path, const char *pattern, char names[][64], int cap, uint32_t *types)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    static unsigned char buf[8 << 20];
    size_t len = fread(buf, 1, sizeof(buf), f);
    int whole = feof(f);
    fclose(f);
    uint16_t magic;
    uint32_t hdr[5]; /* hdr_len, type_off, type_len, str_off, str_len */
    if (!whole || len < 24)
        return -1;
    memcpy(&magic, buf, 2);
    memcpy(hdr, buf + 4, sizeof(hdr));
    if (magic != 0xeb9f || (uint64_t)hdr[0] + hdr[1] + hdr[2] > len || (uint64_t)hdr[0] + hdr[3] + hdr[4] > len)
        return -1;
    const unsigned char *t = buf + hdr[0] + hdr[1], *end = t + hdr[2];
    const char *strs = (const char *)buf + hdr[0] + hdr[3];
    int n = 0;
    *types = 0;
    while (t + 12 <= end) {
        uint32_t name_off, info;
        memcpy(&name_off, t, 4);
        memcpy(&info, t + 4, 4);
        uint32_t kind = (info >> 24) & 0x1f, vlen = info & 0xffff;
        size_t extra;
        switch (kind) {
        case 1: case 14: case 17: extra = 4; break;         /* INT, VAR, DECL_TAG */
        case 3: extra = 12; break;                          /* ARRAY */
        case 4: case 5: case 15: case 19: extra = 12 * (size_t)vlen; break; /* STRUCT, UNION, DATASEC, ENUM64 */
        case 6: case 13: extra = 8 * (size_t)vlen; break;   /* ENUM, FUNC_PROTO */
        case 2: case 7: case 8: case 9: case 10: case 11: case 12: case 16: case 18: extra = 0; break;
        default: return -1;
        }
        (*types)++;
        if (kind == 12 && name_off < hdr[4] && !fnmatch(pattern, strs + name_off, 0)) {
            int seen = 0;
            for (int i = 0; i < n; i++)
                seen |= !strcmp(names[i], strs + name_off);
            if (!seen && n < cap)
                snprintf(names[n++], 64, "%s", strs + name_off);
        }
        t += 12 + extra;
    }
    return t == end ? n : -1;
}

/* Expands `count` of trace.bpf.o (fentry) over `pattern` with `b`; the
 * targets' names go to `got` (at most `cap`); returns how many. */
static int expand_names(struct ksym_btf *b, const char *pattern, char got[][64], int cap)
{
    struct ksym_bpf_object *o = open_obj("trace.bpf.o");
    size_t count;
    if (!o || ksym_bpf_object_find_program(o, "count", &count) != 0) {
        ksym_bpf_object_free(o);
        return -1;
    }
    size_t before = ksym_bpf_object_program_count(o);
    int n = ksym_bpf_program_expand(o, count, pattern, b);
    for (int i = 0; i < n && i < cap; i++) {
        struct ksym_bpf_attach a = { .sz = sizeof(a) };
        CHECK(ksym_bpf_program_attach_info(o, before + (size_t)i, &a) == 0 && a.target && a.addr != 0);
        snprintf(got[i], 64, "%s", a.target ? a.target : "");
    }
    ksym_bpf_object_free(o);
    return n;
}

/* Do `got` (n of them) and `want` (m) hold the same names? Says which
 * differ. */
static int same_names(const char *what, char got[][64], int n, char want[][64], int m)
{
    int same = n == m;
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int j = 0; j < m; j++)
            found |= !strcmp(got[i], want[j]);
        if (!found)
            fprintf(stderr, "%s: %s expanded, not expected\n", what, got[i]);
        same &= found;
    }
    for (int j = 0; j < m; j++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= !strcmp(got[i], want[j]);
        if (!found)
            fprintf(stderr, "%s: %s expected, not expanded\n", what, want[j]);
        same &= found;
    }
    return same;
}

/* ksym_btf_opts.filter_functions_path: a tracefs-style
 * available_filter_functions the test writes for the 6.1 kernel. The
 * oracle is the BTF as this test reads it: the FUNCs matching vfs_r*
 * (six on 6.1), every other one of them written to the list, with a
 * name matching the pattern that BTF does not have, a function outside
 * the pattern and a module's line. Expanded without the list, the
 * fentry program gets exactly the BTF's functions; with it, exactly those
 * of them on the list: the ones left out are the BTF functions not
 * listed. The stats say the list was read (not with addresses, not
 * unavailable), and count vmlinux's types as the reader does. */
static void test_filter(void)
{
    static const char pattern[] = "vfs_r*";
    char btf[16][64], listed[16][64], got[16][64];
    uint32_t types = 0;
    int nb = btf_funcs(vmlinux, pattern, btf, 16, &types);
    if (nb < 0)
        fprintf(stderr, "%s: not BTF this test can read\n", vmlinux);
    CHECK(nb >= 4);
    if (nb < 4)
        return;
    char dir[] = "/tmp/ksym-filter-XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        failures++;
        return;
    }
    snprintf(path, sizeof(path), "%s/available_filter_functions", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    int nl = 0;
    fprintf(f, "schedule\nvfs_r_not_in_btf\n");
    for (int i = 0; i < nb; i++)
        if (i % 2 == 0) {
            fprintf(f, "%s\n", btf[i]);
            memcpy(listed[nl++], btf[i], 64);
        }
    fprintf(f, "xfs_file_open [xfs]\n");
    fclose(f);
    CHECK(nl < nb); /* some BTF function is not on the list */

    KSYM_OPTS(ksym_btf_opts, fo, .vmlinux_btf_path = vmlinux, .module_btf_dir = "", .filter_functions_path = path,
              .kallsyms_path = kallsyms);
    KSYM_OPTS(ksym_btf_opts, no, .vmlinux_btf_path = vmlinux, .module_btf_dir = "", .filter_functions_path = "",
              .kallsyms_path = kallsyms);
    struct ksym_btf *with = ksym_btf_open(&fo), *without = ksym_btf_open(&no);
    CHECK(with != NULL && without != NULL);
    if (with && without) {
        int n = expand_names(without, pattern, got, 16);
        CHECK(same_names("without the list", got, n, btf, nb));
        n = expand_names(with, pattern, got, 16);
        CHECK(same_names("with the list", got, n, listed, nl));
        struct ksym_btf_stats st = { .sz = sizeof(st) };
        CHECK(ksym_btf_stats(with, &st) == 0);
        CHECK((st.flags & KSYM_BTF_STATS_FILTER_FUNCTIONS) && !(st.flags & KSYM_BTF_STATS_FILTER_ADDRS) &&
              !(st.flags & KSYM_BTF_STATS_FILTER_UNAVAILABLE));
        CHECK(st.vmlinux_types == types);
        CHECK(ksym_btf_stats(without, &st) == 0);
        CHECK(!(st.flags & (KSYM_BTF_STATS_FILTER_FUNCTIONS | KSYM_BTF_STATS_FILTER_ADDRS |
                            KSYM_BTF_STATS_FILTER_UNAVAILABLE)));
        printf("  filter functions: %d of the %d BTF functions %s listed, %d expanded with the list\n", nl, nb,
               pattern, n);
    }
    ksym_btf_free(with);
    ksym_btf_free(without);
    remove(path);
    rmdir(dir);
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
    test_tracepoints();
    test_expand();
    test_release_rules();
    test_filter();
    test_snapshot();
    return finish("test_btf");
}
