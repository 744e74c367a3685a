#!/bin/sh
# Reads the kernel table (tests/kernels.txt): the guests' kernels and this
# machine's, and what each has.
#
#   sh tools/guest/kernels.sh names                 the guest kernels, in table order
#   sh tools/guest/kernels.sh get NAME COLUMN       one cell (exit 1: no such row or column)
#   sh tools/guest/kernels.sh current               the running kernel's row: $KSYM_KERNEL
#                                                   (the guests set it), else the host row whose
#                                                   release pattern matches `uname -r`; exit 1: none
#   sh tools/guest/kernels.sh markdown              the feature columns as a Markdown table
#                                                   (docs/limits.md shows it; tests/docs.rs
#                                                   checks that it does)
set -eu

table=$(cd "$(dirname "$0")/../.." && pwd)/tests/kernels.txt
[ -f "$table" ] || { echo "kernels.sh: no $table" >&2; exit 1; }
rows() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$table"; }

case ${1:-} in
    names) rows | awk 'NR > 1 && $2 != "-" { print $1 }' ;;
    get)
        rows | awk -v n="$2" -v c="$3" '
            NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
            $1 == n { if (!(c in col)) { print "kernels.sh: no column " c > "/dev/stderr"; exit 2 }
                      print $col[c]; found = 1; exit }
            END { if (!found) exit 1 }' || { echo "kernels.sh: no row '$2' with column '$3' in $table" >&2; exit 1; }
        ;;
    current)
        if [ -n "${KSYM_KERNEL:-}" ]; then echo "$KSYM_KERNEL"; exit 0; fi
        rel=$(uname -r)
        for n in $(rows | awk 'NR > 1 && $2 == "-" { print $1 }'); do
            pat=$(sh "$0" get "$n" release)
            # shellcheck disable=SC2254
            case $rel in $pat) echo "$n"; exit 0 ;; esac
        done
        exit 1
        ;;
    markdown)
        rows | awk '
            NR == 1 { printf "| kernel |"; for (i = 5; i <= NF; i++) printf " %s |", $i; print "";
                      printf "|---|"; for (i = 5; i <= NF; i++) printf "---|"; print ""; next }
            { printf "| %s |", $1; for (i = 5; i <= NF; i++) printf " %s |", $i; print "" }'
        ;;
    *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
