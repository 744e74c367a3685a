/*
 * tools/bpf_loader.h spells out the bpf_attr layouts it uses (so that it
 * compiles as strict C99); this checks them against <linux/bpf.h> at
 * compile time. Built with -std=gnu11: the kernel header needs it.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <linux/bpf.h>
#include "../tools/bpf_loader.h"

#define CHK(ours, f, theirs) \
    _Static_assert(offsetof(struct ours, f) == offsetof(union bpf_attr, theirs), #ours "." #f)

CHK(kl_map_create, map_name, map_name);
CHK(kl_map_create, btf_vmlinux_value_type_id, btf_vmlinux_value_type_id);
CHK(kl_map_create, map_extra, map_extra);
CHK(kl_map_elem, key, key);
CHK(kl_map_elem, value, value);
CHK(kl_map_elem, flags, flags);
CHK(kl_prog_load, log_buf, log_buf);
CHK(kl_prog_load, prog_name, prog_name);
CHK(kl_prog_load, prog_btf_fd, prog_btf_fd);
CHK(kl_prog_load, func_info, func_info);
CHK(kl_prog_load, line_info_cnt, line_info_cnt);
CHK(kl_prog_load, attach_prog_fd, attach_prog_fd);
CHK(kl_prog_load, fd_array, fd_array);
CHK(kl_prog_load, core_relo_rec_size, core_relo_rec_size);
CHK(kl_btf_load, btf_size, btf_size);
CHK(kl_btf_load, btf_log_level, btf_log_level);
CHK(kl_test_run, data_out, test.data_out);
CHK(kl_test_run, ctx_out, test.ctx_out);
CHK(kl_test_run, batch_size, test.batch_size);
_Static_assert(sizeof(struct ksym_bpf_insn) == sizeof(struct bpf_insn), "struct bpf_insn");
_Static_assert(BPF_PROG_TYPE_SOCKET_FILTER == KL_PROG_SOCKET_FILTER, "prog type");
_Static_assert((int)BPF_BTF_LOAD == (int)KL_BTF_LOAD && (int)BPF_PROG_TEST_RUN == (int)KL_PROG_TEST_RUN, "commands");

int main(void)
{
    puts("bpf_attr layouts match <linux/bpf.h>");
    return 0;
}
