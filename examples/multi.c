/*
 * A loader for the kernel's multi links (Linux 7.3), with bpf(2) and
 * libksym only (no libbpf): one program attached to every function a
 * pattern matches, one link per BTF object, in the order a loader
 * follows:
 *   1. open the object, set an option        ksym_bpf_object_open, _set_var
 *   2. ask which way this kernel has         ksym_bpf_program_way
 *   3. list the functions                    ksym_bpf_program_multi_attach
 *   4. resolve, create the maps, relocate    _resolve_btf, BPF_MAP_CREATE, _relocate
 *   5. per link: load the program with its   ksym_bpf_program_multi_link,
 *      BTF object, link it to its functions  BPF_PROG_LOAD, BPF_LINK_CREATE
 *   6. read the counts by cookie             BPF_MAP_LOOKUP_ELEM,
 *                                            ksym_bpf_program_multi_function
 *
 *   multi OBJECT PATTERN GETPPIDS
 *
 * OBJECT is c-tests/bpf/multi.bpf.o: its `plain` body (a plain fentry
 * program) counts, for this process, runs[cookie]++; cookie k is function
 * k of libksym's list. Once attached, the loader calls getppid() GETPPIDS
 * times and prints each function that ran, with its count. On a kernel
 * without multi links it says so and exits 3: load the body as aliases
 * there (examples/aliases.c, ksym_bpf_program_expand).
 *
 *   cc -std=gnu11 -o multi examples/multi.c $(pkg-config --cflags --libs ksym)
 */
#define _GNU_SOURCE
#include <ksym.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The parts of union bpf_attr this loader uses, as Linux 7.3 lays them
 * out (older <linux/bpf.h> have no tracing_multi). */
union attr {
    struct { /* BPF_MAP_CREATE */
        uint32_t map_type, key_size, value_size, max_entries, map_flags;
    } map;
    struct { /* BPF_MAP_UPDATE_ELEM, BPF_MAP_LOOKUP_ELEM */
        uint32_t map_fd, pad;
        uint64_t key, value, flags;
    } elem;
    struct { /* BPF_PROG_LOAD */
        uint32_t prog_type, insn_cnt;
        uint64_t insns, license;
        uint32_t log_level, log_size;
        uint64_t log_buf;
        uint32_t kern_version, prog_flags;
        char prog_name[16];
        uint32_t prog_ifindex, expected_attach_type, prog_btf_fd, func_info_rec_size;
        uint64_t func_info;
        uint32_t func_info_cnt, line_info_rec_size;
        uint64_t line_info;
        uint32_t line_info_cnt, attach_btf_id, attach_btf_obj_fd, core_relo_cnt;
    } load;
    struct { /* BPF_LINK_CREATE with tracing_multi */
        uint32_t prog_fd, target_fd, attach_type, flags;
        uint64_t ids, cookies;
        uint32_t cnt;
    } link;
    char bytes[160];
};

enum { MAP_CREATE = 0, MAP_LOOKUP_ELEM = 1, MAP_UPDATE_ELEM = 2, PROG_LOAD = 5, LINK_CREATE = 28 };

#define MAX_FDS 64

static int sys_bpf(int cmd, union attr *a)
{
    return (int)syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static uint64_t ptr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static int fail(const char *what)
{
    fprintf(stderr, "multi: %s: %s\n", what, ksym_last_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    int fds[MAX_FDS], nfds = 0, bss_fd = -1, rc = 1;
    size_t prog, bss = 0, runs_var;
    union attr a;
    if (argc != 4) {
        fprintf(stderr, "usage: multi OBJECT PATTERN GETPPIDS\n");
        return 2;
    }
    /* 1. Open; this process's id for the body to compare with. */
    struct ksym_bpf_object *obj = ksym_bpf_object_open(argv[1]);
    struct ksym_btf *kbtf = ksym_btf_open(NULL);
    uint32_t tgid = (uint32_t)getpid();
    if (!obj || !kbtf || ksym_bpf_object_find_program(obj, "plain", &prog) != 0 ||
        ksym_bpf_object_set_var(obj, "target_tgid", &tgid, sizeof(tgid)) != 0 ||
        ksym_bpf_object_find_var(obj, "runs", &runs_var) != 0) {
        fail(argv[1]);
        goto out;
    }
    /* 2. Multi links, or aliases (or neither) on this kernel? */
    int way = ksym_bpf_program_way(obj, prog, kbtf);
    if (way != KSYM_WAY_MULTI) {
        fprintf(stderr, "multi: no multi links on this kernel (%s); load the body as aliases there\n",
                way == KSYM_WAY_ALIASES ? "it takes aliases" : ksym_last_error_message());
        rc = 3;
        goto out;
    }
    /* 3. The functions, one link per BTF object; `plain` becomes a
     * fentry.multi program. Only it is loaded. */
    int nlinks = ksym_bpf_program_multi_attach(obj, prog, argv[2], kbtf);
    if (nlinks <= 0) {
        nlinks ? fail(argv[2]) : fprintf(stderr, "multi: nothing matches %s\n", argv[2]);
        goto out;
    }
    /* 4. The rest of any load: resolve, the maps with their initial
     * values (this object's only map is its .bss), relocate. */
    if (ksym_bpf_object_resolve_btf(obj, kbtf) != 0) {
        fail("resolve");
        goto out;
    }
    for (size_t m = 0; m < ksym_bpf_object_map_count(obj); m++) {
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        uint32_t zero = 0;
        if (ksym_bpf_map_info(obj, m, &mi) != 0) {
            fail("map");
            goto out;
        }
        memset(&a, 0, sizeof(a));
        a.map.map_type = mi.type;
        a.map.key_size = mi.key_size;
        a.map.value_size = mi.value_size;
        a.map.max_entries = mi.max_entries;
        a.map.map_flags = mi.map_flags;
        int fd = sys_bpf(MAP_CREATE, &a);
        if (fd < 0 || nfds == MAX_FDS) {
            fprintf(stderr, "multi: BPF_MAP_CREATE %s: %s\n", mi.name, strerror(errno));
            goto out;
        }
        fds[nfds++] = fd;
        memset(&a, 0, sizeof(a));
        a.elem.map_fd = (uint32_t)fd;
        a.elem.key = ptr(&zero);
        a.elem.value = ptr(mi.initial_value);
        if ((mi.initial_value && sys_bpf(MAP_UPDATE_ELEM, &a) < 0) || ksym_bpf_object_set_map_fd(obj, m, fd) != 0) {
            fail(mi.name);
            goto out;
        }
        if (!strcmp(mi.name, ".bss")) {
            bss = m;
            bss_fd = fd;
        }
    }
    size_t cnt = 0;
    const struct ksym_bpf_insn *insns = NULL;
    if (bss_fd < 0 || ksym_bpf_object_relocate(obj) != 0 || !(insns = ksym_bpf_program_insns(obj, prog, &cnt))) {
        fail("relocate");
        goto out;
    }
    /* 5. Per link: the program loaded with the link's BTF object (0:
     * vmlinux; a module's fd), then linked to its functions with one
     * cookie each. */
    for (int k = 0; k < nlinks && nfds + 2 <= MAX_FDS; k++) {
        struct ksym_bpf_multi_link ml = { .sz = sizeof(ml) };
        if (ksym_bpf_program_multi_link(obj, prog, (size_t)k, &ml) != 0) {
            fail("link");
            goto out;
        }
        memset(&a, 0, sizeof(a));
        a.load.prog_type = 26; /* BPF_PROG_TYPE_TRACING */
        a.load.expected_attach_type = ml.attach_type;
        a.load.attach_btf_obj_fd = ml.attach_btf_obj_fd > 0 ? (uint32_t)ml.attach_btf_obj_fd : 0;
        a.load.insns = ptr(insns);
        a.load.insn_cnt = (uint32_t)cnt;
        a.load.license = ptr(ksym_bpf_object_license(obj));
        int fd = sys_bpf(PROG_LOAD, &a);
        if (fd < 0) {
            fprintf(stderr, "multi: BPF_PROG_LOAD for %s: %s\n", ml.module, strerror(errno));
            goto out;
        }
        fds[nfds++] = fd;
        memset(&a, 0, sizeof(a));
        a.link.prog_fd = (uint32_t)fd;
        a.link.attach_type = ml.attach_type;
        a.link.ids = ptr(ml.btf_ids);
        a.link.cookies = ptr(ml.cookies);
        a.link.cnt = (uint32_t)ml.count;
        int link = sys_bpf(LINK_CREATE, &a);
        if (link < 0) {
            fprintf(stderr, "multi: BPF_LINK_CREATE of %zu functions in %s: %s\n", ml.count, ml.module,
                    strerror(errno));
            goto out;
        }
        fds[nfds++] = link;
        printf("link %d: %zu functions in %s\n", k, ml.count, ml.module);
    }
    for (int k = 0; k < atoi(argv[3]); k++)
        syscall(SYS_getppid);
    /* 6. The counts by cookie, from the .bss map's value. */
    struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
    struct ksym_bpf_var_info vi = { .sz = sizeof(vi) };
    ksym_bpf_map_info(obj, bss, &mi);
    ksym_bpf_var_info(obj, runs_var, &vi);
    unsigned char *value = calloc(1, mi.value_size);
    uint32_t zero = 0;
    memset(&a, 0, sizeof(a));
    a.elem.map_fd = (uint32_t)bss_fd;
    a.elem.key = ptr(&zero);
    a.elem.value = ptr(value);
    if (!value || sys_bpf(MAP_LOOKUP_ELEM, &a) < 0) {
        fprintf(stderr, "multi: BPF_MAP_LOOKUP_ELEM .bss: %s\n", strerror(errno));
        free(value);
        goto out;
    }
    const uint64_t *runs = (const uint64_t *)(value + vi.offset);
    for (uint64_t c = 0; c < vi.size / sizeof(uint64_t); c++) {
        struct ksym_bpf_multi_function f = { .sz = sizeof(f) };
        if (runs[c] && ksym_bpf_program_multi_function(obj, prog, c, &f) == 0)
            printf("%s`%s %llu\n", f.module, f.name, (unsigned long long)runs[c]);
    }
    free(value);
    rc = 0;
out:
    while (nfds > 0)
        close(fds[--nfds]);
    ksym_bpf_object_free(obj);
    ksym_btf_free(kbtf);
    return rc;
}
