/*
 * Per-alias constants (ksym_bpf_program_alias_insns), with the running
 * kernel, /proc/kallsyms and this process's own actions as the oracles,
 * and the kernel table (tests/kernels.txt: fentry, func_ip) saying which
 * behaviour each kernel must show:
 *
 * - the copies: alias_values.bpf.o's shared instructions hold 0 at every
 *   per-alias constant (what libbpf gives a weak extern it cannot find),
 *   and each program's copy differs from them exactly there: its value
 *   (its program index, or what ksym_bpf_program_set_alias_value set) and
 *   the kallsyms address of its function. The C calls' contract: the
 *   count when the buffer is short, NULL buffers, errors naming the
 *   program.
 * - tp_btf (every kernel here): on_task and its aliases on_newtask and
 *   on_rename, each loaded from its own copy, count under their own
 *   values: after 3 forks and 4 renames of this process, exactly 3 under
 *   on_task's index, 3 under on_newtask's set value and 4 under
 *   on_rename's. The shared copy would count all 10 under key 0.
 * - fentry, where the kernel loads it: on_func expanded over
 *   __x64_sys_getp[gr]i* (getpgid, getpriority: syscalls with arguments,
 *   which every kernel's BTF has); after getpriority() 5 times and
 *   getpgid() 3 times, each
 *   alias counted exactly its own calls under its value and recorded its
 *   function's kallsyms address; on_func_ip's aliases record
 *   bpf_get_func_ip() equal to that address where the kernel has it, and
 *   the kernel refuses them (EINVAL) where it has not (5.10). Where the
 *   kernel refuses fentry (this machine's 6.18), the load's refusal.
 */
#define _GNU_SOURCE

#include "check.h"
#include "../tools/bpf_loader.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define FORKS 3
#define RENAMES 4
#define GETPRIORITIES 5
#define GETPGIDS 3

static const char *objdir;

static struct ksym_bpf_object *open_object(void)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/alias_values.bpf.o", objdir);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    return o;
}

static size_t find(const struct ksym_bpf_object *o, const char *name)
{
    size_t i = (size_t)-1;
    CHECK(ksym_bpf_object_find_program(o, name, &i) == 0);
    return i;
}

static uint64_t imm64(const struct ksym_bpf_insn *insns, size_t i)
{
    return (uint64_t)(uint32_t)insns[i].imm | (uint64_t)(uint32_t)insns[i + 1].imm << 32;
}

/* Program `i`'s copy against the shared one: equal but at its per-alias
 * constants, which hold `value` and `addr` there and 0 in the shared one.
 * Returns how many constants it has. */
static size_t check_copy(const struct ksym_bpf_object *o, size_t i, uint64_t value, uint64_t addr)
{
    size_t cnt = 0, nconst = 0;
    const struct ksym_bpf_insn *shared = ksym_bpf_program_insns(o, i, &cnt);
    CHECK(shared != NULL && cnt > 2);
    if (!shared)
        return 0;
    struct ksym_bpf_insn *own = calloc(cnt, sizeof(*own));
    CHECK(ksym_bpf_program_alias_insns(o, i, own, cnt) == (int)cnt);
    /* A short buffer: the count, and only `cap` written. */
    struct ksym_bpf_insn two[3];
    memset(two, 0xab, sizeof(two));
    CHECK(ksym_bpf_program_alias_insns(o, i, two, 2) == (int)cnt);
    CHECK(two[2].code == 0xab && !memcmp(two, own, 2 * sizeof(*own)));
    CHECK(ksym_bpf_program_alias_insns(o, i, NULL, 0) == (int)cnt);
    unsigned char *is_const = calloc(cnt, 1);
    size_t nrel = ksym_bpf_program_reloc_count(o, i);
    for (size_t r = 0; r < nrel; r++) {
        struct ksym_bpf_reloc rel = { .sz = sizeof(rel) };
        CHECK(ksym_bpf_program_reloc(o, i, r, &rel) == 0);
        if (rel.kind != KSYM_BPF_RELOC_ALIAS)
            continue;
        struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
        CHECK(ksym_bpf_extern_info(o, rel.target, &e) == 0 && e.resolved);
        uint64_t want = e.kind == KSYM_BPF_EXTERN_ALIAS_VALUE ? value : addr;
        CHECK(e.kind == KSYM_BPF_EXTERN_ALIAS_VALUE || e.kind == KSYM_BPF_EXTERN_ALIAS_ADDR);
        CHECK(rel.insn_idx + 1 < cnt && shared[rel.insn_idx].code == 0x18);
        if (rel.insn_idx + 1 >= cnt)
            continue;
        CHECK(imm64(shared, rel.insn_idx) == 0);
        if (imm64(own, rel.insn_idx) != want)
            fprintf(stderr, "  %zu insn %zu: %s %#llx, want %#llx\n", i, rel.insn_idx, e.name,
                    (unsigned long long)imm64(own, rel.insn_idx), (unsigned long long)want);
        CHECK(imm64(own, rel.insn_idx) == want);
        is_const[rel.insn_idx] = is_const[rel.insn_idx + 1] = 1;
        nconst++;
    }
    size_t other = 0;
    for (size_t k = 0; k < cnt; k++)
        if (!is_const[k] && memcmp(&own[k], &shared[k], sizeof(*own)))
            other++;
    CHECK(other == 0);
    free(is_const);
    free(own);
    return nconst;
}

static void check_calls(struct ksym_bpf_object *o)
{
    size_t task = find(o, "on_task"), n = 0;
    struct ksym_bpf_insn buf[4];
    CHECK(ksym_bpf_program_alias_insns(NULL, task, buf, 4) == KSYM_ERR_INVALID);
    /* Before relocate: the shared copy's error. */
    CHECK(ksym_bpf_program_alias_insns(o, task, buf, 4) == KSYM_ERR_INVALID);
    CHECK_MSG("relocate");
    CHECK(ksym_bpf_program_insns(o, task, &n) == NULL);
    CHECK(ksym_bpf_program_set_alias_value(o, 1000, 1) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_program_set_alias_value(NULL, task, 1) == KSYM_ERR_INVALID);
}

/* Where `map` holds `key`: its value, or -1 (no entry) */
static int64_t lookup(const struct kl_loaded *l, size_t map, uint64_t key)
{
    uint64_t v = 0;
    return kl_map_lookup(l->map_fds[map], &key, &v) == 0 ? (int64_t)v : -1;
}

static size_t map_of(const struct ksym_bpf_object *o, const char *name)
{
    size_t m = 0;
    CHECK(ksym_bpf_object_find_map(o, name, &m) == 0);
    return m;
}

/* on_task and its aliases: their copies, then live. */
static void tasks(struct ksym_btf *btf)
{
    struct ksym_bpf_object *o = open_object();
    if (!o)
        return;
    check_calls(o);
    size_t task = find(o, "on_task"), newtask = find(o, "on_newtask"), rename = find(o, "on_rename");
    CHECK(ksym_bpf_program_set_attach_target(o, newtask, "task_newtask", btf) == 0);
    CHECK(ksym_bpf_program_set_attach_target(o, rename, "task_rename", btf) == 0);
    CHECK(ksym_bpf_program_set_alias_value(o, newtask, 1001) == 0);
    CHECK(ksym_bpf_program_set_alias_value(o, rename, 0x1234567800000002ull) == 0);
    for (const char *const *p = (const char *const[]){ "on_func", "on_func_ip", NULL }; *p; p++)
        CHECK(ksym_bpf_program_set_autoload(o, find(o, *p), false) == 0);
    uint32_t tgid = (uint32_t)getpid();
    CHECK(ksym_bpf_object_set_var(o, "target_tgid", &tgid, sizeof(tgid)) == 0);
    struct kl_loaded l;
    char why[4096];
    int err = kl_prepare(o, NULL, btf, &l, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", why);
        ksym_bpf_object_free(o);
        return;
    }
    CHECK(check_copy(o, task, task, 0) == 1);
    CHECK(check_copy(o, newtask, 1001, 0) == 1);
    CHECK(check_copy(o, rename, 0x1234567800000002ull, 0) == 1);
    size_t attached = 0;
    for (size_t i = task; i <= rename; i++) {
        int fd = kl_load_prog(o, &l, i, NULL);
        CHECK(fd >= 0);
        if (fd >= 0 && kl_attach(o, &l, i) >= 0)
            attached++;
    }
    CHECK(attached == 3);
    for (int k = 0; k < FORKS; k++) {
        pid_t c = fork();
        if (c == 0)
            _exit(0);
        CHECK(c > 0 && waitpid(c, NULL, 0) == c);
    }
    char old[17] = { 0 };
    prctl(PR_GET_NAME, old);
    for (int k = 0; k < RENAMES; k++)
        CHECK(prctl(PR_SET_NAME, k % 2 ? "alias-odd" : "alias-even") == 0);
    prctl(PR_SET_NAME, old);
    size_t counts = map_of(o, "counts");
    int64_t a = lookup(&l, counts, task), b = lookup(&l, counts, 1001),
            c = lookup(&l, counts, 0x1234567800000002ull);
    printf("  tp_btf: forks %lld (of %d), new tasks %lld, renames %lld (of %d, one more to restore)\n",
           (long long)a, FORKS, (long long)b, (long long)c, RENAMES);
    CHECK(a == FORKS && b == FORKS && c == RENAMES + 1);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* Loads and attaches the aliases [base, base+n) of `body`; returns how
 * many attached, or -errno of the first load the kernel refused. */
static int load_all(struct ksym_bpf_object *o, struct kl_loaded *l, size_t base, int n)
{
    int attached = 0;
    for (size_t i = base; i < base + (size_t)n; i++) {
        int fd = kl_load_prog(o, l, i, NULL);
        if (fd < 0)
            return fd;
        if (kl_attach(o, l, i) >= 0)
            attached++;
    }
    return attached;
}

/* on_func or on_func_ip over __x64_sys_getp[gr]i*. */
static void functions(struct ksym_btf *btf, const char *body_name, int with_ip)
{
    struct ksym_bpf_object *o = open_object();
    if (!o)
        return;
    size_t body = find(o, body_name), base = ksym_bpf_object_program_count(o);
    int n = ksym_bpf_program_expand(o, body, "__x64_sys_getp[gr]i*", btf);
    CHECK(n == 2);
    for (size_t i = 0; i < base; i++)
        CHECK(ksym_bpf_program_set_autoload(o, i, false) == 0);
    uint32_t tgid = (uint32_t)getpid();
    CHECK(ksym_bpf_object_set_var(o, "target_tgid", &tgid, sizeof(tgid)) == 0);
    struct kl_loaded l;
    char why[4096];
    int err = n == 2 ? kl_prepare(o, NULL, btf, &l, why, sizeof(why)) : -1;
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", err < 0 && n == 2 ? why : "expand");
        ksym_bpf_object_free(o);
        return;
    }
    /* The body has no target: its ksym_alias_addr has no value. */
    struct ksym_bpf_insn one;
    CHECK(ksym_bpf_program_alias_insns(o, body, &one, 1) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG(body_name);
    CHECK_MSG("ksym_alias_addr");
    uint64_t addr[2] = { 0, 0 };
    int getpriority_at = -1;
    for (int k = 0; k < 2; k++) {
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        CHECK(ksym_bpf_program_attach_info(o, base + (size_t)k, &at) == 0);
        addr[k] = check_kallsyms_addr("vmlinux", at.target ? at.target : "?");
        CHECK(addr[k] != 0 && addr[k] == at.addr);
        if (at.target && !strcmp(at.target, "__x64_sys_getpriority"))
            getpriority_at = k;
        CHECK(check_copy(o, base + (size_t)k, base + (size_t)k, addr[k]) == 2);
    }
    CHECK(getpriority_at >= 0);
    int attached = load_all(o, &l, base, n);
    if (kernel_has("fentry") == 0) {
        CHECK(attached < 0);
        NEED_SKIP("fentry", "%s: copies checked; this kernel refuses fentry programs (%s)", body_name,
                  strerror(-attached));
    } else if (with_ip && kernel_has("func_ip") == 0) {
        /* bpf_get_func_ip() in fentry is 5.15's: the verifier refuses it. */
        CHECK(attached == -EINVAL);
        NEED_SKIP("func_ip", "%s: this kernel's fentry has no bpf_get_func_ip (BPF_PROG_LOAD: %s)", body_name,
                  strerror(-attached));
    } else if (getpriority_at >= 0) {
        CHECK(attached == 2);
        for (int k = 0; k < GETPRIORITIES; k++)
            syscall(SYS_getpriority, 0 /* PRIO_PROCESS */, 0);
        for (int k = 0; k < GETPGIDS; k++)
            syscall(SYS_getpgid, 0);
        size_t counts = map_of(o, "counts"), addrs = map_of(o, "addrs"), ips = map_of(o, "ips");
        for (int k = 0; k < 2; k++) {
            uint64_t key = base + (size_t)k;
            int64_t want = k == getpriority_at ? GETPRIORITIES : GETPGIDS, got = lookup(&l, counts, key);
            printf("  %s alias %d: %lld calls (want %lld), addr %#llx (kallsyms %#llx)", body_name, k,
                   (long long)got, (long long)want, (unsigned long long)lookup(&l, addrs, key),
                   (unsigned long long)addr[k]);
            if (with_ip)
                printf(", func_ip %#llx", (unsigned long long)lookup(&l, ips, key));
            printf("\n");
            CHECK(got == want);
            CHECK(lookup(&l, addrs, key) == (int64_t)addr[k]);
            if (with_ip)
                CHECK(lookup(&l, ips, key) == (int64_t)addr[k]);
        }
        CHECK(lookup(&l, counts, 0) == -1);
    }
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
        return finish("test_alias_values_kernel");
    }
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf) {
        KERNEL_SKIP("no kernel BTF: %s", ksym_last_error_message());
        return finish("test_alias_values_kernel");
    }
    if (!check_kallsyms_addr("vmlinux", "_text")) {
        KERNEL_SKIP("/proc/kallsyms hides addresses");
        ksym_btf_free(btf);
        return finish("test_alias_values_kernel");
    }
    tasks(btf);
    functions(btf, "on_func", 0);
    functions(btf, "on_func_ip", 1);
    ksym_btf_free(btf);
    return finish("test_alias_values_kernel");
}
