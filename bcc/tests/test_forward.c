/*
 * User-space pids are bcc's: a program linked with libbcc (like bpftrace)
 * and run with LD_PRELOAD=libksym-bcc.so.0 gets, for its own process and
 * for a child that exits while its cache is in use, exactly the answers of
 * bcc's own functions (found in the process with dlopen(RTLD_NOLOAD)).
 *
 *   LD_PRELOAD=.../libksym-bcc.so.0 test_forward
 */
#include "common.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* bcc's API, linked as bpftrace links it: through the preload, these are
 * the shim's. */
void *bcc_symcache_new(int pid, void *option);
void bcc_free_symcache(void *cache, int pid);
int bcc_symcache_resolve(void *cache, uint64_t addr, struct bcc_symbol *sym);
int bcc_symcache_resolve_no_demangle(void *cache, uint64_t addr, struct bcc_symbol *sym);
int bcc_symcache_resolve_name(void *cache, const char *module, const char *name, uint64_t *addr);
void bcc_symcache_refresh(void *cache);

static struct api bcc;
int main(void);

__attribute__((noinline)) static int local_function(int x)
{
    return x * 3 + 1;
}

static int differ;

static void compare(void *ours, void *theirs, uint64_t a, const char *what)
{
    struct bcc_symbol x, y;
    memset(&x, 0, sizeof(x));
    memset(&y, 0, sizeof(y));
    int rx = bcc_symcache_resolve(ours, a, &x), ry = bcc.resolve(theirs, a, &y);
    checks++;
    if (!same_answer(rx, &x, ry, &y)) {
        differ++;
        failures++;
        fprintf(stderr, "  %s (%#llx):\n", what, (unsigned long long)a);
        show("preloaded", rx, &x);
        show("bcc", ry, &y);
    }
    static const char UNTOUCHED[] = "<untouched>";
    x.demangle_name = y.demangle_name = UNTOUCHED;
    rx = bcc_symcache_resolve_no_demangle(ours, a, &x);
    ry = bcc.resolve_no_demangle(theirs, a, &y);
    checks++;
    if (!same_answer(rx, &x, ry, &y)) {
        differ++;
        failures++;
        fprintf(stderr, "  %s (%#llx), no demangling: %d %s / %d %s\n", what, (unsigned long long)a, rx,
                x.name ? x.name : "-", ry, y.name ? y.name : "-");
    }
}

static void compare_set(void *ours, void *theirs, const char *when)
{
    int before = differ;
    compare(ours, theirs, (uint64_t)(uintptr_t)&main, "main");
    compare(ours, theirs, (uint64_t)(uintptr_t)&local_function + 3, "a static function");
    compare(ours, theirs, (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "printf") + 7, "printf in libc");
    compare(ours, theirs, (uint64_t)(uintptr_t)bcc.symcache_new, "bcc_symcache_new in libbcc");
    compare(ours, theirs, (uint64_t)(uintptr_t)&differ, "a variable");
    compare(ours, theirs, 0x10, "an unmapped address");
    printf("%s: %s\n", when, differ == before ? "the same answers" : "DIFFERENT answers");
}

int main(void)
{
    Dl_info info;
    CHECK(dladdr((void *)(uintptr_t)bcc_symcache_new, &info) && strstr(info.dli_fname, "libksym-bcc"));
    if (!strstr(info.dli_fname ? info.dli_fname : "", "libksym-bcc")) {
        fprintf(stderr, "bcc_symcache_new is not the shim's: run with LD_PRELOAD=libksym-bcc.so.0\n");
        return finish("test_forward");
    }
    const char *lib = getenv("BCC_LIB");
    void *h = dlopen(lib && *lib ? lib : "libbcc_bpf.so.0", RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    if (!h)
        return finish("test_forward");
    bcc = load_api(lib && *lib ? lib : "libbcc_bpf.so.0", "bcc");
    CHECK((void *)(uintptr_t)bcc.symcache_new != (void *)(uintptr_t)bcc_symcache_new);

    /* This process. */
    void *ours = bcc_symcache_new(getpid(), NULL), *theirs = bcc.symcache_new(getpid(), NULL);
    CHECK(ours && theirs);
    compare_set(ours, theirs, "this process");
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    uint64_t ax = 1, ay = 2;
    int rx = bcc_symcache_resolve_name(ours, exe, "main", &ax), ry = bcc.resolve_name(theirs, exe, "main", &ay);
    CHECK(rx == ry && ax == ay);
    rx = bcc_symcache_resolve_name(ours, exe, "no_such_function", &ax);
    ry = bcc.resolve_name(theirs, exe, "no_such_function", &ay);
    CHECK(rx == ry);
    /* bcc's ProcSyms compares the module with a std::string: NULL would
     * crash it; the shim says -1. */
    CHECK(bcc_symcache_resolve_name(ours, NULL, "main", &ax) == -1);
    bcc_symcache_refresh(ours);
    bcc.refresh(theirs);
    compare_set(ours, theirs, "this process, after a refresh");
    bcc_free_symcache(ours, getpid());
    bcc.free_symcache(theirs, getpid());

    /* A child that exits while its caches are in use. */
    pid_t child = fork();
    if (child == 0) {
        local_function(1);
        pause();
        _exit(0);
    }
    ours = bcc_symcache_new(child, NULL);
    theirs = bcc.symcache_new(child, NULL);
    CHECK(ours && theirs);
    compare_set(ours, theirs, "a child");
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    compare_set(ours, theirs, "the child, exited");
    bcc_symcache_refresh(ours);
    bcc.refresh(theirs);
    compare_set(ours, theirs, "the child, exited, after a refresh");
    bcc_free_symcache(ours, child);
    bcc.free_symcache(theirs, child);

    /* A pid that never existed. */
    ours = bcc_symcache_new(0x3ffffff0, NULL);
    theirs = bcc.symcache_new(0x3ffffff0, NULL);
    CHECK((ours == NULL) == (theirs == NULL));
    if (ours && theirs)
        compare_set(ours, theirs, "no such pid");
    bcc_free_symcache(ours, 0x3ffffff0);
    bcc.free_symcache(theirs, 0x3ffffff0);
    return finish("test_forward");
}
