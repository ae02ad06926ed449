#!/bin/bash
# $1 plane, $2 outdir, $3 seconds after the plane starts: run one issue12 round and record every task's scheduling for 5 s (perf sched), then each task name's wake-up delays (perf sched latency)
P=$1; O=$2; mkdir -p $O
cd /tmp/b19
timeout 600 ./weft bench --profile issue12 --planes $P --proxy-threads 1 --rounds 1 --results $O/res > $O/bench.out 2>&1 &
B=$!
# wait for the measured window: the bench prints "measuring" for wrk
for i in $(seq 1 300); do grep -q "starting" $O/bench.out 2>/dev/null && break; sleep 1; done
sleep $3
if [ $P = haproxy ]; then
  PID=$(for p in $(pgrep -x haproxy); do tr '\0' ' ' < /proc/$p/cmdline | grep -q consumer && echo $p; done | head -1)
  TID=$PID
else
  PID=$(for p in $(pgrep -f "dev.weft.cli.WeftCli sidecar"); do tr '\0' ' ' < /proc/$p/cmdline | grep -q -- "--service consumer" && echo $p; done | head -1)
  TID=$(for t in /proc/$PID/task/*; do echo "$(basename $t) $(cat $t/comm)"; done | grep -i worker | head -1 | cut -d' ' -f1)
fi
for t in /proc/$PID/task/*; do echo "$(basename $t) $(cat $t/comm)"; done > $O/threads.txt
echo "pid $PID tid $TID" > $O/target.txt
cd $O && perf sched record -a -o $O/sched.data -- sleep 5 > $O/perf.err 2>&1; perf sched latency -i $O/sched.data -s max > $O/latency.txt 2>>$O/perf.err; cd /tmp/b19
wait $B
