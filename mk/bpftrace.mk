# The bpftrace fork (bpftrace/, docs/bpftrace-fork.md): bpftrace 0.23.2
# (Debian 13's release) with fentry/fexit (kfunc/kretfunc) wildcards
# generated once and loaded as libksym aliases, built in the Debian 13 root.
#
#   make bpftrace-fork          unpack (once), patch, build in the root (incremental): $(BPFTRACE_FORK)
#   make test-bpftrace-fork     the fork against Debian 13's bpftrace 0.23.2 in the 6.12 guest
#                               (BPFTRACE_FORK_K=7.3: tracing_multi links; BPFTRACE_FORK_K=5.10:
#                               the 5.10 guest, in a chroot of the Debian 13 root)
#   make bench-bpftrace-fork    object size, time to attached/first event, peak RSS, in the 6.12 guest
#
# `make test` builds the fork (GUEST_DEPS: the root, then an incremental
# build; its time from scratch is in docs/bpftrace-fork.md, seconds when
# nothing changed) and runs the guest proof in the 6.12 and 7.3 boots of
# test-guest (GUEST_SCRIPTS_6.12, GUEST_SCRIPTS_7.3), whose root is the
# Debian 13 root; on 7.3 the script runs only the cases whose code differs
# with tracing_multi links (its time: docs/bpftrace-fork.md). The 5.10 guest
# (no cookies, no func_ip) runs it with `make test-bpftrace-fork
# BPFTRACE_FORK_K=5.10` (the script chroots into build/root/debian13, the
# boot running this machine's Debian 12), not in make test: its bpftrace
# runs alone take about 3 minutes there (docs/bpftrace-fork.md), beyond
# the fork's share of the 5.10 boot's budget.

BPFTRACE_FORK := $(BUILD)/bpftrace-fork/bpftrace

.PHONY: bpftrace-fork test-bpftrace-fork bench-bpftrace-fork

bpftrace-fork: root
	@sh tools/deps.sh bpftrace-fork
	sh bpftrace/build.sh $(BUILD)/bpftrace-fork

BPFTRACE_FORK_K ?= 6.12
test-bpftrace-fork: guest-prepare-$(BPFTRACE_FORK_K) root
	@test -x $(BPFTRACE_FORK) || { echo "no $(BPFTRACE_FORK): make bpftrace-fork" >&2; exit 1; }
	$(GUEST_RUN) --kernel $(BPFTRACE_FORK_K) --timeout $(GUEST_TIMEOUT) -- sh bpftrace/tests/guest.sh

bench-bpftrace-fork: guest-prepare-6.12
	@test -x $(BPFTRACE_FORK) || { echo "no $(BPFTRACE_FORK): make bpftrace-fork" >&2; exit 1; }
	$(GUEST_RUN) --kernel 6.12 --timeout $(GUEST_TIMEOUT) -- python3 bench/bpftrace_fork.py $(BPFTRACE_FORK)

GUEST_SCRIPTS_6.12 += bpftrace/tests/guest.sh
GUEST_SCRIPTS_7.3 += bpftrace/tests/guest.sh
GUEST_DEPS += bpftrace-fork
