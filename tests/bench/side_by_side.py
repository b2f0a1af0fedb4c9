#!/usr/bin/env python3
"""Two builds of blkmqlab-cli timed side by side, for a change's effect on a noisy machine.

For each preset, runs A and B alternately (A B, then B A, ...) pinned to one core, takes each run's
CPU time (user + system, from the child's rusage), and prints each build's median and the median of
the per-pair ratios B/A, with what the medians make of the run's events per CPU-second and its
real-time factor. A process's CPU time includes its start (loading, building the engine, the
summary: about 3 ms, 10-11 for a build that links the GUI's libraries); with --less-start the same
figures follow less each build's start, the median of 7 runs of the preset for 1 ns. Before timing, one run of each writes its summary and the two
fingerprints are compared: a speed change that also changed the simulated events is reported, not
timed.

    python3 tests/bench/side_by_side.py build/release/app/cli/blkmqlab-cli \\
        build/release-pgo/app/cli/blkmqlab-cli single-core-null=1s nvme-2s64-mq=500ms --pairs 20

docs/performance.md quotes its figures. Needs python3 and taskset (util-linux).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def summary(cli, preset, duration):
    """The run's fingerprint, its events and its simulated seconds, from the summary it writes."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "summary.json")
        subprocess.run([cli, "run", "--preset", preset, "--set", f"duration={duration}", "--quiet", "--json", out],
                       check=True, stdout=subprocess.DEVNULL)
        with open(out, encoding="utf-8") as f:
            s = json.load(f)
        return s["fingerprint"], s["engine"]["events"], s["sim_time_ns"] / 1e9


def cpu_seconds(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="blkmqlab-cli of the build before")
    ap.add_argument("b", help="blkmqlab-cli of the build after")
    ap.add_argument("runs", nargs="+", metavar="PRESET=DURATION", help="e.g. single-core-null=1s")
    ap.add_argument("--pairs", type=int, default=10, help="alternating pairs per preset (10)")
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1, help="core to pin to (the last)")
    ap.add_argument("--less-start", action="store_true",
                    help="also print the figures less each build's start (its median CPU time over 7 runs "
                         "of the preset for 1 ns: loading, the engine's construction, the summary)")
    args = ap.parse_args()
    if args.pairs < 1:
        sys.exit("side_by_side: --pairs must be at least 1")

    for run in args.runs:
        preset, sep, duration = run.partition("=")
        if not sep or not preset or not duration:
            sys.exit(f"side_by_side: '{run}' is not PRESET=DURATION")
        (fa, events, simulated), (fb, _, _) = summary(args.a, preset, duration), summary(args.b, preset, duration)
        if fa != fb:
            print(f"{preset} {duration}: fingerprints differ ({fa} / {fb}): the builds simulate different events")
            continue
        def timed(cli, d):
            return cpu_seconds(["taskset", "-c", str(args.cpu), cli, "run", "--preset", preset, "--set",
                                f"duration={d}", "--quiet"])

        def pairs(n, d):
            times = {"a": [], "b": []}
            for i in range(n):
                for which in ("a", "b") if i % 2 == 0 else ("b", "a"):
                    times[which].append(timed(args.a if which == "a" else args.b, d))
            return times

        times = pairs(args.pairs, duration)
        start = {"a": 0.0, "b": 0.0}
        if args.less_start:
            starts = pairs(7, "1ns")
            start = {k: statistics.median(v) for k, v in starts.items()}

        def report(label, sa, sb):
            ratios = [(b - sb) / (a - sa) for a, b in zip(times["a"], times["b"])]
            ta, tb = statistics.median(times["a"]) - sa, statistics.median(times["b"]) - sb
            ratio = statistics.median(ratios)
            return (f"{label}A {ta:.3f} s, B {tb:.3f} s (medians); B/A {ratio:.3f} (pairs {min(ratios):.3f} to "
                    f"{max(ratios):.3f}); {events} events: A {events / ta / 1e6:.2f}M, B {events / tb / 1e6:.2f}M "
                    f"per CPU-second, real-time factor A {simulated / ta:.2f}, B {simulated / tb:.2f}; "
                    f"B runs {1 / ratio:.2f}x as fast")

        line = f"{preset} {duration}, {args.pairs} pairs pinned to CPU {args.cpu}, fingerprint {fa}: " + report("", 0, 0)
        if args.less_start:
            line += (f"\n  less the start (A {start['a'] * 1e3:.1f} ms, B {start['b'] * 1e3:.1f} ms): "
                     + report("", start["a"], start["b"]))
        print(line, flush=True)


if __name__ == "__main__":
    main()
