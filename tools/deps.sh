#!/bin/sh
# What the build and the tests need from the machine, in one place.
#
#   sh tools/deps.sh [--check] [GROUP...]      (default group: test)
#
# Groups:
#   test    everything `make test` needs (the default; `make test` runs this)
#   bench   `make bench` (the comparison's libbpf and the relocation bench)
#   bpf     `make bpf-objects` (clang and llvm-strip to rebuild the BPF objects)
#   bpftrace-fork  `make bpftrace-fork`: patch(1) and debootstrap on this
#           machine (bpftrace 0.23.2's build dependencies are in the
#           Debian 13 root, tools/root/debian13.packages)
#
# As root the missing Debian packages are installed with apt-get and the
# missing rustup components with rustup; not root, the same through sudo when
# sudo exists. Otherwise (or with --check) nothing is installed: one line
# names what is missing and the command that installs it, and the exit
# status is 1.
set -eu

check_only=0
groups=""
for a in "$@"; do
    case $a in
        --check) check_only=1 ;;
        test|bench|bpf|bpftrace-fork) groups="$groups $a" ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "deps.sh: unknown group '$a' (test, bench, bpf, bpftrace-fork)" >&2; exit 2 ;;
    esac
done
[ -n "$groups" ] || groups=test

# Debian packages per group, each with the reason it is there.
pkgs=""
for g in $groups; do
    case $g in
        test)
            # the C build, the C suite (valgrind, ASan needs nothing more than
            # gcc), the export check (binutils), the libFuzzer runtime (g++);
            pkgs="$pkgs make gcc g++ pkg-config valgrind binutils"
            # the BPF selftests corpus (tests/data/*.tar.xz) and test data;
            pkgs="$pkgs xz-utils gzip"
            # the oracles: bpftool (BTF dumps) and libbpf (relocation, attach);
            pkgs="$pkgs bpftool libbpf-dev"
            # libbpf 1.7, built from libbpf-sys's sources for the oracle
            # tests (mk/objects.mk), needs libelf and zlib;
            pkgs="$pkgs libelf-dev"
            pkgs="$pkgs zlib1g-dev"
            # the second kernel (make test-guest): qemu, the initramfs's
            # busybox, depmod/modprobe for the image's module order;
            pkgs="$pkgs qemu-system-x86 busybox-static kmod"
            # the Debian 13 root (tools/root/build.sh) and the guests'
            # kernels of other suites (tools/guest/apt.sh): debootstrap,
            # the suites' keys (debian-archive-keyring), xz for .ko.xz;
            pkgs="$pkgs debootstrap debian-archive-keyring xz-utils"
            # the real tools' test makes ext4 and xfs file systems in the
            # guest (c-tests/test_real_tools_probes_kernel.c: ext4dist, xfsdist);
            pkgs="$pkgs xfsprogs e2fsprogs"
            # libksym-bcc's oracles: the real bcc library (libbcc_bpf.so.0)
            # and unmodified bpftrace, which symbolizes through it; bcc's
            # Python module and tools (BPF.ksym, stackcount, trace, profile,
            # offcputime), which reach it through the interposer;
            pkgs="$pkgs libbpfcc bpftrace python3-bpfcc bpfcc-tools"
            ;;
        bench) pkgs="$pkgs libbpf-dev" ;;
        bpf) pkgs="$pkgs clang-19 llvm-19" ;;
        # patch(1) applies bpftrace/patches; the build runs in the Debian 13
        # root (tools/root/build.sh: debootstrap).
        bpftrace-fork) pkgs="$pkgs patch debootstrap debian-archive-keyring" ;;
    esac
done
components="clippy rustfmt"

missing=""
for p in $pkgs; do
    case " $missing " in *" $p "*) continue ;; esac
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
missing=${missing# }

missing_comp=""
if command -v rustup > /dev/null 2>&1; then
    installed=$(rustup component list --installed 2> /dev/null || true)
    for c in $components; do
        echo "$installed" | grep -q "^$c" || missing_comp="$missing_comp $c"
    done
else
    for c in $components; do
        case $c in
            clippy) cargo clippy --version > /dev/null 2>&1 || missing_comp="$missing_comp $c" ;;
            rustfmt) cargo fmt --version > /dev/null 2>&1 || missing_comp="$missing_comp $c" ;;
        esac
    done
fi
missing_comp=${missing_comp# }

[ -z "$missing$missing_comp" ] && exit 0

sudo=""
can_install=1
if [ "$(id -u)" != 0 ]; then
    if command -v sudo > /dev/null 2>&1; then sudo=sudo; else can_install=0; fi
fi
[ "$check_only" = 0 ] || can_install=0
if [ -n "$missing_comp" ] && ! command -v rustup > /dev/null 2>&1; then
    can_install=0
fi

cmd=""
[ -z "$missing" ] || cmd="${sudo:-sudo} apt-get install -y $missing"
[ -z "$missing_comp" ] || cmd="${cmd:+$cmd && }rustup component add $missing_comp"

if [ "$can_install" = 0 ]; then
    what=$missing
    [ -z "$missing_comp" ] || what="${what:+$what, }rust components $missing_comp"
    echo "missing for make ($groups ): $what; install with: $cmd" >&2
    exit 1
fi

if [ -n "$missing" ]; then
    echo "deps: installing $missing"
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends $missing > /dev/null
fi
if [ -n "$missing_comp" ]; then
    echo "deps: rustup component add $missing_comp"
    rustup component add $missing_comp
fi
