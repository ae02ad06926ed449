# Sourced by the scripts that watch one issue12 round from outside (trace-consumer-side.sh, profile-window.sh,
# jit-window.sh, and perf-ab.sh for jit_maps below): start_round PLANE THREADS OUTDIR [BENCH OPTIONS...] starts `./weft bench --profile issue12` with one
# round of PLANE at THREADS threads per proxy in the background (its PID in $B, its results in OUTDIR/res) and
# returns when that round's measured wrk run starts: before it a Weft plane's JIT-settling steps and its warm-up each
# restart wrk, so anything timed from the plane's start would fall in different phases for different planes.
start_round() {
  local p=$1 t=$2 o=$3
  shift 3
  mkdir -p "$o"
  timeout 900 ./weft bench --profile issue12 --planes "$p" --proxy-threads "$t" --rounds 1 --results "$o/res" "$@" \
    > "$o/bench.out" 2>&1 &
  B=$!
  for _ in $(seq 1 600); do grep -q "wrk  measuring" "$o/res/bench.log" 2>/dev/null && return; sleep 1; done
}

# jit_maps DIR PID...: each sidecar's JIT symbol map (jcmd Compiler.perfmap writes /tmp/perf-PID.map, where perf
# script looks), copied into DIR, all at once: an attach takes seconds on a loaded machine (profile-window.sh,
# perf-ab.sh).
jit_maps() {
  local d=$1 jdk=${JAVA_HOME:-$(ls -d /usr/lib/jvm/temurin-25* | head -1)} jobs= pid
  shift
  for pid in "$@"; do
    ( "$jdk/bin/jcmd" "$pid" Compiler.perfmap > "$d/jcmd-$pid.out" 2>&1 && cp "/tmp/perf-$pid.map" "$d/" ) &
    jobs="$jobs $!"
  done
  wait $jobs
}
