# The docs' checks (part of make test):
# - README.md's C example is examples/lookup.c, byte for byte; it is built
#   as users build it (-std=c99 -pedantic, the static library) and run on
#   the bundled 6.12 kernel's kallsyms, its output checked;
# - user docs (README.md, docs/, HACKING.md) carry no dates and no diary's
#   words (a line that names `make test-docs`, the rule itself, aside);
# - tests/docs.rs: every name of this project a page gives exists (files,
#   make targets, the C API, the loader's kl_*, the Rust API, options,
#   variables), and every measured figure is on one page only (also run
#   by cargo test);
# - the Rust API's docs build without a warning (every public item
#   documented, no broken link; without the `internals` feature, which
#   only the tests enable), and examples/lookup.rs prints what
#   examples/lookup.c prints; examples/aliases.rs's programs share one
#   copy per alias and load (where bpf() works);
# - examples/aliases.c, the C loader of docs/bpf-objects.md (bpf(2) and
#   libksym, no libbpf), is built with -std=gnu11 -Wall -Wextra -Werror
#   against the static library and run on the running kernel:
#   examples/run-aliases.sh checks what its map counted against the forks
#   and renames it drove (a skip where there is no root or kernel BTF, a
#   failure under KSYM_REQUIRE=kernel);
# - examples/multi.c, the multi-link loader, likewise: on 7.3 its counts,
#   elsewhere its documented refusal (examples/run-multi.sh; every guest).

TEST_PARTS += test-docs

.PHONY: test-docs

test-docs: $(BUILD)/libksym.a $(BUILD)/native-static-libs testdata
	@awk '/^<!-- examples\/lookup.c -->$$/ { getline; on = 1; next } on && /^```$$/ { exit } on' README.md \
	    > $(BUILD)/readme-example.c
	@diff -u examples/lookup.c $(BUILD)/readme-example.c \
	    || { echo "README.md's example is not examples/lookup.c" >&2; exit 1; }
	$(CC) $(CWARN) -Iinclude -o $(BUILD)/example-lookup examples/lookup.c $(BUILD)/libksym.a \
	    $$(cat $(BUILD)/native-static-libs)
	@out=$$($(BUILD)/example-lookup $(BUILD)/testdata/linux-6.12-cloud/kallsyms); \
	if [ "$$out" != "schedule+0x10 [vmlinux] size 0xc0" ]; then \
	    echo "examples/lookup.c printed '$$out'" >&2; exit 1; fi; \
	echo "README example: $$out (bundled 6.12 kernel)"
	@if grep -nE '\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b|\b[Tt]oday\b|\b[Tt]onight\b' README.md HACKING.md docs/*.md \
	        | grep -v 'make test-docs'; then \
	    echo "user docs carry no dates and no 'today' (the lines above)" >&2; exit 1; fi
	@echo "docs: no dates, no 'today'"
	$(CARGO) test -q --test docs
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps -p ksym -p ksym-capi
	@# The Rust API names only types a user can name (rustdoc does not run
	@# this lint; the compiler does, on the crate without internals).
	$(CARGO) rustc -q -p ksym --lib -- -D warnings
	@out=$$($(CARGO) run -q -p ksym --example lookup -- $(BUILD)/testdata/linux-6.12-cloud/kallsyms); \
	if [ "$$out" != "schedule+0x10 [vmlinux] size 0xc0" ]; then \
	    echo "examples/lookup.rs printed '$$out'" >&2; exit 1; fi; \
	echo "Rust example: $$out (bundled 6.12 kernel)"
	@# examples/aliases.rs: every alias shares its target's instructions
	@# (the example compares the slices), and where bpf() works the kernel
	@# loads every program (its verifier is the oracle); a machine that is
	@# to have the kernel (KSYM_REQUIRE, its words trimmed as check.h and
	@# tests/common do) may not skip that.
	@out=$$($(CARGO) run -q -p ksym --example aliases) || { echo "examples/aliases.rs failed:"; echo "$$out"; exit 1; }; \
	progs=$$(echo "$$out" | grep -c '^program '); \
	shared=$$(echo "$$out" | grep -c 'shared with its target: true'); \
	loaded=$$(echo "$$out" | grep -c ', loaded (fd '); \
	if [ "$$progs" -lt 2 ] || [ "$$shared" != "$$progs" ]; then \
	    echo "examples/aliases.rs: $$shared of $$progs programs share their target's instructions:"; echo "$$out"; exit 1; fi; \
	if [ "$$loaded" != "$$progs" ]; then \
	    req=$$(printf '%s' "$${KSYM_REQUIRE:-}" | sed 's/[[:space:]]*,[[:space:]]*/,/g; s/^[[:space:]]*//; s/[[:space:]]*$$//'); \
	    case ",$$req," in *,kernel,*|*,all,*) \
	        echo "examples/aliases.rs: $$loaded of $$progs programs loaded (KSYM_REQUIRE=$$KSYM_REQUIRE):"; echo "$$out"; exit 1;; esac; \
	    mkdir -p target/tmp; echo "SKIP kernel examples/aliases.rs: $$loaded of $$progs programs loaded (no bpf() here?)" | tee -a target/tmp/ksym-skipped; \
	else echo "Rust example aliases: $$progs programs, aliases sharing one copy, all loaded by the kernel"; fi
	@$(MAKE) --no-print-directory $(BUILD)/example-aliases $(BUILD)/need
	@mkdir -p target/tmp
	@KSYM_SKIP_LOG=$(abspath target/tmp/ksym-skipped) KSYM_SKIP_TEST=test-docs \
	    sh examples/run-aliases.sh $(BUILD)/example-aliases $(BUILD)/need
	@$(MAKE) --no-print-directory $(BUILD)/example-multi
	@sh examples/run-multi.sh $(BUILD)/example-multi

# The C loader example, as a user builds it (gnu11: <linux/bpf.h>), and
# the one skip helper the example's check uses here. In a guest, from the
# project's directory: `sh examples/run-aliases.sh` (build/example-aliases
# by default; no NEED there, so a kernel that cannot run it fails).
$(BUILD)/example-aliases: examples/aliases.c include/ksym.h $(BUILD)/libksym.a $(BUILD)/native-static-libs
	$(CC) -std=gnu11 -Wall -Wextra -Werror -Iinclude -o $@ examples/aliases.c \
	    $(BUILD)/libksym.a $$(cat $(BUILD)/native-static-libs)

# The multi-link loader example (docs/btf-and-attach.md): its check says
# what the kernel table says the running kernel has (examples/run-multi.sh).
$(BUILD)/example-multi: examples/multi.c include/ksym.h $(BUILD)/libksym.a $(BUILD)/native-static-libs
	$(CC) -std=gnu11 -Wall -Wextra -Werror -Iinclude -o $@ examples/multi.c \
	    $(BUILD)/libksym.a $$(cat $(BUILD)/native-static-libs)

$(BUILD)/need: tests/cli/need.c c-tests/check.h include/ksym.h
	$(CC) $(CWARN) -Iinclude -o $@ tests/cli/need.c

# The example loader in every guest kernel too (tp_btf: each has it).
GUEST_DEPS    += $(BUILD)/example-aliases $(BUILD)/example-multi
GUEST_SCRIPTS += examples/run-aliases.sh examples/run-multi.sh
