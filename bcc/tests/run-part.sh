# Sourced by bcc/tests/run.sh and oracle.sh: run NAME COMMAND... runs one
# part with its output in $OUT/NAME.log and prints "ok   $where NAME (its
# last line; seconds)" with its skips, or "FAIL $where NAME" with the end of
# its log, and sets fail=1. A skip goes to make test's list (KSYM_SKIP_LOG)
# under "$where NAME", once: the valgrind and ASan runs skip what the plain
# one does.
run() {
    name=$1
    shift
    t0=$(date +%s)
    case $name in
        *.valgrind | *.asan) set -- env -u KSYM_SKIP_LOG "$@" ;;
        *) set -- env KSYM_SKIP_TEST="$where $name" "$@" ;;
    esac
    if "$@" > "$OUT/$name.log" 2>&1; then
        echo "ok   $where $name ($(grep -v '^SKIP' "$OUT/$name.log" | tail -n 1); $(($(date +%s) - t0)) s)"
        grep '^SKIP' "$OUT/$name.log" | sed 's/^/     /' || true
    else
        echo "FAIL $where $name" >&2
        tail -n 40 "$OUT/$name.log" >&2
        fail=1
    fi
}
