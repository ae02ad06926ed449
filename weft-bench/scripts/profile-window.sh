#!/bin/bash
# Usage: profile-window.sh PLANE THREADS OUTDIR [BENCH OPTIONS...] (from a built clone's root; --duration 30s leaves
# time for the symbol maps, 13 s in)
# Runs one `./weft bench --profile issue12` round of PLANE at THREADS threads per proxy and, 5 s into its measured wrk
# run (the 20 s window; before it a Weft plane's JIT-settling steps and warm-up restart wrk), measures one after the
# other, 5 s each:
#   cpu.data    CPU samples of the whole machine at 999 Hz, with the Weft sidecars' JIT symbol maps written after it
#               (jcmd Compiler.perfmap -> /tmp/perf-PID.map, copied beside it), then
#   counts.txt  every mesh thread's system calls, context switches and CPU time (perf stat per thread: a counter per
#               thread and event is switched at every context switch, so few events; with 15 the round's proxies
#               used 45 % more CPU per request),
# then window-costs.py prints both per request of the round (its QPS from res/rounds.csv), by process role and
# thread kind, and where the sidecars' CPU goes by code region. For comparing a plane at 1 and 2 threads.
# With PIN=side in the environment, each Weft sidecar's Workers are pinned before the samples (taskset): the
# consumer side's to CPU 0, the provider sides' to CPU 1, so a sidecar's two Workers never run at once; with
# PIN=split, Worker N of every sidecar to CPU N-1 (session 24: what the second Worker costs without concurrency).
P=$1; T=$2; O=$3
S=$(dirname $(readlink -f $0))
case "$PIN" in ''|side|split) ;; *) echo "PIN is side or split, not $PIN" >&2; exit 2 ;; esac
. $S/measured-round.sh
start_round $P $T $O "${@:4}"
sleep 3
if [ -n "$PIN" ]; then
  python3 $S/mesh_procs.py sidecars | while read -r pid role; do
    for t in /proc/$pid/task/*; do
      comm=$(cat $t/comm 2>/dev/null)
      [[ $comm == weft-worker-* ]] || continue
      case $PIN in
        side) [[ $role == sidecar:consumer ]] && c=0 || c=1 ;;
        split) c=$(( ${comm##*-} - 1 )) ;;
      esac
      taskset -p -c $c $(basename $t) > /dev/null && echo "$role $comm $(basename $t) CPU $c" >> $O/pins.txt
    done
  done
fi
perf record -a -F 999 -o $O/cpu.data -- sleep 5 > $O/perf-record.err 2>&1
# The threads just before the counts: one that ends between the list and perf stat (the JVM starts and ends
# compiler threads as it needs them) fails the whole count.
python3 $S/mesh_procs.py roles > $O/tid-roles.txt
TIDS=$(awk '{print $1}' $O/tid-roles.txt | paste -sd,)
perf stat --per-thread -t $TIDS -e raw_syscalls:sys_enter,context-switches,task-clock -x, -o $O/counts.txt \
  -- sleep 5 2>$O/perf-stat.err
# The symbol maps, after the counts (an attach works in the target's threads), all at once: an attach takes seconds
# on a loaded machine.
jit_maps $O $(python3 $S/mesh_procs.py sidecars | cut -d' ' -f1)
perf script -i $O/cpu.data -F comm,pid,tid,ip,sym,dso 2>/dev/null | gzip > $O/cpu.txt.gz
wait $B
python3 $S/window-costs.py $O > $O/window-costs.txt
