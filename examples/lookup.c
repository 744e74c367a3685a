#include <ksym.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    /* The running kernel's symbols, or a kallsyms file named on the command line. */
    KSYM_OPTS(ksym_table_opts, opts, .kallsyms_path = argc > 1 ? argv[1] : NULL);
    struct ksym_table *t = ksym_table_open(&opts);
    if (!t) {
        fprintf(stderr, "%s\n", ksym_last_error_message());
        return 1;
    }
    struct ksym_symbol s;
    uint64_t off;
    int rc = ksym_lookup(t, "vmlinux`schedule", &s);            /* name -> symbol */
    if (rc == 0)
        rc = ksym_symbolize(t, s.addr + 0x10, &s, &off);       /* address -> symbol+offset */
    if (rc == 0)
        printf("%s+%#" PRIx64 " [%s] size %#" PRIx64 "\n", s.name, off, s.module, s.size);
    else
        fprintf(stderr, "%s\n", ksym_last_error_message());
    ksym_table_free(t);
    return rc != 0;
}
