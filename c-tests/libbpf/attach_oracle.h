/* What attaching would meet, asked of the kernel itself: the oracle of
 * the errors libksym reports for targets needed only to attach (a kprobe's
 * function, a raw tracepoint), which no BPF_PROG_LOAD checks. Used by
 * test_libbpf_oracle and test_libbpf_prepare (gnu11, with libbpf). */
#ifndef KSYM_ATTACH_ORACLE_H
#define KSYM_ATTACH_ORACLE_H

#include <bpf/bpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Does /proc/kallsyms list a text symbol (t, T, w, W) named `target` (a
 * kprobe's function, before any `+offset`)? Read naively, line by line:
 * 1 or 0, -1 when it cannot be read. */
static int oracle_kallsyms_has_function(const char *target)
{
    char fn[256];
    snprintf(fn, sizeof(fn), "%.*s", (int)strcspn(target, "+"), target);
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], type;
    unsigned long long a;
    int found = 0;
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && strchr("tTwW", type) && !strcmp(sym, fn);
    fclose(f);
    return found;
}

/* The kernel's answer to libbpf's bpf_raw_tracepoint_open() of tracepoint
 * `name` with a program that only returns 0: 0 (attached, and detached at
 * once) or a negative errno. */
static int oracle_raw_tp_open(const char *name)
{
    static int prog = -1;
    if (prog < 0) {
        struct bpf_insn insns[2] = {
            { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
            { .code = BPF_JMP | BPF_EXIT },
        };
        prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "ksym_oracle", "GPL", insns, 2, NULL);
        if (prog < 0)
            return prog;
    }
    int fd = bpf_raw_tracepoint_open(name, prog);
    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

#endif
