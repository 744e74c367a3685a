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
int kl_multi_refused(const struct kl_multi *m, uint64_t cookie);

/* Closes its links and programs and frees it. */
void kl_multi_free(struct kl_multi *m);

/* One tracing_multi link over ids[0..n) with their cookies: its fd or
 * -errno. */
int kl_multi_link(int prog_fd, uint32_t attach_type, const uint32_t *ids, const uint64_t *cookies,
                  size_t n);

/* Links ids[0..n): one link when the kernel takes them all; otherwise
 * halves, down to the functions it refuses, each named once on `warn`
 * (may be NULL). The kernel refuses a whole link for one function it
 * cannot trace (ENOENT), which libksym's list leaves out where tracefs
 * says which those are. Returns the first errno of a refusal (0: none). */
int kl_multi_split(struct ksym_bpf_object *obj, size_t i, struct kl_multi *m, int prog_fd,
                   uint32_t attach_type, const uint32_t *ids, const uint64_t *cookies, size_t n,
                   FILE *warn);

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
int kl_multi_attach(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, size_t nlinks,
                    struct kl_multi *m, FILE *report, char *why, size_t why_size);

/* What the kernel says of a tracing_multi link: its type, attach type and
 * count (bpf_link_get_info_by_fd). 0 or -errno. */
int kl_multi_link_info(int link_fd, struct kl_link_info_multi *info);

#endif
