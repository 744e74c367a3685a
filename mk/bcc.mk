# libksym-bcc.so: bcc's kernel symbol cache (bcc_syms.h) answered by
# libksym, for tools linked with libbcc (LD_PRELOAD=libksym-bcc.so.0) and,
# through the interposer ksym-bcc/libbcc.so.0 (LD_LIBRARY_PATH), for bcc's
# Python tools. Sources, tests and benchmark in bcc/; user docs in docs/bcc.md.
#
#   make                 also builds build/libksym-bcc.so.$(VERSION) (+ .so.0, .so)
#                        and build/ksym-bcc/libbcc.so.0
#   make install         installs them beside libksym ($(LIBDIR)/ksym-bcc/libbcc.so.0)
#   make test            runs test-bcc (bcc/tests/run.sh: this machine's bcc 0.26
#                        and the Debian 13 root's bcc 0.31), and bcc/tests/guest.sh
#                        in the 6.1 and 6.12 guests (their roots' bcc 0.26 and 0.31)
#   make bench-bcc       the first kernel symbol from C, Python (bcc 0.26 and 0.31)
#                        and bpftrace (0.17 and 0.23.2), with and without it
#   make test-guest-bcc [K=6.12]  the guest part alone, in one kernel's guest

BCC_SOFILE  := libksym-bcc.so.$(VERSION)
BCC_SONAME  := libksym-bcc.so.$(MAJOR)
BCC_SRCS    := bcc/shim.c bcc/kcache.c bcc/core.c bcc/real.c bcc/settings.c bcc/note.c bcc/stdsort.c
BCC_HDRS    := $(wildcard bcc/*.h)
BCC_CFLAGS  := -std=gnu11 -Wall -Wextra -Werror -O2 -g -fPIC -fvisibility=hidden
BCC_OUT     := $(BUILD)/bcc
# bcc's library as the interposer names it: by the path of its soname's
# link, so that whichever bcc is installed there (0.26, 0.31) serves.
BCC_REAL_LIB ?= /usr/lib/$(shell $(CC) -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)/libbcc.so.0
BCC_INTERPOSER := $(BUILD)/ksym-bcc/libbcc.so.0

.PHONY: bcc-lib install-bcc uninstall-bcc test-bcc bcc-test-build test-guest-bcc bench-bcc

all: bcc-lib
bcc-lib: $(BUILD)/$(BCC_SOFILE) $(BCC_INTERPOSER)

# Linked with the shared libksym through its public header; found beside
# it ($ORIGIN), installed or in build/.
$(BUILD)/$(BCC_SOFILE): $(BCC_SRCS) $(BCC_HDRS) bcc/libksym-bcc.map include/ksym.h $(BUILD)/$(SOFILE)
	$(CC) $(BCC_CFLAGS) -Iinclude -DKSYM_BCC_VERSION='"$(VERSION)"' -shared -o $@ $(BCC_SRCS) \
	    -Wl,-soname,$(BCC_SONAME) -Wl,--version-script=bcc/libksym-bcc.map -Wl,-z,defs \
	    -Wl,-rpath,'$$ORIGIN' -L$(BUILD) -lksym -ldl -lpthread
	ln -sf $(BCC_SOFILE) $(BUILD)/$(BCC_SONAME)
	ln -sf $(BCC_SONAME) $(BUILD)/libksym-bcc.so

# The interposer (bcc/interposer.c): no code, two dependencies in this
# order, libksym-bcc.so.0 (RUNPATH $ORIGIN/..) and bcc's library by its
# absolute path. ld records a library's soname, not its path: an empty
# stub whose soname is that path stands in for bcc at link time (bcc need
# not be installed to build it).
$(BCC_OUT)/real-stub/libbcc-real.so:
	@mkdir -p $(dir $@)
	echo 'const char ksym_bcc_stub;' | $(CC) -shared -fPIC -nostdlib -x c - -o $@ -Wl,-soname,$(BCC_REAL_LIB)

$(BCC_INTERPOSER): bcc/interposer.c $(BUILD)/$(BCC_SOFILE) $(BCC_OUT)/real-stub/libbcc-real.so
	@mkdir -p $(dir $@)
	$(CC) $(BCC_CFLAGS) -shared -o $@ bcc/interposer.c -Wl,-soname,libbcc.so.0 -Wl,--no-as-needed \
	    -Wl,-rpath,'$$ORIGIN/..' $(BUILD)/$(BCC_SONAME) $(BCC_OUT)/real-stub/libbcc-real.so

install: install-bcc
install-bcc: $(BUILD)/$(BCC_SOFILE) $(BCC_INTERPOSER)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(LIBDIR)/ksym-bcc
	install -m 0755 $(BUILD)/$(BCC_SOFILE) $(DESTDIR)$(LIBDIR)/$(BCC_SOFILE)
	ln -sf $(BCC_SOFILE) $(DESTDIR)$(LIBDIR)/$(BCC_SONAME)
	install -m 0755 $(BCC_INTERPOSER) $(DESTDIR)$(LIBDIR)/ksym-bcc/libbcc.so.0

uninstall: uninstall-bcc
uninstall-bcc:
	rm -f $(DESTDIR)$(LIBDIR)/$(BCC_SOFILE) $(DESTDIR)$(LIBDIR)/$(BCC_SONAME) $(DESTDIR)$(LIBDIR)/ksym-bcc/libbcc.so.0
	-rmdir $(DESTDIR)$(LIBDIR)/ksym-bcc 2> /dev/null

# Skips (c-tests/check.h's NEED_SKIP) are logged where make test lists
# every part's skips.
TEST_PARTS += test-bcc
test-bcc: $(BUILD)/$(BCC_SOFILE) $(BCC_INTERPOSER) testdata
	@mkdir -p target/tmp
	CC="$(CC)" CXX="$(CXX)" OUT=$(BCC_OUT) KSYM_TESTDATA=$(abspath $(BUILD)/testdata) \
	    KSYM_SKIP_LOG=$(abspath target/tmp/ksym-skipped) KSYM_SKIP_TEST=test-bcc \
	    sh bcc/tests/run.sh $(abspath $(BUILD)/$(BCC_SONAME))

bcc-test-build: $(BUILD)/$(BCC_SOFILE) $(BCC_INTERPOSER) testdata
	CC="$(CC)" CXX="$(CXX)" OUT=$(BCC_OUT) sh bcc/tests/run.sh $(abspath $(BUILD)/$(BCC_SONAME)) --build

# The guest part alone; `make test-guest-K` runs it in that kernel's boot.
test-guest-bcc: bcc-test-build guest-prepare-$(K)
	sh tools/guest/run.sh --kernel $(K) --timeout 1800 -- env OUT=$(BCC_OUT) sh bcc/tests/guest.sh

GUEST_DEPS    += bcc-test-build
GUEST_SCRIPTS_6.1 += bcc/tests/guest.sh
# bcc 0.31 (the Debian 13 root): the differential and callers' tests on
# 7.3, the Python tools on 6.12, so that neither guest holds both (each
# takes minutes under TCG; the two guests run side by side).
GUEST_SCRIPTS_6.12 += bcc/tests/tools.sh
GUEST_SCRIPTS_7.3 += bcc/tests/guest.sh

bench: bench-bcc
bench-bcc: $(BUILD)/$(BCC_SOFILE)
	CC="$(CC)" OUT=$(BCC_OUT) sh bcc/bench/bench.sh $(abspath $(BUILD)/$(BCC_SONAME))
