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

/* The multi links of one program: one load and one link each. */
struct kl_multi {
    size_t nlinks;
    int *prog_fds; /* -errno when that load failed */
    int *link_fds; /* -errno when that link failed */
    size_t functions; /* functions over every link */
};

static inline void kl_multi_free(struct kl_multi *m)
{
    for (size_t k = 0; k < m->nlinks; k++) {
        if (m->link_fds && m->link_fds[k] >= 0)
            close(m->link_fds[k]);
        if (m->prog_fds && m->prog_fds[k] >= 0)
            close(m->prog_fds[k]);
    }
    free(m->prog_fds);
    free(m->link_fds);
    memset(m, 0, sizeof(*m));
}

/*
 * Loads multi program `i` (after ksym_bpf_program_multi_attach, which
 * returned `nlinks`, and kl_prepare) once per link with the link's BTF
 * object, and creates each tracing_multi link. 0 when every link exists;
 * otherwise -errno of the first failure, said in `why` (the verifier's
 * verdict on `report`, may be NULL), with what did attach kept in `m`.
 */
static inline int kl_multi_attach(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, size_t nlinks,
                                  struct kl_multi *m, FILE *report, char *why, size_t why_size)
{
    int first = 0;
    memset(m, 0, sizeof(*m));
    m->prog_fds = calloc(nlinks ? nlinks : 1, sizeof(int));
    m->link_fds = calloc(nlinks ? nlinks : 1, sizeof(int));
    if (!m->prog_fds || !m->link_fds) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    m->nlinks = nlinks;
    for (size_t k = 0; k < nlinks; k++)
        m->prog_fds[k] = m->link_fds[k] = -ENOENT;
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
        struct kl_link_create_multi c;
        memset(&c, 0, sizeof(c));
        c.prog_fd = (uint32_t)fd;
        c.attach_type = ml.attach_type;
        c.ids = kl_ptr(ml.btf_ids);
        c.cookies = kl_ptr(ml.cookies);
        c.cnt = (uint32_t)ml.count;
        long link = kl_bpf(KL_LINK_CREATE, &c, sizeof(c));
        m->link_fds[k] = link < 0 ? -errno : (int)link;
        if (link < 0 && !first) {
            snprintf(why, why_size, "the tracing_multi link of %zu functions in `%s` (BPF_LINK_CREATE): %s",
                     ml.count, ml.module, strerror(-m->link_fds[k]));
            first = m->link_fds[k];
        }
        if (link >= 0)
            m->functions += ml.count;
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
