/*
 * What the ksym CLI's commands share (tools/cli.h): the error line, the
 * kernel's BTF opened from the options, kind names.
 */
#define _GNU_SOURCE

#include "cli.h"

#include <stdio.h>
#include <sys/stat.h>

int fail(const char *what)
{
    fprintf(stderr, "ksym: %s: %s\n", what, ksym_last_error_message());
    return 1;
}

struct ksym_btf *open_btf(const struct options *o)
{
    char vmlinux[4096];
    const char *vmlinux_path = NULL, *module_dir = NULL, *filter = NULL;
    struct stat st;
    if (o->btf) {
        vmlinux_path = o->btf;
        module_dir = "";
        filter = ""; /* tracefs describes the running kernel, not this BTF */
        if (stat(o->btf, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", o->btf);
            vmlinux_path = vmlinux;
            module_dir = o->btf;
        }
    }
    KSYM_OPTS(ksym_btf_opts, opts, .vmlinux_btf_path = vmlinux_path, .module_btf_dir = module_dir,
              .filter_functions_path = filter, .kallsyms_path = o->kallsyms, .snapshot_dir = o->snapshot_dir,
              .flags = o->no_snapshot ? KSYM_BTF_NO_SNAPSHOT : 0);
    return ksym_btf_open(&opts);
}

const char *kind_str(const char *name, uint32_t value, char buf[16])
{
    if (name)
        return name;
    snprintf(buf, 16, "%u", value);
    return buf;
}
