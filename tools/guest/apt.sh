#!/bin/sh
# apt-get or apt-cache for another Debian suite, without touching this
# machine's apt configuration: a sources list and a lists directory of
# their own under OUT (build/apt/<set>), and no sources.list.d
# (sourceparts=-: without it, bookworm's sources come in too).
#
#   sh tools/guest/apt.sh SET apt-get|apt-cache ARGS...
#
# SET is one of the suite sets below. The lists are fetched once (again
# when this script is newer than them, or with KSYM_APT_UPDATE=1).
# KSYM_APT_MIRROR (default: the host's deb.debian.org address) is the mirror.
set -eu

set_=$1
tool=$2
shift 2
mirror=${KSYM_APT_MIRROR:-http://deb.debian.org/debian}
security=${KSYM_APT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

case $set_ in
    bullseye) suites="$mirror bullseye main
$security bullseye-security main" ;;
    bookworm) suites="$mirror bookworm main
$mirror bookworm-updates main
$security bookworm-security main" ;;
    trixie) suites="$mirror trixie main
$mirror trixie-updates main
$security trixie-security main" ;;
    trixie-backports) suites="$mirror trixie main
$mirror trixie-updates main
$security trixie-security main
$mirror trixie-backports main" ;;
    *) echo "apt.sh: unknown suite set '$set_' (bullseye, bookworm, trixie, trixie-backports)" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${KSYM_APT_DIR:-$top/build/apt}/$set_
# The sources list stays outside the lists directory: `apt-get update`
# deletes what it does not know there.
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
echo "$suites" | sed 's/^/deb /' > "$dir/sources.list.new"
if ! cmp -s "$dir/sources.list.new" "$dir/sources.list" 2> /dev/null; then
    mv "$dir/sources.list.new" "$dir/sources.list"
    rm -f "$dir/.updated"
else
    rm -f "$dir/sources.list.new"
fi

opts="-o Dir::Etc::sourcelist=$dir/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$dir/lists
 -o Dir::Cache=$dir/cache -o Dir::Cache::archives=$dir/cache/archives -o Debug::NoLocking=1
 -o APT::Get::List-Cleanup=0 -o Acquire::Retries=3"

if [ ! -f "$dir/.updated" ] || [ "$0" -nt "$dir/.updated" ] || [ "${KSYM_APT_UPDATE:-0}" = 1 ]; then
    echo "apt: fetching the package lists of $set_" >&2
    # shellcheck disable=SC2086
    apt-get $opts -qq update > "$dir/update.log" 2>&1 ||
        { cat "$dir/update.log" >&2; echo "apt: 'apt-get update' of $set_ failed" >&2; exit 1; }
    touch "$dir/.updated"
fi
# shellcheck disable=SC2086
exec "$tool" $opts "$@"
