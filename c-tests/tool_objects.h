/*
 * What the tests of objects in the style of real tools share
 * (test_tool_objects.c, test_tool_sections.c): the objects' `.bss`
 * (c-tests/bpf/tool_style.h), opening and loading them through the
 * bundled loader, a child that execs, tracefs' events.
 */
#ifndef KSYM_CTEST_TOOL_OBJECTS_H
#define KSYM_CTEST_TOOL_OBJECTS_H

#include "check.h"
#include "../tools/bpf_loader.h"

#include <sys/wait.h>

static const char *objdir;
static int live; /* bpf() works here */

/* The `.bss` of every object (c-tests/bpf/tool_style.h). */
struct tool_state {
    uint32_t tgid;
    uint32_t version;
    uint64_t hits[8];
};

static inline struct ksym_bpf_object *open_obj(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", objdir, name);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    return o;
}

static inline size_t prog(struct ksym_bpf_object *o, const char *name)
{
    size_t i = (size_t)-1;
    CHECK(ksym_bpf_object_find_program(o, name, &i) == 0);
    return i;
}

/* ksym_bpf_program_attach_info's return, with `out` written either way. */
static inline int attach_of(struct ksym_bpf_object *o, size_t i, struct ksym_bpf_attach *at)
{
    memset(at, 0, sizeof(*at));
    at->sz = sizeof(*at);
    return ksym_bpf_program_attach_info(o, i, at);
}

static inline size_t bss_of(struct ksym_bpf_object *o)
{
    size_t m = (size_t)-1;
    CHECK(ksym_bpf_object_find_map(o, ".bss", &m) == 0);
    return m;
}

static inline void set_state(struct kl_loaded *l, size_t bss, uint32_t tgid)
{
    struct tool_state s;
    uint32_t zero = 0;
    memset(&s, 0, sizeof(s));
    s.tgid = tgid;
    CHECK(kl_map_update(l->map_fds[bss], &zero, &s) == 0);
}

static inline struct tool_state get_state(struct kl_loaded *l, size_t bss)
{
    struct tool_state s;
    uint32_t zero = 0;
    memset(&s, 0, sizeof(s));
    CHECK(kl_map_lookup(l->map_fds[bss], &zero, &s) == 0);
    return s;
}

/* Forks a child that waits for the word, then execs /bin/true; the
 * state's tgid is set to the child's pid before the word is given.
 * Returns after it exited. */
static inline void exec_child(struct kl_loaded *l, size_t bss)
{
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(p[1]);
        if (read(p[0], &c, 1) != 1)
            _exit(126);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    set_state(l, bss, (uint32_t)pid);
    CHECK(write(p[1], "x", 1) == 1);
    close(p[1]);
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A few syscalls of this process. */
static inline void some_syscalls(void)
{
    for (int k = 0; k < 5; k++)
        (void)getppid();
}

/* Prepares `o` for the running kernel and loads the programs whose
 * autoload is on; 0 when all of them loaded. */
static inline int load(struct ksym_bpf_object *o, struct ksym_btf *btf, struct kl_loaded *l)
{
    char why[4096];
    int err = kl_prepare(o, NULL, btf, l, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "prepare: %s\n", why);
        return err;
    }
    return (int)kl_load_autoload(o, l, stdout);
}

static inline int tracefs_has(const char *event, int *known)
{
    char path[256];
    const char *roots[2] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
    for (int r = 0; r < 2; r++) {
        if (access(roots[r], F_OK) != 0)
            continue;
        *known = 1;
        snprintf(path, sizeof(path), "%s/%s", roots[r], event);
        return access(path, F_OK) == 0;
    }
    *known = 0;
    return 0;
}

#endif
