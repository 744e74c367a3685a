/*
 * libksym-bcc: which lines of /proc/kallsyms bcc keeps (src/cc/bcc_proc.c,
 * bcc_procutils_each_ksym), the one home of that rule.
 */
#ifndef KSYM_BCC_LINES_H
#define KSYM_BCC_LINES_H

#include <ksym.h>
#include <limits.h>
#include <string.h>

#ifdef __x86_64__
/* bcc_proc.c: kernelAddrSpace; lines below it are skipped. */
#define KSYM_BCC_KERNEL_SPACE 0x00ffffffffffffffULL
#else
#define KSYM_BCC_KERNEL_SPACE 0ULL
#endif

/* A line bcc keeps: its address is neither 0 nor all ones nor below the
 * kernel's half of the address space, and its type is not a data one
 * (b B d D r R). */
static inline int bcc_keeps(const struct ksym_symbol *s)
{
    if (s->addr == 0 || s->addr == ULLONG_MAX || s->addr < KSYM_BCC_KERNEL_SPACE)
        return 0;
    return s->type == 0 || !strchr("bBdDrR", s->type);
}

/* A symbol of the core kernel: vmlinux's or a built-in module's. */
static inline int bcc_is_core(const struct ksym_symbol *s)
{
    return (s->flags & KSYM_SYM_BUILTIN) || strcmp(s->module, "vmlinux") == 0;
}

#endif
