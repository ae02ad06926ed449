#!/bin/bash
# $1 plane, $2 outdir: run one issue12 round and perf-trace the consumer-side proxy's event-loop thread for 10 s
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
timeout 10 perf trace -t $TID -e 'epoll_wait,epoll_pwait,epoll_pwait2' -o $O/trace.txt 2>$O/perf.err
wait $B
