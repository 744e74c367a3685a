#!/bin/sh
# `make demo`: the ksym CLI on this machine's kernel, or on the bundled
# snapshot of one where /proc/kallsyms hides addresses.
set -eu
KSYM=$1
DATA=$2

K=/proc/kallsyms
if ! "$KSYM" addresses > /dev/null 2>&1; then
    K=$DATA/vm-6.18/kallsyms
    echo "note: /proc/kallsyms hides addresses from this user (kptr_restrict / CAP_SYSLOG);"
    echo "      showing the bundled snapshot of a 6.18 kernel instead: $K"
fi

show() {
    echo
    echo "\$ ksym $*"
    "$KSYM" --kallsyms "$K" "$@" || true
}

echo
echo "A BPF object with one function under three names (one per attach point):"
echo "relocated once, its __ksym externs resolved in one pass, and (where bpf()"
echo "is allowed and the addresses are this kernel's) every alias loaded."
LOAD=--load
[ "$K" = /proc/kallsyms ] || LOAD=
show obj c-tests/bpf/aliases.bpf.o $LOAD

if [ "$K" = /proc/kallsyms ] && [ -r /sys/kernel/btf/vmlinux ]; then
    echo
    echo "One counting program attached to every BTF tracepoint matching a pattern:"
    echo "ksym_bpf_program_expand makes one alias per tracepoint, all loaded from one"
    echo "copy of the instructions; counts are the kernel's run counter of each."
    echo "(Where the kernel allows fentry, \`ksym trace 'vmlinux\`vfs_*'\` does the same for"
    echo "every kernel function; here it says why it cannot.)"
    echo
    echo "\$ ksym trace --tracepoints 'sched_process_*' --duration 2"
    "$KSYM" trace --tracepoints 'sched_process_*' --duration 2 &
    sleep 0.5
    for i in 1 2 3; do /bin/true; done
    wait || true
    echo
    echo "\$ ksym trace 'vmlinux\`vfs_*' --duration 1"
    "$KSYM" trace 'vmlinux`vfs_*' --duration 1 || true
fi

show stat
if [ -r /sys/kernel/btf/vmlinux ]; then
    echo
    echo "The kernel's BTF: types by name (module-qualified like symbols), and whether"
    echo "the snapshot an earlier process of this boot wrote spared the check and index."
    echo "\$ ksym btf vfs_read STRUCT:task_struct"
    "$KSYM" btf vfs_read STRUCT:task_struct || true
    echo "\$ ksym btf"
    "$KSYM" btf || true
fi
show lookup schedule 'vmlinux`_text' vfs_read
show lookup does_not_exist vfs_read.constprop.0
addr=$("$KSYM" --kallsyms "$K" lookup schedule | cut -d' ' -f1)
show addr "$addr" "$(printf '%x' $((0x$addr + 0x10)))" 0
show grep 'vfs_rea*'
show modules
echo
echo "Data from distro kernels with modules (bundled): 6.12 with 32 modules loaded"
K=$DATA/linux-6.12-cloud/kallsyms
show lookup 'xfs`xfs_file_open' 'nf-tables`nft_register_chain_type' cleanup_module
show grep 'nf_*`*chain_type*'
