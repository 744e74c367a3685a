/*
 * Stacks through the C API: ksym_symbolize_stack answers each address as
 * ksym_symbolize answers it alone (symbol, module, size, type, flags,
 * offset, or the same error code), in any order, with repeats, on a
 * hand-made table (modules, a pseudo-module, several names at one address,
 * the end of a region) and on the bundled 6.12 kernel; a failed frame
 * leaves its out[i] and offsets[i] as they were and fails no other; the
 * call's own errors (NULL arguments) write nothing.
 */
#include "check.h"

#include <stdint.h>

static const char FIXTURE[] = "0000000000000000 A fixed_percpu_data\n"
                              "ffffffff81000000 T _text\n"
                              "ffffffff81000000 t __pfx_start\n"
                              "ffffffff81000010 t __pfx_foo\n"
                              "ffffffff81000020 t foo\n"
                              "ffffffff81000040 t foo.cold\n"
                              "ffffffff81000050 T bar\n"
                              "ffffffff81000060 t dup\n"
                              "ffffffff81000070 t dup\n"
                              "ffffffff81000100 T _etext\n"
                              "ffffffffc0001000 t mod_fn\t[crc_itu_t]\n"
                              "ffffffffc0000000 t mod_first\t[crc_itu_t]\n"
                              "ffffffffc0002000 t bpf_prog_0123456789abcdef_x\t[bpf]\n";

static int same_symbol(const struct ksym_symbol *a, const struct ksym_symbol *b)
{
    return a->addr == b->addr && a->size == b->size && a->type == b->type && a->flags == b->flags &&
           strcmp(a->name, b->name) == 0 && strcmp(a->module, b->module) == 0;
}

/* Every answer of the stack call is ksym_symbolize's for that address;
 * returns how many were found. */
static int check_stack(struct ksym_table *t, const uint64_t *addrs, size_t n)
{
    struct ksym_symbol *out = calloc(n, sizeof(*out));
    uint64_t *offs = calloc(n, sizeof(*offs));
    int *errs = calloc(n, sizeof(*errs));
    CHECK(out && offs && errs);
    /* What a failed frame must leave alone. */
    for (size_t i = 0; i < n; i++)
        out[i].addr = 0x5a5a, offs[i] = 0xa5a5;
    int found = ksym_symbolize_stack(t, addrs, n, out, offs, errs);
    int want_found = 0;
    for (size_t i = 0; i < n; i++) {
        struct ksym_symbol s;
        uint64_t off = 0;
        int rc = ksym_symbolize(t, addrs[i], &s, &off);
        if (errs[i] != rc)
            fprintf(stderr, "address %#llx: stack %d, alone %d\n", (unsigned long long)addrs[i], errs[i], rc);
        CHECK(errs[i] == rc);
        if (rc == 0) {
            want_found++;
            CHECK(same_symbol(&out[i], &s) && offs[i] == off);
        } else {
            CHECK(out[i].addr == 0x5a5a && offs[i] == 0xa5a5);
        }
    }
    CHECK(found == want_found);
    /* offsets may be NULL. */
    CHECK(ksym_symbolize_stack(t, addrs, n, out, NULL, errs) == found);
    free(out);
    free(offs);
    free(errs);
    return found;
}

static void test_fixture(void)
{
    struct ksym_table *t = ksym_table_from_buffer(FIXTURE, strlen(FIXTURE), NULL);
    CHECK(t != NULL);
    /* Out of order, repeated, below the first symbol, past the end of a
     * region, several names at one address (_text and __pfx_start), a
     * module, the pseudo-module. */
    const uint64_t addrs[] = { 0xffffffff81000025, 0xffffffffc0000ff0, 0xffffffff81000000, 0x10,
                               0xffffffff81000025, 0xffffffff81000101, 0xffffffffc0000008, 0xffffffffc0002001,
                               0xffffffff81000065, 0xffffffff81000074, 0xffffffffc0001800, 0 };
    size_t n = sizeof(addrs) / sizeof(addrs[0]);
    CHECK(check_stack(t, addrs, n) == 7);
    /* By hand: foo+5, mod_first+0xff0 in crc_itu_t, _text (global before
     * local); the end of a region (past mod_fn, the module's last) is
     * not found. */
    struct ksym_symbol out[3];
    uint64_t offs[3];
    int errs[3];
    CHECK(ksym_symbolize_stack(t, addrs, 3, out, offs, errs) == 3);
    CHECK(strcmp(out[0].name, "foo") == 0 && offs[0] == 5 && out[0].size == 0x20);
    CHECK(strcmp(out[1].name, "mod_first") == 0 && strcmp(out[1].module, "crc_itu_t") == 0 && offs[1] == 0xff0);
    CHECK(strcmp(out[2].name, "_text") == 0 && out[2].type == 'T');
    /* Below the first symbol: its own error, the others found. */
    const uint64_t low[] = { 0xffffffff81000050, 0x10, 0xffffffff81000051 };
    CHECK(ksym_symbolize_stack(t, low, 3, out, offs, errs) == 2);
    CHECK(errs[0] == 0 && errs[1] == KSYM_ERR_NOT_FOUND && errs[2] == 0);
    CHECK(ksym_last_error() == 0);
    /* The call's own errors write nothing. */
    errs[0] = 77;
    CHECK(ksym_symbolize_stack(NULL, addrs, 1, out, offs, errs) == KSYM_ERR_INVALID && errs[0] == 77);
    CHECK(ksym_symbolize_stack(t, NULL, 1, out, offs, errs) == KSYM_ERR_INVALID && errs[0] == 77);
    CHECK(ksym_symbolize_stack(t, addrs, 1, NULL, offs, errs) == KSYM_ERR_INVALID);
    CHECK(strstr(ksym_last_error_message(), "out") != NULL);
    CHECK(ksym_symbolize_stack(t, addrs, 1, out, offs, NULL) == KSYM_ERR_INVALID);
    CHECK(ksym_symbolize_stack(t, NULL, 0, NULL, NULL, NULL) == 0);
    ksym_table_free(t);
}

/* The bundled 6.12 kernel: a stack of every 97th line's address, inside
 * and one before each, in one call and in stacks of 1 to 40. */
static void test_bundled(void)
{
    char path[512];
    struct ksym_table *t = open_bundled_6_12(path, sizeof(path));
    if (!t)
        return;
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t n = 0, cap = 8192;
    uint64_t *addrs = malloc(cap * sizeof(*addrs));
    char line[1024];
    for (long i = 0; fgets(line, sizeof(line), f); i++) {
        if (i % 97 || n + 3 > cap)
            continue;
        uint64_t a = strtoull(line, NULL, 16);
        addrs[n++] = a + (uint64_t)(i % 64);
        addrs[n++] = a - 1;
        addrs[n++] = a + 0x10000;
    }
    fclose(f);
    int found = check_stack(t, addrs, n);
    CHECK(found > (int)n / 3 && found < (int)n);
    for (size_t len = 1, at = 0; len <= 40 && at + len <= n; at += len, len++)
        check_stack(t, addrs + at, len);
    free(addrs);
    ksym_table_free(t);
}

int main(void)
{
    test_fixture();
    test_bundled();
    return finish("test_stack");
}
