#!/bin/sh
# The kernel-dependent tests, run inside a guest (tools/guest/run.sh runs
# this; `make test-guest-K`), from the list tools/guest/parts.sh wrote on
# the host. Every part given must run: the summary counts the parts given
# and the parts that ran, and a difference fails.
#
#   sh tools/guest/tests.sh PARTS_LIST
#
# KSYM_REQUIRE=all here: a kernel skip is a failure.
set -u

parts=$1
# Real modules of the image, loaded before the tests: one without
# dependencies, one with BTF and many functions, one with dependencies.
MODULES="dummy veth bridge"
# The corpus test loads every program twice (libbpf, then the bundled
# loader): far too long under emulation. Here it takes the objects that
# meet the kernel's layouts and features most (CO-RE, kfuncs, typed ksyms,
# storage maps, maps of maps with BTF, struct_ops), while
# test_libbpf_prepare compares every program of the corpus after
# bpf_object__prepare against this kernel's BTF without loading.
corpus_only=${KSYM_CORPUS_ONLY:-core,kfunc,ksym,local_storage,map_kptr,timer_mim,bpf_cubic,bpf_dctcp}

fail=0
given=0
ran=0
log=${TMPDIR:-/tmp}/ksym-guest-test.log
checked=${TMPDIR:-/tmp}/ksym-guest-checked.log
: > "$checked"
report() { # status name detail
    grep -h '^ *checked: not on this kernel' "$log" | sed "s/^ *//; s|^|$2: |" >> "$checked"
    if [ "$1" = 0 ]; then
        echo "ok   guest $KSYM_KERNEL $2 ($3)"
    else
        echo "FAIL guest $KSYM_KERNEL $2 (exit $1)"
        tail -n 60 "$log"
        fail=1
    fi
    ran=$((ran + 1))
}

t0=$(date +%s)
echo "guest: $(uname -r) ($KSYM_KERNEL), $(nproc) CPUs, $(grep -c . /proc/kallsyms) kallsyms lines, root: $(cat /etc/debian_version)"
for m in $MODULES; do
    modprobe "$m" || { echo "FAIL guest $KSYM_KERNEL modprobe $m"; fail=1; }
done
echo "guest: modules: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"

while read -r kind name path filter count; do
    case $kind in "#"* | "") continue ;; esac
    given=$((given + 1))
    start=$(date +%s)
    case $kind in
        rust)
            [ "$filter" = - ] && filter=""
            # --nocapture: the tests' "checked: not on this kernel" lines
            # are reported below with the C tests'.
            "$path" $filter --nocapture > "$log" 2>&1
            rc=$?
            passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | tail -n 1)
            if [ "$rc" = 0 ] && [ "${passed:-0}" != "$count" ]; then
                echo "guest: $name ran ${passed:-no} tests, $count were given" >> "$log"
                rc=1
            fi
            report "$rc" "rust $name${filter:+ $filter*}" "$count tests, $(($(date +%s) - start)) s"
            ;;
        c)
            case $name in
                test_libbpf_corpus) KSYM_CORPUS_ONLY=$corpus_only "$path" > "$log" 2>&1 ;;
                # libbpf's newest source on the multi programs (the whole
                # corpus runs on the host): a module's section against the
                # kernel's module BTF objects.
                test_libbpf_prepare_next) KSYM_CORPUS_ONLY=multi.bpf.o "$path" > "$log" 2>&1 ;;
                *) "$path" > "$log" 2>&1 ;;
            esac
            rc=$?
            report "$rc" "c $name" "$(tail -n 1 "$log"), $(($(date +%s) - start)) s"
            ;;
        script)
            sh "$path" > "$log" 2>&1
            rc=$?
            report "$rc" "$name" "$(tail -n 1 "$log"), $(($(date +%s) - start)) s"
            ;;
        *) echo "FAIL guest $KSYM_KERNEL: unknown part kind '$kind' in $parts"; fail=1 ;;
    esac
done < "$parts"

if [ "$ran" != "$given" ] || [ "$given" = 0 ]; then
    echo "FAIL guest $KSYM_KERNEL: $given parts given, $ran ran"
    fail=1
fi
# What this kernel lacks, each checked as its documented behaviour (the
# kernel table, tests/kernels.txt), by need.
if [ -s "$checked" ]; then
    echo "guest $KSYM_KERNEL: checked, not on this kernel: $(sed -n 's/.*checked: not on this kernel ([^)]*): \([a-z_]*\).*/\1/p' "$checked" |
        sort | uniq -c | awk '{ printf "%s%s (%d)", sep, $2, $1; sep = ", " }')"
fi
if [ "$fail" = 0 ]; then
    echo "guest $KSYM_KERNEL: all $ran of $given parts passed in $(($(date +%s) - t0)) s"
fi
exit $fail
