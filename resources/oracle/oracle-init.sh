#!/bin/busybox sh
# /init of the oracle's guest. Runs the job the host put in /job (settings, job.fio), counts what the
# kernel's own code paths did and prints each count as a line starting with "@oracle " on the serial
# console, then powers off. The host reads nothing else: everything here is a count, never a time.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
say() { echo "@oracle $*"; }
fail() { say "error $*"; poweroff -f; sleep 5; }
# debugfs KIND FILE...: blk-mq's debugfs files, line by line ("KIND PATH LINE"; "KIND PATH" alone: an
# empty file; nothing for a file that cannot be read). One awk reads them all: under TCG a process
# per file took 0.7 s of every hctx.
debugfs() {
    kind=$1
    shift
    [ $# -eq 0 ] || awk -v kind="$kind" 'BEGIN { for (i = 1; i < ARGC; i++) {
        f = ARGV[i]; p = substr(f, length("/sys/kernel/debug/block/") + 1); n = 0
        while ((r = (getline line < f)) > 0) { print "@oracle " kind " " p " " line; n++ }
        close(f)
        if (r == 0 && n == 0) print "@oracle " kind " " p } }' "$@"
}
say boot "$(cut -d' ' -f1 /proc/uptime)" "$(uname -r)"
# /job/settings (written by blkmqlab-cli oracle): DEVICES="vda nullb0 ...", and per device
# SCHED_<name> and RQAFF_<name>. /job/setup.sh creates the null_blk devices, if any.
. /job/settings

for m in $(cat /modules/order); do
    [ "$m" = null_blk.ko ] && continue
    insmod "/modules/$m" 2>/tmp/insmod.err || fail "insmod $m: $(cat /tmp/insmod.err)"
done
mount -t configfs configfs /sys/kernel/config
sh /job/setup.sh > /tmp/setup.err 2>&1 || fail "setting up the devices: $(tail -n 2 /tmp/setup.err | tr '\n' ' ')"
for d in $DEVICES; do
    i=0
    while [ ! -b "/dev/$d" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -b "/dev/$d" ] || fail "no block device /dev/$d after loading the modules"
    q=/sys/block/$d/queue
    eval sched=\$SCHED_$d rqaff=\$RQAFF_$d
    echo "$sched" > $q/scheduler || fail "cannot set the scheduler of $d to $sched"
    echo "$rqaff" > $q/rq_affinity
    echo 2 > $q/nomerges
    say queue "$d" scheduler "$(cat $q/scheduler)" rq_affinity "$(cat $q/rq_affinity)"
    say devno "$d" "$(cat /sys/block/$d/dev)" "$(basename "$(readlink /sys/block/$d/device)" 2>/dev/null || echo none)"
    for h in /sys/block/$d/mq/*; do
        read -r cpus < "$h/cpu_list"
        say hctx "$d" "${h##*/}" cpus "$cpus"
    done
done
# The machine as the kernel sees it, CPU by CPU (the host checks it is the scenario's). Under TCG
# every process started costs tens of milliseconds: one awk reads every CPU's files, and the
# shell's own read the small files elsewhere (not thread_siblings_list: a binary sysfs attribute
# gives nothing to read's one-byte reads).
ncpu=$(grep -c '^processor' /proc/cpuinfo)
awk -v n="$ncpu" 'BEGIN { for (c = 0; c < n; c++) {
    d = "/sys/devices/system/cpu/cpu" c; siblings = ""; llc = "none"
    getline siblings < (d "/topology/thread_siblings_list")
    if ((getline line < (d "/cache/index3/shared_cpu_list")) > 0) llc = line
    print "@oracle cpu " c " siblings " siblings " llc " llc } }'
say nodes "$(ls -d /sys/devices/system/node/node* | wc -l)"
awk '$NF ~ /-req\./ { sub(":", "", $1); print $1, $NF }' /proc/interrupts | while read -r irq name; do
    read -r affinity < /proc/irq/$irq/smp_affinity_list
    read -r effective < /proc/irq/$irq/effective_affinity_list
    say vector "$name" irq "$irq" affinity "$affinity" effective "$effective"
done

t=/sys/kernel/tracing
echo 'p:oracle_ipi __blk_mq_complete_request_remote' > $t/kprobe_events || fail "kprobe on __blk_mq_complete_request_remote"
echo 'hist:keys=common_cpu' > $t/events/kprobes/oracle_ipi/trigger
echo 8192 > $t/buffer_size_kb
echo 1 > $t/events/block/block_getrq/enable
echo 1 > $t/events/block/block_rq_complete/enable
echo 1 > $t/events/kprobes/oracle_ipi/enable
# Each hctx's tags and flags as blk_mq_alloc_tag_set() built them, before the first request (the
# patterns expand where $built is used).
built=
for d in $DEVICES; do built="$built /sys/kernel/debug/block/$d/hctx*/tags /sys/kernel/debug/block/$d/hctx*/flags"; done
# shellcheck disable=SC2086
debugfs built $built

echo "--- /job/job.fio"
cat /job/job.fio
echo "---"
cat /proc/interrupts > /tmp/irq.before
cat /proc/softirqs > /tmp/softirq.before
say start "$(cut -d' ' -f1 /proc/uptime)"
fio --output=/tmp/fio.out --output-format=terse /job/job.fio > /tmp/fio.err 2>&1
rc=$?
cat /proc/interrupts > /tmp/irq.after
cat /proc/softirqs > /tmp/softirq.after
echo 0 > $t/tracing_on
say end "$(cut -d' ' -f1 /proc/uptime)" rc "$rc"
[ $rc -eq 0 ] || fail "fio: $(tail -n 3 /tmp/fio.err | tr '\n' ' ')"

# Per-CPU deltas of each interrupt row and of the BLOCK softirq.
awk -v n="$ncpu" 'FNR == 1 { next } NR == FNR { k = $1 "|" $NF; for (c = 0; c < n; c++) b[k, c] = $(c + 2); next }
    { k = $1 "|" $NF; line = ""; any = 0
      for (c = 0; c < n; c++) { d = $(c + 2) - b[k, c]; line = line " " d; if (d) any = 1 }
      if (any) { sub(":", "", $1); print "@oracle irq " $1 " " $NF line } }' /tmp/irq.before /tmp/irq.after
awk -v n="$ncpu" 'FNR == 1 { next } NR == FNR { for (c = 0; c < n; c++) b[$1, c] = $(c + 2); next }
    $1 == "BLOCK:" { line = ""; for (c = 0; c < n; c++) line = line " " ($(c + 2) - b[$1, c]); print "@oracle softirq BLOCK" line }' \
    /tmp/softirq.before /tmp/softirq.after
# blk-mq's completion IPIs, as __blk_mq_complete_request_remote ran them, per CPU.
awk '$1 == "{" && $2 == "common_cpu:" { print "@oracle blkipi " $3 " " $6 }' $t/events/kprobes/oracle_ipi/hist
# Each request from its submitting CPU (block_getrq) to the CPU that completed it (block_rq_complete),
# paired by device and sector. A line is "COMM-PID [CPU] FLAGS TIME: EVENT: DEV RWBS ..."; where a
# command name holds a space the fields are found by their shape instead (slower, and rare).
awk 'function cpu(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) return substr($i, 2, length($i) - 2) + 0; return -1 }
     function dev(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,[0-9]+$/) return i; return 0 }
     { if (substr($2, 1, 1) == "[" && ($5 == "block_getrq:" || $5 == "block_rq_complete:")) { e = $5; c = substr($2, 2) + 0; i = 6 }
       else if (/block_getrq:/) { e = "block_getrq:"; c = cpu(); i = dev() }
       else if (/block_rq_complete:/) { e = "block_rq_complete:"; c = cpu(); i = dev() }
       else next
       if (e == "block_getrq:") { if (i) subm[$i " " $(i + 2)] = c; next }
       key = $i " " $(i + 3)
       if (i && key in subm) { m[subm[key] " " c]++; bydev[$i]++; delete subm[key] } else lost++ }
     END { for (k in m) print "@oracle pair " k " " m[k]; for (d in bydev) print "@oracle devdone " d " " bydev[d]
           print "@oracle unpaired " lost + 0 }' $t/trace
grep -q "Lost\|overrun" $t/per_cpu/cpu0/stats 2>/dev/null && say note "$(grep overrun $t/per_cpu/cpu*/stats | awk '{ s += $2 } END { print "trace overruns " s }')"
# Every debugfs file of each hctx, after the job.
files=
for d in $DEVICES; do
    for f in /sys/kernel/debug/block/$d/hctx*/*; do
        [ -f "$f" ] && files="$files $f"
    done
done
# shellcheck disable=SC2086
debugfs dfs $files
say fio "$(cut -d';' -f1-8 /tmp/fio.out | head -1)"
say done
poweroff -f
sleep 5
