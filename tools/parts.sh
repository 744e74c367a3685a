#!/bin/sh
# Runs the parts of `make test` one after another, times each, and prints
# the table of their times against their budgets at the end (also when a
# part fails: the table says which, and the run stops there).
#
#   sh tools/parts.sh [--background TARGET] PART[:BUDGET_S][+PART[:BUDGET_S]...]...
#
# Each PART is a make target, run as `$MAKE --no-print-directory PART`.
# Parts joined by + run at the same time (two guests under TCG: most of a
# guest's tests use one CPU, so two keep both of this machine's busy), their
# output kept apart and shown when all of them are done; they run with
# KSYM_PARTS_PARALLEL=1 (mk/guest.mk: what they share is built by an
# earlier part, guest-build, not by each).
# --background TARGET starts `make TARGET` at once beside the parts (the
# guests' downloads and the Debian 13 root: network-bound, while the Rust
# build takes the CPUs); the first part whose name starts with test-guest
# waits for it. A budget is the time the part should take on a 2-core
# machine; a part over it is marked OVER in the table (a budget is not a
# test: the run does not fail for it; HACKING.md says what leaves
# `make test` first when the total goes over).
set -u

make_=${MAKE:-make}
bg=""
if [ "${1:-}" = --background ]; then
    bg=$2
    shift 2
fi
table=$(mktemp)
trap 'rm -f "$table" "$table.bg"' EXIT
t_start=$(date +%s)
bg_pid=""
if [ -n "$bg" ]; then
    echo "parts: $bg in the background"
    $make_ --no-print-directory "$bg" > "$table.bg" 2>&1 &
    bg_pid=$!
    bg_start=$(date +%s)
fi

fmt() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
show() {
    total=$(($(date +%s) - t_start))
    echo
    echo "make test: the time of each part (budgets for 2 cores)"
    printf '  %-22s %14s %14s\n' part time budget
    while read -r name secs budget status; do
        mark=""
        [ "$budget" != - ] && [ "$secs" -gt "$budget" ] && mark=" OVER"
        [ "$status" = ok ] || mark="$mark $status"
        b=-
        [ "$budget" = - ] || b=$(fmt "$budget")
        printf '  %-22s %14s %14s%s\n' "$name" "$(fmt "$secs")" "$b" "$mark"
    done < "$table"
    printf '  %-22s %14s %14s\n' total "$(fmt "$total")" "$(fmt 3600)"
}

# One part, or parts joined by +: run, timed, recorded; 1 when one failed.
run_group() {
    group=$1
    n=0
    pids=""
    for spec in $(echo "$group" | tr '+' ' '); do
        n=$((n + 1))
        name=${spec%%:*}
        budget=-
        case $spec in *:*) budget=${spec#*:} ;; esac
        eval "name_$n=\$name budget_$n=\$budget"
        if [ "$group" = "$spec" ]; then
            start=$(date +%s)
            $make_ --no-print-directory "$name"
            rc=$?
            echo "$name $(($(date +%s) - start)) $budget $([ $rc = 0 ] && echo ok || echo FAILED)" >> "$table"
            return $rc
        fi
        ( s=$(date +%s); KSYM_PARTS_PARALLEL=1 $make_ --no-print-directory "$name" > "$table.$n" 2>&1; rc=$?
          echo "$(($(date +%s) - s)) $rc" > "$table.$n.rc" ) &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p"; done
    fail=0
    k=1
    while [ "$k" -le "$n" ]; do
        eval "name=\$name_$k budget=\$budget_$k"
        echo "== $name (beside the others of $group)"
        cat "$table.$k"
        read -r secs rc < "$table.$k.rc"
        echo "$name $secs $budget $([ "$rc" = 0 ] && echo ok || echo FAILED)" >> "$table"
        [ "$rc" = 0 ] || fail=1
        rm -f "$table.$k" "$table.$k.rc"
        k=$((k + 1))
    done
    return $fail
}

for group in "$@"; do
    case $group in
        test-guest*)
            if [ -n "$bg_pid" ]; then
                if ! wait "$bg_pid"; then
                    cat "$table.bg"
                    echo "$bg $(($(date +%s) - bg_start)) - FAILED" >> "$table"
                    show
                    exit 1
                fi
                echo "$bg $(($(date +%s) - bg_start)) - ok(background)" >> "$table"
                bg_pid=""
            fi
            ;;
    esac
    if ! run_group "$group"; then
        show
        exit 1
    fi
done
if [ -n "$bg_pid" ]; then
    wait "$bg_pid" || { cat "$table.bg"; echo "$bg failed"; exit 1; }
fi
show
