#!/bin/bash
# Records JFR CPU-time samples on both sidecars of `weft bench observability --shape hop --proxy-threads 1 --pairs 2
# --window 30s` for 22 s of each measured window. Usage: jfr-ab.sh LOG OUTDIR
LOG=$1; OUT=$2; mkdir -p $OUT
JCMD=$(ls -d /usr/lib/jvm/temurin-25*|head -1)/bin/jcmd
# wait for both sidecars
while [ $(grep -c "sidecar-.* ready in .*(pid" $LOG) -lt 2 ]; do sleep 1; done
PIDS=$(grep -o "sidecar-.* ready in .*(pid [0-9]*)" $LOG | grep -o "pid [0-9]*" | awk '{print $2}')
echo "pids $PIDS"
# one throwaway recording during the JIT's settling
for p in $PIDS; do $JCMD $p JFR.start name=warm duration=5s filename=$OUT/warm-$p.jfr jdk.CPUTimeSample#enabled=true jdk.CPUTimeSample#throttle=1ms >/dev/null; done
order=(on paused paused on)
seen=$(grep -c "wrk  measuring" $LOG)
# the settle phases print measuring lines too? count from after "on: JIT settled"
while ! grep -q "×1 on: JIT settled" $LOG; do sleep 1; done
base=$(grep -c "wrk  measuring" $LOG)
for i in 0 1 2 3; do
  while [ $(grep -c "wrk  measuring" $LOG) -le $((base+i)) ]; do sleep 0.2; done
  sleep 2
  st=${order[$i]}
  for p in $PIDS; do $JCMD $p JFR.start name=w$i duration=22s filename=$OUT/$st-w$i-$p.jfr jdk.CPUTimeSample#enabled=true jdk.CPUTimeSample#throttle=1ms >/dev/null; done
  echo "window $i $st recording at $(date +%T)"
done
