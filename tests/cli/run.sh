#!/bin/sh
# The CLI's tests: each tests/cli/*.out is one case a reviewer can read,
#
#   $ ksym ARGS...          the command ($DATA, $OBJ, $TMP stand for the
#                           bundled data, c-tests/bpf and a scratch dir)
#   # compare: shape        optional: numbers and addresses may differ
#   # needs: kernel         optional: runs only where the kernel allows
#                           (root, bpf(), /sys/kernel/btf/vmlinux)
#   ...stdout...
#   ! ...stderr...
#   exit N
#
# run against build/ksym; a difference fails with a diff. KSYM_CLI_UPDATE=1
# rewrites the files from what the CLI prints now (review the diff).
# Also checks docs/cli.md: its reference part is `ksym --help-markdown`, its
# examples are copies of cases.
#
#   sh tests/cli/run.sh build/ksym build/testdata
set -eu
KSYM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
DATA=$(cd "$2" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OBJ=$ROOT/c-tests/bpf
CC=${CC:-cc}
cd "$ROOT"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ksym-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

# A kallsyms that hides its addresses, as kptr_restrict makes it.
sed 's/^[0-9a-f]* /0000000000000000 /' "$DATA/linux-6.12-cloud/kallsyms" > "$TMP/restricted"
"$CC" -std=c99 -Wall -Wextra -Werror -Iinclude -o "$TMP/need" tests/cli/need.c

# Kernel addresses: `ksym addresses`, the library's one rule (the first
# lines, not the first line: x86-64 kernels print a per-CPU 0 first).
kernel_ok() {
    [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] \
        && "$KSYM" addresses > /dev/null 2>&1
}

# Numbers and addresses out, for `# compare: shape`.
shape() {
    sed -E 's/0x[0-9a-f]+/HEX/g; s/\b[0-9a-f]{8,16}\b/HEX/g; s/[0-9]+(\.[0-9]+)?/N/g'
}

# Runs one case's command and writes the case file's form of its output.
run_case() {
    cmdline=$1
    out=$2
    eval "set -- $cmdline"
    shift # "ksym"
    rc=0
    "$KSYM" "$@" > "$TMP/stdout" 2> "$TMP/stderr" || rc=$?
    {
        cat "$TMP/stdout"
        sed 's/^/! /' "$TMP/stderr"
        echo "exit $rc"
    } | sed -e "s|$TMP|\$TMP|g" -e "s|$DATA|\$DATA|g" -e "s|$OBJ|\$OBJ|g" > "$out"
}

fail=0
passed=0
skipped=0
for case in tests/cli/*.out; do
    name=$(basename "$case" .out)
    cmdline=$(sed -n '1s/^\$ //p' "$case")
    header=$(sed -n '2,3{/^# /p}' "$case")
    if echo "$header" | grep -q '^# needs: kernel' && ! kernel_ok; then
        "$TMP/need" kernel "cli $name: needs root, bpf(), kallsyms addresses and kernel BTF" || fail=1
        skipped=$((skipped + 1))
        continue
    fi
    run_case "$cmdline" "$TMP/actual"
    { echo "\$ $cmdline"; [ -z "$header" ] || echo "$header"; cat "$TMP/actual"; } > "$TMP/new"
    if [ "${KSYM_CLI_UPDATE:-}" = 1 ]; then
        cp "$TMP/new" "$case"
        continue
    fi
    if echo "$header" | grep -q '^# compare: shape'; then
        shape < "$case" > "$TMP/want"
        shape < "$TMP/new" > "$TMP/got"
    else
        cp "$case" "$TMP/want"
        cp "$TMP/new" "$TMP/got"
    fi
    if diff -u "$TMP/want" "$TMP/got" > "$TMP/diff"; then
        passed=$((passed + 1))
    else
        echo "FAIL cli $name: $cmdline"
        sed "s|$TMP/want|$case|; s|$TMP/got|ksym's output|" "$TMP/diff"
        fail=1
    fi
done

# docs/cli.md: the part between the markers is `ksym --help-markdown`, and
# the block after each `<!-- case: NAME -->` is tests/cli/NAME.out.
begin='<!-- ksym --help-markdown: begin (make cli-doc writes this part) -->'
end='<!-- ksym --help-markdown: end -->'
"$KSYM" --help-markdown > "$TMP/reference"
# The document as it should be: reference and case blocks filled in.
awk -v b="$begin" -v e="$end" -v ref="$TMP/reference" '
    $0 == b { print; while ((getline l < ref) > 0) print l; skip = 1; next }
    $0 == e { skip = 0 }
    skip { next }
    /^<!-- case: [a-z0-9-]+ -->$/ { name = $3; print; getline; print; block = 1;
        f = "tests/cli/" name ".out"
        if ((getline l < f) <= 0) { print "no case " f > "/dev/stderr"; exit 1 }
        print l; while ((getline l < f) > 0) print l; close(f); next }
    block && /^```$/ { block = 0; print; next }
    block { next }
    { print }' docs/cli.md > "$TMP/cli.md"
if [ "${KSYM_CLI_UPDATE:-}" = 1 ]; then
    cp "$TMP/cli.md" docs/cli.md
    echo "cli: case files and docs/cli.md rewritten from build/ksym: review git diff"
    exit 0
fi
if ! grep -qxF "$begin" docs/cli.md || ! diff -u docs/cli.md "$TMP/cli.md" > "$TMP/diff"; then
    echo "FAIL cli: docs/cli.md's reference or examples are not what ksym and tests/cli say (make cli-doc)"
    cat "$TMP/diff"
    fail=1
fi
[ "$fail" = 0 ] && echo "cli: $passed cases passed, $skipped skipped; docs/cli.md matches them and the command table"
exit $fail
