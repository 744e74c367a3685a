/*
 * The differential test for callers that are not root: the same
 * comparison as diff.c (compare.h), in a child per identity, each loading
 * both libraries after dropping its privileges (bcc reads /proc/kallsyms
 * with the caller's credentials, and the kernel decides at open what it
 * shows):
 *
 *   root                  (every capability)
 *   uid 65534 + CAP_SYSLOG
 *   uid 65534             (no capability)
 *
 *   creds [--not-root]   (as root; under each kptr_restrict: the guest
 *                        does; --not-root: the two others only, where
 *                        diff has compared root's answers)
 *   creds --lifted       (as root, in a guest: changes kptr_restrict) a
 *                        caller with CAP_SYSLOG asks both libraries under
 *                        kptr_restrict 2 (nothing), then, with the same
 *                        caches, under 1: bcc 0.29 and later read the file
 *                        again while their cache is empty, and answer
 *
 * A reader the kernel shows addresses is asked every question of compare.h;
 * one it shows only zeros, a few of root's addresses (each costs bcc a read
 * of the file). Besides equal answers, each child checks that the
 * answers are those of the bcc version loaded: bcc before 0.29 answers
 * nothing for a caller that is not root; from 0.29 on, any caller the
 * kernel shows addresses gets symbols (the kernel's own view, read by the
 * child, is the oracle for what it shows: kptr_restrict 0 shows them to a
 * caller with CAP_SYSLOG, or to any when perf_event_paranoid <= 1; 1 to a
 * caller with CAP_SYSLOG; 2 to none).
 *
 * Environment: as diff.c.
 */
#include "compare.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int read_int(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f && fscanf(f, "%d", &v) != 1)
        v = -1;
    if (f)
        fclose(f);
    return v;
}

/* Becomes uid/gid 65534 with CAP_SYSLOG alone, or no capability. */
static int become_nobody(int with_syslog)
{
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 || setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0)
        return -1;
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof(d));
    if (with_syslog) {
        d[CAP_TO_INDEX(CAP_SYSLOG)].effective = CAP_TO_MASK(CAP_SYSLOG);
        d[CAP_TO_INDEX(CAP_SYSLOG)].permitted = CAP_TO_MASK(CAP_SYSLOG);
    }
    return (int)syscall(SYS_capset, &h, d);
}

static int child(int who, const struct lines *root_lines)
{
    static const char *const names[] = { "root", "uid 65534 with CAP_SYSLOG", "uid 65534 without capabilities" };
    if (who > 0 && become_nobody(who == 1) != 0) {
        fprintf(stderr, "%s: cannot drop privileges: %s\n", names[who], strerror(errno));
        return 2;
    }
    bcc = load_bcc();
    shim = load_shim();
    int sees = sees_addresses();
    int minor = api_bcc_minor(&bcc);
    CHECK(minor >= 0);
    char label[128];
    snprintf(label, sizeof(label), "%s, %s", names[who], sees ? "sees addresses" : "sees zeros");
    /* bcc 0.29 dropped the root check (commit 0fcb3461). */
    int reads = who == 0 || minor >= 29;
    /* A reader that sees addresses chooses from its own read (a BPF
     * program may have come or gone since root's), and runs again when
     * the file changed meanwhile, as diff does. */
    for (int attempt = 1;; attempt++) {
        long m0 = mismatches, f0 = found_answers;
        int fl0 = failures;
        uint64_t d0 = kallsyms_digest();
        run(label, sees ? NULL : root_lines, reads);
        if (!sees || kallsyms_digest() == d0 || attempt == 3)
            break;
        printf("  /proc/kallsyms changed during the run (a BPF program or trampoline): again\n");
        mismatches = m0;
        found_answers = f0;
        failures = fl0;
    }
    int answers = sees && reads;
    if (answers != (found_answers > 0))
        fprintf(stderr, "  %s with bcc 0.%d: %ld answers with a symbol, expected %s\n", names[who], minor,
                found_answers, answers ? "some" : "none");
    CHECK(answers == (found_answers > 0));
    return finish(names[who]);
}

static void set_kptr(int v)
{
    FILE *f = fopen("/proc/sys/kernel/kptr_restrict", "w");
    if (!f || fprintf(f, "%d\n", v) < 0 || fclose(f) != 0) {
        perror("kptr_restrict");
        exit(2);
    }
}

/* A few addresses of the core kernel's text, from root's view. */
static int lifted(const struct lines *ls)
{
    int kptr = read_int("/proc/sys/kernel/kptr_restrict");
    int go[2], done[2];
    if (pipe(go) != 0 || pipe(done) != 0)
        return 2;
    set_kptr(2);
    pid_t pid = fork();
    if (pid == 0) {
        if (become_nobody(1) != 0)
            _exit(2);
        bcc = load_bcc();
        shim = load_shim();
        void *b = bcc.symcache_new(-1, NULL), *s = shim.symcache_new(-1, NULL);
        uint64_t a[4];
        size_t n = 0;
        for (size_t i = 0; i < ls->n && n < 4; i += ls->n / 5 + 1)
            a[n++] = ls->l[i].addr + 1;
        long before = found_answers;
        for (size_t i = 0; i < n; i++)
            compare_addr(b, s, a[i]);
        CHECK(found_answers == before); /* hidden: nothing */
        char c = 1;
        if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(2);
        before = found_answers;
        for (size_t i = 0; i < n; i++)
            compare_addr(b, s, a[i]);
        int minor = api_bcc_minor(&bcc);
        /* bcc before 0.29 reads nothing for this caller, later or not. */
        CHECK((found_answers > before) == (minor >= 29));
        printf("kptr_restrict 2, then 1, same caches (%s): %ld of %zu answers with a symbol after, "
               "%ld answers differ\n", api_file(&bcc), found_answers - before, n, mismatches);
        CHECK(mismatches == 0);
        fflush(stdout);
        _exit(finish("creds --lifted"));
    }
    char c;
    int ok = read(done[0], &c, 1) == 1;
    set_kptr(1);
    c = 1;
    ok &= write(go[1], &c, 1) == 1;
    int st = 0;
    waitpid(pid, &st, 0);
    set_kptr(kptr);
    checks++;
    if (!ok || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        failures++;
    return finish("creds --lifted");
}

int main(int argc, char **argv)
{
    int first = argc > 1 && !strcmp(argv[1], "--not-root") ? 1 : 0;
    if (geteuid() != 0) {
        KERNEL_SKIP("changing identities needs root");
        return finish("creds");
    }
    int kptr = read_int("/proc/sys/kernel/kptr_restrict"), paranoid = read_int("/proc/sys/kernel/perf_event_paranoid");
    printf("kptr_restrict %d, perf_event_paranoid %d\n", kptr, paranoid);
    fflush(stdout);
    struct lines root_lines = read_lines("/proc/kallsyms");
    if (argc > 1 && !strcmp(argv[1], "--lifted"))
        return lifted(&root_lines);
    int bad = 0;
    for (int who = first; who < 3; who++) {
        pid_t pid = fork();
        if (pid == 0) {
            int r = child(who, &root_lines);
            fflush(stdout);
            fflush(stderr);
            _exit(r);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    checks++;
    if (bad)
        failures++;
    return finish("creds");
}
