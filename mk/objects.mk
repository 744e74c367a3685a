# The libbpf the oracle tests link (c-tests/libbpf/): libbpf v1.7.0, built
# static from the C sources crates.io's libbpf-sys 1.7.0 vendors, cached in
# build/libbpf-1.7 (about 25 s once: the fetch and a -j2 build). Test-only:
# the library never links it. c-tests/run.sh finds it there.
LIBBPF_ORACLE := $(BUILD)/libbpf-1.7

.PHONY: libbpf-oracle
libbpf-oracle: $(LIBBPF_ORACLE)/lib/libbpf.a

$(LIBBPF_ORACLE)/lib/libbpf.a: c-tests/libbpf/build-libbpf.sh
	nice -n 5 sh c-tests/libbpf/build-libbpf.sh $(LIBBPF_ORACLE)

test-c: $(LIBBPF_ORACLE)/lib/libbpf.a

# libbpf 1.5, Debian 13's (the Debian 13 root of mk/root.mk): a third
# libbpf beside 1.1 (the system's, c-tests/dlopen) and 1.7. Its corpus test
# runs in the 6.12 guest (Debian 13's libbpf on Debian 13's kernel), its
# variables test here in the root (test-libbpf-1.5). 1.5 has no
# bpf_object__prepare (1.6), so test_libbpf_prepare stays 1.7's.
LIBBPF_15_TESTS := $(BUILD)/c-tests-libbpf-1.5

.PHONY: libbpf-1.5-tests test-libbpf-1.5
libbpf-1.5-tests: test-c-build root
	sh tools/root/run.sh -- sh c-tests/libbpf/build-root.sh $(abspath $(STAGE)) $(abspath $(LIBBPF_15_TESTS))

test-libbpf-1.5: libbpf-1.5-tests
	sh tools/root/run.sh --env KSYM_TESTDATA=$(abspath $(BUILD)/testdata) -- \
	    sh -c '$(abspath $(LIBBPF_15_TESTS))/test_libbpf_vars > $(abspath $(LIBBPF_15_TESTS))/test_libbpf_vars.log 2>&1; \
	           rc=$$?; tail -n 2 $(abspath $(LIBBPF_15_TESTS))/test_libbpf_vars.log; exit $$rc'

TEST_PARTS += test-libbpf-1.5
PART_BUDGET_test-libbpf-1.5 := 120
GUEST_DEPS += libbpf-1.5-tests
GUEST_C_ALT_6.12 += test_libbpf_corpus=$(abspath $(LIBBPF_15_TESTS))/test_libbpf_corpus
# test_libbpf_prepare compares the BTF libbpf loads for the kernel's
# features: 6.12's and 7.3's are the host's (tests/kernels.txt: btf_kinds,
# btf_qmark), where make test-c runs it; 5.10 and 6.1 run it in their guests.
GUEST_C_HOST_6.12 += test_libbpf_prepare
GUEST_C_HOST_7.3 += test_libbpf_prepare

# libbpf's newest source (c-tests/libbpf/src: the multi links of Linux
# 7.3, in no release), built static into build/libbpf-next: the oracle of
# the multi sections' prepared programs and load attributes
# (test_libbpf_prepare_next) and of their links on the kernel
# (c-tests/libbpf/*_next.c), and a contender of make bench-attach.
# Test-only.
LIBBPF_NEXT := $(BUILD)/libbpf-next

.PHONY: libbpf-next
libbpf-next: $(LIBBPF_NEXT)/lib/libbpf.a

$(LIBBPF_NEXT)/lib/libbpf.a: c-tests/libbpf/build-libbpf-next.sh c-tests/libbpf/src/libbpf-f7081a6baf3f.tar.gz
	nice -n 5 sh c-tests/libbpf/build-libbpf-next.sh $(LIBBPF_NEXT)

test-c test-c-build: $(LIBBPF_NEXT)/lib/libbpf.a
