#!/bin/bash
# Usage: wake-census.sh PLANE THREADS OUTDIR [BENCH OPTIONS...] (from a built clone's root)
# Runs one `./weft bench --profile issue12` round of PLANE at THREADS threads per proxy and, 5 s into its measured
# run, records every CPU's wake-ups and system calls (entry and exit, with their results) between two reads of the
# providers' served counters 3 s apart (4.6-6.3 s once the second read's Python has started on a loaded machine):
# the requests of exactly that window (tracing this much slows the mesh by about a fifth, so the round's QPS would
# overstate them). wake-census.py then prints, per request and side, how often the proxies' event-loop threads were
# woken and by whom, their system calls by kind, and what each epoll_wait returned.
# Session 24 compared Weft and HAProxy at 1 and 2 threads with it (docs/benchmarks.md).
P=$1; T=$2; O=$3
S=$(dirname $(readlink -f $0))
. $S/measured-round.sh
start_round $P $T $O "${@:4}"
sleep 5
python3 $S/mesh_procs.py roles > $O/tid-roles.txt
for t in /proc/[0-9]*/task/*; do p=${t#/proc/}; echo "${p%%/*} ${t##*/} $(cat $t/comm 2>/dev/null)"; done \
  > $O/threads.txt 2>/dev/null
# The counters are read inside the recording (perf record starts its command once the events are on), with the
# time of each read on perf's clock: wake-census.py counts only the events between the two reads.
perf record -a -k CLOCK_MONOTONIC -o $O/wake.data -e sched:sched_wakeup,raw_syscalls:sys_enter,raw_syscalls:sys_exit \
  -- sh -c \
  "python3 $S/mesh_procs.py served > $O/served-before.txt; sleep 3;
   python3 $S/mesh_procs.py served > $O/served-after.txt" \
  > $O/perf-record.err 2>&1
wait $B
perf script -i $O/wake.data -F comm,pid,tid,time,event,trace 2>/dev/null | gzip > $O/wake.txt.gz
rm -f $O/wake.data
python3 $S/wake-census.py $O > $O/wake-census.txt
