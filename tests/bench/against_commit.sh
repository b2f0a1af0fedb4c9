#!/bin/sh
# This build's speed against an older commit's, side by side on the same machine: a speed-up that
# does not depend on the machine, where absolute events per CPU-second do (one machine's speed
# drifts by 10-20% within minutes). Every preset's events are the same in both builds as long as
# the model did not change between them (side_by_side.py compares their fingerprints before it
# times them, and refuses to time different simulations).
#
#   tests/bench/against_commit.sh COMMIT [CLI]   # CLI: the build to measure (build/release/app/cli/blkmqlab-cli)
#
# 03dc366 is the last commit before the engine's speed work. Builds COMMIT's blkmqlab-cli (Release,
# no GUI, no tests; about 5 minutes on two cores) in a temporary folder from `git archive` (so it
# needs this repository's history, not a network), then runs side_by_side.py with it as A and CLI
# as B. PAIRS (5) sets the alternating pairs per preset. The figures come twice: of whole runs, and
# less each build's start (--less-start), the engine's work alone: the CLI of a build with the GUI
# starts about 8 ms slower than one without (it loads Qt).
set -eu

[ $# -ge 1 ] || { echo "usage: against_commit.sh COMMIT [CLI]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
base=$(git -C "$root" rev-parse --verify "$1^{commit}" 2>/dev/null) \
    || { echo "against_commit: '$1' is not a commit of this repository" >&2; exit 2; }
cli=${2:-$root/build/release/app/cli/blkmqlab-cli}
pairs=${PAIRS:-5}
[ -x "$cli" ] || { echo "against_commit: $cli is not an executable blkmqlab-cli (build it first)" >&2; exit 2; }
case $pairs in '' | *[!0-9]* | 0) echo "against_commit: PAIRS must be a positive number, not '$pairs'" >&2; exit 2 ;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/src"
git -C "$root" archive "$base" | tar -x -C "$work/src"
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBLKMQLAB_BUILD_GUI=OFF \
    -DBLKMQLAB_BUILD_TESTS=OFF -DBLKMQLAB_WERROR=OFF > "$work/configure.log" \
    || { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" --target blkmqlab-cli -j "$(nproc)" > "$work/build.log" \
    || { tail -40 "$work/build.log" >&2; exit 1; }

echo "A: $(git -C "$root" log -1 --format='%h %s' "$base" | cut -c1-90), B: $cli"
python3 "$root/tests/bench/side_by_side.py" "$work/build/app/cli/blkmqlab-cli" "$cli" \
    single-core-null=4s nvme-2s64-mq=2s restart-128x64=600ms wagner-nvmefc-4s80=400ms --pairs "$pairs" --less-start
