/*
 * Tracepoint sections as libbpf's attach_tp reads them: the text after
 * `tracepoint/` or `tp/` is `<category>/<name>`, split at its first `/`
 * (tracefs' events/<category>/<name>). A section with no `/` there names
 * no category: libbpf cannot attach it (-EINVAL), and it still loads.
 * Checked field by field in tests/attach.rs and c-tests/test_btf.c.
 */
#include "mini_bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PROG(name, sec) SEC(sec) int name(void *ctx) { return 0; }

PROG(on_switch, "tp/sched/sched_switch")
PROG(on_openat, "tracepoint/syscalls/sys_enter_openat")
PROG(deeper, "tp/sched/sched_switch/extra")
PROG(no_category, "tp/sched_switch")
PROG(optional_no_category, "?tracepoint/sched_wakeup")
PROG(bare, "tracepoint")
