# The ksym CLI's tests (tests/cli/*.out: command, expected output, exit
# status) against the bundled data and BPF objects, and docs/cli.md's
# reference part against the command table (tools/cli.c).
#
#   make test-cli     run them (part of make test)
#   make cli-expect   rewrite the expected outputs and docs/cli.md from
#                     build/ksym (then review git diff)
#   make cli-doc      the same (docs/cli.md is rewritten with the cases)

TEST_PARTS += test-cli

.PHONY: test-cli cli-expect cli-doc

# A case the kernel cannot run is a skip (tests/cli/need.c, check.h's
# NEED_SKIP), logged where make test lists every part's skips.
test-cli: $(BUILD)/ksym testdata
	@mkdir -p target/tmp
	CC="$(CC)" KSYM_SKIP_LOG=$(abspath target/tmp/ksym-skipped) KSYM_SKIP_TEST=test-cli \
	    sh tests/cli/run.sh $(BUILD)/ksym $(BUILD)/testdata

cli-expect cli-doc: $(BUILD)/ksym testdata
	KSYM_CLI_UPDATE=1 CC="$(CC)" sh tests/cli/run.sh $(BUILD)/ksym $(BUILD)/testdata

# ksym trace's two ways (multi links, aliases) side by side in every
# guest: the same counts on 7.3, the documented refusal of --way multi
# elsewhere (tests/cli/trace-ways.sh; about 15 s on 7.3).
GUEST_SCRIPTS += tests/cli/trace-ways.sh
GUEST_DEPS += $(BUILD)/ksym
