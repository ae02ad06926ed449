#!/bin/bash
# Usage: jit-window.sh PLANE THREADS OUTDIR [BENCH OPTIONS...] (from a built clone's root)
# Runs one `./weft bench --profile issue12` round of a Weft PLANE at THREADS threads per proxy and, 3 s into its
# measured wrk run, records 15 s of every sidecar's JIT compilations, deoptimizations and execution samples with JFR
# (jcmd JFR.start, only those three events), then prints what they compiled and what ran interpreted (jit-window.py). Pass --duration 30s so the recordings end
# inside the run.
P=$1; T=$2; O=$3; mkdir -p $O
S=$(dirname $(readlink -f $0))
JDK=${JAVA_HOME:-$(ls -d /usr/lib/jvm/temurin-25* | head -1)}
timeout 900 ./weft bench --profile issue12 --planes $P --proxy-threads $T --rounds 1 --results $O/res "${@:4}" > $O/bench.out 2>&1 &
B=$!
for i in $(seq 1 600); do grep -q "wrk  measuring" $O/res/bench.log 2>/dev/null && break; sleep 1; done
sleep 3
python3 $S/mesh_procs.py roles > $O/tid-roles.txt
for t in $(awk '$2 ~ /^sidecar:/ {print $1}' $O/tid-roles.txt); do awk '/^Tgid/{print $2}' /proc/$t/status 2>/dev/null; done | sort -u > $O/pids.txt
for pid in $(cat $O/pids.txt); do
  role=$(awk -v p=$pid '$1 == p {print $2}' $O/tid-roles.txt | tr ':' '-')
  $JDK/bin/jcmd $pid JFR.start name=jit settings=none +jdk.Compilation#enabled=true +jdk.Compilation#threshold=0ms \
    +jdk.Deoptimization#enabled=true +jdk.ExecutionSample#enabled=true +jdk.ExecutionSample#period=10ms duration=15s filename=$O/jit-$role-$pid.jfr > $O/jcmd-$pid.out 2>&1 &
done
wait $B
python3 $S/jit-window.py $O/jit-*.jfr > $O/jit-window.txt
