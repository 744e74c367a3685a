# The Debian 13 root (tools/root/): today's userland (bpftrace 0.23.2, bcc
# 0.31, libbpf 1.5, bpftool 7.5, LLVM 19) for the tests and the bpftrace
# fork's build, made by debootstrap and kept in build/root/debian13, keyed
# by tools/root/debian13.packages (built again only when that list or the
# script changes).
#
#   make root                 build it (about 1 minute; 2 GB)
#   make root-shell CMD=..    one command in it, on this machine's kernel

ROOT_DIR := $(BUILD)/root/debian13

.PHONY: root root-shell

root:
	@sh tools/root/build.sh $(abspath $(ROOT_DIR)) > /dev/null

root-shell: root
	sh tools/root/run.sh --root $(ROOT_DIR) -- sh -c '$(or $(CMD),cat /.ksym-versions)'
