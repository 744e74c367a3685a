# libksym: build, install, test, bench, demo.
#
#   make                 build/libksym.so.$(VERSION) (+ .so.0, .so links), build/libksym.a,
#                        build/ksym.pc, build/ksym (CLI)
#   make test            everything CI checks (installs what it needs first: make deps),
#                        with a table of each part's time at the end
#   make check           the edit loop: make test without the guests (at most 8 min, warm)
#   make deps            install what make test needs (tools/deps.sh: the one list)
#   make bench           the performance tables (docs/performance.md)
#   make bench-compare REF=<commit>  this tree's bench against another commit's, alternated
#   make compare-libbpf  the alias objects through libbpf and libksym (needs libbpf-dev)
#   make demo            the CLI on this machine's kernel (or the bundled snapshot)
#   make install PREFIX=/usr/local DESTDIR=
#   make header          regenerate include/ksym.h from capi/src/ffi with cbindgen
#   make bpf-objects     rebuild the committed BPF test objects (needs clang)

# The workspace's one version ([workspace.package] of Cargo.toml).
VERSION     := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
MAJOR       := $(word 1,$(subst ., ,$(VERSION)))
PREFIX      ?= /usr/local
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
BINDIR      ?= $(PREFIX)/bin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR     ?=
CARGO       ?= cargo
CC          ?= cc
CXX         ?= c++

BUILD       := build
TARGET      := target/release
SONAME      := libksym.so.$(MAJOR)
SOFILE      := libksym.so.$(VERSION)
SOURCES     := $(shell find src capi/src -name '*.rs') Cargo.toml Cargo.lock capi/Cargo.toml capi/build.rs
CWARN       := -std=c99 -Wall -Wextra -Werror -pedantic
STAGE       := $(abspath $(BUILD)/stage)

.PHONY: all lib header check-header install uninstall deps test test-suite check test-rust test-c test-c-build test-exports \
        bench bench-compare compare-libbpf demo bpf-objects clean testdata fuzz fuzz-build fuzz-corpus test-fuzz

all: lib $(BUILD)/ksym $(BUILD)/ksym.pc testdata

# Each topic's rules live in its own fragment (mk/*.mk); a fragment adds its
# test target to `make test` with `TEST_PARTS += target`.
TEST_PARTS  :=
include $(sort $(wildcard mk/*.mk))

lib: $(BUILD)/$(SOFILE) $(BUILD)/libksym.a

# The C library is the crate ksym-capi (capi/), whose library is called
# ksym_capi so as not to collide with the core crate `ksym`: its files are
# copied under the names C users link (the soname, libksym.so.$(MAJOR), is
# set by capi/build.rs).
$(TARGET)/libksym_capi.so $(TARGET)/libksym_capi.a: $(SOURCES)
	$(CARGO) build --release -p ksym-capi --lib
	@touch $(TARGET)/libksym_capi.so $(TARGET)/libksym_capi.a

$(BUILD)/$(SOFILE): $(TARGET)/libksym_capi.so
	@mkdir -p $(BUILD)
	cp $< $@
	ln -sf $(SOFILE) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libksym.so

$(BUILD)/libksym.a: $(TARGET)/libksym_capi.a
	@mkdir -p $(BUILD)
	cp $< $@

# What a static link needs besides libksym.a: the libraries the Rust standard
# library links (libksym's own dependencies add none), as rustc reports them.
$(BUILD)/native-static-libs:
	@mkdir -p $(BUILD)
	echo 'pub fn f() {}' > $(BUILD)/empty.rs
	rustc --edition 2021 --crate-type staticlib --crate-name empty -O \
	    --print native-static-libs -o $(BUILD)/empty.a $(BUILD)/empty.rs 2>&1 \
	    | sed -n 's/.*native-static-libs: //p' > $@
	@test -s $@ || { echo "rustc printed no native-static-libs" >&2; rm -f $@; exit 1; }
	@rm -f $(BUILD)/empty.rs $(BUILD)/empty.a

define make_pc
	sed -e 's|@PREFIX@|$(1)|' -e 's|@LIBDIR@|$(2)|' -e 's|@INCLUDEDIR@|$(3)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e "s|@LIBS_PRIVATE@|$$(cat $(BUILD)/native-static-libs)|" \
	    pkgconfig/ksym.pc.in > $(4)
endef

$(BUILD)/ksym.pc: pkgconfig/ksym.pc.in $(BUILD)/native-static-libs Cargo.toml
	$(call make_pc,$(PREFIX),$(LIBDIR),$(INCLUDEDIR),$@)

# The bundled loader (tools/bpf_loader.h, tools/bpf_multi.h: internal, not
# installed), compiled once into build/libkl.a for the CLI and the bench's
# tools (c-tests/run.sh builds its own, with the tests' flags).
LOADER_SRCS := $(sort $(wildcard tools/bpf_loader_*.c)) tools/bpf_multi.c
LOADER_HDRS := tools/bpf_abi.h tools/bpf_loader.h tools/bpf_multi.h include/ksym.h
$(BUILD)/loader/%.o: tools/%.c $(LOADER_HDRS)
	@mkdir -p $(BUILD)/loader
	$(CC) $(CWARN) -O2 -Iinclude -c -o $@ $<
$(BUILD)/libkl.a: $(patsubst tools/%.c,$(BUILD)/loader/%.o,$(LOADER_SRCS))
	rm -f $@
	ar rcs $@ $^

# The CLI links libksym statically: it runs from anywhere, installed or not.
# `ksym trace` carries its counting program (tools/bpf/count.bpf.o) inside.
# tools/cli.c is the command table; each command family has its file
# (tools/cli.h).
CLI_SRCS := $(sort $(wildcard tools/cli*.c)) tools/trace.c
$(BUILD)/ksym: $(CLI_SRCS) tools/cli.h tools/trace.h $(LOADER_HDRS) $(BUILD)/libkl.a $(BUILD)/count_bpf.h \
               $(BUILD)/libksym.a $(BUILD)/native-static-libs
	$(CC) $(CWARN) -O2 -Iinclude -I$(BUILD) -o $@ $(CLI_SRCS) $(BUILD)/libkl.a $(BUILD)/libksym.a \
	    $$(cat $(BUILD)/native-static-libs)

$(BUILD)/count_bpf.h: tools/bpf/count.bpf.o
	@mkdir -p $(BUILD)
	{ echo '/* Generated from tools/bpf/count.bpf.o by the Makefile. */'; \
	  echo 'static const unsigned char count_bpf_o[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; } > $@

# Real kernel data (tests/data/*.gz) unpacked for the demo and the bench.
testdata: $(BUILD)/testdata/.stamp
$(BUILD)/testdata/.stamp: $(shell find tests/data -name '*.gz' -o -name '*.tar.xz')
	@for f in $$(cd tests/data && find . -name '*.gz'); do \
	    mkdir -p $(BUILD)/testdata/$$(dirname $$f); \
	    gzip -dc tests/data/$$f > $(BUILD)/testdata/$${f%.gz}; \
	done
	@for d in $$(cd tests/data && find . -name objects.tar.xz | xargs -n1 dirname); do \
	    rm -rf $(BUILD)/testdata/$$d && mkdir -p $(BUILD)/testdata/$$d && \
	    xz -dc tests/data/$$d/objects.tar.xz | tar -xf - -C $(BUILD)/testdata/$$d || exit 1; \
	done
	@touch $@

header:
	KSYM_HEADER_OUT=$(abspath include/ksym.h) $(CARGO) build -p ksym-capi --features generate-header

check-header:
	@mkdir -p $(BUILD)
	KSYM_HEADER_OUT=$(abspath $(BUILD)/ksym.h.generated) $(CARGO) build -p ksym-capi --features generate-header
	@diff -u include/ksym.h $(BUILD)/ksym.h.generated \
	    || { echo "include/ksym.h is not what cbindgen generates from capi/src/ffi: run 'make header'" >&2; exit 1; }
	@echo "include/ksym.h matches the source"
	@# make bench's C tools against the header (make test runs no bench:
	@# without this they break unseen), compiled, not linked.
	@for f in tools/relo_bench.c tools/libbpf_compare.c bcc/bench/bench.c $(LOADER_SRCS); do \
	    $(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -Iinclude -fsyntax-only $$f || { echo "$$f does not compile (make bench)" >&2; exit 1; }; done
	@echo "make bench's C tools compile"

install: lib $(BUILD)/ksym $(BUILD)/native-static-libs
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(BUILD)/$(SOFILE) $(DESTDIR)$(LIBDIR)/$(SOFILE)
	ln -sf $(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libksym.so
	install -m 0644 $(BUILD)/libksym.a $(DESTDIR)$(LIBDIR)/libksym.a
	install -m 0644 include/ksym.h $(DESTDIR)$(INCLUDEDIR)/ksym.h
	install -m 0755 $(BUILD)/ksym $(DESTDIR)$(BINDIR)/ksym
	$(call make_pc,$(PREFIX),$(LIBDIR),$(INCLUDEDIR),$(DESTDIR)$(PKGCONFIGDIR)/ksym.pc)

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libksym.so \
	      $(DESTDIR)$(LIBDIR)/libksym.a $(DESTDIR)$(INCLUDEDIR)/ksym.h $(DESTDIR)$(BINDIR)/ksym \
	      $(DESTDIR)$(PKGCONFIGDIR)/ksym.pc

# ---- tests -------------------------------------------------------------------

# The machine is set up first, before anything compiles (tools/deps.sh says
# what is missing and installs it as root or through sudo).
deps:
	@sh tools/deps.sh test

test:
	@sh tools/deps.sh test
	@$(MAKE) --no-print-directory test-suite

# The parts, in order, each timed against its budget (seconds on 2 cores;
# tools/parts.sh prints the table at the end). The guests' kernels and the
# Debian 13 root are fetched in the background meanwhile. Every part's
# skips, in one list at the end (target/tmp/ksym-skipped, emptied by
# test-rust, which runs first; a skip that several runs of one test log
# alike, as bcc's plain, valgrind and ASan runs do, is listed once).
TEST_ALL_PARTS := test-rust check-header test-exports test-c test-fuzz $(TEST_PARTS)
PART_BUDGET_test-rust    := 600
PART_BUDGET_check-header := 60
PART_BUDGET_test-exports := 10
PART_BUDGET_test-c       := 480
PART_BUDGET_test-fuzz    := 240
PART_BUDGET_test-bcc     := 120
PART_BUDGET_test-cli     := 60
PART_BUDGET_test-docs    := 60
# A part with its budget (part:seconds); parts joined by + (run at the
# same time) each with its own.
empty :=
space := $(empty) $(empty)
part1 = $(1)$(if $(PART_BUDGET_$(1)),:$(PART_BUDGET_$(1)))
parts = $(foreach p,$(1),$(subst $(space),+,$(foreach q,$(subst +, ,$(p)),$(call part1,$(q)))))
test-suite:
	@sh tools/parts.sh --background guest-prepare $(call parts,$(TEST_ALL_PARTS))
	@if [ -s target/tmp/ksym-skipped ]; then \
	    awk '!seen[$$0]++' target/tmp/ksym-skipped > target/tmp/ksym-skipped.once; \
	    echo "make test: $$(wc -l < target/tmp/ksym-skipped.once) parts skipped (target/tmp/ksym-skipped):"; \
	    sed 's/^/  /' target/tmp/ksym-skipped.once; fi
	@echo "make test: all passed"

# The edit loop: every part but the guests and what only they need (the
# bpftrace fork's build), on this machine's kernel; at most 8 minutes with
# a warm target/.
CHECK_PARTS := $(filter-out test-guest% test-bpftrace%,$(TEST_ALL_PARTS))
check:
	@sh tools/deps.sh test
	@sh tools/parts.sh $(call parts,$(CHECK_PARTS))

# A Rust test that cannot run here appends a line to target/tmp/ksym-skipped
# (tests/common: skip); it is shown after the tests, so that no skip is
# silent (the C tests, the fuzz replay and the docs' checks append theirs
# too; test-suite lists them all at the end). KSYM_REQUIRE makes those
# skips failures.
test-rust:
	@rm -f target/tmp/ksym-skipped
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets --features ksym-capi/test-hooks -- -D warnings
	$(CARGO) test --features ksym-capi/test-hooks
	# The bench (its own package, not built by cargo test) must still
	# compile against the library: checked, not run.
	$(CARGO) clippy -p ksym-bench --benches -- -D warnings
	@if [ -s target/tmp/ksym-skipped ]; then cat target/tmp/ksym-skipped; fi

# Only ksym_* symbols may be exported by the shared library.
test-exports: $(BUILD)/$(SOFILE)
	@bad=$$(nm -D --defined-only $(BUILD)/$(SOFILE) | awk '{print $$3}' | grep -v '^ksym_' || true); \
	if [ -n "$$bad" ]; then echo "exported symbols not named ksym_*:" >&2; echo "$$bad" >&2; exit 1; fi
	@echo "exports: $$(nm -D --defined-only $(BUILD)/$(SOFILE) | wc -l) symbols, all ksym_*"
	@readelf -d $(BUILD)/$(SOFILE) | grep -q "SONAME.*\[$(SONAME)\]" || { echo "soname is not $(SONAME)" >&2; exit 1; }
	@echo "soname: $(SONAME)"

# C tests against an installed copy found through pkg-config: plain, under
# valgrind (no errors, no leaks) and built with ASan+UBSan. Their skips
# (c-tests/check.h: NEED_SKIP) go to the Rust tests' log too.
test-c: all
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(STAGE) DESTDIR=
	@mkdir -p target/tmp
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig STAGE=$(STAGE) CC="$(CC)" CXX="$(CXX)" \
	    KSYM_TESTDATA=$(abspath $(BUILD)/testdata) KSYM_SKIP_LOG=$(abspath target/tmp/ksym-skipped) \
	    sh c-tests/run.sh

# The plain builds of the C tests, not run: what the guests run
# (mk/guest.mk).
test-c-build: all $(LIBBPF_ORACLE)/lib/libbpf.a
	rm -rf $(STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(STAGE) DESTDIR=
	PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig STAGE=$(STAGE) CC="$(CC)" CXX="$(CXX)" BUILD_ONLY=1 \
	    sh c-tests/run.sh > $(BUILD)/c-tests-build.log 2>&1 || { cat $(BUILD)/c-tests-build.log; exit 1; }

# The BPF objects the tests load are committed so that tests need no clang.
# -g gives BTF (.BTF, .BTF.ext); llvm-strip -g then drops DWARF, which no
# loader reads, to keep the objects small. nobtf.bpf.o is built without -g on
# purpose: it is the "no BTF at all" case.
BPF_CLANG ?= clang-19
BPF_STRIP ?= llvm-strip-19
BPF_SRCS  := $(wildcard c-tests/bpf/*.bpf.c) tools/bpf/count.bpf.c
bpf-objects:
	cd c-tests/bpf && sh gen_many_aliases.sh 500
	@for src in $(BPF_SRCS); do \
	    obj=$${src%.c}.o; g=-g; \
	    case $$src in *nobtf*) g=;; esac; \
	    echo "$(BPF_CLANG) -O2 $$g -target bpf -c $$src -o $$obj"; \
	    $(BPF_CLANG) -O2 $$g -target bpf -c $$src -o $$obj || exit 1; \
	    case $$src in */aliases.bpf.c) cp $$obj $${src%.bpf.c}.dwarf.bpf.o;; esac; \
	    [ -z "$$g" ] || $(BPF_STRIP) -g $$obj || exit 1; \
	done
	@# vars.bpf.o is linked with vars_part.c (bpftool gen object, as
	@# libbpf's linker): two `static` variables named `calls` in one .bss.
	@mkdir -p $(BUILD)
	$(BPF_CLANG) -O2 -g -target bpf -c c-tests/bpf/vars_part.c -o $(BUILD)/vars_part.o
	$(BPF_STRIP) -g $(BUILD)/vars_part.o
	bpftool gen object $(BUILD)/vars.bpf.o c-tests/bpf/vars.bpf.o $(BUILD)/vars_part.o
	mv $(BUILD)/vars.bpf.o c-tests/bpf/vars.bpf.o

# compare-libbpf runs last: freeing its ~1000 programs keeps a kernel
# worker busy for a while, which would disturb the timings.
bench: testdata
	$(CARGO) bench -p ksym-bench --bench ksym_bench
	@$(MAKE) --no-print-directory compare-libbpf

# This tree's bench against another commit's, alternated in one sitting
# (bench/compare.sh: a worktree under build/bench-ref):
#   make bench-compare REF=<commit> [BENCH_SECTIONS="table symbols"] [BENCH_ROUNDS=3]
BENCH_ROUNDS ?= 3
BENCH_SECTIONS ?=
bench-compare: testdata
	@test -n "$(REF)" || { echo "make bench-compare REF=<commit>" >&2; exit 2; }
	sh bench/compare.sh "$(REF)" "$(BENCH_SECTIONS)" "$(BENCH_ROUNDS)"

# The alias objects through libbpf and libksym side by side (needs libbpf-dev;
# says SKIP without it or without bpf()). <linux/bpf.h>, which libbpf's
# headers include, is not -pedantic C99: this one is built as gnu11.
compare-libbpf: lib $(BUILD)/native-static-libs $(BUILD)/libkl.a testdata
	@if ! pkg-config --exists libbpf; then \
	    echo "compare-libbpf: SKIP: libbpf not installed (apt-get install libbpf-dev)"; exit 0; fi; \
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -Iinclude -o $(BUILD)/libbpf_compare \
	    tools/libbpf_compare.c $(BUILD)/libkl.a $(BUILD)/libksym.a $$(cat $(BUILD)/native-static-libs) \
	    $$(pkg-config --libs libbpf) \
	&& $(BUILD)/libbpf_compare c-tests/bpf/aliases.bpf.o c-tests/bpf/many_aliases.bpf.o \
	&& $(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -Iinclude -o $(BUILD)/relo_bench tools/relo_bench.c \
	    $(BUILD)/libksym.a $$(cat $(BUILD)/native-static-libs) $$(pkg-config --libs libbpf) \
	&& echo "relocation: the corpus's largest object and the two with the most CO-RE relocations:" \
	&& $(BUILD)/relo_bench $(addprefix $(BUILD)/testdata/bpf-selftests-6.1/,pyperf600.bpf.o core_kern.bpf.o \
	    xdp_synproxy_kern.bpf.o)

demo: all
	sh tools/demo.sh $(BUILD)/ksym $(BUILD)/testdata

clean:
	rm -rf $(BUILD)
	$(CARGO) clean

# Fuzzing with libFuzzer (libfuzzer-sys) on the stable toolchain: the
# coverage instrumentation is stable rustc codegen options; the target
# triple keeps it off the build scripts. `make fuzz` runs every target for
# FUZZ_TIME seconds (default 300) on its seed corpus (fuzz/corpus.sh) and
# the inputs that once failed (fuzz/regressions/); `make test` replays the
# seeds and runs a short, seeded fuzz of each (FUZZ_RUNS executions).
FUZZ_TARGETS := kallsyms ranges query vmlinux btf bpf_object kconfig snapshot stack
FUZZ_TIME    ?= 300
FUZZ_RUNS    ?= 20000
# Each snapshot input writes a file and opens twice (~4 ms): fewer runs.
FUZZ_RUNS_SNAPSHOT ?= 3000
FUZZ_TRIPLE  := $(shell rustc -vV | sed -n 's/^host: //p')
FUZZ_BIN     := target/fuzz/$(FUZZ_TRIPLE)/fuzz
FUZZ_RUSTFLAGS := -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing

fuzz-build:
	RUSTFLAGS="$(FUZZ_RUSTFLAGS)" $(CARGO) build --profile fuzz -p ksym-fuzz \
	    --target $(FUZZ_TRIPLE) --target-dir target/fuzz

fuzz-corpus: testdata
	sh fuzz/corpus.sh target/fuzz/corpus

# A crash (a panic: a failed property), a timeout (-timeout) or too much
# memory (-rss_limit_mb) is libFuzzer's non-zero exit: the status of the
# fuzz binary itself is tested (its output goes to a log, not through a
# pipe whose status is grep's). A leak is not: the targets are built
# without a sanitizer (stable rustc), and libFuzzer's leak check needs
# LeakSanitizer. A target that cannot run here prints one `SKIP <need> ...`
# line (the snapshot target when not root, or its table half when
# /proc/kallsyms hides addresses): make fuzz and make test-fuzz show it
# and add it to target/tmp/ksym-skipped, and test-fuzz does not report
# that target as ok.
fuzz: fuzz-build fuzz-corpus
	@mkdir -p target/fuzz/artifacts target/tmp
	@for t in $(FUZZ_TARGETS); do \
	    echo "== fuzz $$t for $(FUZZ_TIME) s"; \
	    if $(FUZZ_BIN)/$$t -max_total_time=$(FUZZ_TIME) -max_len=262144 -timeout=10 -rss_limit_mb=4096 \
	        -artifact_prefix=target/fuzz/artifacts/$$t- -print_final_stats=1 \
	        target/fuzz/corpus/$$t > target/fuzz/$$t.log 2>&1; then \
	        grep -E '^(stat::number_of_executed_units|stat::peak_rss|#[0-9]+ +DONE)' target/fuzz/$$t.log || true; \
	        grep '^SKIP ' target/fuzz/$$t.log | sort -u | tee -a target/tmp/ksym-skipped; \
	    else echo "FAIL fuzz $$t:"; tail -n 30 target/fuzz/$$t.log; exit 1; fi; \
	done

test-fuzz: fuzz-build fuzz-corpus
	@mkdir -p target/tmp
	@for t in $(FUZZ_TARGETS); do \
	    rm -rf target/fuzz/run && cp -r target/fuzz/corpus/$$t target/fuzz/run; \
	    runs=$(FUZZ_RUNS); if [ $$t = snapshot ]; then runs=$(FUZZ_RUNS_SNAPSHOT); fi; \
	    if $(FUZZ_BIN)/$$t -runs=$$runs -seed=1 -max_len=262144 -timeout=10 -rss_limit_mb=4096 \
	        -artifact_prefix=target/fuzz/ target/fuzz/run > target/fuzz/$$t.log 2>&1; then \
	        if grep -q '^SKIP ' target/fuzz/$$t.log; then \
	            grep '^SKIP ' target/fuzz/$$t.log | sort -u | tee -a target/tmp/ksym-skipped; \
	        else echo "ok   fuzz $$t ($$(ls target/fuzz/corpus/$$t | wc -l) seeds replayed, $$runs seeded runs)"; fi; \
	    else echo "FAIL fuzz $$t:"; tail -n 30 target/fuzz/$$t.log; exit 1; fi; \
	done
