/*
 * ksym_kallsyms_shows_addresses, the one rule for "does this process see
 * the kernel's addresses", on hand-made files: a restricted reader's (all
 * zeros), a distribution kernel's as root (its first line is a per-CPU
 * symbol at 0, then real addresses: the first-line rule calls it hidden),
 * a 32-bit restricted one (8-digit zeros: the rule "a line not starting
 * with 16 zeros" calls it real), not kallsyms, missing; and /proc/kallsyms
 * against the whole file (any non-zero address in all of it).
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <stdint.h>
#include <unistd.h>

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    return check_write_file(dir, name, text);
}

static void test_addresses(void)
{
    /* A distribution kernel as root: two per-CPU symbols at 0 first. */
    const char *distro = write_file("distro", "0000000000000000 A fixed_percpu_data\n"
                                              "0000000000000000 A __per_cpu_start\n"
                                              "0000000000001000 A cpu_debug_store\n"
                                              "ffffffff81000000 T _text\n");
    CHECK(ksym_kallsyms_shows_addresses(distro) == 1);
    /* The same as a restricted reader sees it. */
    const char *restricted = write_file("restricted", "0000000000000000 A fixed_percpu_data\n"
                                                      "0000000000000000 A __per_cpu_start\n"
                                                      "0000000000000000 A cpu_debug_store\n"
                                                      "0000000000000000 T _text\n");
    CHECK(ksym_kallsyms_shows_addresses(restricted) == 0);
    /* A 32-bit kernel, restricted: 8-digit zeros. */
    const char *arm = write_file("arm32", "00000000 T stext\n00000000 T _text\n");
    CHECK(ksym_kallsyms_shows_addresses(arm) == 0);
    CHECK(ksym_kallsyms_shows_addresses(write_file("arm32root", "c0008000 T stext\n")) == 1);
    /* Not kallsyms; missing. */
    CHECK(ksym_kallsyms_shows_addresses(write_file("passwd", "root:x:0:0:root:/root:/bin/sh\n")) ==
          KSYM_ERR_FORMAT);
    CHECK(strstr(ksym_last_error_message(), "not a kallsyms file") != NULL);
    char missing[128];
    snprintf(missing, sizeof(missing), "%s/none", dir);
    CHECK(ksym_kallsyms_shows_addresses(missing) == KSYM_ERR_NOT_FOUND);
    /* This machine: the answer from the first lines is the whole file's. */
    FILE *f = fopen("/proc/kallsyms", "r");
    if (!f) {
        KERNEL_SKIP("cannot read /proc/kallsyms");
        return;
    }
    int any = 0;
    char line[1024];
    while (!any && fgets(line, sizeof(line), f))
        any = strtoull(line, NULL, 16) != 0;
    fclose(f);
    CHECK(ksym_kallsyms_shows_addresses(NULL) == any);
    CHECK(ksym_kallsyms_shows_addresses("/proc/kallsyms") == any);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/ksym-addresses-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_addresses();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return finish("test_addresses");
}
