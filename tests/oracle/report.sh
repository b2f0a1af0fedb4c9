#!/bin/sh
# Runs every oracle case and writes docs/validation.md's "The real kernel" section from the run
# (between its <!-- oracle report --> markers). Usage: tests/oracle/report.sh [CLI] [CACHE]
set -eu
cd "$(dirname "$0")/../.."
cli=${1:-build/release/app/cli/blkmqlab-cli}
cache=${2:-build/release/oracle}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for case in tests/oracle/*.json; do
    name=$(basename "$case" .json)
    "$cli" oracle --case "$case" --cache "$cache" --json "$out/$name.json" > "$out/$name.txt" 2>&1 || true
    [ -s "$out/$name.json" ] || { echo "report: $name did not run:"; cat "$out/$name.txt"; exit 1; }
done
python3 - "$out" <<'PY'
import glob, json, os, re, subprocess, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    d = json.load(open(path))
    f = d["figures"]
    def val(fid, side):
        v = f[fid][side]
        if isinstance(v, list):
            return ",".join(map(str, v)) if v else "-"
        return f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}"
    judged = [k for k, v in f.items() if "holds" in v]
    held = sum(1 for k in judged if f[k]["holds"])
    routes = open(path[:-5] + ".txt").read()
    m = re.search(r"`routes`\) \| ([^|]*) \| ([^|]*) \|", routes)
    rows.append(f"| `{d['case']}` | {m.group(1).strip()} / {m.group(2).strip()} | "
                f"{val('off_submitter_pct','kernel')} / {val('off_submitter_pct','lab')} | "
                f"{val('blk_ipi_cpus','kernel')} / {val('blk_ipi_cpus','lab')} | "
                f"{val('completions_per_irq','kernel') if 'completions_per_irq' in f else '-'} / "
                f"{val('completions_per_irq','lab')} | "
                f"{val('ipis_per_sent_back','kernel')} / {val('ipis_per_sent_back','lab')} | "
                f"{val('first_device_pct','kernel')} / {val('first_device_pct','lab')} | "
                f"{held} of {len(judged)} |")
kernel = json.load(open(sorted(glob.glob(os.path.join(out, "*.json")))[0]))["kernel"]
head = ("| case | where each CPU's requests complete (kernel / lab) | % off the submitter | CPUs taking "
        "completion IPIs | completions per interrupt (shown) | IPIs per request sent back (shown) | % of the "
        "completions on the first device | judged figures that hold |\n| --- | --- | --- | --- | --- | --- | --- | --- |")
cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True,
                     text=True).stdout.strip()
text = (f"Printed by `tests/oracle/report.sh` (every case of tests/oracle, Linux {kernel} under QEMU's TCG on "
        f"{os.cpu_count()} cores of an {cpu}):\n\n" + head + "\n" + "\n".join(rows))
doc = "docs/validation.md"
s = open(doc).read()
s = re.sub(r"<!-- oracle report -->\n(?:.*?\n)?<!-- end oracle report -->",
           "<!-- oracle report -->\n" + text + "\n<!-- end oracle report -->", s, flags=re.S)
open(doc, "w").write(s)
print(text)
PY
