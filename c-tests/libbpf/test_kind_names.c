/*
 * ksym_bpf_prog_type_str, ksym_bpf_attach_type_str, ksym_bpf_map_type_str
 * and ksym_btf_kind_str against the installed <linux/bpf.h> and
 * <linux/btf.h> (Debian 12: Linux 6.1's) and libbpf 1.7's
 * libbpf_bpf_*_str (build/libbpf-1.7, which c-tests/run.sh links).
 *
 * The lists below are the headers' enumerators, written out (the values
 * come from the headers); the program also reads the headers' text and
 * fails when an enumerator there is missing from a list, so that a newer
 * header cannot go unchecked. For every value: libksym has a name, the
 * name libbpf gives it when libbpf has one, and the enumerator in lower
 * case without its prefix (BTF kinds: upper case, BTF_KIND_UNKN "UNKNOWN"
 * as the kernel's btf_kind_str says).
 */
#include "../check.h"

#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <linux/btf.h>

#define PROG_TYPES(X) X(UNSPEC) X(SOCKET_FILTER) X(KPROBE) X(SCHED_CLS) X(SCHED_ACT) X(TRACEPOINT) X(XDP) \
    X(PERF_EVENT) X(CGROUP_SKB) X(CGROUP_SOCK) X(LWT_IN) X(LWT_OUT) X(LWT_XMIT) X(SOCK_OPS) X(SK_SKB) \
    X(CGROUP_DEVICE) X(SK_MSG) X(RAW_TRACEPOINT) X(CGROUP_SOCK_ADDR) X(LWT_SEG6LOCAL) X(LIRC_MODE2) \
    X(SK_REUSEPORT) X(FLOW_DISSECTOR) X(CGROUP_SYSCTL) X(RAW_TRACEPOINT_WRITABLE) X(CGROUP_SOCKOPT) X(TRACING) \
    X(STRUCT_OPS) X(EXT) X(LSM) X(SK_LOOKUP) X(SYSCALL)

#define ATTACH_TYPES(X) X(CGROUP_INET_INGRESS) X(CGROUP_INET_EGRESS) X(CGROUP_INET_SOCK_CREATE) \
    X(CGROUP_SOCK_OPS) X(SK_SKB_STREAM_PARSER) X(SK_SKB_STREAM_VERDICT) X(CGROUP_DEVICE) X(SK_MSG_VERDICT) \
    X(CGROUP_INET4_BIND) X(CGROUP_INET6_BIND) X(CGROUP_INET4_CONNECT) X(CGROUP_INET6_CONNECT) \
    X(CGROUP_INET4_POST_BIND) X(CGROUP_INET6_POST_BIND) X(CGROUP_UDP4_SENDMSG) X(CGROUP_UDP6_SENDMSG) \
    X(LIRC_MODE2) X(FLOW_DISSECTOR) X(CGROUP_SYSCTL) X(CGROUP_UDP4_RECVMSG) X(CGROUP_UDP6_RECVMSG) \
    X(CGROUP_GETSOCKOPT) X(CGROUP_SETSOCKOPT) X(TRACE_RAW_TP) X(TRACE_FENTRY) X(TRACE_FEXIT) X(MODIFY_RETURN) \
    X(LSM_MAC) X(TRACE_ITER) X(CGROUP_INET4_GETPEERNAME) X(CGROUP_INET6_GETPEERNAME) \
    X(CGROUP_INET4_GETSOCKNAME) X(CGROUP_INET6_GETSOCKNAME) X(XDP_DEVMAP) X(CGROUP_INET_SOCK_RELEASE) \
    X(XDP_CPUMAP) X(SK_LOOKUP) X(XDP) X(SK_SKB_VERDICT) X(SK_REUSEPORT_SELECT) \
    X(SK_REUSEPORT_SELECT_OR_MIGRATE) X(PERF_EVENT) X(TRACE_KPROBE_MULTI) X(LSM_CGROUP)

#define MAP_TYPES(X) X(UNSPEC) X(HASH) X(ARRAY) X(PROG_ARRAY) X(PERF_EVENT_ARRAY) X(PERCPU_HASH) \
    X(PERCPU_ARRAY) X(STACK_TRACE) X(CGROUP_ARRAY) X(LRU_HASH) X(LRU_PERCPU_HASH) X(LPM_TRIE) X(ARRAY_OF_MAPS) \
    X(HASH_OF_MAPS) X(DEVMAP) X(SOCKMAP) X(CPUMAP) X(XSKMAP) X(SOCKHASH) X(CGROUP_STORAGE) \
    X(REUSEPORT_SOCKARRAY) X(PERCPU_CGROUP_STORAGE) X(QUEUE) X(STACK) X(SK_STORAGE) X(DEVMAP_HASH) \
    X(STRUCT_OPS) X(RINGBUF) X(INODE_STORAGE) X(TASK_STORAGE) X(BLOOM_FILTER) X(USER_RINGBUF)

#define BTF_KINDS(X) X(UNKN) X(INT) X(PTR) X(ARRAY) X(STRUCT) X(UNION) X(ENUM) X(FWD) X(TYPEDEF) X(VOLATILE) \
    X(CONST) X(RESTRICT) X(FUNC) X(FUNC_PROTO) X(VAR) X(DATASEC) X(FLOAT) X(DECL_TAG) X(TYPE_TAG) X(ENUM64)

struct kind {
    const char *token; /* the enumerator without its prefix */
    unsigned value;
};

#define ENTRY_PROG(t) { #t, BPF_PROG_TYPE_##t },
#define ENTRY_ATTACH(t) { #t, BPF_##t },
#define ENTRY_MAP(t) { #t, BPF_MAP_TYPE_##t },
#define ENTRY_BTF(t) { #t, BTF_KIND_##t },
static const struct kind prog_types[] = { PROG_TYPES(ENTRY_PROG) };
static const struct kind attach_types[] = { ATTACH_TYPES(ENTRY_ATTACH) };
static const struct kind map_types[] = { MAP_TYPES(ENTRY_MAP) };
static const struct kind btf_kinds[] = { BTF_KINDS(ENTRY_BTF) };

static const char *libbpf_btf_kind(unsigned v)
{
    (void)v;
    return NULL; /* libbpf 1.1 has no public name for BTF kinds */
}

static const char *lb_prog(unsigned v) { return libbpf_bpf_prog_type_str((enum bpf_prog_type)v); }
static const char *lb_attach(unsigned v) { return libbpf_bpf_attach_type_str((enum bpf_attach_type)v); }
static const char *lb_map(unsigned v) { return libbpf_bpf_map_type_str((enum bpf_map_type)v); }
static const char *ks_prog(unsigned v) { return ksym_bpf_prog_type_str(v); }
static const char *ks_attach(unsigned v) { return ksym_bpf_attach_type_str(v); }
static const char *ks_map(unsigned v) { return ksym_bpf_map_type_str(v); }
static const char *ks_btf(unsigned v) { return ksym_btf_kind_str(v); }

/* Every enumerator named PREFIX... of the enum that starts at OPEN in a
 * header's text is in the list K; returns how many there are. */
static int header_lists(const char *text, const char *open, const char *prefix, const struct kind *k, size_t n,
                        const char *family)
{
    const char *p = strstr(text, open);
    CHECK(p != NULL);
    if (!p)
        return 0;
    const char *end = strstr(p, "\n};");
    size_t found = 0;
    for (const char *l = strchr(p, '\n'); l && l < end; l = strchr(l + 1, '\n')) {
        const char *t = l + 1;
        while (*t == ' ' || *t == '\t')
            t++;
        size_t len = 0;
        while (isupper((unsigned char)t[len]) || isdigit((unsigned char)t[len]) || t[len] == '_')
            len++;
        if (len == 0 || strncmp(t, prefix, strlen(prefix)) != 0)
            continue;
        if (len == strlen(prefix) + 3 && !strncmp(t + strlen(prefix), "MAX", 3))
            continue; /* BTF_KIND_MAX = NR_BTF_KINDS - 1 */
        int listed = 0;
        for (size_t i = 0; i < n; i++)
            listed |= strlen(prefix) + strlen(k[i].token) == len && !strncmp(t + strlen(prefix), k[i].token, len - strlen(prefix));
        if (!listed)
            fprintf(stderr, "%s: %.*s of the installed header is not in this test's list\n", family, (int)len, t);
        CHECK(listed);
        found++;
    }
    return (int)found;
}

static void check_family(const char *family, const char *prefix, const struct kind *k, size_t n, int upper,
                         const char *(*ours)(unsigned), const char *(*libbpf)(unsigned), size_t *named_by_libbpf)
{
    unsigned max = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = ours(k[i].value);
        const char *lb = libbpf(k[i].value);
        char want[64];
        size_t j = 0;
        for (const char *t = k[i].token; *t && j + 1 < sizeof(want); t++)
            want[j++] = upper ? *t : (char)tolower((unsigned char)*t);
        want[j] = 0;
        char *dep = strstr(want, "_deprecated");
        if (dep && dep[11] == 0)
            *dep = 0;
        if (upper && !strcmp(want, "UNKN"))
            strcpy(want, "UNKNOWN");
        if (!name || strcmp(name, want) || (lb && strcmp(name, lb)))
            fprintf(stderr, "%s %s%s = %u: libksym \"%s\", libbpf \"%s\", expected \"%s\"\n", family, prefix,
                    k[i].token, k[i].value, name ? name : "(null)", lb ? lb : "(null)", want);
        CHECK(name != NULL && !strcmp(name, want));
        CHECK(lb == NULL || (name && !strcmp(name, lb)));
        *named_by_libbpf += lb != NULL;
        if (k[i].value > max)
            max = k[i].value;
    }
    /* Every value from 0 to the largest is an enumerator of the list. */
    for (unsigned v = 0; v <= max; v++) {
        int seen = 0;
        for (size_t i = 0; i < n; i++)
            seen |= k[i].value == v;
        CHECK(seen);
    }
    CHECK(ours(0xffffffffu) == NULL);
    CHECK(ours(1000) == NULL);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap + 1);
    if (buf)
        len = fread(buf, 1, cap, f);
    fclose(f);
    if (buf)
        buf[len] = 0;
    return buf;
}

int main(void)
{
    size_t lb[4] = { 0 };
#define N(a) (sizeof(a) / sizeof((a)[0]))
    check_family("prog type", "BPF_PROG_TYPE_", prog_types, N(prog_types), 0, ks_prog, lb_prog, &lb[0]);
    check_family("attach type", "BPF_", attach_types, N(attach_types), 0, ks_attach, lb_attach, &lb[1]);
    check_family("map type", "BPF_MAP_TYPE_", map_types, N(map_types), 0, ks_map, lb_map, &lb[2]);
    check_family("BTF kind", "BTF_KIND_", btf_kinds, N(btf_kinds), 1, ks_btf, libbpf_btf_kind, &lb[3]);
    /* libbpf names every one of these (it is as new as the header). */
    CHECK(lb[0] == N(prog_types) && lb[1] == N(attach_types) && lb[2] == N(map_types));
    /* Static strings, and no error state touched. */
    CHECK(ksym_bpf_prog_type_str(BPF_PROG_TYPE_TRACING) == ksym_bpf_prog_type_str(BPF_PROG_TYPE_TRACING));
    ksym_table_open(&(struct ksym_table_opts){ .sz = 1 });
    int err = ksym_last_error();
    CHECK(err == KSYM_ERR_INVALID);
    CHECK(ksym_bpf_map_type_str(12345) == NULL && ksym_btf_kind_str(BTF_KIND_STRUCT) != NULL);
    CHECK(ksym_last_error() == err);

    const char *dir = getenv("KSYM_LINUX_HEADERS") ? getenv("KSYM_LINUX_HEADERS") : "/usr/include/linux";
    char path[512];
    snprintf(path, sizeof(path), "%s/bpf.h", dir);
    char *bpf_h = slurp(path);
    snprintf(path, sizeof(path), "%s/btf.h", dir);
    char *btf_h = slurp(path);
    CHECK(bpf_h && btf_h);
    if (bpf_h && btf_h) {
        int n = header_lists(bpf_h, "\nenum bpf_prog_type {", "BPF_PROG_TYPE_", prog_types, N(prog_types), "prog type");
        n += header_lists(bpf_h, "\nenum bpf_attach_type {", "BPF_", attach_types, N(attach_types), "attach type");
        n += header_lists(bpf_h, "\nenum bpf_map_type {", "BPF_MAP_TYPE_", map_types, N(map_types), "map type");
        n += header_lists(btf_h, "enum {\n\tBTF_KIND_UNKN", "BTF_KIND_", btf_kinds, N(btf_kinds), "BTF kind");
        printf("%d enumerators of %s/{bpf,btf}.h: %zu program types, %zu attach types, %zu map types "
               "(libbpf names %zu, %zu, %zu), %zu BTF kinds\n",
               n, dir, N(prog_types), N(attach_types), N(map_types), lb[0], lb[1], lb[2], N(btf_kinds));
    }
    free(bpf_h);
    free(btf_h);
    return finish("kind names");
}
