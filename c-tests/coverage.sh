#!/bin/sh
# Which C test calls each function of include/ksym.h (a markdown table for
# c-tests/README.md with --table); fails when a function has none.
set -eu
fail=0
table=${1:-}
[ "$table" = "--table" ] && { echo "| function | C tests |"; echo "|---|---|"; }
for f in $(grep -oE '\bksym_[a-z0-9_]+\(' include/ksym.h | tr -d '(' | sort -u); do
    tests=$(grep -lw "$f" c-tests/*.c c-tests/*/*.c c-tests/*.cpp 2>/dev/null | xargs -r -n1 basename | sed 's/\.c.*$//' | sort -u | tr '\n' ' ')
    if [ -z "$tests" ]; then
        echo "FAIL: $f is called by no C test" >&2
        fail=1
    fi
    [ "$table" = "--table" ] && echo "| \`$f\` | $tests|"
done
[ "$table" = "--table" ] || echo "coverage: every function of ksym.h is called by a C test"
exit $fail
