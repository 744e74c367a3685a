/*
 * fentry aliases made by ksym_bpf_program_expand fire on exactly their own
 * functions, with the running kernel as the oracle (the qemu guest's 6.1;
 * this machine's kernel refuses fentry and gets a visible skip):
 *
 * - `vmlinux`vfs_*`: fentry_ip.bpf.o's ip_count expanded over every
 *   matching function; each alias's attach address must be its target's
 *   address in /proc/kallsyms, every alias must load and attach (the
 *   expansion keeps only what ftrace can patch), and after read/write/open
 *   syscalls the addresses bpf_get_func_ip() recorded must all be targets
 *   of attached aliases and include vfs_read, vfs_write and vfs_open.
 *   Every target must be listed in tracefs' available_filter_functions
 *   (the expansion's documented limit; a skip where it cannot be read),
 *   and vfs_caches_init (in BTF and kallsyms, __init: not in that list)
 *   must not be expanded; dummy_cleanup_module likewise for dummy`*.
 * - `dummy`*`: the same over every function of the dummy module, attached
 *   through its BTF object (attach_btf_obj_fd), triggered by creating and
 *   removing a dummy device with ip(8); dummy_setup must have fired.
 */
#define _GNU_SOURCE

#include "check.h"
#include "../tools/bpf_loader.h"

#include <fcntl.h>
#include <sys/wait.h>

static const char *objdir;


/* tracefs' available_filter_functions, whole ("\nname\n" or
 * "\nname [module]\n" lines), or NULL when it cannot be read. */
static char *filter_list;

static char *read_filter_list(void)
{
    const char *paths[] = { "/sys/kernel/tracing/available_filter_functions",
                            "/sys/kernel/debug/tracing/available_filter_functions" };
    for (int p = 0; p < 2; p++) {
        FILE *f = fopen(paths[p], "r");
        if (!f)
            continue;
        size_t cap = 1 << 22, len = 1;
        char *buf = malloc(cap), tmp[65536];
        buf[0] = '\n';
        size_t got;
        while ((got = fread(tmp, 1, sizeof(tmp), f)) > 0) {
            if (len + got + 1 > cap)
                buf = realloc(buf, cap *= 2);
            memcpy(buf + len, tmp, got);
            len += got;
        }
        fclose(f);
        buf[len] = 0;
        if (len > 1)
            return buf;
        free(buf);
    }
    return NULL;
}

static int in_filter_list(const char *module, const char *name)
{
    char line[512];
    if (!strcmp(module, "vmlinux"))
        snprintf(line, sizeof(line), "\n%s\n", name);
    else
        snprintf(line, sizeof(line), "\n%s [%s]\n", name, module);
    return strstr(filter_list, line) != NULL;
}

static void syscalls(void)
{
    char path[] = "/tmp/ksym-fentry-XXXXXX", buf[16];
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK(write(fd, "fentry", 6) == 6);
    close(fd);
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 6);
    if (fd >= 0)
        close(fd);
    unlink(path);
}

static int sh(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void dummy_device(void)
{
    CHECK(sh("ip link add ksymfentry0 type dummy && ip link set ksymfentry0 up && ip link del ksymfentry0") == 0);
}

#define MAX_ALIASES 512

static int has(const uint64_t *v, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* Expands ip_count over `pattern`, attaches every alias, runs `trigger`,
 * and checks the recorded function addresses against the aliases' own. */
static void expand_fire(struct ksym_btf *btf, const char *pattern, const char *module, void (*trigger)(void),
                        const char *const *must, size_t nmust, const char *unpatchable)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/fentry_ip.bpf.o", objdir);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    if (!o)
        return;
    size_t body = (size_t)-1, base = ksym_bpf_object_program_count(o);
    CHECK(ksym_bpf_object_find_program(o, "ip_count", &body) == 0);
    int n = ksym_bpf_program_expand(o, body, pattern, btf);
    /* A kernel without module BTF (5.10): a module's glob has no fentry
     * targets, and libksym says why. */
    if (n < 0 && strcmp(module, "vmlinux") && kernel_has("module_btf") == 0) {
        CHECK(ksym_last_error() == KSYM_ERR_NOT_FOUND);
        CHECK_MSG("loaded but without BTF");
        NEED_SKIP("module_btf", "%s: %s", pattern, ksym_last_error_message());
        ksym_bpf_object_free(o);
        return;
    }
    if (n <= 0)
        fprintf(stderr, "expand %s: %d (%s)\n", pattern, n, ksym_last_error_message());
    CHECK(n > 0 && n <= MAX_ALIASES);
    struct kl_loaded l;
    char why[4096];
    int err = kl_prepare(o, NULL, btf, &l, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", why);
        ksym_bpf_object_free(o);
        return;
    }
    static uint64_t want[MAX_ALIASES];
    size_t attached = 0, nwant = 0, bad_addr = 0;
    for (size_t i = base; n > 0 && n <= MAX_ALIASES && i < base + (size_t)n; i++) {
        struct ksym_bpf_attach at = { .sz = sizeof(at) };
        CHECK(ksym_bpf_program_attach_info(o, i, &at) == 0);
        CHECK(at.prog_type == KL_PROG_TRACING && at.expected_attach_type == 24 /* BPF_TRACE_FENTRY */);
        CHECK(at.module && !strcmp(at.module, module));
        /* Module functions are attached through the module's BTF object. */
        CHECK(strcmp(module, "vmlinux") ? at.attach_btf_obj_fd > 0 : at.attach_btf_obj_fd == 0);
        uint64_t k = check_kallsyms_addr(module, at.target);
        if (k == 0 || k != at.addr) {
            fprintf(stderr, "  %s`%s: attach address %#llx, kallsyms %#llx\n", module, at.target,
                    (unsigned long long)at.addr, (unsigned long long)k);
            bad_addr++;
        }
        /* The expansion keeps only what ftrace can patch. */
        if (filter_list && !in_filter_list(module, at.target)) {
            fprintf(stderr, "  %s`%s: not in available_filter_functions\n", module, at.target);
            bad_addr++;
        }
        want[nwant++] = at.addr;
        int fd = kl_load_prog(o, &l, i, NULL);
        if (fd == -EPERM || fd == -EOPNOTSUPP || fd == -524 /* ENOTSUPP */) {
            NEED_SKIP("fentry", "%s: this kernel refuses fentry programs (%s)", pattern, strerror(-fd));
            goto out;
        }
        /* ip_count calls bpf_get_func_ip(), which fentry has from 5.15:
         * the verifier refuses it before (EINVAL). The aliases' targets and
         * addresses were checked up to here. */
        if (fd == -EINVAL && kernel_has("func_ip") == 0) {
            NEED_SKIP("func_ip", "%s: ip_count calls bpf_get_func_ip(), which this kernel's fentry lacks "
                                 "(BPF_PROG_LOAD: EINVAL)", pattern);
            goto out;
        }
        int lk = fd >= 0 ? kl_attach(o, &l, i) : fd;
        if (lk >= 0)
            attached++;
        else
            fprintf(stderr, "  %s`%s: %s %s\n", module, at.target, fd < 0 ? "load" : "attach", strerror(-lk));
    }
    CHECK(bad_addr == 0);
    /* A function of BTF and kallsyms that ftrace cannot patch (an __init or
     * __exit function, seen expanded when the tracefs limit was broken) is
     * left out: the kernel refuses to attach it. */
    if (filter_list && unpatchable) {
        uint64_t u = check_kallsyms_addr(module, unpatchable);
        CHECK(u != 0 && !in_filter_list(module, unpatchable));
        if (u) {
            if (has(want, nwant, u))
                fprintf(stderr, "  %s`%s was expanded, but ftrace cannot patch it\n", module, unpatchable);
            CHECK(!has(want, nwant, u));
        }
    }
    printf("  %s: %d aliases of ip_count, %zu attached\n", pattern, n, attached);
    CHECK(attached == (size_t)n);
    trigger();
    size_t ips;
    CHECK(ksym_bpf_object_find_map(o, "ips", &ips) == 0);
    /* Every address recorded is the function of an attached alias. */
    struct {
        uint32_t map_fd, pad;
        uint64_t key, next;
        uint64_t flags;
    } a;
    uint64_t key = 0, next = 0;
    size_t seen = 0, foreign = 0;
    memset(&a, 0, sizeof(a));
    a.map_fd = (uint32_t)l.map_fds[ips];
    a.key = 0; /* NULL: the first key */
    a.next = kl_ptr(&next);
    while (kl_bpf(4 /* BPF_MAP_GET_NEXT_KEY */, &a, sizeof(a)) == 0) {
        seen++;
        if (!has(want, nwant, next)) {
            fprintf(stderr, "  %s: recorded %#llx is no alias's function\n", pattern, (unsigned long long)next);
            foreign++;
        }
        key = next;
        a.key = kl_ptr(&key);
    }
    printf("  %s: %zu functions fired\n", pattern, seen);
    CHECK(seen > 0 && foreign == 0);
    for (size_t m = 0; m < nmust; m++) {
        uint64_t addr = check_kallsyms_addr(module, must[m]), hits = 0;
        CHECK(addr != 0 && has(want, nwant, addr));
        if (kl_map_lookup(l.map_fds[ips], &addr, &hits) != 0 || hits == 0)
            fprintf(stderr, "  %s`%s (%#llx) did not fire\n", module, must[m], (unsigned long long)addr);
        CHECK(hits > 0);
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
        return finish("test_fentry_kernel");
    }
    struct ksym_btf *btf = ksym_btf_open(NULL);
    if (!btf) {
        KERNEL_SKIP("no kernel BTF: %s", ksym_last_error_message());
        return finish("test_fentry_kernel");
    }
    if (!check_kallsyms_addr("vmlinux", "_text")) {
        KERNEL_SKIP("/proc/kallsyms hides addresses");
        ksym_btf_free(btf);
        return finish("test_fentry_kernel");
    }
    filter_list = read_filter_list();
    if (!filter_list)
        NEED_SKIP("tracefs", "available_filter_functions cannot be read: expansions not checked against it");
    static const char *const vfs[] = { "vfs_read", "vfs_write", "vfs_open" };
    expand_fire(btf, "vmlinux`vfs_*", "vmlinux", syscalls, vfs, 3, "vfs_caches_init");
    if (access("/sys/module/dummy", F_OK) != 0)
        NEED_SKIP("modules", "the dummy module is not loaded (modprobe dummy)");
    else if (sh("ip link help type dummy > /dev/null 2>&1; ip link add ksymprobe0 type dummy 2> /dev/null "
                "&& ip link del ksymprobe0") != 0)
        NEED_SKIP("modules", "ip(8) cannot create a dummy device here");
    else {
        static const char *const dummy[] = { "dummy_setup" };
        expand_fire(btf, "dummy`*", "dummy", dummy_device, dummy, 1, "dummy_cleanup_module");
    }
    free(filter_list);
    ksym_btf_free(btf);
    return finish("test_fentry_kernel");
}
