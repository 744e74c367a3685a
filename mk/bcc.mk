# libksym-bcc.so: bcc's kernel symbol cache (bcc_syms.h) answered by
# libksym, for tools linked with libbcc (LD_PRELOAD=libksym-bcc.so.0).
# Sources, tests and benchmark in bcc/; user docs in docs/bcc.md.
#
#   make                 also builds build/libksym-bcc.so.$(VERSION) (+ .so.0, .so)
#   make install         installs it beside libksym
#   make test            runs test-bcc (bcc/tests/run.sh)
#   make bench-bcc       bpftrace and the in-process cost, with and without it
#   make test-guest-bcc  the parts that need modules and kprobes, in the qemu
#                        guest (tools/guest/run.sh)

BCC_SOFILE  := libksym-bcc.so.$(VERSION)
BCC_SONAME  := libksym-bcc.so.$(MAJOR)
BCC_SRCS    := bcc/shim.c bcc/kcache.c bcc/stdsort.c
BCC_CFLAGS  := -std=gnu11 -Wall -Wextra -Werror -O2 -g -fPIC -fvisibility=hidden
BCC_OUT     := $(BUILD)/bcc

.PHONY: bcc-lib install-bcc uninstall-bcc test-bcc bcc-test-build test-guest-bcc bench-bcc

all: bcc-lib
bcc-lib: $(BUILD)/$(BCC_SOFILE)

# Linked with the shared libksym through its public header; found beside
# it ($ORIGIN), installed or in build/.
$(BUILD)/$(BCC_SOFILE): $(BCC_SRCS) bcc/internal.h bcc/libksym-bcc.map include/ksym.h $(BUILD)/$(SOFILE)
	$(CC) $(BCC_CFLAGS) -Iinclude -DKSYM_BCC_VERSION='"$(VERSION)"' -shared -o $@ $(BCC_SRCS) \
	    -Wl,-soname,$(BCC_SONAME) -Wl,--version-script=bcc/libksym-bcc.map -Wl,-z,defs \
	    -Wl,-rpath,'$$ORIGIN' -L$(BUILD) -lksym -ldl -lpthread
	ln -sf $(BCC_SOFILE) $(BUILD)/$(BCC_SONAME)
	ln -sf $(BCC_SONAME) $(BUILD)/libksym-bcc.so

install: install-bcc
install-bcc: $(BUILD)/$(BCC_SOFILE)
	install -d $(DESTDIR)$(LIBDIR)
	install -m 0755 $(BUILD)/$(BCC_SOFILE) $(DESTDIR)$(LIBDIR)/$(BCC_SOFILE)
	ln -sf $(BCC_SOFILE) $(DESTDIR)$(LIBDIR)/$(BCC_SONAME)

uninstall: uninstall-bcc
uninstall-bcc:
	rm -f $(DESTDIR)$(LIBDIR)/$(BCC_SOFILE) $(DESTDIR)$(LIBDIR)/$(BCC_SONAME)

TEST_PARTS += test-bcc
test-bcc: $(BUILD)/$(BCC_SOFILE) testdata
	CC="$(CC)" CXX="$(CXX)" OUT=$(BCC_OUT) KSYM_TESTDATA=$(abspath $(BUILD)/testdata) \
	    sh bcc/tests/run.sh $(abspath $(BUILD)/$(BCC_SONAME))

bcc-test-build: $(BUILD)/$(BCC_SOFILE) testdata
	CC="$(CC)" CXX="$(CXX)" OUT=$(BCC_OUT) sh bcc/tests/run.sh $(abspath $(BUILD)/$(BCC_SONAME)) --build

# The guest part alone; `make test-guest` runs it in its one boot.
test-guest-bcc: bcc-test-build
	sh tools/guest/run.sh --timeout 3600 -- env OUT=$(BCC_OUT) sh bcc/tests/guest.sh

GUEST_DEPS    += bcc-test-build
GUEST_SCRIPTS += bcc/tests/guest.sh

bench: bench-bcc
bench-bcc: $(BUILD)/$(BCC_SOFILE)
	CC="$(CC)" OUT=$(BCC_OUT) sh bcc/bench/bench.sh $(abspath $(BUILD)/$(BCC_SONAME))
