# The bpftrace fork (bpftrace/, docs/bpftrace-fork.md): Debian's bpftrace
# 0.17 with kfunc/kretfunc wildcards generated once and loaded as libksym
# aliases.
#
#   make bpftrace-fork          fetch (once), patch, build (incremental): $(BPFTRACE_FORK)
#   make test-bpftrace-fork     the fork against Debian's bpftrace in the guest
#   make bench-bpftrace-fork    object size, time to attached/first event, peak RSS, in the guest
#
# `make test` builds the fork (its packages, then an incremental build:
# its time from scratch is in docs/bpftrace-fork.md; seconds when nothing
# changed) and runs the guest proof in test-guest's boot (GUEST_SCRIPTS).

BPFTRACE_FORK := $(BUILD)/bpftrace-fork/bpftrace

.PHONY: bpftrace-fork test-bpftrace-fork bench-bpftrace-fork

bpftrace-fork:
	@sh tools/deps.sh bpftrace-fork
	sh bpftrace/build.sh $(BUILD)/bpftrace-fork

test-bpftrace-fork: guest-prepare-6.1
	@test -x $(BPFTRACE_FORK) || { echo "no $(BPFTRACE_FORK): make bpftrace-fork" >&2; exit 1; }
	$(GUEST_RUN) --timeout $(GUEST_TIMEOUT) -- sh bpftrace/tests/guest.sh

bench-bpftrace-fork: guest-prepare-6.1
	@test -x $(BPFTRACE_FORK) || { echo "no $(BPFTRACE_FORK): make bpftrace-fork" >&2; exit 1; }
	$(GUEST_RUN) --timeout $(GUEST_TIMEOUT) -- python3 bench/bpftrace_fork.py $(BPFTRACE_FORK)

GUEST_SCRIPTS_6.1 += bpftrace/tests/guest.sh
GUEST_DEPS += bpftrace-fork
