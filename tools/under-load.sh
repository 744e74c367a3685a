#!/bin/sh
# make test under load, as a busy or distro machine runs it: a fresh
# clone of COMMIT runs `.ci/run` while a second clone rebuilds the library
# in a loop (`rm -rf target build; make -j2 lib`), and /proc/loadavg is
# logged every minute. Prints the run's result line; the logs stay in OUT.
#
#   sh tools/under-load.sh [COMMIT] [OUT]      (default: HEAD, /tmp/under-load)
#
# UNDER_LOAD_CMD replaces `sh .ci/run` (to try the harness itself).
# Run it twice in a row for the manual-and-tests issue's proof. It takes
# the machine for an hour: nothing else, no bench, beside it.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse "${1:-HEAD}") || exit 2
out=${2:-/tmp/under-load}
rm -rf "$out" && mkdir -p "$out"
git clone -q "$repo" "$out/ci" && git -C "$out/ci" checkout -q "$commit" || exit 2
git clone -q "$repo" "$out/load" || exit 2
setsid sh -c 'cd "$1" && i=0; while :; do i=$((i + 1)); rm -rf target build; s=$(date +%s);
    make -j2 lib > /dev/null 2>&1; echo "build $i: rc=$? $(($(date +%s) - s)) s" >> "$2/loop.log"; done' \
    sh "$out/load" "$out" &
loop=$!
(while :; do echo "$(date +%T) $(cat /proc/loadavg)" >> "$out/loadavg.log"; sleep 60; done) &
la=$!
start=$(date +%s)
(cd "$out/ci" && sh -c "${UNDER_LOAD_CMD:-sh .ci/run}") > "$out/ci.log" 2>&1
rc=$?
kill "$la" 2> /dev/null
kill -- -"$loop" 2> /dev/null
echo "under-load: rc=$rc in $(($(date +%s) - start)) s, commit $commit, $(wc -l < "$out/loop.log") builds beside it;" \
    "load $(awk '{print $3}' "$out/loadavg.log" | sort -n | sed -n '1p;$p' | tr '\n' ' ')(1-min min, max); logs in $out" \
    | tee "$out/result"
exit "$rc"
