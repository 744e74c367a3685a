#!/bin/sh
# Runs bpftrace/tests/multi-accepts.c (built on this machine as
# build/multi-accepts) in a guest with the BTF ids of vfs_read, which
# every link takes, and of functions the kernel may refuse: its deny list
# (migrate_disable, __rcu_read_lock) and, for fexit, a noreturn function
# (do_exit). From the project directory:
#
#   cc -O1 -Wall -o build/multi-accepts bpftrace/tests/multi-accepts.c
#   make guest-shell K=7.3 CMD='sh bpftrace/tests/multi-accepts.sh'
set -u
id() {
    bpftool btf dump file /sys/kernel/btf/vmlinux |
        sed -n "s/^\[\([0-9]*\)\] FUNC '$1' .*/\1/p" | head -n 1
}
args=""
for f in vfs_read migrate_disable __rcu_read_lock do_exit vfs_write; do
    args="$args $f=$(id $f)"
done
echo "$(uname -r):$args"
# shellcheck disable=SC2086
exec build/multi-accepts $args
