/*
 * Objects in the style of real tracing tools (c-tests/bpf: kversion,
 * optional, twins, tp_wildcard), as test_tool_objects.c for the choices a
 * tool makes by section: a `version` section's LINUX_VERSION_CODE against
 * the vDSO's note (the kernel's own version code), `?` sections whose
 * autoload is off, twin programs on one target, and tracepoint sections
 * with wildcards against tracefs, each loaded, attached and run through
 * the bundled loader (tools/bpf_loader.h).
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
    test_kversion(btf);
    test_optional(btf);
    test_twins(btf);
    test_tracepoint_wildcard(btf);
    ksym_btf_free(btf);
    return finish("test_tool_sections");
}
