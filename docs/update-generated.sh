#!/usr/bin/env bash
# Rewrites the command output embedded in docs/*.md between
# "<!-- generated: blkmqlab-cli ARGS -->" and "<!-- end generated -->"; output that sits in a code
# block (the lines between the markers open with a fence) stays in one.
# Usage: docs/update-generated.sh [path/to/blkmqlab-cli]
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/release/app/cli/blkmqlab-cli}
for doc in docs/*.md README.md; do
    python3 - "$cli" "$doc" <<'PY'
import re, subprocess, sys
cli, doc = sys.argv[1], sys.argv[2]
text = open(doc).read()
def run(m):
    args = m.group(1).split()
    # check exits 3 when its property is violated: that verdict is the output shown
    r = subprocess.run([cli] + args, capture_output=True, text=True)
    if r.returncode not in ((0, 3) if args[0] == "check" else (0,)):
        sys.exit(f"{doc}: blkmqlab-cli {m.group(1)} exited {r.returncode}: {r.stderr}")
    out = r.stdout.rstrip("\n")
    if m.group(2).startswith("```"):
        out = f"```\n{out}\n```"
    return f"<!-- generated: blkmqlab-cli {m.group(1)} -->\n{out}\n<!-- end generated -->"
new = re.sub(r"<!-- generated: blkmqlab-cli (.*?) -->\n(.*?)\n<!-- end generated -->", run, text, flags=re.S)
if new != text:
    open(doc, "w").write(new)
    print(f"updated {doc}")
PY
done
