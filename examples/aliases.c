/*
 * A loader for a BPF object whose programs have aliases, with bpf(2) and
 * libksym only (no libbpf), in the order a loader follows:
 *   1. open the object                        ksym_bpf_object_open
 *   2. make its choices: a .rodata option,    ksym_bpf_object_set_var,
 *      each alias's own tracepoint            ksym_bpf_program_set_attach_target
 *   3. load the object's BTF                  BPF_BTF_LOAD
 *   4. resolve externs and kernel BTF         ksym_bpf_object_resolve_ksyms, _resolve_btf
 *   5. create the maps, .rodata frozen        BPF_MAP_CREATE, _UPDATE_ELEM, _FREEZE
 *   6. relocate, once for every alias         ksym_bpf_object_relocate
 *   7. load each program from that one copy   BPF_PROG_LOAD
 *   8. attach each                            BPF_RAW_TRACEPOINT_OPEN
 *   9. read a map                             BPF_MAP_LOOKUP_ELEM
 *
 *   aliases OBJECT FORKS RENAMES
 *
 * OBJECT is c-tests/bpf/task_events.bpf.o: `count` (tp_btf/sched_process_
 * fork) and its aliases count_newtask and count_rename, which this loader
 * attaches to task_newtask and task_rename; each adds one to counts[0]
 * for this process. Once all are attached it forks FORKS children and
 * renames itself RENAMES times, then prints the map's count: a fork runs
 * two of the programs, a rename one. Needs root (bpf()) and kernel BTF.
 *
 *   cc -std=gnu11 -o aliases examples/aliases.c $(pkg-config --cflags --libs ksym)
 */
#define _GNU_SOURCE
#include <ksym.h>

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FDS 16

static int sys_bpf(enum bpf_cmd cmd, union bpf_attr *attr)
{
    return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static uint64_t ptr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static int fail(const char *what)
{
    fprintf(stderr, "aliases: %s: %s\n", what, ksym_last_error_message());
    return 1;
}

static int sys_fail(const char *call, const char *name)
{
    fprintf(stderr, "aliases: %s `%s`: %s\n", call, name, strerror(errno));
    return 1;
}

/* The kernel's names take letters, digits, '_' and '.' (at most 15). */
static void object_name(char out[BPF_OBJ_NAME_LEN], const char *name)
{
    size_t j = 0;
    memset(out, 0, BPF_OBJ_NAME_LEN);
    for (; *name && j < BPF_OBJ_NAME_LEN - 1; name++)
        if ((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') || (*name >= '0' && *name <= '9') ||
            *name == '_' || *name == '.')
            out[j++] = *name;
}

/* 5. Each map as libksym describes it, with its initial value; a map
 * read-only to programs (.rodata, .kconfig) is frozen, so that the
 * verifier knows its values. */
static int create_maps(struct ksym_bpf_object *obj, int btf_fd, int *fds, int *nfds, int *counts_fd)
{
    union bpf_attr a;
    for (size_t m = 0; m < ksym_bpf_object_map_count(obj) && *nfds < MAX_FDS; m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        if (ksym_bpf_map_info(obj, m, &mi) != 0) {
            fail("map");
            return 1;
        }
        memset(&a, 0, sizeof(a));
        a.map_type = mi.type;
        a.key_size = mi.key_size;
        a.value_size = mi.value_size;
        a.max_entries = mi.max_entries;
        a.map_flags = mi.map_flags;
        a.btf_fd = (uint32_t)btf_fd;
        a.btf_key_type_id = mi.btf_key_type_id;
        a.btf_value_type_id = mi.btf_value_type_id;
        object_name(a.map_name, mi.name);
        int fd = sys_bpf(BPF_MAP_CREATE, &a);
        if (fd < 0) {
            sys_fail("BPF_MAP_CREATE", mi.name);
            return 1;
        }
        fds[(*nfds)++] = fd;
        uint32_t zero = 0;
        memset(&a, 0, sizeof(a));
        a.map_fd = (uint32_t)fd;
        a.key = ptr(&zero);
        a.value = ptr(mi.initial_value);
        if (mi.initial_value && sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0) {
            sys_fail("BPF_MAP_UPDATE_ELEM", mi.name);
            return 1;
        }
        memset(&a, 0, sizeof(a));
        a.map_fd = (uint32_t)fd;
        if ((mi.map_flags & BPF_F_RDONLY_PROG) && sys_bpf(BPF_MAP_FREEZE, &a) < 0) {
            sys_fail("BPF_MAP_FREEZE", mi.name);
            return 1;
        }
        if (ksym_bpf_object_set_map_fd(obj, m, fd) != 0) {
            fail(mi.name);
            return 1;
        }
        if (!strcmp(mi.name, "counts"))
            *counts_fd = fd;
    }
    return 0;
}

/* 7. and 8. Each program with its type and target from its attach
 * info, its func_info and line_info; a tp_btf program attaches to the
 * tracepoint its BTF id names. */
static int load_and_attach(struct ksym_bpf_object *obj, int btf_fd, int *fds, int *nfds)
{
    union bpf_attr a;
    for (size_t p = 0; p < ksym_bpf_object_program_count(obj) && *nfds + 2 <= MAX_FDS; p++) {
        struct ksym_bpf_program_info pi = { .sz = sizeof(pi) };
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        size_t cnt = 0, fi_size = 0, fi_cnt = 0, li_size = 0, li_cnt = 0, fd_cnt = 0;
        if (!ksym_bpf_program_autoload(obj, p))
            continue;
        const struct ksym_bpf_insn *insns = ksym_bpf_program_insns(obj, p, &cnt);
        if (ksym_bpf_program_info(obj, p, &pi) != 0 || ksym_bpf_program_attach_info(obj, p, &at) != 0 || !insns) {
            fail("program");
            return 1;
        }
        memset(&a, 0, sizeof(a));
        a.prog_type = at.prog_type;
        a.expected_attach_type = at.expected_attach_type;
        a.attach_btf_id = at.attach_btf_id;
        a.attach_btf_obj_fd = at.attach_btf_obj_fd > 0 ? (uint32_t)at.attach_btf_obj_fd : 0; /* a module's */
        a.prog_flags = (at.flags & KSYM_ATTACH_SLEEPABLE) ? BPF_F_SLEEPABLE : 0;
        a.insns = ptr(insns);
        a.insn_cnt = (uint32_t)cnt;
        a.license = ptr(ksym_bpf_object_license(obj));
        a.prog_btf_fd = (uint32_t)btf_fd;
        a.func_info = ptr(ksym_bpf_program_func_info(obj, p, &fi_size, &fi_cnt));
        a.func_info_rec_size = (uint32_t)fi_size;
        a.func_info_cnt = (uint32_t)fi_cnt;
        a.line_info = ptr(ksym_bpf_program_line_info(obj, p, &li_size, &li_cnt));
        a.line_info_rec_size = (uint32_t)li_size;
        a.line_info_cnt = (uint32_t)li_cnt;
        a.fd_array = ptr(ksym_bpf_program_fd_array(obj, p, &fd_cnt)); /* module kfuncs' BTF fds */
        object_name(a.prog_name, pi.name);
        int fd = sys_bpf(BPF_PROG_LOAD, &a);
        if (fd < 0) {
            sys_fail("BPF_PROG_LOAD", pi.name);
            return 1;
        }
        fds[(*nfds)++] = fd;
        memset(&a, 0, sizeof(a));
        a.raw_tracepoint.prog_fd = (uint32_t)fd;
        int link = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
        if (link < 0) {
            sys_fail("BPF_RAW_TRACEPOINT_OPEN", pi.name);
            return 1;
        }
        fds[(*nfds)++] = link;
        printf("program %s: %s`%s, %zu instructions at %p\n", pi.name, at.module, at.target, cnt, (const void *)insns);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const retarget[][2] = { { "count_newtask", "task_newtask" }, { "count_rename", "task_rename" } };
    int fds[MAX_FDS], nfds = 0, counts_fd = -1, rc = 1;
    union bpf_attr a;
    if (argc != 4) {
        fprintf(stderr, "usage: aliases OBJECT FORKS RENAMES\n");
        return 2;
    }
    /* 1. Open. */
    struct ksym_bpf_object *obj = ksym_bpf_object_open(argv[1]);
    struct ksym_btf *kbtf = ksym_btf_open(NULL); /* the running kernel's */
    if (!obj || !kbtf) {
        fail(obj ? "the kernel's BTF" : argv[1]);
        goto out;
    }
    /* 2. Choices made before the maps exist: this process's id into
     * .rodata (the programs compare with it), a tracepoint per alias. */
    uint32_t tgid = (uint32_t)getpid();
    if (ksym_bpf_object_set_var(obj, "target_tgid", &tgid, sizeof(tgid)) != 0) {
        fail("target_tgid");
        goto out;
    }
    for (size_t k = 0; k < 2; k++) {
        size_t p;
        if (ksym_bpf_object_find_program(obj, retarget[k][0], &p) != 0 ||
            ksym_bpf_program_set_attach_target(obj, p, retarget[k][1], kbtf) != 0) {
            fail(retarget[k][0]);
            goto out;
        }
    }
    /* 3. The object's BTF, made loadable by libksym. */
    size_t btf_size = 0;
    const void *btf = ksym_bpf_object_btf(obj, &btf_size);
    memset(&a, 0, sizeof(a));
    a.btf = ptr(btf);
    a.btf_size = (uint32_t)btf_size;
    int btf_fd = btf ? sys_bpf(BPF_BTF_LOAD, &a) : -1;
    if (btf_fd < 0) {
        btf ? sys_fail("BPF_BTF_LOAD", argv[1]) : fail(argv[1]);
        goto out;
    }
    fds[nfds++] = btf_fd;
    /* 4. Untyped __ksym externs (one pass over kallsyms; this object has
     * none), then what needs the kernel's BTF: attach targets, CO-RE,
     * typed ksyms, kfuncs, .kconfig (its values, before its map). */
    if (ksym_bpf_object_resolve_ksyms(obj, NULL) != 0 || ksym_bpf_object_resolve_btf(obj, kbtf) != 0) {
        fail("resolve");
        goto out;
    }
    /* 5. The maps (create_maps). */
    if (create_maps(obj, btf_fd, fds, &nfds, &counts_fd) != 0)
        goto out;
    /* 6. Every relocation applied once, to the copy all aliases share. */
    if (counts_fd < 0 || ksym_bpf_object_relocate(obj) != 0) {
        fail("relocate");
        goto out;
    }
    /* 7. and 8. The programs, loaded and attached (load_and_attach). */
    if (load_and_attach(obj, btf_fd, fds, &nfds) != 0)
        goto out;
    /* The events the programs count: forks and renames of this process. */
    for (int k = 0; k < atoi(argv[2]); k++) {
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        if (child < 0 || waitpid(child, NULL, 0) != child) {
            sys_fail("fork", "child");
            goto out;
        }
    }
    for (int k = 0; k < atoi(argv[3]); k++)
        prctl(PR_SET_NAME, k % 2 ? "aliases-b" : "aliases-a");
    /* 9. What they counted. */
    uint32_t zero = 0;
    uint64_t n = 0;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)counts_fd;
    a.key = ptr(&zero);
    a.value = ptr(&n);
    if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0) {
        sys_fail("BPF_MAP_LOOKUP_ELEM", "counts");
        goto out;
    }
    printf("count %llu\n", (unsigned long long)n);
    rc = 0;
out:
    while (nfds > 0)
        close(fds[--nfds]);
    ksym_bpf_object_free(obj);
    ksym_btf_free(kbtf);
    return rc;
}
