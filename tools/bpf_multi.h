/*
 * The kernel's multi-attach for the bundled loader (`ksym trace`, the
 * tests): a multi program (KSYM_ATTACH_MULTI) loaded once per
 * `tracing_multi` link that ksym_bpf_program_multi_attach listed, each
 * load with that link's BTF object, and each link made with
 * BPF_LINK_CREATE (attach type, BTF ids, cookies, count); and what the
 * kernel says of a link (bpf_link_info.tracing_multi). Raw bpf() only, as
 * tools/bpf_loader.h, which it builds on.
 */
#ifndef KSYM_BPF_MULTI_H
#define KSYM_BPF_MULTI_H

#include "bpf_loader.h"

/* link_create with its tracing_multi member (Linux 7.3's union bpf_attr). */
struct kl_link_create_multi {
    uint32_t prog_fd, target_fd, attach_type, flags;
    uint64_t ids, cookies;
    uint32_t cnt, pad;
};

/* struct bpf_link_info up to its tracing_multi member. */
struct kl_link_info_multi {
    uint32_t type, id, prog_id, pad;
    uint32_t attach_type, count, btf_obj_id, pad2;
    uint64_t ids, addrs, cookies;
    uint64_t tail[4];
};

#define KL_LINK_TYPE_TRACING_MULTI 15

/* The multi links of one program: one load per BTF object (group), and
 * its links: one per group, or more where the kernel refused a function
 * and the group was split around it. */
struct kl_multi {
    size_t nlinks;     /* groups: ksym_bpf_program_multi_attach's count */
    int *prog_fds;     /* per group; -errno when that load failed */
    int *link_fds;     /* every link made (nfds of them) */
    size_t nfds, cap;
    size_t functions;  /* functions attached over every link */
    size_t refused;    /* functions the kernel refused, each warned about */
    uint64_t *refused_cookies; /* their cookies (refused of them) */
};

/* Was the function of `cookie` refused (kl_multi_split)? */
static inline int kl_multi_refused(const struct kl_multi *m, uint64_t cookie)
{
    for (size_t k = 0; k < m->refused; k++)
        if (m->refused_cookies[k] == cookie)
            return 1;
    return 0;
}

static inline void kl_multi_free(struct kl_multi *m)
{
    for (size_t k = 0; k < m->nfds; k++)
        close(m->link_fds[k]);
    for (size_t k = 0; k < m->nlinks; k++)
        if (m->prog_fds && m->prog_fds[k] >= 0)
            close(m->prog_fds[k]);
    free(m->prog_fds);
    free(m->link_fds);
    free(m->refused_cookies);
    memset(m, 0, sizeof(*m));
}

/* One tracing_multi link over ids[0..n) with their cookies: its fd or
 * -errno. */
static inline int kl_multi_link(int prog_fd, uint32_t attach_type, const uint32_t *ids, const uint64_t *cookies,
                                size_t n)
{
    struct kl_link_create_multi c;
    memset(&c, 0, sizeof(c));
    c.prog_fd = (uint32_t)prog_fd;
    c.attach_type = attach_type;
    c.ids = kl_ptr(ids);
    c.cookies = kl_ptr(cookies);
    c.cnt = (uint32_t)n;
    long fd = kl_bpf(KL_LINK_CREATE, &c, sizeof(c));
    return fd < 0 ? -errno : (int)fd;
}

/* Links ids[0..n): one link when the kernel takes them all; otherwise
 * halves, down to the functions it refuses, each named once on `warn`
 * (may be NULL). The kernel refuses a whole link for one function it
 * cannot trace (ENOENT), which libksym's list leaves out where tracefs
 * says which those are. Returns the first errno of a refusal (0: none). */
static inline int kl_multi_split(struct ksym_bpf_object *obj, size_t i, struct kl_multi *m, int prog_fd,
                                 uint32_t attach_type, const uint32_t *ids, const uint64_t *cookies, size_t n,
                                 FILE *warn)
{
    if (n == 0)
        return 0;
    int fd = kl_multi_link(prog_fd, attach_type, ids, cookies, n);
    if (fd >= 0) {
        if (m->nfds == m->cap) {
            size_t cap = m->cap ? 2 * m->cap : 8;
            int *p = realloc(m->link_fds, cap * sizeof(int));
            if (!p) {
                close(fd);
                return -ENOMEM;
            }
            m->link_fds = p;
            m->cap = cap;
        }
        m->link_fds[m->nfds++] = fd;
        m->functions += n;
        return 0;
    }
    if (n == 1) {
        struct ksym_bpf_multi_function f = { .sz = sizeof(f) };
        uint64_t *p = realloc(m->refused_cookies, (m->refused + 1) * sizeof(uint64_t));
        if (!p)
            return -ENOMEM;
        m->refused_cookies = p;
        p[m->refused++] = cookies[0];
        if (warn && ksym_bpf_program_multi_function(obj, i, cookies[0], &f) == 0)
            fprintf(warn, "ksym: the kernel refuses %s`%s in a tracing_multi link (%s): left out\n", f.module,
                    f.name, strerror(-fd));
        return fd;
    }
    int a = kl_multi_split(obj, i, m, prog_fd, attach_type, ids, cookies, n / 2, warn);
    int b = kl_multi_split(obj, i, m, prog_fd, attach_type, ids + n / 2, cookies + n / 2, n - n / 2, warn);
    return a ? a : b;
}

/*
 * Loads multi program `i` (after ksym_bpf_program_multi_attach, which
 * returned `nlinks`, and kl_prepare) once per link with the link's BTF
 * object, and creates each tracing_multi link; a function the kernel
 * refuses is named on `warn` (may be NULL) and left out, the rest
 * attached (kl_multi_split). 0 when every function is attached;
 * otherwise -errno of the first failure, said in `why`, with what did
 * attach kept in `m` (m->functions). The verifier's verdict goes to
 * `report` (may be NULL).
 */
static inline int kl_multi_attach(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, size_t nlinks,
                                  struct kl_multi *m, FILE *report, char *why, size_t why_size)
{
    int first = 0;
    memset(m, 0, sizeof(*m));
    m->prog_fds = calloc(nlinks ? nlinks : 1, sizeof(int));
    if (!m->prog_fds) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    m->nlinks = nlinks;
    for (size_t k = 0; k < nlinks; k++)
        m->prog_fds[k] = -ENOENT;
    for (size_t k = 0; k < nlinks; k++) {
        struct ksym_bpf_multi_link ml = { .sz = sizeof(ml) };
        if (ksym_bpf_program_multi_link(obj, i, k, &ml) != 0) {
            snprintf(why, why_size, "%s", ksym_last_error_message());
            return ksym_last_error();
        }
        int fd = kl_load_prog_btf(obj, l, i, report, ml.attach_btf_obj_fd);
        l->prog_fds[i] = -ENOENT; /* the fds are m's */
        m->prog_fds[k] = fd;
        if (fd < 0) {
            if (!first) {
                snprintf(why, why_size, "loading the multi program for `%s` (%s): %s", ml.module,
                         ksym_bpf_attach_type_str(ml.attach_type), strerror(-fd));
                first = fd;
            }
            continue;
        }
        size_t before = m->refused;
        int err = kl_multi_split(obj, i, m, fd, ml.attach_type, ml.btf_ids, ml.cookies, ml.count,
                                 report ? report : stderr);
        if (err && !first) {
            snprintf(why, why_size, "the tracing_multi link of %zu functions in `%s` (BPF_LINK_CREATE): %zu refused: %s",
                     ml.count, ml.module, m->refused - before, strerror(-err));
            first = err;
        }
    }
    return first;
}

/* What the kernel says of a tracing_multi link: its type, attach type and
 * count (bpf_link_get_info_by_fd). 0 or -errno. */
static inline int kl_multi_link_info(int link_fd, struct kl_link_info_multi *info)
{
    struct kl_obj_info a;
    memset(info, 0, sizeof(*info));
    memset(&a, 0, sizeof(a));
    a.bpf_fd = (uint32_t)link_fd;
    a.info_len = sizeof(*info);
    a.info = kl_ptr(info);
    return kl_bpf(KL_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0 ? -errno : 0;
}

#endif
