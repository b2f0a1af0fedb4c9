#!/usr/bin/env bash
# A real Slurm cluster of one node on this machine runs a sharded sweep as an array job, then the
# merge job that depends on it; the merged CSV must be byte for byte what the same sweep writes
# unsharded here. It installs what it needs (Debian's slurmctld, slurmd, slurm-client and munge),
# starts munged (if none runs) and the two Slurm daemons with a private configuration
# (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, no cgroup.conf) and stops what it
# started. If the daemons cannot start it says so and fails: it never skips.
#
#   bash tests/slurm/slurm-sweep-test.sh [path/to/blkmqlab-cli]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
cli=$(realpath "${1:-build/release/app/cli/blkmqlab-cli}")
[ -x "$cli" ] || { echo "slurm test: $cli is not built (bash .ci/bootstrap first)"; exit 1; }

missing=()
for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "slurm test: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "$(id -u)" -eq 0 ] || { echo "slurm test: the daemons run as root here; run it as root (CI does)"; exit 1; }

work=$(mktemp -d /tmp/blkmqlab-slurm.XXXXXX)
chmod 755 "$work"
pids=()
started_munge=""
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    [ -n "$started_munge" ] && kill "$started_munge" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "slurm test: FAILED: $*"
    for log in "$work"/slurmctld.log "$work"/slurmd.log; do
        [ -f "$log" ] && { echo "--- $log"; tail -20 "$log"; }
    done
    exit 1
}

# munge authenticates Slurm's messages: use the running munged, or start one on the package's key.
if ! pgrep -x munged >/dev/null; then
    [ -f /etc/munge/munge.key ] || fail "no /etc/munge/munge.key (the munge package creates it)"
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    runuser -u munge -- /usr/sbin/munged --force || fail "munged did not start"
    for _ in $(seq 50); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
    started_munge=$(cat /run/munge/munged.pid 2>/dev/null || pgrep -x munged | head -1)
fi
munge -n | unmunge >/dev/null || fail "munge cannot encode and decode a credential"

host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$work/state" "$work/spool" "$work/out"
cat > "$work/slurm.conf" <<CONF
ClusterName=blkmqlab-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf

/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" > "$work/slurmctld.out" 2>&1 &
pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" > "$work/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 120); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    case $state in idle*) break ;; esac
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a Slurm daemon exited at start ($(cat "$work"/*.out))"; done
    sleep 0.5
done
case $state in idle*) ;; *) fail "the Slurm daemons did not bring node $host up (state: '${state:-none}')" ;; esac
echo "slurm test: slurmctld and slurmd up, node $host idle with $cpus CPU(s)"

# A grid of 18 runs in 3 shards: three array tasks, then the merge.
cat > "$work/grid.json" <<'JSON'
{"base": {"preset": "default", "set": ["duration=2ms"]},
 "axes": [{"path": "devices.nvme0.rq_affinity", "values": [0, 1, 2]},
          {"path": "kernel.patches.complete-llist", "values": [false, true]},
          {"path": "seed", "from": 1, "to": 3}]}
JSON
export BLKMQLAB_CLI=$cli
cd "$work"
submitted=$("$root/packaging/slurm/submit-sweep.sh" "$work/grid.json" "$work/out" 3)
echo "slurm test: $submitted"
for _ in $(seq 600); do
    [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
    sleep 0.5
done
[ -z "$(squeue -h -o %i)" ] || fail "jobs still queued after 300 s: $(squeue)"
[ -f "$work/out/sweep.csv" ] || fail "no merged CSV; job logs: $(cat "$work"/blkmqlab-*.log 2>/dev/null)"
ls "$work"/out/shard-*.csv | wc -l | grep -qx 3 || fail "expected 3 shard files, found: $(ls "$work/out")"
"$cli" sweep "$work/grid.json" --csv "$work/local.csv" > /dev/null
cmp "$work/local.csv" "$work/out/sweep.csv" || fail "the merged CSV differs from the local unsharded sweep"
echo "slurm test: 3 array tasks + merge on Slurm == the local sweep ($(($(wc -l < "$work/local.csv") - 1)) runs, byte for byte)"

# A task killed in the middle (here by the test hook, after 3 of its 6 runs; on a cluster, preemption
# or a time limit) is requeued and finishes its shard from its journal: the merge is the same bytes.
mkdir -p "$work/requeue"
job=$(sbatch --parsable --array=0-2 --export=ALL,BLKMQLAB_FAULT_KILL_AFTER_ROWS=3 \
    "$root/packaging/slurm/sweep-array.sbatch" "$work/grid.json" "$work/requeue")
job=${job%%;*}
wait_idle() {
    for _ in $(seq 600); do
        [ -z "$(squeue -h -o %i 2>/dev/null)" ] && return 0
        sleep 0.5
    done
    fail "jobs still queued after 300 s: $(squeue)"
}
wait_idle
[ -z "$(ls "$work"/requeue/shard-*.csv 2>/dev/null)" ] || fail "a killed task wrote its CSV: $(ls "$work/requeue")"
for i in 0 1 2; do
    [ "$(wc -l < "$work/requeue/shard-$i.csv.journal")" -eq 5 ] \
        || fail "shard $i's journal does not hold its 3 finished runs: $(cat "$work/requeue/shard-$i.csv.journal")"
done
scontrol requeue "$job" || fail "scontrol requeue $job"
wait_idle
"$cli" merge "$work"/requeue/shard-*.csv --csv "$work/requeued.csv" || fail "merge of the requeued shards"
cmp "$work/local.csv" "$work/requeued.csv" || fail "the requeued tasks' merge differs from the local sweep"
[ -z "$(ls "$work"/requeue/*.journal 2>/dev/null)" ] || fail "a finished shard kept its journal"
echo "slurm test: 3 array tasks killed after 3 of 6 runs, requeued, resumed: their merge == the local sweep"
