/*
 * The versioned-struct rule for every function that takes one (`sz`
 * first): an input (options) struct with `sz` below sizeof(size_t) is
 * KSYM_ERR_INVALID; exact, or shorter (an older caller: only the fields it
 * covers), is accepted; larger with a zero tail is accepted, with a
 * non-zero tail KSYM_ERR_INVALID. An output struct with `sz` below
 * sizeof(size_t) is KSYM_ERR_INVALID; otherwise exactly `sz` bytes are
 * written past `sz` itself (min with the library's size), `sz` left as the
 * caller set it, and nothing past them (a newer caller's extra fields are
 * left as they were). An input struct shorter than the library's is read
 * for its `sz` bytes only: what lies past them is garbage here, which the
 * library would trip on (a wild pointer, unknown flags) if it read it.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <unistd.h>

#define BIG 512

/* The first published version of each versioned struct: its layout in
 * the first include/ksym.h that had it (`git log -p -- include/ksym.h`),
 * which is what an older caller compiled against passes as sz:
 *   ksym_table_opts 48, ksym_table_stats 72, ksym_module_info 48 (0.1's
 *   first header, e099cf6); ksym_cache_stats 56 (34382b5);
 *   ksym_bpf_program_info 48, ksym_bpf_map_info 64, ksym_bpf_extern_info
 *   32, ksym_bpf_reloc 48 (8178f02); ksym_btf_opts 56, ksym_btf_type 40,
 *   ksym_btf_stats 40, ksym_bpf_attach 56 (9f9add8); ksym_bpf_map_slot 24
 *   (cef55a3); ksym_bpf_var_info 48 (its first version is the current).
 * ksym_table_stats, ksym_module_info, ksym_cache_stats, ksym_bpf_map_slot,
 * ksym_bpf_program_info and ksym_btf_type never grew (table_stats' and
 * module_info's padding was later named `reserved`, same offsets);
 * ksym_btf_stats grew to 48 (trampoline_refused, 18c62a7); ksym_bpf_attach
 * to 72 (error, error_message), 80 (target_offset) and 88 (tp_category);
 * ksym_btf_opts to 64 (snapshot_dir) and 72 (kernel_release). The C API
 * contract (../shared/c-api.md) lists ksym_btf_opts without the
 * kallsyms_path that its first header already had: that 48-byte prefix is
 * tried as well (CONTRACT_KSYM_BTF_OPTS_SZ). Each v1 field must keep its
 * offset and size in the current struct (check_layouts). */
struct v1_ksym_table_opts {
    size_t sz;
    const char *kallsyms_path;
    const char *builtin_ranges_path;
    const char *vmlinux_path;
    const char *modules_path;
    unsigned int flags;
};
struct v1_ksym_bpf_program_info {
    size_t sz;
    const char *name;
    const char *section;
    size_t alias_of;
    size_t insn_off;
    size_t insn_cnt;
};
struct v1_ksym_bpf_map_info {
    size_t sz;
    const char *name;
    const char *section;
    uint32_t type, key_size, value_size, max_entries, map_flags;
    const void *initial_value;
    size_t initial_value_size;
};
struct v1_ksym_bpf_extern_info {
    size_t sz;
    const char *name;
    bool weak;
    bool resolved;
    uint64_t addr;
};
struct v1_ksym_bpf_reloc {
    size_t sz;
    size_t insn_idx;
    int kind;
    const char *symbol;
    size_t target;
    int64_t addend;
};
struct v1_ksym_btf_opts {
    size_t sz;
    const char *vmlinux_btf_path;
    const char *module_btf_dir;
    const char *filter_functions_path;
    const char *kconfig_path;
    unsigned int flags;
    unsigned int reserved;
    const char *kallsyms_path;
};
#define CONTRACT_KSYM_BTF_OPTS_SZ offsetof(struct v1_ksym_btf_opts, kallsyms_path)
struct v1_ksym_btf_stats {
    size_t sz;
    uint32_t vmlinux_types;
    uint32_t flags;
    size_t modules;
    size_t modules_read;
    size_t memory_bytes;
};
struct v1_ksym_btf_type {
    size_t sz;
    uint32_t type_id;
    uint32_t obj_id;
    int obj_fd;
    uint32_t kind;
    const char *name;
    const char *module;
};
struct v1_ksym_bpf_attach {
    size_t sz;
    uint32_t prog_type;
    uint32_t expected_attach_type;
    uint32_t attach_btf_id;
    int attach_btf_obj_fd;
    const char *target;
    const char *module;
    uint64_t addr;
    uint32_t flags;
};

/* Calls `call` (which writes to `buf`, `sz` set to `sz_in`) and checks the
 * output rule: a canary survives past what may be written, and every byte
 * before it was written: the call is made twice, over two different
 * canaries, and the first `sz` bytes must come out the same. */
#define CHECK_OUT(name, size, v1, call)                                                                      \
    do {                                                                                                 \
        unsigned char buf[BIG], first_[BIG], full_[BIG], old_[BIG];                                                             \
        size_t cases[] = { 0, sizeof(size_t) - 1, sizeof(size_t), sizeof(size_t) + 8, (v1), (size), BIG }; \
        for (size_t c_ = 0; c_ < 2 * sizeof(cases) / sizeof(cases[0]); c_++) {                           \
            size_t want = cases[c_ / 2];                                                                 \
            memset(buf, c_ % 2 ? 0x5a : 0xa5, sizeof(buf));                                              \
            memcpy(buf, &want, sizeof(size_t) <= want ? sizeof(size_t) : want);                          \
            if (want < sizeof(size_t))                                                                   \
                memset(buf, 0, sizeof(size_t)), memcpy(buf, &want, sizeof(size_t));                      \
            int rc_ = (call);                                                                            \
            if (want < sizeof(size_t)) {                                                                 \
                CHECK(rc_ == KSYM_ERR_INVALID);                                                          \
                continue;                                                                                \
            }                                                                                            \
            CHECK(rc_ == 0);                                                                             \
            size_t lim = want < (size) ? want : (size);                                                  \
            size_t got;                                                                                  \
            memcpy(&got, buf, sizeof(got));                                                              \
            CHECK(got == want);                                                                           \
            int clean = 1;                                                                               \
            for (size_t b_ = lim; b_ < sizeof(buf); b_++)                                                \
                clean &= buf[b_] == (c_ % 2 ? 0x5a : 0xa5);                                              \
            if (!clean)                                                                                  \
                fprintf(stderr, "%s: wrote past sz %zu\n", name, want);                                  \
            CHECK(clean);                                                                                \
            if (c_ % 2 == 0) {                                                                           \
                memcpy(first_, buf, sizeof(buf));                                                        \
                continue;                                                                                \
            }                                                                                            \
            size_t unwritten = lim;                                                                      \
            for (size_t b_ = lim; b_-- > sizeof(size_t);)                                                \
                if (buf[b_] != first_[b_])                                                               \
                    unwritten = b_;                                                                      \
            if (unwritten != lim)                                                                        \
                fprintf(stderr, "%s: byte %zu of sz %zu not written\n", name, unwritten, want);          \
            CHECK(unwritten == lim);                                                                     \
            if (want == BIG)                                                                             \
                memcpy(full_, buf, sizeof(buf));                                                         \
            if (want == (v1))                                                                            \
                memcpy(old_, buf, sizeof(buf));                                                          \
        }                                                                                                \
        /* An older caller's struct: each of its fields as a newer one's. */                             \
        if (memcmp(old_ + sizeof(size_t), full_ + sizeof(size_t), (v1) - sizeof(size_t)) != 0)            \
            fprintf(stderr, "%s: a first-version struct (sz %zu) differs\n", name, (size_t)(v1));        \
        CHECK(memcmp(old_ + sizeof(size_t), full_ + sizeof(size_t), (v1) - sizeof(size_t)) == 0);         \
    } while (0)

/* The case being run, named by the SIGSEGV handler: a library that reads
 * a caller's struct past its sz meets the garbage pointers put there. */
static char running[160];

static void on_segv(int sig)
{
    (void)sig;
    static const char head[] = "test_sz: SIGSEGV in ";
    ssize_t w = write(2, head, sizeof(head) - 1);
    w += write(2, running, strlen(running));
    w += write(2, "\n", 1);
    (void)w;
    _exit(1);
}

/* What lies past a caller's sz: garbage (0xa5 bytes: as a pointer,
 * non-canonical; as flags, unknown bits; as a reserved field, not zero). */
#define GARBAGE 0xa5

/* Calls `call` with an options struct of type T set by `init`, sized in
 * every way: below the size field, `older` and the first version (older
 * callers), the library's size, larger (a newer caller, its tail zero or
 * not). Every byte past the caller's sz is garbage, so a library that read
 * the whole struct whatever sz says would fail or crash. `call` returns a
 * pointer freed by `freeit`; NULL is expected exactly for sz below the
 * size field and for a non-zero tail. */
#define CHECK_IN(T, older, init, call, freeit)                                                           \
    do {                                                                                                 \
        struct {                                                                                         \
            struct T o;                                                                                  \
            uint64_t tail[4];                                                                            \
        } in_;                                                                                           \
        size_t sizes[] = { 0, sizeof(size_t) - 1, (older), sizeof(struct v1_##T), sizeof(struct T),     \
                           sizeof(in_) };                                                                \
        for (size_t c_ = 0; c_ < sizeof(sizes) / sizeof(sizes[0]); c_++) {                               \
            for (int nonzero = 0; nonzero < 2; nonzero++) {                                              \
                memset(&in_, 0, sizeof(in_));                                                            \
                init;                                                                                    \
                in_.o.sz = sizes[c_];                                                                    \
                size_t from_ = sizes[c_] > sizeof(size_t) ? sizes[c_] : sizeof(size_t);                  \
                memset((unsigned char *)&in_ + from_, GARBAGE, sizeof(in_) - from_);                     \
                if (nonzero && sizes[c_] == sizeof(in_))                                                 \
                    in_.tail[3] = 1;                                                                     \
                struct T *opts = &in_.o;                                                                 \
                snprintf(running, sizeof(running), "%s sz %zu (garbage from byte %zu): %s", #T,         \
                         sizes[c_], from_, #call);                                                       \
                void *r_ = (void *)(call);                                                               \
                int expect_ok = sizes[c_] >= sizeof(size_t) && !(nonzero && sizes[c_] > sizeof(struct T)); \
                if (expect_ok != (r_ != NULL))                                                           \
                    fprintf(stderr, "%s sz %zu tail %d: %s\n", #T, sizes[c_], nonzero,                  \
                            r_ ? "accepted" : ksym_last_error_message());                                \
                CHECK(expect_ok == (r_ != NULL));                                                        \
                if (!r_)                                                                                 \
                    CHECK(ksym_last_error() == KSYM_ERR_INVALID);                                        \
                else                                                                                     \
                    freeit(r_);                                                                          \
            }                                                                                            \
        }                                                                                                \
        running[0] = 0;                                                                                  \
    } while (0)

/* Field f of the first version is where it was, as large, in the current
 * struct. */
#define SAME_FIELD(T, f)                                                                                 \
    do {                                                                                                 \
        int same_ = offsetof(struct v1_##T, f) == offsetof(struct T, f) &&                               \
                    sizeof(((struct v1_##T *)0)->f) == sizeof(((struct T *)0)->f);                       \
        if (!same_)                                                                                      \
            fprintf(stderr, "%s.%s moved: first at %zu (%zu bytes), now at %zu (%zu bytes)\n", #T, #f,   \
                    offsetof(struct v1_##T, f), sizeof(((struct v1_##T *)0)->f), offsetof(struct T, f),  \
                    sizeof(((struct T *)0)->f));                                                         \
        CHECK(same_);                                                                                    \
    } while (0)

static void check_layouts(void)
{
    SAME_FIELD(ksym_table_opts, sz);
    SAME_FIELD(ksym_table_opts, kallsyms_path);
    SAME_FIELD(ksym_table_opts, builtin_ranges_path);
    SAME_FIELD(ksym_table_opts, vmlinux_path);
    SAME_FIELD(ksym_table_opts, modules_path);
    SAME_FIELD(ksym_table_opts, flags);
    SAME_FIELD(ksym_bpf_program_info, name);
    SAME_FIELD(ksym_bpf_program_info, section);
    SAME_FIELD(ksym_bpf_program_info, alias_of);
    SAME_FIELD(ksym_bpf_program_info, insn_off);
    SAME_FIELD(ksym_bpf_program_info, insn_cnt);
    SAME_FIELD(ksym_bpf_map_info, name);
    SAME_FIELD(ksym_bpf_map_info, section);
    SAME_FIELD(ksym_bpf_map_info, type);
    SAME_FIELD(ksym_bpf_map_info, key_size);
    SAME_FIELD(ksym_bpf_map_info, value_size);
    SAME_FIELD(ksym_bpf_map_info, max_entries);
    SAME_FIELD(ksym_bpf_map_info, map_flags);
    SAME_FIELD(ksym_bpf_map_info, initial_value);
    SAME_FIELD(ksym_bpf_map_info, initial_value_size);
    SAME_FIELD(ksym_bpf_extern_info, name);
    SAME_FIELD(ksym_bpf_extern_info, weak);
    SAME_FIELD(ksym_bpf_extern_info, resolved);
    SAME_FIELD(ksym_bpf_extern_info, addr);
    SAME_FIELD(ksym_bpf_reloc, insn_idx);
    SAME_FIELD(ksym_bpf_reloc, kind);
    SAME_FIELD(ksym_bpf_reloc, symbol);
    SAME_FIELD(ksym_bpf_reloc, target);
    SAME_FIELD(ksym_bpf_reloc, addend);
    SAME_FIELD(ksym_btf_opts, vmlinux_btf_path);
    SAME_FIELD(ksym_btf_opts, module_btf_dir);
    SAME_FIELD(ksym_btf_opts, filter_functions_path);
    SAME_FIELD(ksym_btf_opts, kconfig_path);
    SAME_FIELD(ksym_btf_opts, flags);
    SAME_FIELD(ksym_btf_opts, reserved);
    SAME_FIELD(ksym_btf_opts, kallsyms_path);
    SAME_FIELD(ksym_btf_type, type_id);
    SAME_FIELD(ksym_btf_type, obj_id);
    SAME_FIELD(ksym_btf_type, obj_fd);
    SAME_FIELD(ksym_btf_type, kind);
    SAME_FIELD(ksym_btf_type, name);
    SAME_FIELD(ksym_btf_type, module);
    SAME_FIELD(ksym_btf_stats, vmlinux_types);
    SAME_FIELD(ksym_btf_stats, flags);
    SAME_FIELD(ksym_btf_stats, modules);
    SAME_FIELD(ksym_btf_stats, modules_read);
    SAME_FIELD(ksym_btf_stats, memory_bytes);
    SAME_FIELD(ksym_bpf_attach, prog_type);
    SAME_FIELD(ksym_bpf_attach, expected_attach_type);
    SAME_FIELD(ksym_bpf_attach, attach_btf_id);
    SAME_FIELD(ksym_bpf_attach, attach_btf_obj_fd);
    SAME_FIELD(ksym_bpf_attach, target);
    SAME_FIELD(ksym_bpf_attach, module);
    SAME_FIELD(ksym_bpf_attach, addr);
    SAME_FIELD(ksym_bpf_attach, flags);
    /* The first sizes, as the history gives them (x86-64, LP64). */
    CHECK(sizeof(struct v1_ksym_table_opts) == 48 && sizeof(struct v1_ksym_bpf_program_info) == 48);
    CHECK(sizeof(struct v1_ksym_bpf_map_info) == 64 && sizeof(struct v1_ksym_bpf_extern_info) == 32);
    CHECK(sizeof(struct v1_ksym_bpf_reloc) == 48 && sizeof(struct v1_ksym_btf_opts) == 56);
    CHECK(sizeof(struct v1_ksym_btf_type) == 40 && sizeof(struct v1_ksym_btf_stats) == 40);
    CHECK(sizeof(struct v1_ksym_bpf_attach) == 56 && CONTRACT_KSYM_BTF_OPTS_SZ == 48);
    CHECK(sizeof(struct ksym_table_stats) == 72 && sizeof(struct ksym_module_info) == 48);
    CHECK(sizeof(struct ksym_cache_stats) == 56 && sizeof(struct ksym_bpf_map_slot) == 24);
    CHECK(sizeof(struct ksym_bpf_var_info) == 48 && sizeof(struct ksym_bpf_attach) == 88);
    CHECK(sizeof(struct ksym_btf_opts) == 72);
}

static void free_table(void *t) { ksym_table_free(t); }
static void free_cache(void *c) { ksym_cache_free(c); }
static void free_btf(void *b) { ksym_btf_free(b); }

static const char TEXT[] = "ffffffff81000000 T _text\nffffffffc0000000 t m\t[mod]\n";

int main(void)
{
    char dir[] = "/tmp/ksym-sz-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char kpath[64], mpath[64];
    snprintf(kpath, sizeof(kpath), "%s/kallsyms", dir);
    snprintf(mpath, sizeof(mpath), "%s/modules", dir);
    FILE *f = fopen(kpath, "w");
    fputs(TEXT, f);
    fclose(f);
    f = fopen(mpath, "w");
    fclose(f);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);

    check_layouts();

    /* Inputs (ksym_table_opts has no size but its first's older than the
     * library's). */
    size_t v1_table = sizeof(struct v1_ksym_table_opts);
    CHECK_IN(ksym_table_opts, v1_table, (in_.o.kallsyms_path = kpath, in_.o.builtin_ranges_path = ""),
             ksym_table_open(opts), free_table);
    CHECK_IN(ksym_table_opts, v1_table, (void)0, ksym_table_from_buffer(TEXT, sizeof(TEXT) - 1, opts), free_table);
    CHECK_IN(ksym_table_opts, v1_table, (in_.o.kallsyms_path = kpath, in_.o.modules_path = mpath),
             ksym_cache_new(opts), free_cache);
    const char *data = getenv("KSYM_TESTDATA");
    char bpath[512];
    snprintf(bpath, sizeof(bpath), "%s/linux-6.1-cloud/btf/vmlinux", data ? data : ".");
    if (data)
        CHECK_IN(ksym_btf_opts, CONTRACT_KSYM_BTF_OPTS_SZ, (in_.o.vmlinux_btf_path = bpath, in_.o.module_btf_dir = ""),
                 ksym_btf_open(opts), free_btf);
    else
        NEED_SKIP("data", "KSYM_TESTDATA not set: ksym_btf_opts untested");

    /* Outputs. */
    struct ksym_table *t = ksym_table_from_buffer(TEXT, sizeof(TEXT) - 1, NULL);
    CHECK_OUT("ksym_table_stats", sizeof(struct ksym_table_stats), sizeof(struct ksym_table_stats), ksym_table_stats(t, (void *)buf));
    CHECK_OUT("ksym_table_module", sizeof(struct ksym_module_info), sizeof(struct ksym_module_info), ksym_table_module(t, 1, (void *)buf));
    ksym_table_free(t);
    KSYM_OPTS(ksym_table_opts, co, .kallsyms_path = kpath, .modules_path = mpath);
    struct ksym_cache *c = ksym_cache_new(&co);
    CHECK_OUT("ksym_cache_stats", sizeof(struct ksym_cache_stats), sizeof(struct ksym_cache_stats), ksym_cache_stats(c, (void *)buf));
    ksym_cache_free(c);
    struct ksym_bpf_object *o = ksym_bpf_object_open("c-tests/bpf/kconfig.bpf.o");
    CHECK(o != NULL);
    if (o) {
        CHECK_OUT("ksym_bpf_program_info", sizeof(struct ksym_bpf_program_info), sizeof(struct v1_ksym_bpf_program_info),
                  ksym_bpf_program_info(o, 0, (void *)buf));
        CHECK_OUT("ksym_bpf_map_info", sizeof(struct ksym_bpf_map_info), sizeof(struct v1_ksym_bpf_map_info), ksym_bpf_map_info(o, 0, (void *)buf));
        CHECK_OUT("ksym_bpf_extern_info", sizeof(struct ksym_bpf_extern_info), sizeof(struct v1_ksym_bpf_extern_info),
                  ksym_bpf_extern_info(o, 0, (void *)buf));
        CHECK_OUT("ksym_bpf_program_reloc", sizeof(struct ksym_bpf_reloc), sizeof(struct v1_ksym_bpf_reloc),
                  ksym_bpf_program_reloc(o, 0, 0, (void *)buf));
        CHECK_OUT("ksym_bpf_program_attach_info", sizeof(struct ksym_bpf_attach), sizeof(struct v1_ksym_bpf_attach),
                  ksym_bpf_program_attach_info(o, 0, (void *)buf));
        CHECK(ksym_bpf_object_var_count(o) > 0);
        CHECK_OUT("ksym_bpf_var_info", sizeof(struct ksym_bpf_var_info), sizeof(struct ksym_bpf_var_info),
                  ksym_bpf_var_info(o, 0, (void *)buf));
        ksym_bpf_object_free(o);
    }
    o = ksym_bpf_object_open("c-tests/bpf/slots.bpf.o");
    CHECK(o != NULL);
    size_t outer = 0;
    int has_outer = o && ksym_bpf_object_find_map(o, "outer_arr", &outer) == 0;
    CHECK(has_outer);
    if (has_outer)
        CHECK_OUT("ksym_bpf_map_slot", sizeof(struct ksym_bpf_map_slot), sizeof(struct ksym_bpf_map_slot),
                  ksym_bpf_map_slot(o, outer, 0, (void *)buf));
    ksym_bpf_object_free(o);
    if (data) {
        KSYM_OPTS(ksym_btf_opts, bo, .vmlinux_btf_path = bpath, .module_btf_dir = "");
        struct ksym_btf *b = ksym_btf_open(&bo);
        CHECK(b != NULL);
        CHECK_OUT("ksym_btf_find", sizeof(struct ksym_btf_type), sizeof(struct v1_ksym_btf_type), ksym_btf_find(b, "task_struct", 0, (void *)buf));
        CHECK_OUT("ksym_btf_stats", sizeof(struct ksym_btf_stats), sizeof(struct v1_ksym_btf_stats),
                  ksym_btf_stats(b, (void *)buf));
        /* A first-version caller's struct, field by field as the current
         * one's, and nothing written past it. */
        struct {
            struct v1_ksym_btf_stats v1;
            unsigned char after[16];
        } old;
        memset(&old, GARBAGE, sizeof(old));
        old.v1.sz = sizeof(old.v1);
        struct ksym_btf_stats cur = { .sz = sizeof(cur) };
        CHECK(b && ksym_btf_stats(b, (struct ksym_btf_stats *)(void *)&old.v1) == 0 && ksym_btf_stats(b, &cur) == 0);
        CHECK(old.v1.sz == sizeof(old.v1) && old.v1.vmlinux_types == cur.vmlinux_types && old.v1.flags == cur.flags);
        CHECK(old.v1.modules == cur.modules && old.v1.modules_read == cur.modules_read);
        CHECK(old.v1.memory_bytes == cur.memory_bytes);
        int untouched = 1;
        for (size_t i = 0; i < sizeof(old.after); i++)
            untouched &= old.after[i] == GARBAGE;
        CHECK(untouched);
        ksym_btf_free(b);
    }
    remove(kpath);
    remove(mpath);
    rmdir(dir);
    return finish("test_sz");
}
