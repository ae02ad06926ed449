#!/bin/bash
# Usage: trace-consumer-side.sh epoll|sched|reads|runs PLANE OUTDIR SECONDS [BENCH OPTIONS...] (from a built clone's root)
# Runs one `./weft bench --profile issue12` round of PLANE at 1 thread and, SECONDS after its measured wrk run starts
# (the round's 20 s window: 8 leaves the run's start behind and ends inside it; before that run, a Weft plane's
# JIT-settling steps and the 30 s warm-up each restart wrk, whose 512 connections then start in the same instant),
# either
#   epoll: perf-traces the consumer-side proxy's event-loop thread's epoll waits for 10 s
#          (results/2026-12-04-s19/epoll-wakeups/epoll-stats.py reads it),
#   sched: records every task's scheduling for 5 s and prints each task name's wake-up delays (perf sched latency), or
#   reads: records for 3 s when bytes become readable on every socket and when each socket is read (kernel
#          tracepoints sock:sk_data_ready and sock:sock_recv_length), and prints how long the consumer app's requests
#          wait in the proxy's sockets before the proxy reads them, and where its event loop was while they waited
#          (its context switches, sched:sched_switch; unread-ages.py); how bunched the messages are on each
#          edge of the mesh (sender process -> reader process; edge-bursts.py); and whether the bunches ride the
#          loop from one cycle to the next (cycle-memory.py), or
#   runs:  records every context switch on the machine for 3 s and prints, per process and thread name, how long
#          its threads ran at a stretch (cpu-runs.py): what holds a core for milliseconds while the mesh waits.
MODE=$1; P=$2; O=$3
# Absolute, as in the other scripts: a symlink or a later cd cannot break the helpers' paths.
S=$(dirname $(readlink -f $0))
. $S/measured-round.sh
start_round $P 1 $O "${@:5}"
sleep $4
if [ $P = haproxy ]; then
  PID=$(for p in $(pgrep -x haproxy); do tr '\0' ' ' < /proc/$p/cmdline | grep -q consumer && echo $p; done | head -1)
  TID=$PID
else
  PID=$(for p in $(pgrep -f "dev.weft.cli.WeftCli sidecar"); do tr '\0' ' ' < /proc/$p/cmdline | grep -q -- "--service consumer" && echo $p; done | head -1)
  TID=$(for t in /proc/$PID/task/*; do echo "$(basename $t) $(cat $t/comm)"; done | grep -i worker | head -1 | cut -d' ' -f1)
fi
for t in /proc/$PID/task/*; do echo "$(basename $t) $(cat $t/comm)"; done > $O/threads.txt
# Every mesh thread's process (edge-bursts.py, cpu-runs.py); of them the consumer app's, which send the requests the
# proxy reads (unread-ages.py).
python3 $S/mesh_procs.py roles > $O/tid-roles.txt
awk '$2 == "consumer-app" { print $1 }' $O/tid-roles.txt > $O/app-threads.txt
echo "pid $PID tid $TID" > $O/target.txt
if [ $MODE = epoll ]; then
  timeout 10 perf trace -t $TID -e 'epoll_wait,epoll_pwait,epoll_pwait2' -o $O/trace.txt 2>$O/perf.err
elif [ $MODE = reads ]; then
  # A Weft sidecar's pauses (collections, safepoints) on the same clock as perf's events (CLOCK_MONOTONIC).
  [ $P = haproxy ] || [ $P = nginx ] || ${JAVA_HOME:-$(ls -d /usr/lib/jvm/temurin-25* | head -1)}/bin/jcmd $PID VM.log output=file=$O/pauses.log \
      what=gc,safepoint decorators=timenanos > $O/jcmd.out 2>&1
  perf record -k CLOCK_MONOTONIC -e sock:sk_data_ready,sock:sock_recv_length \
    -e sched:sched_switch/call-graph=fp/ --filter "prev_pid == $TID || next_pid == $TID" -a -o $O/reads.data -- sleep 3 > $O/perf.err 2>&1
  perf script -i $O/reads.data -s $S/perf-reads.py 2>>$O/perf.err | gzip > $O/reads.txt.gz
  rm -f $O/reads.data
  python3 $S/unread-ages.py $O > $O/unread-ages.txt
  python3 $S/edge-bursts.py $O > $O/edge-bursts.txt
  python3 $S/cycle-memory.py $O > $O/cycle-memory.txt
elif [ $MODE = runs ]; then
  perf record -k CLOCK_MONOTONIC -e sched:sched_switch -a -o $O/runs.data -- sleep 3 > $O/perf.err 2>&1
  perf script -i $O/runs.data -s $S/perf-reads.py 2>>$O/perf.err | gzip > $O/runs.txt.gz
  rm -f $O/runs.data
  python3 $S/cpu-runs.py $O > $O/cpu-runs.txt
else
  perf sched record -a -o $O/sched.data -- sleep 5 > $O/perf.err 2>&1
  perf sched latency -i $O/sched.data -s max > $O/latency.txt 2>>$O/perf.err
fi
wait $B
