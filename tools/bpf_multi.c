/*
 * The kernel's multi-attach for the bundled loader (tools/bpf_multi.h):
 * a multi program loaded once per tracing_multi link, each link made, a
 * refused function split out; what the kernel says of a link.
 */
#define _GNU_SOURCE

#include "bpf_multi.h"

int kl_multi_refused(const struct kl_multi *m, uint64_t cookie)
{
    for (size_t k = 0; k < m->refused; k++)
        if (m->refused_cookies[k] == cookie)
            return 1;
    return 0;
}

void kl_multi_free(struct kl_multi *m)
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

int kl_multi_link(int prog_fd, uint32_t attach_type, const uint32_t *ids, const uint64_t *cookies,
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

int kl_multi_split(struct ksym_bpf_object *obj, size_t i, struct kl_multi *m, int prog_fd,
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

int kl_multi_attach(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, size_t nlinks,
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

int kl_multi_link_info(int link_fd, struct kl_link_info_multi *info)
{
    struct kl_obj_info a;
    memset(info, 0, sizeof(*info));
    memset(&a, 0, sizeof(a));
    a.bpf_fd = (uint32_t)link_fd;
    a.info_len = sizeof(*info);
    a.info = kl_ptr(info);
    return kl_bpf(KL_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0 ? -errno : 0;
}
