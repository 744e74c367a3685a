/*
 * The table snapshot's background writer
 * (src/base/snapshot/background.rs): the first open of a boot returns
 * before the snapshot is written, and a thread of the library finishes
 * it. In a process that:
 *
 * - exits (returns from main, exit()): the snapshot is whole on disk
 *   afterwards, and the next process's open maps it;
 * - ends with _exit() right after the open: no file is left but a whole
 *   snapshot (no temporary file);
 * - forks while the writer runs: the child opens a table and exits
 *   without waiting for a writer it does not have (no hang), and the
 *   parent's snapshot is still written;
 * - blocks a signal that is then sent to the process while the writer
 *   runs: the signal waits for the main thread (the writer blocks them
 *   all).
 *
 * Needs root and real addresses (snapshots are root's): KERNEL_SKIP
 * otherwise. Every snapshot goes to a directory of this test's.
 */
#define _GNU_SOURCE

#include "check.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

static char base[64];

static struct ksym_table *open_in(const char *dir)
{
    KSYM_OPTS(ksym_table_opts, o, .snapshot_dir = dir);
    return ksym_table_open(&o);
}

static unsigned flags_of(struct ksym_table *t)
{
    KSYM_OPTS(ksym_table_stats, st);
    return t && ksym_table_stats(t, &st) == 0 ? st.flags : 0;
}

/* Files in `dir`: how many snapshots (table-*.snap) and how many others. */
static void count_files(const char *dir, int *snaps, int *others)
{
    *snaps = *others = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (!strncmp(e->d_name, "table-", 6) && strstr(e->d_name, ".snap"))
            (*snaps)++;
        else
            (*others)++;
    }
    closedir(d);
}

static void subdir(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", base, name);
}

/* Waits for this process's writers: an open of a directory whose snapshot
 * is whole waits for them first and starts none. Before a fork whose child
 * must own all its memory (see child_exit). */
static void drain(void)
{
    ksym_table_free(open_in(base));
}

/* The end of a child forked while the parent's writer runs: it inherits
 * that thread's allocations, which no thread of the child holds, so a leak
 * checker would report them as the child's (the leaks this test checks are
 * the parent's, at its own exit). exit() in the plain build, which runs the
 * library's exit handler (the check that it waits for no writer of the
 * parent's); under ASan _exit() (LeakSanitizer checks from exit()); under
 * valgrind, which checks at any end, an exec of a shell that exits with
 * the code (no check at an exec). */
static void child_exit_as_exec(int code)
{
    char cmd[16];
    snprintf(cmd, sizeof(cmd), "exit %d", code);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(code);
}

static void child_exit(int code)
{
#ifdef __SANITIZE_ADDRESS__
    _exit(code);
#else
    if (RUNNING_ON_VALGRIND)
        child_exit_as_exec(code);
    exit(code);
#endif
}

/* A child's _exit() while its own writer runs: what the test is about.
 * An exec ends the process for the library as _exit() does (no exit
 * handler, the writer thread gone), without valgrind's check of the
 * writer's abandoned allocations. */
static void child_underscore_exit(int code)
{
    if (RUNNING_ON_VALGRIND)
        child_exit_as_exec(code);
    _exit(code);
}

/* A child that opens the table for the first time in `dir` and ends with
 * exit() (how = 0) or _exit() (how = 1). */
static int child_open_and_end(const char *dir, int how)
{
    drain();
    pid_t pid = fork();
    if (pid == 0) {
        struct ksym_table *t = open_in(dir);
        int ok = t && (flags_of(t) & KSYM_STATS_SNAPSHOT_WRITTEN);
        if (how)
            child_underscore_exit(ok ? 0 : 3);
        ksym_table_free(t);
        exit(ok ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void test_exit_writes_it(void)
{
    char dir[96];
    subdir(dir, sizeof(dir), "exit");
    CHECK(child_open_and_end(dir, 0) == 0);
    int snaps, others;
    count_files(dir, &snaps, &others);
    CHECK(snaps == 1 && others == 0);
    struct ksym_table *t = open_in(dir);
    CHECK(t && (flags_of(t) & KSYM_STATS_SNAPSHOT));
    ksym_table_free(t);
}

static void test_underscore_exit_leaves_nothing_half_written(void)
{
    char dir[96];
    subdir(dir, sizeof(dir), "_exit");
    CHECK(child_open_and_end(dir, 1) == 0);
    int snaps, others;
    count_files(dir, &snaps, &others);
    /* The writer may have finished first (a whole snapshot), or not: no
     * other file either way. */
    CHECK(snaps <= 1 && others == 0);
    struct ksym_table *t = open_in(dir);
    CHECK(t != NULL);
    CHECK(snaps == 0 || (flags_of(t) & KSYM_STATS_SNAPSHOT));
    ksym_table_free(t);
}

static void on_alarm(int sig)
{
    (void)sig;
    _exit(99);
}

static void test_fork_while_writing(void)
{
    char dir[96], other[96];
    subdir(dir, sizeof(dir), "fork");
    subdir(other, sizeof(other), "fork-child");
    struct ksym_table *t = open_in(dir);
    CHECK(t && (flags_of(t) & KSYM_STATS_SNAPSHOT_WRITTEN));
#ifdef __SANITIZE_ADDRESS__
    /* Under ASan only, the child below hung about once in 50 runs (4 at
     * once; its alarm, exit 99), never in the plain, valgrind or static
     * builds. The likely cause, not confirmed with a stack: GCC 12's
     * libasan does not hold its allocator's lock across fork(), so a child
     * forked while another thread allocates can hang in malloc. Under
     * ASan the writer is done before the fork; the other builds fork
     * while it writes. */
    drain();
#endif
    pid_t pid = fork();
    if (pid == 0) {
        /* No writer here: these must not wait for the parent's. */
        signal(SIGALRM, on_alarm);
        alarm(60);
        struct ksym_table *c = open_in(other);
        int ok = c != NULL;
        ksym_table_free(c);
        child_exit(ok ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        fprintf(stderr, "fork child: %s %d\n", WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ksym_table_free(t);
    /* The parent's snapshot: in place for its next open. */
    t = open_in(dir);
    CHECK(t && (flags_of(t) & KSYM_STATS_SNAPSHOT));
    ksym_table_free(t);
}

static pthread_t main_thread;
static volatile sig_atomic_t on_main = -1;

static void on_usr1(int sig)
{
    (void)sig;
    on_main = pthread_equal(pthread_self(), main_thread) ? 1 : 0;
}

static int threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

static void test_signals_go_to_the_program(void)
{
    char dir[96];
    subdir(dir, sizeof(dir), "signal");
    main_thread = pthread_self();
    signal(SIGUSR1, on_usr1);
    /* The writer starts while this thread takes SIGUSR1 (a thread inherits
     * its creator's mask); then this one blocks it. */
    struct ksym_table *t = open_in(dir);
    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, &old);
    int writer_alive = threads() > 1;
    kill(getpid(), SIGUSR1);
    /* Taken by a thread that does not block it (a writer that does not
     * block signals takes it here), or pending for this one until the
     * writer is gone. */
    for (int i = 0; i < 10000 && on_main == -1 && threads() > 1; i++)
        usleep(1000);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (writer_alive)
        CHECK(on_main == 1);
    else
        printf("note: the writer had finished before the signal: nothing to check\n");
    ksym_table_free(t);
    signal(SIGUSR1, SIG_DFL);
}

int main(void)
{
    snprintf(base, sizeof(base), "/tmp/ksym-writer-XXXXXX");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 2;
    }
    struct ksym_table *probe = open_in(base);
    if (!probe || !(flags_of(probe) & (KSYM_STATS_SNAPSHOT | KSYM_STATS_SNAPSHOT_WRITTEN))) {
        KERNEL_SKIP("table snapshots need root and real addresses in /proc/kallsyms");
    } else {
        test_exit_writes_it();
        test_underscore_exit_leaves_nothing_half_written();
        test_fork_while_writing();
        test_signals_go_to_the_program();
    }
    ksym_table_free(probe);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", base);
    return finish("test_snapshot_writer");
}
