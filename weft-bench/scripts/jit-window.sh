#!/bin/bash
# Usage: jit-window.sh PLANE THREADS OUTDIR [BENCH OPTIONS...] (from a built clone's root)
# Runs one `./weft bench --profile issue12` round of a Weft PLANE at THREADS threads per proxy and, 3 s into its
# measured wrk run, records 15 s of every sidecar's JIT compilations, deoptimizations and execution samples with JFR
# (jcmd JFR.start, only those three events), then prints what they compiled and what ran interpreted (jit-window.py). Pass --duration 30s so the recordings end
# inside the run.
P=$1; T=$2; O=$3
S=$(dirname $(readlink -f $0))
JDK=${JAVA_HOME:-$(ls -d /usr/lib/jvm/temurin-25* | head -1)}
. $S/measured-round.sh
start_round $P $T $O "${@:4}"
sleep 3
python3 $S/mesh_procs.py sidecars > $O/pids.txt
while read pid role; do
  role=$(echo $role | tr ':' '-')
  $JDK/bin/jcmd $pid JFR.start name=jit settings=none +jdk.Compilation#enabled=true +jdk.Compilation#threshold=0ms \
    +jdk.Deoptimization#enabled=true +jdk.ExecutionSample#enabled=true +jdk.ExecutionSample#period=10ms duration=15s filename=$O/jit-$role-$pid.jfr > $O/jcmd-$pid.out 2>&1 &
done < $O/pids.txt
wait $B
python3 $S/jit-window.py $O/jit-*.jfr > $O/jit-window.txt
