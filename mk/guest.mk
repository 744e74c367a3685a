# The second kernel: the kernel-dependent tests inside a qemu guest booted
# with Debian's stock kernel (tools/guest/: prepare.sh fetches and unpacks
# the image and builds the initramfs once per version; run.sh boots it and
# runs a command; tests.sh is what runs inside).
#
#   make test-guest         the live Rust tests and the C tests in the guest
#   make guest-shell CMD=.. one command in the guest (default: a summary)

GUEST_RUN     := sh tools/guest/run.sh
GUEST_TIMEOUT ?= 2400

.PHONY: test-guest guest-prepare guest-shell

# Other fragments add scripts that run in the same boot, after the Rust and
# C tests (GUEST_SCRIPTS, each run from the project directory: exit 0 or a
# failure), and what must be built for them first (GUEST_DEPS).
.SECONDEXPANSION:

guest-prepare:
	@sh tools/guest/prepare.sh $(BUILD)/guest > /dev/null

# The Rust test executables as cargo built them for test-rust (no rebuild
# when test-rust ran), and the C tests as test-c built them.
$(BUILD)/guest/rust-tests.list: $(SOURCES) $(wildcard tests/*.rs tests/common/*.rs capi/tests/*.rs)
	@mkdir -p $(BUILD)/guest
	$(CARGO) test --features ksym-capi/test-hooks --no-run --message-format=json 2> /dev/null \
	    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' > $@.tmp
	@test -s $@.tmp || { echo "cargo test --no-run listed no test executables" >&2; exit 1; }
	@mv $@.tmp $@

test-guest: guest-prepare $(BUILD)/guest/rust-tests.list test-c $$(GUEST_DEPS)
	$(GUEST_RUN) --timeout $(GUEST_TIMEOUT) --env KSYM_TESTDATA=$(abspath $(BUILD)/testdata) \
	    -- sh tools/guest/tests.sh $(abspath $(BUILD)/guest/rust-tests.list) $(abspath $(BUILD)/c-tests) \
	    $(GUEST_SCRIPTS)

guest-shell: guest-prepare
	$(GUEST_RUN) -- sh -c '$(or $(CMD),uname -r; cat /proc/cmdline; ls /sys/kernel/btf | wc -l)'

TEST_PARTS += test-guest
