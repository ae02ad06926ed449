#!/bin/bash
# Usage: [SHAPE=mesh] perf-ab.sh OUTDIR [PAIRS] [THREADS] (from a built clone's root)
# Observability's cost by code, where the bench's A/B only gives its total: starts `./weft bench observability
# --shape hop` (or SHAPE) with one long window at THREADS Workers (default 1), and once the JIT has settled both ways,
# switches every sidecar on and paused itself, PAIRS times each (default 12; on-paused, paused-on, ...). Each state
# gets 3 s to pass, then 8 s of CPU samples of the whole machine at 999 Hz between two reads of the backend's served
# counter
# (the requests of exactly that recording), then the sidecars' JIT symbol maps (jcmd Compiler.perfmap, per window:
# a switch makes the JIT recompile, and code moves). perf-ab.py prints, per request, on minus paused: by process
# and thread kind, by code region, by symbol (JFR's CPU samples miss GC threads, the kernel and the VM's own code).
# SHAPE=mesh runs the paper's mesh instead (four sidecars; the providers' served counters summed).
# Session 25 (docs/benchmarks.md).
O=$1; PAIRS=${2:-12}; T=${3:-1}; SHAPE=${SHAPE:-hop}
case "$SHAPE" in hop) SIDECARS=2 ;; mesh) SIDECARS=4 ;; *) echo "SHAPE is hop or mesh, not $SHAPE" >&2; exit 2 ;; esac
S=$(dirname $(readlink -f $0))
. $S/measured-round.sh  # jit_maps
mkdir -p $O
# One window long enough for every pair (about 25 s each with the maps), measured by the bench but not used here.
WINDOW=$(( PAIRS * 2 * 25 + 120 ))s
./weft bench observability --shape $SHAPE --proxy-threads $T --pairs 1 --window $WINDOW --results $O/bench \
  > $O/bench.log 2>&1 &
B=$!
trap 'kill $B 2>/dev/null' EXIT
deadline=$(( $(date +%s) + 600 ))
until grep -q "observability ×$T on: " $O/bench.log; do
  kill -0 $B 2>/dev/null || { echo "the bench ended before its window: $O/bench.log" >&2; exit 1; }
  [ $(date +%s) -lt $deadline ] || { echo "no JIT-settled line in 600 s: $O/bench.log" >&2; exit 1; }
  sleep 1
done
sleep 8  # the bench's gap (3 s on fresh connections) and its window's start
python3 $S/mesh_procs.py admins > $O/sidecars.txt
ADMINS=$(awk '$3 != "-" {print $3}' $O/sidecars.txt)
[ $(echo $ADMINS | wc -w) -eq $SIDECARS ] || { echo "expected $SIDECARS admin ports, got '$ADMINS'" >&2; exit 1; }
switch() {
  for a in $ADMINS; do
    got=$(curl -s -m 5 -X POST "http://127.0.0.1:$a/observability?state=$1")
    case "$1:$got" in on:on|off:paused) ;; *) echo "admin $a answered '$got' to $1" >&2; exit 1 ;; esac
  done
}
w=0
for pair in $(seq 1 $PAIRS); do
  if [ $((pair % 2)) -eq 1 ]; then states="on off"; else states="off on"; fi
  for st in $states; do
    w=$((w + 1)); D=$O/w$(printf %02d $w)-$st; mkdir -p $D
    switch $st
    sleep 3
    # The threads' roles now (compiler threads come and go; the samples carry their names), and the counter read
    # inside the recording, on perf's clock.
    python3 $S/mesh_procs.py roles > $D/tid-roles.txt
    perf record -a -F 999 -k CLOCK_MONOTONIC -o $D/cpu.data -- sh -c \
      "python3 $S/mesh_procs.py served > $D/served-before.txt; sleep 8;
       python3 $S/mesh_procs.py served > $D/served-after.txt" > $D/perf-record.err 2>&1
    jit_maps $D $(cut -d' ' -f1 $O/sidecars.txt)
    # Scripted now, against this window's maps (perf looks in /tmp/perf-PID.map).
    perf script -i $D/cpu.data -F comm,pid,tid,time,ip,sym,dso 2>/dev/null | gzip > $D/cpu.txt.gz
    rm -f $D/cpu.data $D/perf-*.map  # the samples carry their symbols now
    echo "window $w ($st) recorded at $(date +%T)"
  done
done
switch on
kill $B 2>/dev/null; wait $B 2>/dev/null
trap - EXIT
python3 $S/perf-ab.py $O > $O/perf-ab.txt
echo "wrote $O/perf-ab.txt"
