/*
 * KSYM_BCC_FIX: the better answers, each worked out by hand on a small
 * kallsyms file (and the default ones, also checked against bcc), as
 * docs/bcc.md lists them.
 *
 *   test_fix            bcc's answers (KSYM_BCC_FIX unset)
 *   KSYM_BCC_FIX=all test_fix       (or symbolize, builtin, module: each alone)
 *
 * The file is bind-mounted over /proc/kallsyms, and a modules.builtin.ranges
 * for it put where libksym looks (/lib/modules/$(uname -r), on a tmpfs over
 * /lib/modules), in a mount namespace of this process.
 */
#include "common.h"

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char KALLSYMS[] = "0000000000000000 A fixed_percpu_data\n"
                               "ffffffff81000000 T _text\n"
                               "ffffffff81000000 t startup_64\n"
                               "ffffffff81000100 T core_fn\n"
                               "ffffffff81000200 T alias_a\n"
                               "ffffffff81000200 t alias_b\n"
                               "ffffffff81000300 t builtin_fn\n"
                               "ffffffff81000400 D some_data\n"
                               "ffffffff81000500 T after_data\n"
                               "ffffffff81000600 T dup_name\n"
                               "ffffffff81000700 T _etext\n"
                               "ffffffffc0000000 t mod_fn\t[mymod]\n"
                               "ffffffffc0000100 t dup_name\t[mymod]\n"
                               "ffffffffc0000200 t mod_last\t[mymod]\n";
/* builtin_fn is crc32c's, built in. */
static const char RANGES[] = ".text 00000000-00000000 = _text\n"
                             ".text 00000300-00000400 crc32c\n";

struct want_addr {
    uint64_t addr;
    /* bcc's answer, then the one with KSYM_BCC_FIX=symbolize (name NULL:
     * -1); with builtin, builtin_fn's module is "crc32c". */
    const char *name, *module;
    uint64_t off;
    const char *fix_name, *fix_module;
    uint64_t fix_off;
};

static const struct want_addr ADDRS[] = {
    /* Two names at one address: bcc's (stable here: 12 lines, insertion
     * sort) is the last in the file; libksym's the global one. */
    { 0xffffffff81000210, "alias_b", "kernel", 0x10, "alias_a", "kernel", 0x10 },
    /* A built-in module's function: bcc says "kernel". */
    { 0xffffffff81000310, "builtin_fn", "kernel", 0x10, "builtin_fn", "kernel", 0x10 },
    /* Inside a data object: bcc skips data symbols and answers the
     * function before it. */
    { 0xffffffff81000410, "builtin_fn", "kernel", 0x110, "some_data", "kernel", 0x10 },
    { 0xffffffff81000500, "after_data", "kernel", 0, "after_data", "kernel", 0 },
    /* Past the last symbol of the image, and of a module: bcc answers the
     * last symbol, whatever the distance. */
    { 0xffffffff81000710, "_etext", "kernel", 0x10, NULL, NULL, 0 },
    { 0xffffffffbfff0000, "_etext", "kernel", 0x3efef900, NULL, NULL, 0 },
    { 0xffffffffc0000200, "mod_last", "mymod", 0, "mod_last", "mymod", 0 },
    { 0xffffffffc0000210, "mod_last", "mymod", 0x10, NULL, NULL, 0 },
    { 0xffffffffc0100000, "mod_last", "mymod", 0xffe00, NULL, NULL, 0 },
    /* Below the first symbol: nothing for both. */
    { 0xffffffff80000000, NULL, NULL, 0, NULL, NULL, 0 },
};

struct want_name {
    const char *module, *name;
    int r, fix_r;
    uint64_t addr, fix_addr;
};

static const struct want_name NAMES[] = {
    /* bcc keeps one address per name, the highest, and ignores the module;
     * KSYM_BCC_FIX=module: the module's. */
    { NULL, "dup_name", 0, 0, 0xffffffffc0000100, 0xffffffffc0000100 },
    { "kernel", "dup_name", 0, 0, 0xffffffffc0000100, 0xffffffff81000600 },
    { "mymod", "dup_name", 0, 0, 0xffffffffc0000100, 0xffffffffc0000100 },
    { "othermod", "dup_name", 0, -1, 0xffffffffc0000100, 0 },
    { "mymod", "core_fn", 0, -1, 0xffffffff81000100, 0 },
    /* Data symbols are not bcc's, fix or not. */
    { NULL, "some_data", -1, -1, 0, 0 },
};

static int private_files(const char *dir)
{
    char k[128], r[512], mods[400];
    struct utsname u;
    snprintf(k, sizeof(k), "%s/kallsyms", dir);
    FILE *f = fopen(k, "w");
    if (!f || fputs(KALLSYMS, f) < 0 || fclose(f) != 0)
        return -1;
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        KERNEL_SKIP("a mount namespace to put a file over /proc/kallsyms: %s (needs root)", strerror(errno));
        return 1;
    }
    /* A machine without loadable modules may have no /lib/modules: the
     * tmpfs below needs it as a mount point (an empty directory, as a
     * kernel package leaves it; created once, on the real root). */
    if (mkdir("/lib/modules", 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "mkdir /lib/modules: %s\n", strerror(errno));
        return -1;
    }
    if (mount(k, "/proc/kallsyms", NULL, MS_BIND, NULL) != 0 || uname(&u) != 0 ||
        mount("tmpfs", "/lib/modules", "tmpfs", 0, NULL) != 0) {
        fprintf(stderr, "mounts: %s\n", strerror(errno));
        return -1;
    }
    snprintf(mods, sizeof(mods), "/lib/modules/%s", u.release);
    snprintf(r, sizeof(r), "%s/modules.builtin.ranges", mods);
    f = mkdir(mods, 0755) == 0 ? fopen(r, "w") : NULL;
    if (!f || fputs(RANGES, f) < 0 || fclose(f) != 0)
        return -1;
    return 0;
}

int main(void)
{
    const char *fix = getenv("KSYM_BCC_FIX");
    int all = fix && strstr(fix, "all") != NULL;
    int symbolize = all || (fix && strstr(fix, "symbolize")), builtin = all || (fix && strstr(fix, "builtin")),
        by_module = all || (fix && strstr(fix, "module"));
    char dir[] = "/tmp/ksym-bcc-fix-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    int r = private_files(dir);
    if (r < 0) {
        failures++;
        fprintf(stderr, "could not set the files up\n");
    }
    if (r == 0) {
        struct api shim = load_shim(), bcc = load_bcc();
        void *c = shim.symcache_new(-1, NULL), *b = bcc.symcache_new(-1, NULL);
        for (size_t i = 0; i < sizeof(ADDRS) / sizeof(ADDRS[0]); i++) {
            const struct want_addr *w = &ADDRS[i];
            const char *name = symbolize ? w->fix_name : w->name, *module = symbolize ? w->fix_module : w->module;
            uint64_t off = symbolize ? w->fix_off : w->off;
            if (builtin && str_eq(name, "builtin_fn"))
                module = "crc32c";
            struct bcc_symbol s, x;
            int rs = shim.resolve(c, w->addr, &s), rx = bcc.resolve(b, w->addr, &x);
            int ok = name ? rs == 0 && str_eq(s.name, name) && str_eq(s.module, module) && s.offset == off &&
                                str_eq(s.demangle_name, name)
                          : rs == -1 && !s.name && !s.module && s.offset == 0;
            CHECK(ok);
            /* The hand-worked default is bcc's own. */
            CHECK(str_eq(x.name, w->name) && str_eq(x.module, w->module) && x.offset == w->off &&
                  rx == (w->name ? 0 : -1));
            if (!ok) {
                fprintf(stderr, "  %#llx: expected %s [%s] +%#llx\n", (unsigned long long)w->addr,
                        name ? name : "nothing", module ? module : "", (unsigned long long)off);
                show("libksym-bcc", rs, &s);
            }
        }
        for (size_t i = 0; i < sizeof(NAMES) / sizeof(NAMES[0]); i++) {
            const struct want_name *w = &NAMES[i];
            uint64_t a = 0, x = 0;
            int rs = shim.resolve_name(c, w->module, w->name, &a), rx = bcc.resolve_name(b, w->module, w->name, &x);
            int want_r = by_module ? w->fix_r : w->r;
            uint64_t want_a = by_module ? w->fix_addr : w->addr;
            CHECK(rs == want_r && (rs != 0 || a == want_a));
            CHECK(rx == w->r && (rx != 0 || x == w->addr));
            if (rs != want_r || (rs == 0 && a != want_a))
                fprintf(stderr, "  resolve_name(%s, %s): %d %#llx, expected %d %#llx\n",
                        w->module ? w->module : "NULL", w->name, rs, (unsigned long long)a, want_r,
                        (unsigned long long)want_a);
        }
        shim.free_symcache(c, -1);
        bcc.free_symcache(b, -1);
        printf("KSYM_BCC_FIX=%s: %zu addresses and %zu names as worked out by hand\n", fix ? fix : "(unset)",
               sizeof(ADDRS) / sizeof(ADDRS[0]), sizeof(NAMES) / sizeof(NAMES[0]));
    }
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return finish("test_fix");
}
