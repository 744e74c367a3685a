/*
 * The bundled loader's program loads (tools/bpf_loader.h): one program
 * with its attach info, func_info and line_info (kl_load_prog,
 * kl_load_prog_btf), every program whose autoload is on, and the whole
 * object (kl_load).
 */
#define _GNU_SOURCE

#include "bpf_loader.h"

int kl_uses_alias_values(const struct ksym_bpf_object *obj, size_t i)
{
    size_t n = ksym_bpf_program_reloc_count(obj, i);
    for (size_t r = 0; r < n; r++) {
        struct ksym_bpf_reloc rel = { .sz = sizeof(rel) };
        if (ksym_bpf_program_reloc(obj, i, r, &rel) == 0 && rel.kind == KSYM_BPF_RELOC_ALIAS)
            return 1;
    }
    return 0;
}

int kl_load_prog_btf(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, FILE *report,
                     int btf_obj_fd)
{
    static char log[1 << 16];
    struct ksym_bpf_program_info p = { .sz = sizeof(p) };
    struct ksym_bpf_attach at = { .sz = sizeof(at) };
    size_t cnt = 0, frs = 0, fcnt = 0, lrs = 0, lcnt = 0;
    struct kl_prog_load a;
    if (ksym_bpf_program_info(obj, i, &p) != 0)
        return l->prog_fds[i] = ksym_last_error();
    /* Written even when it returns the program's own error (at.error). */
    if (ksym_bpf_program_attach_info(obj, i, &at) != 0 && !at.error)
        return l->prog_fds[i] = ksym_last_error();
    if (at.error && (at.flags & KSYM_ATTACH_TARGET_AT_LOAD)) {
        if (report)
            fprintf(report, "  %-24s NOT LOADED: %s\n", p.name, at.error_message);
        return l->prog_fds[i] = at.error;
    }
    const struct ksym_bpf_insn *insns = ksym_bpf_program_insns(obj, i, &cnt);
    if (!insns)
        return l->prog_fds[i] = ksym_last_error();
    /* Per-alias constants: this program's own copy, its values written. */
    struct ksym_bpf_insn *own = NULL;
    if (kl_uses_alias_values(obj, i)) {
        own = malloc(cnt * sizeof(*own));
        int n = own ? ksym_bpf_program_alias_insns(obj, i, own, cnt) : -ENOMEM;
        if (n < 0 || (size_t)n != cnt) {
            if (report)
                fprintf(report, "  %-24s NOT LOADED: %s\n", p.name, n < 0 ? ksym_last_error_message() : "?");
            free(own);
            return l->prog_fds[i] = n < 0 ? n : -EINVAL;
        }
        insns = own;
    }
    memset(&a, 0, sizeof(a));
    a.prog_type = at.prog_type ? at.prog_type : KL_PROG_SOCKET_FILTER;
    a.expected_attach_type = at.expected_attach_type;
    a.attach_btf_id = at.attach_btf_id;
    if (btf_obj_fd != KL_ATTACH_INFO_FD)
        at.attach_btf_obj_fd = btf_obj_fd;
    a.attach_prog_fd = at.attach_btf_obj_fd > 0 ? (uint32_t)at.attach_btf_obj_fd : 0;
    if (at.flags & KSYM_ATTACH_SLEEPABLE)
        a.prog_flags |= KL_F_SLEEPABLE;
    if (at.flags & KSYM_ATTACH_XDP_FRAGS)
        a.prog_flags |= KL_F_XDP_HAS_FRAGS;
    a.insns = kl_ptr(insns);
    a.insn_cnt = (uint32_t)cnt;
    size_t nfds = 0;
    const int *fds = ksym_bpf_program_fd_array(obj, i, &nfds);
    a.fd_array = kl_ptr(fds); /* module BTF fds of kfunc calls, NULL if none */
    a.license = kl_ptr(ksym_bpf_object_license(obj));
    kl_object_name(a.prog_name, p.name);
    uint32_t btf_feats = KSYM_BTF_FEAT_ALL;
    ksym_btf_probe_features(&btf_feats); /* cached: no syscall */
    if (l->btf_fd >= 0 && (btf_feats & KSYM_BTF_FEAT_FUNC)) {
        const void *fi = ksym_bpf_program_func_info(obj, i, &frs, &fcnt);
        const void *li = ksym_bpf_program_line_info(obj, i, &lrs, &lcnt);
        a.prog_btf_fd = (uint32_t)l->btf_fd;
        a.func_info = kl_ptr(fi);
        a.func_info_rec_size = (uint32_t)frs;
        a.func_info_cnt = (uint32_t)fcnt;
        a.line_info = kl_ptr(li);
        a.line_info_rec_size = (uint32_t)lrs;
        a.line_info_cnt = (uint32_t)lcnt;
    }
    /* No verifier log first, as libbpf: a big program's log overflows any
     * buffer (ENOSPC). The log only to say why, when asked. */
    long fd = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
    l->prog_fds[i] = fd < 0 ? -errno : (int)fd;
    log[0] = 0;
    if (fd < 0 && report) {
        a.log_buf = kl_ptr(log);
        a.log_size = sizeof(log);
        a.log_level = 1;
        long again = kl_bpf(KL_PROG_LOAD, &a, sizeof(a));
        if (again >= 0)
            close((int)again);
    }
    free(own);
    if (report) {
        if (fd >= 0)
            fprintf(report, "  %-24s loaded: %zu insns, %zu func_info, %zu line_info, verifier OK\n", p.name, cnt,
                    fcnt, lcnt);
        else
            fprintf(report, "  %-24s REJECTED: %s\n%s\n", p.name, strerror(-l->prog_fds[i]), log);
    }
    return l->prog_fds[i];
}

int kl_load_prog(struct ksym_bpf_object *obj, struct kl_loaded *l, size_t i, FILE *report)
{
    return kl_load_prog_btf(obj, l, i, report, KL_ATTACH_INFO_FD);
}

size_t kl_load_autoload(struct ksym_bpf_object *obj, struct kl_loaded *l, FILE *report)
{
    size_t failed = 0;
    for (size_t i = 0; i < l->nprogs; i++) {
        if (!ksym_bpf_program_autoload(obj, i)) {
            struct ksym_bpf_program_info p = { .sz = sizeof(p) };
            if (report && ksym_bpf_program_info(obj, i, &p) == 0)
                fprintf(report, "  %-24s skipped: autoload is off\n", p.name);
            continue;
        }
        failed += kl_load_prog(obj, l, i, report) < 0;
    }
    return failed;
}

int kl_load(struct ksym_bpf_object *obj, struct ksym_cache *cache, struct kl_loaded *l,
            FILE *report, char *why, size_t why_size)
{
    int err = kl_prepare(obj, cache, NULL, l, why, why_size);
    if (err)
        return err;
    size_t failed = kl_load_autoload(obj, l, report);
    if ((err = kl_fill_slots(obj, l, KSYM_BPF_SLOT_PROGRAM, why, why_size)) != 0)
        return err;
    return failed ? 1 : 0;
}
