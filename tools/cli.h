/*
 * The ksym CLI's parts (tools/cli.c: the command table, dispatch and
 * help): the options every command reads, what the commands share
 * (cli_common.c), and each family's commands, one file each.
 */
#ifndef KSYM_CLI_H
#define KSYM_CLI_H

#include <ksym.h>

#include <stdint.h>

/* The options, as given (cli.c's option table says which apply to which
 * command and checks their values). */
struct options {
    const char *kallsyms;
    const char *ranges;
    const char *vmlinux;
    const char *modules;
    const char *btf;
    const char *repeat;
    const char *interval;
    const char *duration;
    const char *top;
    const char *snapshot_dir;
    const char *way;
    int load;
    int tracepoints;
    int phases;
    int no_snapshot;
};

/* cli_common.c: what the commands share. */

/* "ksym: WHAT: " and libksym's last error on stderr; returns 1. */
int fail(const char *what);
/* The kernel's BTF: the running kernel's, or --btf (a vmlinux BTF file, or
 * a directory laid out as /sys/kernel/btf: vmlinux and one file per
 * module), with the snapshot options of the table's. */
struct ksym_btf *open_btf(const struct options *o);
/* A kind's name from libksym, or its number when this version has none. */
const char *kind_str(const char *name, uint32_t value, char buf[16]);

/* cli_table.c: the symbol table's commands, on the table opened from the
 * options (open_table). */
struct ksym_table *open_table(const struct options *o);
int cmd_lookup(struct ksym_table *t, int argc, char **argv);
int cmd_addr(struct ksym_table *t, int argc, char **argv);
int cmd_grep(struct ksym_table *t, int argc, char **argv);
int cmd_modules(struct ksym_table *t, int argc, char **argv);
int cmd_stat(struct ksym_table *t, int argc, char **argv);

/* cli_kallsyms.c: kallsyms without a table. */
int cmd_resolve(const struct options *o, int argc, char **argv);
int cmd_addresses(const struct options *o, int argc, char **argv);

/* cli_obj.c: a BPF object. */
int cmd_obj(const struct options *o, int argc, char **argv);

/* cli_btf.c: the kernel's BTF, and `ksym trace` (trace.c) on it. */
int cmd_btf(const struct options *o, int argc, char **argv);
int cmd_trace_options(const struct options *o, int argc, char **argv);

#endif
