#!/usr/bin/env bash
# Submits a sweep as N array tasks and the merge that follows them:
#
#   packaging/slurm/submit-sweep.sh SWEEP.json OUTDIR N [sbatch options for the array...]
#
# Prints the two job ids. The result is OUTDIR/sweep.csv once the merge job has run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sweep=${1:?usage: submit-sweep.sh SWEEP.json OUTDIR N [sbatch options]}
out=${2:?usage: submit-sweep.sh SWEEP.json OUTDIR N [sbatch options]}
n=${3:?usage: submit-sweep.sh SWEEP.json OUTDIR N [sbatch options]}
shift 3
case $n in '' | *[!0-9]* | 0) echo "submit-sweep: N must be a positive number" >&2; exit 2 ;; esac
array=$(sbatch --parsable --array="0-$((n - 1))" "$@" "$here/sweep-array.sbatch" "$sweep" "$out")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" "$here/sweep-merge.sbatch" "$out")
echo "array job $array ($n shards), merge job ${merge%%;*}: $out/sweep.csv"
