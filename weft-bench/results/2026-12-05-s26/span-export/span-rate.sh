#!/bin/bash
# Spans exported per sidecar and its export threads' CPU (clock ticks), over 30 s of the mesh's on window; the same
# as session 25's span-export/span-rate.sh, with the admin ports from mesh_procs.py. Run from a clone at /tmp/b19.
OUT=${1:-/tmp/s26-spanrate}
mkdir -p "$OUT"
cd /tmp/b19
./weft bench observability --proxy-threads 2 --pairs 1 --window 90s --jit-settle 60s --results "$OUT/bench" > "$OUT/bench.log" 2>&1 &
B=$!
for i in $(seq 1 300); do grep -q "×2 on: " "$OUT/bench.log" 2>/dev/null && break; sleep 2; done
sleep 10
S=/tmp/b19/weft-bench/scripts
snap() {
  python3 $S/mesh_procs.py admins | while read -r pid role port; do
    m=$(curl -s -m 5 http://127.0.0.1:$port/metrics)
    spans=$(grep -E '^weft_spans_exported_total' <<<"$m" | awk '{s+=$NF} END {print s+0}')
    reqs=$(grep -E '^weft_requests_total' <<<"$m" | awk '{s+=$NF} END {print s+0}')
    ticks=0
    for t in /proc/$pid/task/*; do
      case "$(cat $t/comm 2>/dev/null)" in
        weft-http-span*|weft-span-expor*) ticks=$(( ticks + $(awk '{print $14+$15}' $t/stat) )) ;;
      esac
    done
    echo "$pid $role $spans $reqs $ticks"
  done
}
{ date +%s.%N; snap; } > "$OUT/a.txt"
sleep 30
{ date +%s.%N; snap; } > "$OUT/b.txt"
kill $B; wait $B
echo "pid role spans reqs export-ticks (first snapshot, then 30 s later)"; cat "$OUT/a.txt" "$OUT/b.txt"
