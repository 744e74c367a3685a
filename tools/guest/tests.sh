#!/bin/sh
# The kernel-dependent tests, run inside the guest (tools/guest/run.sh runs
# this; `make test-guest`). Only what touches the running kernel runs here:
# TCG is 10-30x slower than the host.
#
#   sh tools/guest/tests.sh RUST_LIST C_DIR [SCRIPT...]
#
# RUST_LIST: the Rust test executables (one path per line, from `cargo test
# --no-run`). Of each, the tests whose names start with `live_` run; the
# binaries named in WHOLE below run whole (every test in them depends on the
# running kernel: root, its /proc/kallsyms, its boot id, bpf()).
# C_DIR: the plain builds of the C tests (c-tests/run.sh's test_* binaries);
# each runs once, with the bundled data.
# SCRIPT: more guest parts (e.g. bcc/tests/guest.sh), each run with sh from
# the project directory after the rest.
#
# KSYM_REQUIRE=all here: a kernel skip is a failure.
set -u

rust_list=$1
c_dir=$2
shift 2
WHOLE="snapshot btf_snapshot struct_ops"
# Real modules of the image, loaded before the tests: one without
# dependencies, one with BTF and many functions, one with dependencies.
MODULES="dummy veth bridge"

fail=0
ran=0
log=${TMPDIR:-/tmp}/ksym-guest-test.log
report() { # status name detail
    if [ "$1" = 0 ]; then
        echo "ok   guest $2 ($3)"
    else
        echo "FAIL guest $2 (exit $1)"
        tail -n 60 "$log"
        fail=1
    fi
    ran=$((ran + 1))
}

t0=$(date +%s)
echo "guest: $(uname -r), $(nproc) CPUs, $(grep -c . /proc/kallsyms) kallsyms lines"
for m in $MODULES; do
    modprobe "$m" || { echo "FAIL guest modprobe $m"; fail=1; }
done
echo "guest: modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"

while read -r bin; do
    [ -n "$bin" ] || continue
    name=$(basename "$bin" | sed 's/-[0-9a-f]*$//')
    case " $WHOLE " in
        *" $name "*) filter="" ;;
        *) filter=live_ ;;
    esac
    n=$("$bin" --list $filter 2> /dev/null | grep -c ': test$')
    [ "$n" -gt 0 ] || continue
    start=$(date +%s)
    "$bin" $filter > "$log" 2>&1
    rc=$?
    report "$rc" "rust $name${filter:+ $filter*}" "$n tests, $(($(date +%s) - start)) s"
done < "$rust_list"

# The corpus test loads every program twice (libbpf, then the bundled
# loader): far too long under emulation. Here it takes the objects that
# meet the kernel's layouts and features most (CO-RE, kfuncs, typed ksyms,
# storage maps, maps of maps with BTF, struct_ops), while
# test_libbpf_prepare compares every program of the corpus after
# bpf_object__prepare against this kernel's BTF without loading.
corpus_only=${KSYM_CORPUS_ONLY:-core,kfunc,ksym,local_storage,map_kptr,timer_mim,bpf_cubic,bpf_dctcp}

for t in "$c_dir"/test_*; do
    case $t in *.valgrind | *.asan | *.static | *.log | *.o | */test_dlopen | */test_cxx) continue ;; esac
    [ -x "$t" ] || continue
    start=$(date +%s)
    case $t in
        */test_libbpf_corpus) KSYM_CORPUS_ONLY=$corpus_only "$t" > "$log" 2>&1 ;;
        *) "$t" > "$log" 2>&1 ;;
    esac
    rc=$?
    report "$rc" "c $(basename "$t")" "$(tail -n 1 "$log"), $(($(date +%s) - start)) s"
done

for script in "$@"; do
    start=$(date +%s)
    sh "$script" > "$log" 2>&1
    rc=$?
    report "$rc" "$script" "$(tail -n 1 "$log"), $(($(date +%s) - start)) s"
done

if [ "$fail" = 0 ]; then
    echo "guest tests: all $ran passed in $(($(date +%s) - t0)) s"
fi
exit $fail
