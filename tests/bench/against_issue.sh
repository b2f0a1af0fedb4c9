#!/bin/sh
# Issue 13's preset targets as the speed-ups they ask for, measured side by side with the code the
# issue measured, on whatever machine this runs on.
#
# The issue gave its targets in events per CPU-second on the machine that filed it (single-core-null
# 4.8M -> 12M and real-time factor 1.66 -> 4, nvme-2s64-mq 5.1M -> 10M, restart-128x64 1.65M -> 5M).
# The machines this project is built on differ by 10-20% from one session to the next, and one
# machine's speed drifts within a session, so an absolute figure says as much about the machine as
# about the engine. What does not depend on the machine is the speed-up over the code the issue
# measured (03dc366, the commit before the first engine change, e6bcb48): every preset's events
# are the same in both (side_by_side.py compares their fingerprints before it times them).
#
#   tests/bench/against_issue.sh [CLI]   # CLI: the build to measure (build/release/app/cli/blkmqlab-cli)
#
# Builds 03dc366's blkmqlab-cli (Release, no GUI, no tests; about 5 minutes on two cores) in a
# temporary folder from `git archive` (so it needs this repository's history, not a network), then
# runs side_by_side.py with it as A and CLI as B. PAIRS (5) sets the alternating pairs per preset.
# The figures come twice: of whole runs, and less each build's start (--less-start), which is the
# engine's work alone as the issue's events per CPU-second count it: the CLI of a build with the
# GUI starts about 8 ms slower than 03dc366's without (it loads Qt), over 1% of a 4 s
# single-core-null run. docs/performance.md quotes its figures.
set -eu

base=03dc366b7448437b8efa2e21f0f2bdd2e08aa228
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${1:-$root/build/release/app/cli/blkmqlab-cli}
pairs=${PAIRS:-5}
[ -x "$cli" ] || { echo "against_issue: $cli is not an executable blkmqlab-cli (build it first)" >&2; exit 2; }
case $pairs in '' | *[!0-9]* | 0) echo "against_issue: PAIRS must be a positive number, not '$pairs'" >&2; exit 2 ;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/src"
git -C "$root" archive "$base" | tar -x -C "$work/src"
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBLKMQLAB_BUILD_GUI=OFF \
    -DBLKMQLAB_BUILD_TESTS=OFF -DBLKMQLAB_WERROR=OFF > "$work/configure.log" \
    || { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" --target blkmqlab-cli -j "$(nproc)" > "$work/build.log" \
    || { tail -40 "$work/build.log" >&2; exit 1; }

echo "Asked by issue 13 (its machine): single-core-null 4.8M -> 12M events/CPU-s (2.50x) and real-time"
echo "factor 1.66 -> 4 (2.41x); nvme-2s64-mq 5.1M -> 10M (1.96x); restart-128x64 1.65M -> 5M (3.03x)."
echo "A: 03dc366 (the code the issue measured), B: $cli"
python3 "$root/tests/bench/side_by_side.py" "$work/build/app/cli/blkmqlab-cli" "$cli" \
    single-core-null=4s nvme-2s64-mq=2s restart-128x64=600ms wagner-nvmefc-4s80=400ms --pairs "$pairs" --less-start
