/*
 * BPF objects through the C API, no kernel needed: programs and aliases,
 * maps, externs, relocations, every error path (NULL arguments, bad
 * indices, malformed objects, unsupported features, relocate before its
 * inputs are set), the final instructions shared by aliases, the
 * loadable BTF for kernels without some BTF kinds.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <stdint.h>
#include <unistd.h>

static const char *objdir;
static char dir[64];

static char *slurp(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", objdir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static struct ksym_bpf_object *open_obj(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", objdir, name);
    return ksym_bpf_object_open(path);
}

/* A cache over a two-line kallsyms. */
static struct ksym_cache *kernel_cache(void)
{
    char k[128], m[128];
    snprintf(k, sizeof(k), "%s/kallsyms", dir);
    snprintf(m, sizeof(m), "%s/modules", dir);
    FILE *f = fopen(k, "w");
    fputs("ffffffff81000000 T _text\nffffffff81000100 T schedule\n", f);
    fclose(f);
    f = fopen(m, "w");
    fclose(f);
    KSYM_OPTS(ksym_table_opts, o, .kallsyms_path = k, .modules_path = m, .builtin_ranges_path = "");
    return ksym_cache_new(&o);
}

static void test_inspect(void)
{
    struct ksym_bpf_object *o = open_obj("aliases.bpf.o");
    CHECK(o != NULL);
    if (!o)
        return;
    CHECK(strcmp(ksym_bpf_object_license(o), "GPL") == 0);
    CHECK(ksym_bpf_object_program_count(o) == 4);
    struct ksym_bpf_program_info p = { .sz = sizeof(p) };
    CHECK(ksym_bpf_program_info(o, 2, &p) == 0);
    CHECK(!strcmp(p.name, "prog_alias_two") && !strcmp(p.section, "socket") && p.alias_of == 0);
    CHECK(p.insn_off == 0 && p.insn_cnt > 100);
    CHECK(ksym_bpf_program_info(o, 3, &p) == 0 && !strcmp(p.name, "second") && p.alias_of == 3);
    CHECK(ksym_bpf_program_info(o, 4, &p) == KSYM_ERR_NOT_FOUND);
    size_t idx = 99;
    CHECK(ksym_bpf_object_find_program(o, "prog_alias_one", &idx) == 0 && idx == 1);
    CHECK(ksym_bpf_object_find_program(o, "nope", &idx) == KSYM_ERR_NOT_FOUND && idx == 1);
    CHECK_MSG("prog_alias_one");

    CHECK(ksym_bpf_object_map_count(o) == 4);
    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    CHECK(ksym_bpf_map_info(o, 0, &m) == 0);
    CHECK(!strcmp(m.name, "results") && !strcmp(m.section, ".maps") && m.type == 2 && m.key_size == 4);
    CHECK(m.value_size == 8 && m.max_entries == 16 && m.initial_value == NULL);
    CHECK(ksym_bpf_object_find_map(o, ".rodata", &idx) == 0);
    /* BPF_F_RDONLY_PROG | BPF_F_MMAPABLE: read-only to programs, and a
     * global variable (`magic`) lives in it, so user space may mmap it. */
    CHECK(ksym_bpf_map_info(o, idx, &m) == 0 && m.map_flags == (0x80 | 0x400) && m.initial_value_size == 8);
    CHECK(*(const uint64_t *)m.initial_value == 0xfeedbeef);
    CHECK(ksym_bpf_object_find_map(o, ".bss", &idx) == 0);
    CHECK(ksym_bpf_map_info(o, idx, &m) == 0 && m.initial_value == NULL && m.value_size == 8);

    CHECK(ksym_bpf_object_extern_count(o) == 3);
    struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
    CHECK(ksym_bpf_extern_info(o, 2, &e) == 0 && !strcmp(e.name, "vmlinux`_text") && !e.weak && !e.resolved);
    CHECK(ksym_bpf_extern_info(o, 1, &e) == 0 && e.weak);

    size_t n = ksym_bpf_program_reloc_count(o, 0);
    CHECK(n > 10 && n == ksym_bpf_program_reloc_count(o, 1));
    int kinds[6] = { 0 };
    for (size_t i = 0; i < n; i++) {
        struct ksym_bpf_reloc r = { .sz = sizeof(r) };
        CHECK(ksym_bpf_program_reloc(o, 0, i, &r) == 0);
        if (r.kind >= 1 && r.kind <= 5)
            kinds[r.kind]++;
        if (r.kind == KSYM_BPF_RELOC_CALL)
            CHECK(r.target >= 118);
    }
    CHECK(kinds[KSYM_BPF_RELOC_KSYM] == 3 && kinds[KSYM_BPF_RELOC_MAP_FD] == 8 && kinds[KSYM_BPF_RELOC_CALL] == 2);
    CHECK(kinds[KSYM_BPF_RELOC_FUNC] == 1 && kinds[KSYM_BPF_RELOC_MAP_VALUE] == 4);
    struct ksym_bpf_reloc r = { .sz = sizeof(r) };
    CHECK(ksym_bpf_program_reloc(o, 0, n, &r) == KSYM_ERR_NOT_FOUND);

    size_t size = 0, rs = 0, cnt = 0;
    CHECK(ksym_bpf_object_btf(o, &size) != NULL && size > 100);
    const uint32_t *fi = ksym_bpf_program_func_info(o, 0, &rs, &cnt);
    CHECK(fi != NULL && rs == 8 && cnt == 4 && fi[0] == 0);
    CHECK(ksym_bpf_program_func_info(o, 1, &rs, &cnt) == fi);
    CHECK(ksym_bpf_program_line_info(o, 0, &rs, &cnt) != NULL && rs == 16 && cnt > 10);
    ksym_bpf_object_free(o);
}

static void test_relocate(void)
{
    struct ksym_bpf_object *o = open_obj("aliases.bpf.o");
    struct ksym_cache *c = kernel_cache();
    size_t cnt;
    CHECK(o && c);
    if (!o || !c)
        return;
    /* Nothing before relocate; relocate needs fds, then resolved externs. */
    CHECK(ksym_bpf_program_insns(o, 0, &cnt) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_relocate(o) == KSYM_ERR_INVALID);
    CHECK_MSG("results");
    for (size_t i = 0; i < ksym_bpf_object_map_count(o); i++)
        CHECK(ksym_bpf_object_set_map_fd(o, i, 40 + (int)i) == 0);
    CHECK(ksym_bpf_object_set_map_fd(o, 9, 3) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_object_set_map_fd(o, 0, -5) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_relocate(o) == KSYM_ERR_INVALID);
    CHECK_MSG("resolve_ksyms");
    CHECK(ksym_bpf_object_resolve_ksyms(o, c) == 0);
    struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
    CHECK(ksym_bpf_extern_info(o, 0, &e) == 0 && e.resolved && e.addr == 0xffffffff81000000ull);
    CHECK(ksym_bpf_extern_info(o, 1, &e) == 0 && !e.resolved && e.addr == 0);
    CHECK(ksym_bpf_object_relocate(o) == 0);

    const struct ksym_bpf_insn *i0 = ksym_bpf_program_insns(o, 0, &cnt);
    size_t cnt1, cnt2;
    CHECK(i0 != NULL && cnt > 118);
    CHECK(ksym_bpf_program_insns(o, 1, &cnt1) == i0 && cnt1 == cnt);
    CHECK(ksym_bpf_program_insns(o, 2, &cnt2) == i0 && cnt2 == cnt);
    for (size_t i = 0; i < ksym_bpf_program_reloc_count(o, 0); i++) {
        struct ksym_bpf_reloc r = { .sz = sizeof(r) };
        ksym_bpf_program_reloc(o, 0, i, &r);
        const struct ksym_bpf_insn *in = &i0[r.insn_idx];
        switch (r.kind) {
        case KSYM_BPF_RELOC_MAP_FD:
            CHECK(in[0].code == 0x18 && (in[0].regs >> 4) == 1 && in[0].imm == 40 + (int)r.target);
            break;
        case KSYM_BPF_RELOC_MAP_VALUE:
            CHECK((in[0].regs >> 4) == 2 && in[0].imm == 40 + (int)r.target && in[1].imm == r.addend);
            break;
        case KSYM_BPF_RELOC_KSYM:
            if (!strcmp(r.symbol, "libksym_no_such_symbol"))
                CHECK(in[0].imm == 0 && in[1].imm == 0);
            else
                CHECK((uint32_t)in[0].imm == 0x81000000u && (uint32_t)in[1].imm == 0xffffffffu);
            break;
        case KSYM_BPF_RELOC_CALL:
        case KSYM_BPF_RELOC_FUNC:
            CHECK((size_t)((long)r.insn_idx + 1 + in[0].imm) == r.target);
            break;
        default:
            CHECK(0);
        }
    }
    ksym_bpf_object_free(o);
    ksym_cache_free(c);
}

static void test_errors(void)
{
    size_t x, len = 0;
    CHECK(ksym_bpf_object_open(NULL) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(open_obj("does-not-exist.o") == NULL && ksym_last_error() == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_object_open_mem(NULL, 4) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_open_mem("garbage!", 8) == NULL && ksym_last_error() == KSYM_ERR_FORMAT);
    CHECK(ksym_bpf_object_program_count(NULL) == 0 && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_license(NULL) == NULL);
    CHECK(ksym_bpf_program_info(NULL, 0, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_relocate(NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_resolve_ksyms(NULL, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_find_map(NULL, "x", &x) == KSYM_ERR_INVALID);
    ksym_bpf_object_free(NULL);

    /* Variables: NULL for each pointer, an index past the last, an
     * unknown name listing the ones there are (aliases.bpf.o: seed in
     * .data, magic in .rodata, counter in .bss, 8 bytes each). */
    uint64_t v8 = 0x1122334455667788ull;
    CHECK(ksym_bpf_object_var_count(NULL) == 0 && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_var_info(NULL, 0, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_find_var(NULL, "seed", &x) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_set_var(NULL, "seed", &v8, 8) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_map_set_initial_value(NULL, 0, &v8, 8) == KSYM_ERR_INVALID);
    struct ksym_bpf_object *vo = open_obj("aliases.bpf.o");
    CHECK(vo != NULL);
    if (vo) {
        struct ksym_bpf_var_info vi = { .sz = sizeof(vi) };
        size_t nv = ksym_bpf_object_var_count(vo);
        CHECK(nv == 3);
        CHECK(ksym_bpf_var_info(vo, 0, NULL) == KSYM_ERR_INVALID);
        CHECK(ksym_bpf_var_info(vo, nv, &vi) == KSYM_ERR_NOT_FOUND);
        CHECK(ksym_bpf_object_find_var(vo, NULL, &x) == KSYM_ERR_INVALID);
        CHECK(ksym_bpf_object_find_var(vo, "seed", NULL) == KSYM_ERR_INVALID);
        CHECK(ksym_bpf_object_find_var(vo, "nope", &x) == KSYM_ERR_NOT_FOUND);
        CHECK_MSG("variables: .data`seed, .rodata`magic, .bss`counter");
        CHECK(ksym_bpf_object_set_var(vo, NULL, &v8, 8) == KSYM_ERR_INVALID);
        CHECK(ksym_bpf_object_set_var(vo, "seed", NULL, 8) == KSYM_ERR_INVALID);
        CHECK(ksym_bpf_object_set_var(vo, "seed", &v8, 4) == KSYM_ERR_INVALID);
        CHECK_MSG("variable `seed` of `.data` is 8 bytes, not 4");
        CHECK(ksym_bpf_map_set_initial_value(vo, 0, NULL, 8) == KSYM_ERR_INVALID);
        CHECK(ksym_bpf_map_set_initial_value(vo, 99, &v8, 8) == KSYM_ERR_NOT_FOUND);
        /* `counter` in .bss: .bss gets an initial value holding it. */
        struct ksym_bpf_map_info mi = { .sz = sizeof(mi) };
        size_t bss = 0;
        CHECK(ksym_bpf_object_find_map(vo, ".bss", &bss) == 0 && ksym_bpf_map_info(vo, bss, &mi) == 0);
        CHECK(mi.initial_value == NULL);
        CHECK(ksym_bpf_object_set_var(vo, "counter", &v8, 8) == 0);
        CHECK(ksym_bpf_map_info(vo, bss, &mi) == 0 && mi.initial_value_size == 8 && mi.initial_value &&
              !memcmp(mi.initial_value, &v8, 8));
        ksym_bpf_object_free(vo);
    }

    /* Malformed objects, from memory: truncated, wrong machine, a relocation
     * moved onto an instruction that is not ld_imm64. */
    char *buf = slurp("aliases.bpf.o", &len);
    CHECK(buf != NULL);
    if (!buf)
        return;
    struct ksym_bpf_object *o = ksym_bpf_object_open_mem(buf, len);
    CHECK(o != NULL);
    ksym_bpf_object_free(o);
    for (size_t cut = 0; cut < len; cut += 97)
        CHECK(ksym_bpf_object_open_mem(buf, cut) == NULL && ksym_last_error() == KSYM_ERR_FORMAT);
    buf[18] = 62; /* EM_X86_64 */
    CHECK(ksym_bpf_object_open_mem(buf, len) == NULL && ksym_last_error() == KSYM_ERR_UNSUPPORTED);
    CHECK_MSG("machine 62");
    free(buf);

    /* What needs the kernel's BTF waits for ksym_bpf_object_resolve_btf:
     * relocate says so, naming the program and the extern. */
    static const struct { const char *file, *what; int kind; } btf_needed[] = {
        { "kfunc.bpf.o", "bpf_rcu_read_lock", KSYM_BPF_EXTERN_KFUNC },
        { "typed_ksym.bpf.o", "bpf_prog_active", KSYM_BPF_EXTERN_KSYM_BTF },
        { "kconfig.bpf.o", "LINUX_KERNEL_VERSION", KSYM_BPF_EXTERN_KCONFIG },
        { "core.bpf.o", "core_prog", 0 },
    };
    for (size_t i = 0; i < sizeof(btf_needed) / sizeof(btf_needed[0]); i++) {
        o = open_obj(btf_needed[i].file);
        CHECK(o != NULL);
        if (!o)
            continue;
        for (size_t m = 0; m < ksym_bpf_object_map_count(o); m++)
            CHECK(ksym_bpf_object_set_map_fd(o, m, 3) == 0);
        CHECK(ksym_bpf_object_relocate(o) == KSYM_ERR_INVALID);
        CHECK_MSG("ksym_bpf_object_resolve_btf");
        if (btf_needed[i].kind) {
            struct ksym_bpf_extern_info e = { .sz = sizeof(e) };
            bool seen = false;
            for (size_t x = 0; x < ksym_bpf_object_extern_count(o); x++)
                if (ksym_bpf_extern_info(o, x, &e) == 0 && !strcmp(e.name, btf_needed[i].what))
                    seen = e.kind == (uint32_t)btf_needed[i].kind && !e.resolved && e.module == NULL;
            CHECK(seen);
        } else {
            CHECK_MSG(btf_needed[i].what);
        }
        size_t n = 99;
        CHECK(ksym_bpf_program_fd_array(o, 0, &n) == NULL && n == 0);
        ksym_bpf_object_free(o);
    }

    /* Strong extern missing: named, with near matches. */
    o = open_obj("nobtf.bpf.o");
    char k[128], m[128];
    snprintf(k, sizeof(k), "%s/kallsyms2", dir);
    snprintf(m, sizeof(m), "%s/modules", dir);
    FILE *f = fopen(k, "w");
    fputs("ffffffff81000000 T _text.cold\n", f);
    fclose(f);
    KSYM_OPTS(ksym_table_opts, co, .kallsyms_path = k, .modules_path = m, .builtin_ranges_path = "");
    struct ksym_cache *c = ksym_cache_new(&co);
    CHECK(ksym_bpf_object_resolve_ksyms(o, c) == KSYM_ERR_NOT_FOUND);
    CHECK_MSG("extern `_text`");
    CHECK_MSG("_text.cold");
    size_t size;
    CHECK(ksym_bpf_object_btf(o, &size) == NULL && ksym_last_error() == KSYM_ERR_NOT_FOUND);
    ksym_cache_free(c);
    ksym_bpf_object_free(o);
}

/* Counts the types of each kind (BTF_KIND_*, up to 19) of a BTF blob;
 * 0 for a blob this walker cannot read. */
static int btf_kinds(const unsigned char *b, size_t size, size_t counts[20])
{
    uint32_t w[6];
    memset(counts, 0, 20 * sizeof(size_t));
    if (size < 24)
        return 0;
    memcpy(w, b + 4, 20); /* hdr_len, type_off, type_len, str_off, str_len */
    size_t at = w[0] + w[1], end = at + w[2];
    while (at + 12 <= end && end <= size) {
        uint32_t info;
        memcpy(&info, b + at + 4, 4);
        uint32_t kind = (info >> 24) & 0x1f, vlen = info & 0xffff;
        static const size_t per[20] = { 0, 4, 0, 12, 12, 12, 8, 0, 0, 0, 0, 0, 0, 8, 4, 12, 0, 4, 0, 12 };
        static const int fixed[20] = { 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0 };
        if (kind >= 20)
            return 0;
        counts[kind]++;
        at += 12 + (fixed[kind] ? per[kind] : per[kind] * vlen);
    }
    return at == end;
}

/* The loadable BTF for kernels without some BTF kinds. */
static void test_btf_for(void)
{
    struct ksym_bpf_object *o = open_obj("aliases.bpf.o");
    CHECK(o != NULL);
    if (!o)
        return;
    size_t full_size = 0, size = 0, again = 0;
    const unsigned char *full = ksym_bpf_object_btf(o, &full_size);
    /* Every kind: the very bytes of ksym_bpf_object_btf. */
    CHECK(full && ksym_bpf_object_btf_for(o, KSYM_BTF_FEAT_ALL, &size) == (const void *)full && size == full_size);
    /* 5.10: nothing in this object it lacks; the same bytes, kept in the
     * object (the same pointer the next time). */
    uint32_t k510 = KSYM_BTF_FEAT_BTF | KSYM_BTF_FEAT_FUNC | KSYM_BTF_FEAT_GLOBAL_FUNC | KSYM_BTF_FEAT_DATASEC;
    const unsigned char *b = ksym_bpf_object_btf_for(o, k510, &size);
    CHECK(b && size == full_size && !memcmp(b, full, size));
    CHECK(ksym_bpf_object_btf_for(o, k510, &again) == (const void *)b && again == size);
    /* BTF alone (before 5.0): no FUNC, FUNC_PROTO, VAR or DATASEC left,
     * as many TYPEDEFs more as FUNCs, ENUMs as FUNC_PROTOs, INTs as VARs,
     * STRUCTs as DATASECs, every type in place (the same size). */
    size_t before[20], after[20];
    CHECK(btf_kinds(full, full_size, before));
    CHECK(before[12] > 0 && before[13] > 0 && before[14] > 0 && before[15] > 0);
    b = ksym_bpf_object_btf_for(o, KSYM_BTF_FEAT_BTF, &size);
    CHECK(b && size == full_size && btf_kinds(b, size, after));
    CHECK(after[12] == 0 && after[13] == 0 && after[14] == 0 && after[15] == 0);
    CHECK(after[8] == before[8] + before[12] && after[6] == before[6] + before[13]);
    CHECK(after[1] == before[1] + before[14] && after[4] == before[4] + before[15]);
    /* The earlier result is still there. */
    CHECK(!memcmp(ksym_bpf_object_btf_for(o, k510, &again), full, full_size));
    /* Errors: an unknown bit, a kernel without BTF, NULLs. */
    CHECK(ksym_bpf_object_btf_for(o, KSYM_BTF_FEAT_ALL + 1, &size) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK_MSG("unknown flag bits 0x200");
    CHECK(ksym_bpf_object_btf_for(o, KSYM_BTF_FEAT_ALL & ~KSYM_BTF_FEAT_BTF, &size) == NULL &&
          ksym_last_error() == KSYM_ERR_UNSUPPORTED);
    CHECK_MSG("takes no BTF");
    CHECK(ksym_bpf_object_btf_for(o, KSYM_BTF_FEAT_ALL, NULL) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_object_btf_for(NULL, KSYM_BTF_FEAT_ALL, &size) == NULL && ksym_last_error() == KSYM_ERR_INVALID);
    CHECK(ksym_btf_probe_features(NULL) == KSYM_ERR_INVALID);
    ksym_bpf_object_free(o);
    /* No .BTF: not found, whatever the features. */
    o = open_obj("nobtf.bpf.o");
    CHECK(o && ksym_bpf_object_btf_for(o, k510, &size) == NULL && ksym_last_error() == KSYM_ERR_NOT_FOUND);
    ksym_bpf_object_free(o);
}

/* Maps of maps and a program array (c-tests/bpf/slots.bpf.c): the inner
 * map's shape and the initial slots, as the source spells them. */
/* vars.bpf.o: variables of four data sections, and two `static` ones
 * named `calls` in .bss (two files linked by bpftool gen object), whose
 * offsets and sizes bpftool's dump of the object gives: .rodata targ_pid
 * +0 (4) and verbose +4 (1); .data seed +0 (8); .data.limits limits +0
 * (16); .bss hits +0 (8), one.calls +8, calls +12 and calls +16 (4). */
static void test_vars(void)
{
    struct ksym_bpf_object *o = open_obj("vars.bpf.o");
    CHECK(o != NULL);
    if (!o)
        return;
    static const struct { const char *map, *name; size_t offset, size; } want[] = {
        { ".rodata", "targ_pid", 0, 4 }, { ".rodata", "verbose", 4, 1 }, { ".data", "seed", 0, 8 },
        { ".data.limits", "limits", 0, 16 }, { ".bss", "hits", 0, 8 }, { ".bss", "one.calls", 8, 4 },
        { ".bss", "calls", 12, 4 },          { ".bss", "calls", 16, 4 },
    };
    size_t n = ksym_bpf_object_var_count(o);
    CHECK(n == sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++) {
        struct ksym_bpf_var_info v = { .sz = sizeof(v) };
        struct ksym_bpf_map_info m = { .sz = sizeof(m) };
        CHECK(ksym_bpf_var_info(o, i, &v) == 0 && ksym_bpf_map_info(o, v.map, &m) == 0);
        CHECK(!strcmp(m.name, want[i].map) && !strcmp(v.name, want[i].name));
        CHECK(v.offset == want[i].offset && v.size == want[i].size);
        /* hits, seed, limits, targ_pid and verbose are global; the rest static. */
        CHECK(!!(v.flags & KSYM_BPF_VAR_GLOBAL) == (strstr(v.name, "calls") == NULL));
    }
    /* Two named `calls`: the name alone is refused, saying where both are. */
    size_t x = 99;
    uint32_t four = 4;
    CHECK(ksym_bpf_object_find_var(o, "calls", &x) == KSYM_ERR_AMBIGUOUS && x == 99);
    CHECK_MSG("2 variables are named `calls` (.bss+12, .bss+16");
    CHECK(ksym_bpf_object_set_var(o, "calls", &four, 4) == KSYM_ERR_AMBIGUOUS);
    /* The whole section instead: both set, and `hits` with them. */
    size_t bss = 0;
    unsigned char sec[20];
    for (size_t k = 0; k < sizeof(sec); k++)
        sec[k] = (unsigned char)(k + 1);
    CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0);
    CHECK(ksym_bpf_map_set_initial_value(o, bss, sec, sizeof(sec) - 1) == KSYM_ERR_INVALID);
    CHECK_MSG("19 bytes given, its value is 20 bytes");
    CHECK(ksym_bpf_map_set_initial_value(o, bss, sec, sizeof(sec)) == 0);
    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    CHECK(ksym_bpf_map_info(o, bss, &m) == 0 && m.initial_value_size == 20 && !memcmp(m.initial_value, sec, 20));
    /* A variable of a section of its own, and a function's static. */
    uint32_t lim[4] = { 10, 20, 30, 40 };
    size_t limits = 0;
    CHECK(ksym_bpf_object_set_var(o, "limits", lim, sizeof(lim)) == 0);
    CHECK(ksym_bpf_object_find_map(o, ".data.limits", &limits) == 0 && ksym_bpf_map_info(o, limits, &m) == 0);
    CHECK(m.initial_value_size == 16 && !memcmp(m.initial_value, lim, 16));
    CHECK(ksym_bpf_object_set_var(o, "one.calls", &four, 4) == 0);
    CHECK(ksym_bpf_map_info(o, bss, &m) == 0 && !memcmp((const char *)m.initial_value + 8, &four, 4));
    /* Once its map exists, a section's variables stay as they were. */
    size_t rodata = 0;
    CHECK(ksym_bpf_object_find_map(o, ".rodata", &rodata) == 0);
    CHECK(ksym_bpf_object_set_var(o, "targ_pid", &four, 4) == 0);
    CHECK(ksym_bpf_object_set_map_fd(o, rodata, 7) == 0);
    CHECK(ksym_bpf_object_set_var(o, "targ_pid", &lim[0], 4) == KSYM_ERR_INVALID);
    CHECK_MSG("map `.rodata` was created already (its fd was given with ksym_bpf_object_set_map_fd)");
    CHECK(ksym_bpf_map_info(o, rodata, &m) == 0 && !memcmp(m.initial_value, &four, 4));
    ksym_bpf_object_free(o);
    /* .kconfig is resolve_btf's to fill in, not the loader's. */
    o = open_obj("kconfig.bpf.o");
    size_t kc = 0;
    static unsigned char zeros[4096];
    CHECK(o && ksym_bpf_object_find_map(o, ".kconfig", &kc) == 0 && ksym_bpf_map_info(o, kc, &m) == 0);
    CHECK(m.value_size <= sizeof(zeros) && ksym_bpf_map_set_initial_value(o, kc, zeros, m.value_size) == KSYM_ERR_INVALID);
    CHECK_MSG("holds the `.kconfig` externs' values, which ksym_bpf_object_resolve_btf fills in");
    ksym_bpf_object_free(o);
}

static void test_slots(void)
{
    struct ksym_bpf_object *o = open_obj("slots.bpf.o");
    CHECK(o != NULL);
    if (!o)
        return;
    size_t inner_a, inner_b, outer_arr, outer_hash, jmp, bss, tail_one, tail_three;
    CHECK(ksym_bpf_object_find_map(o, "inner_a", &inner_a) == 0);
    CHECK(ksym_bpf_object_find_map(o, "inner_b", &inner_b) == 0);
    CHECK(ksym_bpf_object_find_map(o, "outer_arr", &outer_arr) == 0);
    CHECK(ksym_bpf_object_find_map(o, "outer_hash", &outer_hash) == 0);
    CHECK(ksym_bpf_object_find_map(o, "jmp", &jmp) == 0);
    CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0);
    CHECK(ksym_bpf_object_find_program(o, "tail_one", &tail_one) == 0);
    CHECK(ksym_bpf_object_find_program(o, "tail_three", &tail_three) == 0);

    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    /* Array of maps: value size 4 (a map fd), inner arrays of 2 u64. */
    CHECK(ksym_bpf_map_info(o, outer_arr, &m) == 0);
    CHECK(m.type == 12 && m.key_size == 4 && m.value_size == 4 && m.max_entries == 4);
    CHECK(m.inner_type == 2 && m.inner_key_size == 4 && m.inner_value_size == 8 && m.inner_max_entries == 2 &&
          m.inner_map_flags == 0 && m.reserved3 == 0);
    CHECK(m.slot_count == 2);
    struct ksym_bpf_map_slot s = { .sz = sizeof(s) };
    CHECK(ksym_bpf_map_slot(o, outer_arr, 0, &s) == 0);
    CHECK(s.index == 0 && s.kind == KSYM_BPF_SLOT_MAP && s.target == inner_a);
    CHECK(ksym_bpf_map_slot(o, outer_arr, 1, &s) == 0);
    CHECK(s.index == 2 && s.kind == KSYM_BPF_SLOT_MAP && s.target == inner_b);
    CHECK(ksym_bpf_map_slot(o, outer_arr, 2, &s) == KSYM_ERR_NOT_FOUND);
    CHECK(strstr(ksym_last_error_message(), "outer_arr") != NULL);
    /* Hash of maps whose inner map is an anonymous struct. */
    CHECK(ksym_bpf_map_info(o, outer_hash, &m) == 0);
    CHECK(m.type == 13 && m.value_size == 4 && m.max_entries == 8 && m.inner_type == 2 &&
          m.inner_value_size == 8 && m.inner_max_entries == 2 && m.slot_count == 1);
    CHECK(ksym_bpf_map_slot(o, outer_hash, 0, &s) == 0);
    CHECK(s.index == 1 && s.kind == KSYM_BPF_SLOT_MAP && s.target == inner_b);
    /* Program array: programs in its slots, no inner map. */
    CHECK(ksym_bpf_map_info(o, jmp, &m) == 0);
    CHECK(m.type == 3 && m.value_size == 4 && m.max_entries == 4 && m.inner_type == 0 && m.slot_count == 2);
    CHECK(ksym_bpf_map_slot(o, jmp, 0, &s) == 0);
    CHECK(s.index == 1 && s.kind == KSYM_BPF_SLOT_PROGRAM && s.target == tail_one);
    CHECK(ksym_bpf_map_slot(o, jmp, 1, &s) == 0);
    CHECK(s.index == 3 && s.kind == KSYM_BPF_SLOT_PROGRAM && s.target == tail_three);
    /* Maps without `values`. */
    CHECK(ksym_bpf_map_info(o, inner_a, &m) == 0);
    CHECK(m.inner_type == 0 && m.slot_count == 0);
    CHECK(ksym_bpf_map_info(o, bss, &m) == 0);
    CHECK(m.inner_type == 0 && m.slot_count == 0);
    CHECK(ksym_bpf_map_slot(o, inner_a, 0, &s) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_map_slot(o, 99, 0, &s) == KSYM_ERR_NOT_FOUND);
    CHECK(ksym_bpf_map_slot(o, jmp, 0, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_map_slot(NULL, 0, 0, &s) == KSYM_ERR_INVALID);
    ksym_bpf_object_free(o);
}

/* struct_ops maps before kernel BTF (struct_ops.bpf.c): the local
 * struct's size (56 bytes by its C layout), BPF_F_LINK for
 * `.struct_ops.link`, no kernel value or slots yet; each program names
 * its member (test_kernel and the Rust tests check the kernel side). */
static void test_struct_ops(void)
{
    struct ksym_bpf_object *o = open_obj("struct_ops.bpf.o");
    CHECK(o != NULL);
    if (!o)
        return;
    size_t cc, link, init;
    CHECK(ksym_bpf_object_find_map(o, "ksym_cc", &cc) == 0);
    CHECK(ksym_bpf_object_find_map(o, "ksym_cc_link", &link) == 0);
    CHECK(ksym_bpf_object_find_program(o, "ksym_init", &init) == 0);
    struct ksym_bpf_map_info m = { .sz = sizeof(m) };
    CHECK(ksym_bpf_map_info(o, cc, &m) == 0);
    CHECK(m.type == 26 && m.key_size == 4 && m.value_size == 56 && m.max_entries == 1 && m.map_flags == 0);
    CHECK(!strcmp(m.section, ".struct_ops") && m.initial_value == NULL);
    CHECK(m.btf_vmlinux_value_type_id == 0 && m.reserved4 == 0 && m.struct_ops_value == NULL &&
          m.struct_ops_value_size == 0 && m.slot_count == 0);
    CHECK(ksym_bpf_map_info(o, link, &m) == 0);
    CHECK(m.type == 26 && m.map_flags == (1U << 13) && !strcmp(m.section, ".struct_ops.link"));
    struct ksym_bpf_map_slot s = { .sz = sizeof(s) };
    CHECK(ksym_bpf_map_slot(o, cc, 0, &s) == KSYM_ERR_NOT_FOUND);
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    CHECK(ksym_bpf_program_attach_info(o, init, &at) == 0);
    CHECK(at.prog_type == 27 && at.attach_btf_id == 0 && at.target && !strcmp(at.target, "tcp_congestion_ops.init"));
    ksym_bpf_object_free(o);
}

int main(void)
{
    objdir = getenv("KSYM_BPF_OBJECTS");
    if (!objdir)
        objdir = "c-tests/bpf";
    snprintf(dir, sizeof(dir), "/tmp/ksym-ctest-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_inspect();
    test_relocate();
    test_errors();
    test_vars();
    test_slots();
    test_struct_ops();
    test_btf_for();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return finish("test_bpf");
}
