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
