/* A small libbpf program (for the LD_PRELOAD test): lists the programs
 * of a BPF object with their sections and types, and the maps. */
#include <bpf/libbpf.h>
#include <stdio.h>

static int quiet(enum libbpf_print_level l, const char *f, va_list a)
{
    (void)l, (void)f, (void)a;
    return 0;
}

int main(int argc, char **argv)
{
    libbpf_set_print(quiet);
    for (int i = 1; i < argc; i++) {
        struct bpf_object *o = bpf_object__open_file(argv[i], NULL);
        if (!o) {
            printf("%s: cannot open\n", argv[i]);
            continue;
        }
        struct bpf_program *p;
        struct bpf_map *m;
        bpf_object__for_each_program(p, o)
            printf("%s: %s %s %d\n", argv[i], bpf_program__name(p), bpf_program__section_name(p),
                   (int)bpf_program__type(p));
        bpf_object__for_each_map(m, o)
            printf("%s: map %s %d\n", argv[i], bpf_map__name(m), (int)bpf_map__type(m));
        bpf_object__close(o);
    }
    return 0;
}
