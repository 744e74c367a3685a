# ksym trace against Debian's bpftrace 0.17 in the same guest (issue: the
# second kernel's benchmark): time from start to every fentry program
# attached, and peak memory, for the same glob. Ratios, not a timed test.
#
#   make bench-guest [BENCH_GUEST_PATTERN=vfs_*] [BENCH_GUEST_ROUNDS=3]

BENCH_GUEST_PATTERN ?= vfs_*
BENCH_GUEST_ROUNDS  ?= 3

.PHONY: bench-guest

bench-guest: guest-prepare-6.1 $(BUILD)/ksym
	$(GUEST_RUN) --timeout $(GUEST_TIMEOUT) -- python3 bench/guest.py $(abspath $(BUILD)/ksym) \
	    '$(BENCH_GUEST_PATTERN)' $(BENCH_GUEST_ROUNDS)
