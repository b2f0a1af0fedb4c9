#!/bin/sh
# A guest that outlives its deadline: one line naming what happened and what the guest printed last,
# exit 1, and no QEMU left running. Usage: deadline.sh CLI ORACLE_DIR CACHE
cli=$1 dir=$2 cache=$3
out=$("$cli" oracle "$dir/machines/virtio-2s4c.json" --fio "$dir/jobs/randread-60s.fio" --cache "$cache" --timeout 10s 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, not 1"; exit 1; }
echo "$out" | grep -q "the guest did not finish within 10 s; it printed last: " || { echo "FAIL: no deadline message"; exit 1; }
[ "$(echo "$out" | wc -l)" -eq 1 ] || { echo "FAIL: more than one line"; exit 1; }
sleep 1
if pgrep -f 'blkmqlab-oracle\.' >/dev/null; then echo "FAIL: QEMU is still running"; exit 1; fi
echo "ok: killed at its deadline"
