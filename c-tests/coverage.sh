#!/bin/sh
# Which C test calls each function of include/ksym.h (a markdown table for
# c-tests/README.md with --table); fails when a function has none. Only
# calls count (`name(`, blanks allowed before the parenthesis), in the C
# and C++ test code with its comments removed: not a mention in a comment
# or a BPF source (c-tests/bpf/*.bpf.c), not the function's name as a
# value (`name)`, `name,`: sizeof, __typeof__, a pointer taken), and not a
# struct of the same name (`sizeof(struct ksym_btf_stats)`). A test's code
# is its file and the headers of c-tests/ it includes (the helpers tests
# share, as tool_objects.h), but the harness, check.h.
set -eu
fail=0
table=${1:-}
code=$(mktemp -d)
trap 'rm -rf "$code"' EXIT
for src in c-tests/*.c c-tests/*/*.c c-tests/*.cpp; do
    case $src in *.bpf.c) continue ;; esac
    [ -f "$src" ] || continue
    t=$(basename "$src" | sed 's/\.c.*$//')
    # The preprocessor without includes or macro expansion: comments gone,
    # strings and code as written; then the names of types (struct, union,
    # enum ksym_*) dropped, some of which are function names too.
    headers=$(sed -n 's/^#include "\([^"]*\.h\)".*/\1/p' "$src" | while read -r h; do
        f=$(dirname "$src")/$h
        case $f in */check.h | *tools/*) continue ;; esac
        [ -f "$f" ] && echo "$f"
    done)
    for f in "$src" $headers; do
        ${CC:-cc} -fpreprocessed -dD -E -P -x c "$f" 2> /dev/null | grep -v '^#' ||
            { echo "FAIL: cannot strip the comments of $f" >&2; exit 1; }
    done | sed -E 's/\b(struct|union|enum)[[:space:]]+ksym_[a-z0-9_]+//g' > "$code/$t.$$" ||
        { echo "FAIL: cannot strip the comments of $src" >&2; exit 1; }
    cat "$code/$t.$$" >> "$code/$t"
    rm -f "$code/$t.$$"
done
[ "$table" = "--table" ] && { echo "| function | C tests |"; echo "|---|---|"; }
for f in $(grep -oE '\bksym_[a-z0-9_]+\(' include/ksym.h | tr -d '(' | sort -u); do
    tests=$(cd "$code" && grep -lE "\\b$f[[:space:]]*\\(" -- * 2> /dev/null | sort -u | tr '\n' ' ' || true)
    if [ -z "$tests" ]; then
        echo "FAIL: $f is called by no C test" >&2
        fail=1
    fi
    [ "$table" = "--table" ] && echo "| \`$f\` | $tests|"
done
[ "$table" = "--table" ] || [ "$fail" != 0 ] || echo "coverage: every function of ksym.h is called by a C test"
exit $fail
