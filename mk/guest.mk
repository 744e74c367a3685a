# The kernel matrix: the kernel-dependent tests inside qemu guests booted
# with Debian's stock kernels, one per row of the kernel table
# (tests/kernels.txt: 5.10, 6.1, 6.12, 7.3), each in the root the table
# names (this machine's Debian 12, or the Debian 13 root of mk/root.mk).
# tools/guest/: prepare.sh fetches and unpacks an image and its headers and
# builds its initramfs once per version; run.sh boots it and runs a
# command; parts.sh says which parts each kernel runs; tests.sh runs them
# inside and checks that every part given ran.
#
#   make test-guest             every guest kernel
#   make test-guest-K           one (K: 5.10, 6.1, 6.12, 7.3)
#   make guest-prepare          fetch and unpack every kernel, build the root (no boot)
#   make guest-shell [K=6.1] CMD=..   one command in a guest (default: a summary)

GUEST_RUN     := sh tools/guest/run.sh
GUEST_TIMEOUT ?= 2400
GUEST_KERNELS := $(shell sh tools/guest/kernels.sh names)
K             ?= 6.1

.PHONY: test-guest guest-build guest-prepare guest-shell
# test-guest-K and guest-prepare-K are pattern rules, never .PHONY: make
# skips the implicit rule search for a phony target, which would leave
# them with nothing to do (and a guest part that ran nothing would pass).

# Other fragments add scripts that run in a kernel's boot, after the Rust
# and C tests (GUEST_SCRIPTS_<kernel>, each run with sh from the project
# directory: exit 0 or a failure; GUEST_SCRIPTS: every kernel), and what
# must be built for them first (GUEST_DEPS).
.SECONDEXPANSION:

# The packages of every kernel at once, and the root (network-bound: make
# test starts this beside the Rust build, see tools/parts.sh).
guest-prepare:
	@pids=""; for k in $(GUEST_KERNELS); do sh tools/guest/prepare.sh $$k > /dev/null & pids="$$pids $$!"; done; \
	 rc=0; sh tools/root/build.sh > /dev/null || rc=1; \
	 for p in $$pids; do wait $$p || rc=1; done; exit $$rc

guest-prepare-%:
	@sh tools/guest/prepare.sh $* > /dev/null
	@if [ "$$(sh tools/guest/kernels.sh get $* root)" = debian13 ]; then sh tools/root/build.sh > /dev/null; fi

# The Rust test executables as cargo built them for test-rust (no rebuild
# when test-rust ran; the examples it builds are not test harnesses), and
# the C tests as test-c-build built them.
$(BUILD)/guest/rust-tests.list: $(SOURCES) $(wildcard tests/*.rs tests/common/*.rs capi/tests/*.rs)
	@mkdir -p $(BUILD)/guest
	$(CARGO) test --features ksym-capi/test-hooks --no-run --message-format=json 2> /dev/null \
	    | sed -n 's/.*"executable":"\([^"]*\/deps\/[^"]*\)".*/\1/p' > $@.tmp
	@test -s $@.tmp || { echo "cargo test --no-run listed no test executables" >&2; exit 1; }
	@mv $@.tmp $@

# The kernels `make test` runs, each its own part with a budget, two at a
# time (tools/parts.sh: a guest's tests mostly use one CPU, and TCG runs
# a guest CPU on one host thread): in the order given, paired.
GUEST_KERNELS_TESTED ?= 6.1 5.10 6.12 7.3
test-guest: $(addprefix test-guest-,$(GUEST_KERNELS_TESTED))
TEST_PARTS += guest-build $(shell set -- $(addprefix test-guest-,$(GUEST_KERNELS_TESTED)); \
    while [ $$# -gt 0 ]; do if [ $$# -ge 2 ]; then echo "$$1+$$2"; shift 2; else echo "$$1"; shift; fi; done)
$(foreach k,$(GUEST_KERNELS),$(eval PART_BUDGET_test-guest-$(k) := 600))

# The parts a kernel runs are written on this machine (tools/guest/parts.sh:
# each Rust binary with its filter and test count, each C test, each
# script), so that the guest can tell a part that did not run from one
# that has nothing to run.
# What every guest needs built first: one target, so that guests run at
# the same time (tools/parts.sh sets KSYM_PARTS_PARALLEL) do not build it
# twice at once; make test runs it as a part before them.
guest-build: $(BUILD)/guest/rust-tests.list test-c-build $$(GUEST_DEPS)
test-guest-%: guest-prepare-% $(if $(KSYM_PARTS_PARALLEL),,guest-build)
	C_ALT="$(GUEST_C_ALT_$*)" C_HOST="$(GUEST_C_HOST_$*)" sh tools/guest/parts.sh $* $(abspath $(BUILD)/guest/rust-tests.list) $(abspath $(BUILD)/c-tests) \
	    $(GUEST_SCRIPTS) $(GUEST_SCRIPTS_$*) > $(BUILD)/guest/parts-$*.list
	$(GUEST_RUN) --kernel $* --timeout $(GUEST_TIMEOUT) --env KSYM_TESTDATA=$(abspath $(BUILD)/testdata) \
	    -- sh tools/guest/tests.sh $(abspath $(BUILD)/guest/parts-$*.list)

guest-shell: guest-prepare-$(K)
	$(GUEST_RUN) --kernel $(K) -- sh -c '$(or $(CMD),uname -r; cat /proc/cmdline; ls /sys/kernel/btf | wc -l)'

