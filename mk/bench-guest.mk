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

# The kernel's multi link against aliases, libbpf's newest source and the
# floor of one program per function, in the 7.3 guest (bench/attach.c:
# each contender in a child, rounds interleaved, medians; bench/attach.sh
# runs vfs_*, tcp_* and x*, then stock bpftrace 0.23.2 and the fork).
#
#   make bench-attach [BENCH_ATTACH_ROUNDS=3]
BENCH_ATTACH_ROUNDS ?= 3

.PHONY: bench-attach

$(BUILD)/bench-attach: bench/attach.c $(LOADER_HDRS) $(BUILD)/libkl.a $(BUILD)/count_bpf.h \
        $(BUILD)/libksym.a $(BUILD)/native-static-libs $(BUILD)/libbpf-next/lib/libbpf.a
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -Iinclude -I$(BUILD) -I$(BUILD)/libbpf-next/include -o $@ bench/attach.c \
	    $(BUILD)/libkl.a $(BUILD)/libksym.a $(BUILD)/libbpf-next/lib/libbpf.a $$(cat $(BUILD)/native-static-libs) -lelf -lz

bench-attach: guest-prepare-7.3 $(BUILD)/bench-attach $(BUILD)/ksym
	$(GUEST_RUN) --kernel 7.3 --timeout $(GUEST_TIMEOUT) -- \
	    sh bench/attach.sh $(abspath $(BUILD)/bench-attach) $(BENCH_ATTACH_ROUNDS) $(abspath $(BPFTRACE_FORK))
