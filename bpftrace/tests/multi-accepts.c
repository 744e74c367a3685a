/*
 * What the running kernel accepts in a multi program (BPF_TRACE_FENTRY_MULTI,
 * _FEXIT_MULTI: Linux 7.3), for the bpftrace fork's builtins: each body is
 * two to seven instructions loaded as a TRACING program with no attach
 * target (the kernel's `bpf_multi_func` prototype), and the verifier's
 * last words are printed when it refuses one. Then, for each function id
 * given after the first, a tracing_multi link of the first function alone
 * and of both: does the kernel take that function in a link?
 *
 *   cc -O1 -Wall -o build/multi-accepts bpftrace/tests/multi-accepts.c
 *   make guest-shell K=7.3 CMD='sh bpftrace/tests/multi-accepts.sh'
 *
 * (multi-accepts.sh gives it vfs_read's BTF id and a few others'.) Raw
 * bpf() with the few <linux/bpf.h> layouts it needs spelled out, so that
 * the host's headers (older than 7.3) do not matter. Exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct insn {
    uint8_t code;
    uint8_t regs; /* dst_reg:4, src_reg:4 (little endian) */
    int16_t off;
    int32_t imm;
};
#define I(c, dst, src, o, i) { (c), (uint8_t)((dst) | ((src) << 4)), (o), (i) }
#define MOV_IMM(d, i) I(0xb7, d, 0, 0, i)
#define MOV_REG(d, s) I(0xbf, d, s, 0, 0)
#define ADD_IMM(d, i) I(0x07, d, 0, 0, i)
#define CALL(h) I(0x85, 0, 0, 0, h)
#define EXIT I(0x95, 0, 0, 0, 0)

/* union bpf_attr's BPF_PROG_LOAD members, up to expected_attach_type. */
struct prog_load {
    uint32_t prog_type, insn_cnt;
    uint64_t insns, license;
    uint32_t log_level, log_size;
    uint64_t log_buf;
    uint32_t kern_version, prog_flags;
    char prog_name[16];
    uint32_t prog_ifindex, expected_attach_type;
    uint32_t rest[32];
};

/* link_create with its tracing_multi member (Linux 7.3). */
struct link_create {
    uint32_t prog_fd, target_fd, attach_type, flags;
    uint64_t ids, cookies;
    uint32_t cnt, pad;
    uint64_t rest[8];
};

static char logbuf[1 << 16];

static int load(uint32_t attach_type, const struct insn *insns, int n, const char *what)
{
    struct prog_load a;
    memset(&a, 0, sizeof(a));
    a.prog_type = 26; /* BPF_PROG_TYPE_TRACING */
    a.expected_attach_type = attach_type;
    a.insns = (uint64_t)(uintptr_t)insns;
    a.insn_cnt = (uint32_t)n;
    a.license = (uint64_t)(uintptr_t)"GPL";
    a.log_buf = (uint64_t)(uintptr_t)logbuf;
    a.log_size = sizeof(logbuf);
    a.log_level = 1;
    logbuf[0] = 0;
    int fd = (int)syscall(__NR_bpf, 5 /* BPF_PROG_LOAD */, &a, sizeof(a));
    if (fd >= 0) {
        printf("%-26s %s: loads\n", what, attach_type == 59 ? "fentry.multi" : "fexit.multi");
        return fd;
    }
    int err = errno;
    /* The verifier's words: the lines before "processed N insns". */
    char *end = strstr(logbuf, "\nprocessed ");
    if (end)
        *end = 0;
    char *last = strrchr(logbuf, '\n');
    if (last)
        *last = ' ';
    char *from = strrchr(logbuf, '\n');
    printf("%-26s %s: REFUSED (%s): %s\n", what, attach_type == 59 ? "fentry.multi" : "fexit.multi",
           strerror(err), from ? from + 1 : logbuf);
    return -1;
}

static void link_multi(int fd, uint32_t attach_type, const uint32_t *ids, uint32_t n, const char *what)
{
    uint64_t cookies[2] = { 0, 1 };
    struct link_create c;
    memset(&c, 0, sizeof(c));
    c.prog_fd = (uint32_t)fd;
    c.attach_type = attach_type;
    c.ids = (uint64_t)(uintptr_t)ids;
    c.cookies = (uint64_t)(uintptr_t)cookies;
    c.cnt = n;
    long l = syscall(__NR_bpf, 28 /* BPF_LINK_CREATE */, &c, sizeof(c));
    if (l < 0) {
        printf("  tracing_multi link of %s: %s\n", what, strerror(errno));
        return;
    }
    printf("  tracing_multi link of %s: attached\n", what);
    close((int)l);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *what;
        struct insn p[8];
        int n;
    } bodies[] = {
        { "r0 = 0", { MOV_IMM(0, 0), EXIT }, 2 },
        { "ctx[0] (an argument)", { I(0x79, 2, 1, 0, 0), MOV_IMM(0, 0), EXIT }, 3 },
        { "bpf_get_func_ip", { CALL(173), MOV_IMM(0, 0), EXIT }, 3 },
        { "bpf_get_attach_cookie", { CALL(174), MOV_IMM(0, 0), EXIT }, 3 },
        { "bpf_get_func_arg(ctx, 0)", { MOV_IMM(2, 0), MOV_REG(3, 10), ADD_IMM(3, -8), CALL(183), MOV_IMM(0, 0), EXIT }, 6 },
        { "bpf_get_func_ret", { MOV_REG(2, 10), ADD_IMM(2, -8), CALL(184), MOV_IMM(0, 0), EXIT }, 5 },
        { "bpf_get_func_arg_cnt", { CALL(185), MOV_IMM(0, 0), EXIT }, 3 },
        { "bpf_get_stack", { MOV_REG(2, 10), ADD_IMM(2, -64), MOV_IMM(3, 64), MOV_IMM(4, 0), CALL(67), MOV_IMM(0, 0), EXIT }, 7 },
        { "bpf_get_current_comm", { MOV_REG(1, 10), ADD_IMM(1, -16), MOV_IMM(2, 16), CALL(16), MOV_IMM(0, 0), EXIT }, 6 },
    };
    /* argv: NAME=ID ..., the first a function every link takes. */
    for (uint32_t at = 59; at <= 60; at++) {
        for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
            int fd = load(at, bodies[i].p, bodies[i].n, bodies[i].what);
            if (fd >= 0 && i == 0 && argc > 1) {
                uint32_t ids[2] = { (uint32_t)atoi(strchr(argv[1], '=') + 1), 0 };
                link_multi(fd, at, ids, 1, argv[1]);
                for (int k = 2; k < argc; k++) {
                    char both[256];
                    ids[1] = (uint32_t)atoi(strchr(argv[k], '=') + 1);
                    link_multi(fd, at, ids + 1, 1, argv[k]);
                    snprintf(both, sizeof(both), "%s and %s", argv[1], argv[k]);
                    link_multi(fd, at, ids, 2, both);
                }
            }
            if (fd >= 0)
                close(fd);
        }
    }
    return 0;
}
