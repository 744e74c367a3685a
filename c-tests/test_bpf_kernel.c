/*
 * BPF objects loaded into the running kernel, where bpf() is permitted:
 * BTF loaded, maps created with the sizes libksym reports, fds set,
 * externs resolved, relocated, EVERY program loaded (each alias included)
 * with its func_info and line_info, run with BPF_PROG_TEST_RUN, and what it
 * wrote checked: the kernel address of each ksym as /proc/kallsyms gives
 * it, 0 for the weak missing one, the subprograms' and the callback's
 * results, the data-section values. Every alias must produce what its
 * target does. The kernel's BTF features as the kernel table declares
 * them, and an object's BTF rewritten for them. Where bpf() is not
 * permitted the test says SKIP (a failure with KSYM_REQUIRE_KERNEL=1).
 */
#define _GNU_SOURCE

#include "check.h"
#include "../tools/bpf_loader.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static const char *objdir;

/* The address of `name` (a core symbol) in /proc/kallsyms, 0 if absent. */
static uint64_t kallsyms_addr(const char *name)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], type;
    unsigned long long a;
    uint64_t found = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name) && !strchr(line, '\t')) {
            found = a;
            break;
        }
    fclose(f);
    return found;
}

static struct ksym_bpf_object *open_obj(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", objdir, name);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    return o;
}

/* Runs program i after zeroing the results map; copies the 16 results. */
static int run_aliases_prog(struct kl_loaded *l, size_t results_map, size_t i, uint64_t out[16])
{
    uint64_t zero = 0;
    uint32_t ret = 99;
    for (uint32_t k = 0; k < 16; k++)
        if (kl_map_update(l->map_fds[results_map], &k, &zero))
            return -1;
    if (kl_test_run(l->prog_fds[i], &ret) || ret != 0)
        return -1;
    for (uint32_t k = 0; k < 16; k++)
        if (kl_map_lookup(l->map_fds[results_map], &k, &out[k]))
            return -1;
    return 0;
}

static void test_aliases(uint64_t text)
{
    struct ksym_bpf_object *o = open_obj("aliases.bpf.o");
    if (!o)
        return;
    struct kl_loaded l;
    char why[4096];
    size_t results, prog, second;
    /* `prog` (and its aliases) calls bpf_loop (Linux 5.17): an older
     * kernel's verifier refuses it (EINVAL); `second` still runs there. */
    if (kernel_has("bpf_loop") == 0) {
        int err = kl_prepare(o, NULL, NULL, &l, why, sizeof(why));
        CHECK(err == 0);
        CHECK(ksym_bpf_object_find_program(o, "prog", &prog) == 0);
        CHECK(ksym_bpf_object_find_program(o, "second", &second) == 0);
        CHECK(ksym_bpf_object_find_map(o, "results", &results) == 0);
        int fd = err ? -1 : kl_load_prog(o, &l, prog, NULL);
        CHECK(fd == -EINVAL);
        uint64_t got[16];
        CHECK(!err && kl_load_prog(o, &l, second, stdout) >= 0);
        CHECK(!err && run_aliases_prog(&l, results, second, got) == 0 && got[7] == 2 + 0x1234 + 0xfeedbeef);
        if (fd == -EINVAL)
            NEED_SKIP("bpf_loop", "aliases.bpf.o: `prog` and its aliases call bpf_loop(), which this kernel's "
                                  "verifier refuses (EINVAL); `second` ran");
        kl_unload(&l);
        ksym_bpf_object_free(o);
        return;
    }
    int err = kl_load(o, NULL, &l, stdout, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "load: %s\n", why);
        kl_unload(&l);
        ksym_bpf_object_free(o);
        return;
    }
    CHECK(ksym_bpf_object_find_map(o, "results", &results) == 0);
    CHECK(ksym_bpf_object_find_program(o, "prog", &prog) == 0);
    CHECK(ksym_bpf_object_find_program(o, "second", &second) == 0);

    uint64_t want[16] = { 0 };
    want[0] = text;
    want[1] = 0;              /* weak, missing */
    want[2] = 1 + 0x1234;     /* add_seed(1) with seed from .data */
    want[3] = 0 + 1 + 2 + 3 + 4; /* bpf_loop callback */
    want[4] = 0xfeedbeef;     /* .rodata */
    want[5] = 7;              /* .bss */
    want[6] = 40;             /* global subprogram */
    want[8] = text;           /* extern with the asm label "vmlinux`_text" */

    uint64_t target[16];
    CHECK(run_aliases_prog(&l, results, prog, target) == 0);
    for (int k = 0; k < 16; k++) {
        if (target[k] != want[k])
            fprintf(stderr, "results[%d] = %#llx, want %#llx\n", k, (unsigned long long)target[k],
                    (unsigned long long)want[k]);
        CHECK(target[k] == want[k]);
    }
    /* Every alias: loaded on its own, same results, same instructions. */
    size_t n = ksym_bpf_object_program_count(o), aliases = 0;
    size_t tcnt;
    const struct ksym_bpf_insn *tinsns = ksym_bpf_program_insns(o, prog, &tcnt);
    for (size_t i = 0; i < n; i++) {
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        CHECK(ksym_bpf_program_info(o, i, &p) == 0);
        if (p.alias_of != prog || i == prog)
            continue;
        aliases++;
        size_t cnt;
        CHECK(ksym_bpf_program_insns(o, i, &cnt) == tinsns && cnt == tcnt);
        CHECK(l.prog_fds[i] >= 0);
        uint64_t got[16];
        CHECK(run_aliases_prog(&l, results, i, got) == 0);
        CHECK(memcmp(got, target, sizeof(got)) == 0);
    }
    CHECK(aliases == 2);
    /* The other program section. */
    uint64_t got[16];
    CHECK(run_aliases_prog(&l, results, second, got) == 0);
    CHECK(got[7] == 2 + 0x1234 + 0xfeedbeef);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

static void test_no_btf(uint64_t text)
{
    struct ksym_bpf_object *o = open_obj("nobtf.bpf.o");
    if (!o)
        return;
    size_t size;
    CHECK(ksym_bpf_object_btf(o, &size) == NULL && ksym_last_error() == KSYM_ERR_NOT_FOUND);
    struct kl_loaded l;
    char why[4096];
    int err = kl_load(o, NULL, &l, stdout, why, sizeof(why));
    CHECK(err == 0);
    if (err == 0) {
        size_t bss;
        uint32_t ret, zero = 0;
        uint64_t out[3];
        CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0);
        CHECK(kl_test_run(l.prog_fds[0], &ret) == 0);
        CHECK(kl_map_lookup(l.map_fds[bss], &zero, out) == 0);
        CHECK(out[0] == text && out[1] == 3 * 5 + 100 && out[2] == 100);
    } else {
        fprintf(stderr, "load: %s\n", why);
    }
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* One function, 500 aliases: every alias loads from the one copy of the
 * instructions and adds the address of _text to its map, as its target does. */
static void test_many_aliases(uint64_t text)
{
    struct ksym_bpf_object *o = open_obj("many_aliases.bpf.o");
    if (!o)
        return;
    struct kl_loaded l;
    char why[4096];
    int err = kl_load(o, NULL, &l, NULL, why, sizeof(why));
    CHECK(err == 0);
    size_t n = ksym_bpf_object_program_count(o), hits, good = 0, cnt0 = 0;
    CHECK(n == 501);
    CHECK(ksym_bpf_object_find_map(o, "hits", &hits) == 0);
    const struct ksym_bpf_insn *first = ksym_bpf_program_insns(o, 0, &cnt0);
    for (size_t i = 0; err == 0 && i < n; i++) {
        uint32_t k = 0, ret = 1;
        uint64_t zero = 0, v = 0;
        size_t cnt;
        struct ksym_bpf_program_info p = { .sz = sizeof(p) };
        int ok = ksym_bpf_program_info(o, i, &p) == 0 && p.alias_of == 0 &&
                 ksym_bpf_program_insns(o, i, &cnt) == first && cnt == cnt0 &&
                 kl_map_update(l.map_fds[hits], &k, &zero) == 0 && kl_test_run(l.prog_fds[i], &ret) == 0 &&
                 ret == 0 && kl_map_lookup(l.map_fds[hits], &k, &v) == 0 && v == text;
        good += ok;
    }
    if (err)
        fprintf(stderr, "load: %s\n", why);
    CHECK(good == n);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* The id of a map or program fd (bpf_map_info and bpf_prog_info both
 * start with type, id). */
static uint32_t obj_id(int fd)
{
    uint32_t info[2] = { 0, 0 };
    struct kl_obj_info a;
    memset(&a, 0, sizeof(a));
    a.bpf_fd = (uint32_t)fd;
    a.info_len = sizeof(info);
    a.info = kl_ptr(info);
    return kl_bpf(KL_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0 ? 0 : info[1];
}

/* Maps of maps and a program array filled from the object's initial slots
 * (c-tests/bpf/slots.bpf.c): the kernel says which map or program is in
 * each slot (a lookup from user space gives its id), and `entry` reads
 * the inner maps through the outer ones and tail-calls the program array. */
static void test_slots(void)
{
    struct ksym_bpf_object *o = open_obj("slots.bpf.o");
    if (!o)
        return;
    struct kl_loaded l;
    char why[4096];
    int err = kl_load(o, NULL, &l, NULL, why, sizeof(why));
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "load: %s\n", why);
        kl_unload(&l);
        ksym_bpf_object_free(o);
        return;
    }
    size_t inner_a, inner_b, outer_arr, outer_hash, jmp, bss, entry, tail_one, tail_three;
    CHECK(ksym_bpf_object_find_map(o, "inner_a", &inner_a) == 0);
    CHECK(ksym_bpf_object_find_map(o, "inner_b", &inner_b) == 0);
    CHECK(ksym_bpf_object_find_map(o, "outer_arr", &outer_arr) == 0);
    CHECK(ksym_bpf_object_find_map(o, "outer_hash", &outer_hash) == 0);
    CHECK(ksym_bpf_object_find_map(o, "jmp", &jmp) == 0);
    CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0);
    CHECK(ksym_bpf_object_find_program(o, "entry", &entry) == 0);
    CHECK(ksym_bpf_object_find_program(o, "tail_one", &tail_one) == 0);
    CHECK(ksym_bpf_object_find_program(o, "tail_three", &tail_three) == 0);

    /* What is in each slot, by id; empty slots are ENOENT. */
    uint32_t k, id;
    const struct {
        size_t map;
        uint32_t key;
        int fd;
    } want[] = {
        { outer_arr, 0, l.map_fds[inner_a] }, { outer_arr, 1, -1 }, { outer_arr, 2, l.map_fds[inner_b] },
        { outer_arr, 3, -1 },
        { outer_hash, 0, -1 }, { outer_hash, 1, l.map_fds[inner_b] },
        { jmp, 0, -1 }, { jmp, 1, l.prog_fds[tail_one] }, { jmp, 2, -1 }, { jmp, 3, l.prog_fds[tail_three] },
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        k = want[i].key;
        id = 0;
        int r = kl_map_lookup(l.map_fds[want[i].map], &k, &id);
        if (want[i].fd < 0) {
            CHECK(r == -ENOENT);
        } else {
            CHECK(r == 0 && id != 0 && id == obj_id(want[i].fd));
        }
    }

    /* Through the kernel: entry reads inner_a[0] via outer_arr[0] and
     * inner_b[0] via outer_hash[1], then tail-calls jmp[inner_a[1]]. */
    uint64_t a0 = 0x1111, b0 = 0x2222, seen[2];
    uint32_t zero = 0, one = 1, ret;
    CHECK(kl_map_update(l.map_fds[inner_a], &zero, &a0) == 0);
    CHECK(kl_map_update(l.map_fds[inner_b], &zero, &b0) == 0);
    const uint32_t rets[4] = { 7, 101, 7, 103 }; /* empty slots fall through */
    for (uint64_t key = 0; key < 4; key++) {
        CHECK(kl_map_update(l.map_fds[inner_a], &one, &key) == 0);
        ret = 0;
        CHECK(kl_test_run(l.prog_fds[entry], &ret) == 0);
        if (ret != rets[key])
            fprintf(stderr, "entry with key %u returned %u, want %u\n", (unsigned)key, ret, rets[key]);
        CHECK(ret == rets[key]);
    }
    CHECK(kl_map_lookup(l.map_fds[bss], &zero, seen) == 0);
    CHECK(seen[0] == a0 && seen[1] == b0);
    kl_unload(&l);
    ksym_bpf_object_free(o);
}

/* Whether `name` is a word of the sysctl file `path`. */
static int in_sysctl(const char *path, const char *name)
{
    char buf[4096], *save = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    for (char *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
        if (!strcmp(w, name))
            return 1;
    return 0;
}

#define AVAILABLE_CC "/proc/sys/net/ipv4/tcp_available_congestion_control"
#define ALLOWED_CC "/proc/sys/net/ipv4/tcp_allowed_congestion_control"

/* A loopback TCP connection whose client uses congestion control `cc`;
 * the name the connected socket reports in `got`. 0 or -errno. */
static int tcp_with_cc(const char *cc, char got[16])
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int err = 0, srv = socket(AF_INET, SOCK_STREAM, 0), cli = socket(AF_INET, SOCK_STREAM, 0), conn = -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t glen = 16;
    if (srv < 0 || cli < 0 || bind(srv, (struct sockaddr *)&a, sizeof(a)) || listen(srv, 1) ||
        getsockname(srv, (struct sockaddr *)&a, &alen) ||
        setsockopt(cli, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) ||
        connect(cli, (struct sockaddr *)&a, sizeof(a)) || (conn = accept(srv, NULL, NULL)) < 0 ||
        write(cli, "x", 1) != 1 || getsockopt(cli, IPPROTO_TCP, TCP_CONGESTION, got, &glen))
        err = -errno;
    if (conn >= 0)
        close(conn);
    if (cli >= 0)
        close(cli);
    if (srv >= 0)
        close(srv);
    return err;
}

/* Runs struct_ops program `fd` (a bpf_dummy_ops member) with `n` u64
 * arguments; its return value in *ret. */
static int dummy_run(int fd, const uint64_t *args, uint32_t n, uint32_t *ret)
{
    struct kl_test_run a;
    memset(&a, 0, sizeof(a));
    a.prog_fd = (uint32_t)fd;
    a.ctx_in = kl_ptr(args);
    a.ctx_size_in = n * 8;
    if (kl_bpf(KL_PROG_TEST_RUN, &a, sizeof(a)) < 0)
        return -errno;
    *ret = a.retval;
    return 0;
}

/*
 * struct_ops (struct_ops.bpf.c): the kernel is the oracle. It registers a
 * congestion control only if the map's value type, every function
 * pointer's program (its attach BTF id and member index) and the data
 * members (name, flags) are where its struct has them: the name must then
 * be in tcp_available_congestion_control, the flags make it allowed, a
 * connection using it runs its init program, and it is gone once
 * unregistered. The bpf_dummy_ops programs run with BPF_PROG_TEST_RUN,
 * which needs the right member (test_2 reads five arguments).
 */
static void test_struct_ops(void)
{
    struct ksym_bpf_object *o = open_obj("struct_ops.bpf.o");
    struct ksym_btf *kbtf = ksym_btf_open(NULL);
    CHECK(kbtf != NULL);
    if (!o || !kbtf) {
        ksym_bpf_object_free(o);
        ksym_btf_free(kbtf);
        return;
    }
    if (in_sysctl(AVAILABLE_CC, "ksym_cc") != 0 || in_sysctl(AVAILABLE_CC, "ksym_cc_link") != 0) {
        fprintf(stderr, "ksym_cc is registered already (an earlier run?): bpftool struct_ops unregister name ksym_cc\n");
        CHECK(0);
    }
    struct kl_loaded l;
    char why[4096];
    /* Registering a struct_ops map through a link (`.struct_ops.link`,
     * BPF_F_LINK) came with Linux 6.4, and with it the kernel's struct
     * bpf_struct_ops_link: its BTF says whether this kernel has it. Where
     * it does not (6.1), the kernel itself must refuse the link map, as it
     * refuses libbpf's: that refusal is the expectation checked there, not
     * a skip (no KSYM_REQUIRE can ask such a kernel for the link), and the
     * rest is tested without that map. A wrong answer from the BTF fails
     * either way: the map created where it was to be refused, or refused
     * where it was to be created. */
    struct ksym_btf_type bt = { .sz = sizeof(bt) };
    int has_link = ksym_btf_find(kbtf, "bpf_struct_ops_link", 4 /* BTF_KIND_STRUCT */, &bt) == 0;
    const char *const skip_link[] = { "ksym_cc_link", NULL };
    struct kl_prepare_opts popts = { .skip_maps = skip_link };
    int err;
    if (!has_link) {
        err = kl_prepare(o, NULL, kbtf, &l, why, sizeof(why));
        int refused = err == -EINVAL && strstr(why, "BPF_MAP_CREATE `ksym_cc_link`") != NULL;
        if (refused)
            printf("  struct_ops: checked: this kernel has no struct_ops links (no struct bpf_struct_ops_link "
                   "in its BTF; Linux 6.4 added them) and refuses BPF_MAP_CREATE of `ksym_cc_link` (BPF_F_LINK) "
                   "as it must; the other maps and programs are tested without it\n");
        else
            fprintf(stderr, "struct_ops: no struct bpf_struct_ops_link in this kernel's BTF, yet the link map "
                            "was not refused (%d: %s)\n", err, err ? why : "created");
        CHECK(refused);
        kl_unload(&l);
        ksym_bpf_object_free(o);
        o = open_obj("struct_ops.bpf.o");
        if (!o) {
            ksym_btf_free(kbtf);
            return;
        }
    }
    err = kl_prepare_opts(o, NULL, kbtf, &l, why, sizeof(why), has_link ? NULL : &popts);
    if (err)
        fprintf(stderr, "struct_ops: %s\n", why);
    CHECK(err == 0);
    size_t cc, cc_link, dummy, bss, t1, t2;
    CHECK(ksym_bpf_object_find_map(o, "ksym_cc", &cc) == 0);
    CHECK(ksym_bpf_object_find_map(o, "ksym_cc_link", &cc_link) == 0);
    CHECK(ksym_bpf_object_find_map(o, "ksym_dummy", &dummy) == 0);
    CHECK(ksym_bpf_object_find_map(o, ".bss", &bss) == 0);
    CHECK(ksym_bpf_object_find_program(o, "ksym_test_1", &t1) == 0);
    CHECK(ksym_bpf_object_find_program(o, "ksym_test_2", &t2) == 0);
    /* bpf_dummy_ops came with Linux 5.16: where the kernel's BTF lacks it,
     * its programs cannot attach, and each says so (libbpf fails them at
     * load); the congestion control is tested without them. */
    int has_dummy = ksym_btf_find(kbtf, "bpf_dummy_ops", 4 /* BTF_KIND_STRUCT */, &bt) == 0;
    for (size_t i = 0; !err && i < l.nprogs; i++) {
        if (!has_dummy && (i == t1 || i == t2)) {
            struct ksym_bpf_attach at = { .sz = sizeof(at) };
            CHECK(ksym_bpf_program_attach_info(o, i, &at) == KSYM_ERR_NOT_FOUND);
            CHECK(at.error == KSYM_ERR_NOT_FOUND && at.error_message &&
                  strstr(at.error_message, "no struct bpf_dummy_ops"));
            continue;
        }
        int fd = kl_load_prog(o, &l, i, stderr);
        CHECK(fd >= 0);
    }
    if (!has_dummy)
        printf("  struct_ops: checked: this kernel has no bpf_dummy_ops (no struct bpf_dummy_ops in its BTF; "
               "Linux 5.16 added it): ksym_test_1 and ksym_test_2 carry KSYM_ERR_NOT_FOUND\n");
    if (err || (has_dummy && (l.prog_fds[t1] < 0 || l.prog_fds[t2] < 0))) {
        kl_unload(&l);
        ksym_bpf_object_free(o);
        ksym_btf_free(kbtf);
        return;
    }
    if (has_dummy) {
        uint32_t ret = 0;
        /* test_1's state may be NULL; test_2's may not (the kernel checks):
         * a struct bpf_dummy_ops_state { int val; }. */
        int state = 0;
        const uint64_t none[1] = { 0 }, five[5] = { kl_ptr(&state), 1000, 2, 3, 34 };
        CHECK(dummy_run(l.prog_fds[t1], none, 1, &ret) == 0 && ret == 0x4b53594d);
        CHECK(dummy_run(l.prog_fds[t2], five, 5, &ret) == 0 && ret == 1034);
        /* bpf_dummy_ops cannot be registered: the kernel says so. */
        CHECK(kl_attach_struct_ops(o, &l, dummy, why, sizeof(why)) == -EOPNOTSUPP);
    }
    /* Not a struct_ops map. */
    CHECK(kl_attach_struct_ops(o, &l, bss, why, sizeof(why)) == -EINVAL);

    err = kl_attach_struct_ops(o, &l, cc, why, sizeof(why));
    if (err)
        fprintf(stderr, "struct_ops: %s\n", why);
    CHECK(err == 0);
    CHECK(l.map_link_fds[cc] == KL_REGISTERED);
    CHECK(in_sysctl(AVAILABLE_CC, "ksym_cc") == 1);
    CHECK(in_sysctl(ALLOWED_CC, "ksym_cc") == 1); /* flags: TCP_CONG_NON_RESTRICTED */
    char got[16] = { 0 };
    uint32_t zero = 0;
    uint64_t calls = 0;
    CHECK(tcp_with_cc("ksym_cc", got) == 0);
    CHECK(!strcmp(got, "ksym_cc"));
    CHECK(kl_map_lookup(l.map_fds[bss], &zero, &calls) == 0);
    if (calls < 1)
        fprintf(stderr, "struct_ops: init ran %llu times for a connection\n", (unsigned long long)calls);
    CHECK(calls >= 1); /* the client's init, and the accepted socket's if it inherits it */

    if (has_link) {
        err = kl_attach_struct_ops(o, &l, cc_link, why, sizeof(why));
        if (err)
            fprintf(stderr, "struct_ops link: %s\n", why);
        CHECK(err == 0);
        CHECK(l.map_link_fds[cc_link] >= 0);
        CHECK(in_sysctl(AVAILABLE_CC, "ksym_cc_link") == 1);
        CHECK(in_sysctl(ALLOWED_CC, "ksym_cc_link") == 0); /* no flags */
    } else {
        CHECK(l.map_fds[cc_link] == -1);
    }

    kl_unload(&l);
    CHECK(in_sysctl(AVAILABLE_CC, "ksym_cc") == 0);
    CHECK(in_sysctl(AVAILABLE_CC, "ksym_cc_link") == 0);
    ksym_bpf_object_free(o);
    ksym_btf_free(kbtf);
}

/* BPF_BTF_LOAD of `size` bytes at `btf`: 0, or the errno. */
static int btf_load_errno(const void *btf, size_t size)
{
    struct kl_btf_load a;
    memset(&a, 0, sizeof(a));
    a.btf = kl_ptr(btf);
    a.btf_size = (uint32_t)size;
    long fd = kl_bpf(KL_BTF_LOAD, &a, sizeof(a));
    if (fd < 0)
        return errno;
    close((int)fd);
    return 0;
}

/* The kernel's BTF features as the kernel table declares them, and the
 * BTF of an object compiled for newer kernels: refused as it is where
 * the kernel lacks its kinds, loaded once rewritten for the probed
 * features everywhere. */
static void test_btf_features(void)
{
    uint32_t f = 0, again = 0;
    CHECK(ksym_btf_probe_features(&f) == 0);
    CHECK(ksym_btf_probe_features(&again) == 0 && again == f);
    /* 5.10 and later: BTF, FUNC (5.0), global FUNC (5.6), DATASEC (5.2). */
    uint32_t base = KSYM_BTF_FEAT_BTF | KSYM_BTF_FEAT_FUNC | KSYM_BTF_FEAT_GLOBAL_FUNC | KSYM_BTF_FEAT_DATASEC;
    uint32_t kinds = KSYM_BTF_FEAT_FLOAT | KSYM_BTF_FEAT_DECL_TAG | KSYM_BTF_FEAT_TYPE_TAG | KSYM_BTF_FEAT_ENUM64;
    CHECK((f & base) == base);
    int has_kinds = kernel_has("btf_kinds"), has_qmark = kernel_has("btf_qmark");
    if (has_kinds >= 0)
        CHECK((f & kinds) == (has_kinds ? kinds : 0));
    if (has_qmark >= 0)
        CHECK(!!(f & KSYM_BTF_FEAT_QMARK_DATASEC) == has_qmark);
    printf("BTF features probed: %#x (the kernel table: btf_kinds %d, btf_qmark %d)\n", f, has_kinds, has_qmark);
    /* core_kern.bpf.o of the selftests corpus (clang 15, for 6.1): its BTF
     * has a signed ENUM, which a kernel before 6.0 refuses. */
    const char *data = getenv("KSYM_TESTDATA");
    if (!data) {
        NEED_SKIP("data", "KSYM_TESTDATA not set: no corpus object");
        return;
    }
    char path[512];
    snprintf(path, sizeof(path), "%s/bpf-selftests-6.1/core_kern.bpf.o", data);
    struct ksym_bpf_object *o = ksym_bpf_object_open(path);
    CHECK(o != NULL);
    size_t full_size = 0, size = 0;
    const void *full = ksym_bpf_object_btf(o, &full_size);
    const void *ours = ksym_bpf_object_btf_for(o, f, &size);
    CHECK(full && ours);
    if (full && ours) {
        CHECK(btf_load_errno(ours, size) == 0);
        int e = btf_load_errno(full, full_size);
        if (e) {
            CHECK(e == EINVAL);
            NEED_SKIP("btf_kinds", "BPF_BTF_LOAD refuses core_kern.bpf.o's BTF as compiled (%s); as "
                                   "ksym_bpf_object_btf_for rewrites it, it loads",
                      strerror(e));
        }
        CHECK(e != 0 || has_kinds != 0);
    }
    ksym_bpf_object_free(o);
}

int main(void)
{
    objdir = getenv("KSYM_BPF_OBJECTS");
    if (!objdir)
        objdir = "c-tests/bpf";
    int avail = kl_bpf_available();
    if (avail) {
        KERNEL_SKIP("bpf() is not permitted here (%s): no BPF program can be loaded", strerror(-avail));
        return finish("test_bpf_kernel");
    }
    uint64_t text = kallsyms_addr("_text");
    if (!text) {
        KERNEL_SKIP("/proc/kallsyms hides addresses: the ksyms cannot be checked");
        return finish("test_bpf_kernel");
    }
    test_aliases(text);
    test_no_btf(text);
    test_many_aliases(text);
    test_slots();
    test_struct_ops();
    test_btf_features();
    return finish("test_bpf_kernel");
}
