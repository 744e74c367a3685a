#!/bin/sh
# make bench-compare REF=<commit> [BENCH_SECTIONS="table symbols"] [BENCH_ROUNDS=3]
#
# Builds the bench of another commit beside this tree (a git worktree under
# build/bench-ref, its own target directory) and runs the two benches in
# turn, ROUNDS times, the reference first in each round, on the same
# machine in the same sitting; then bench/compare.py prints every row both
# print, with the median of the per-round ratios this/ref. A regression
# shows as a ratio above 1 in one sitting, whatever the machine's minute.
set -eu
ref=$1
sections=${2:-}
rounds=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
wt=$root/build/bench-ref
out=$root/build/bench-compare
commit=$(git rev-parse --verify "$ref^{commit}")
if [ -d "$wt" ]; then
    git -C "$wt" checkout -q --detach "$commit"
else
    git worktree add -q --detach "$wt" "$commit"
fi
# The reference's test data (kallsyms snapshots, objects): its own make.
make -C "$wt" --no-print-directory testdata > /dev/null
bench_bin() {
    # The bench executable of the tree in $1 (built, not run), absolute.
    exe=$( (cd "$1" && CARGO_TARGET_DIR=$2 cargo bench -p ksym-bench --bench ksym_bench --no-run 2>&1) |
        sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -n 1)
    case $exe in
    /*) echo "$exe" ;;
    ?*) echo "$1/$exe" ;;
    esac
}
ours_bin=$(bench_bin "$root" "$root/target")
# The reference's target directory starts as a copy of this one's: the
# dependencies are built once.
[ -d "$wt/target" ] || cp -a --reflink=auto "$root/target" "$wt/target"
ref_bin=$(bench_bin "$wt" "$wt/target")
[ -x "$ours_bin" ] && [ -x "$ref_bin" ] || { echo "bench-compare: could not build both benches" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
echo "bench-compare: $(git rev-parse --short HEAD) (this tree$(git diff --quiet || echo ', with changes')) against $(git rev-parse --short "$commit"), $rounds rounds${sections:+, sections: $sections}"
i=1
while [ "$i" -le "$rounds" ]; do
    # shellcheck disable=SC2086
    (cd "$wt" && "$ref_bin" $sections) > "$out/ref.$i.md"
    # shellcheck disable=SC2086
    (cd "$root" && "$ours_bin" $sections) > "$out/ours.$i.md"
    echo "round $i of $rounds done"
    i=$((i + 1))
done
python3 "$root/bench/compare.py" "$out"
