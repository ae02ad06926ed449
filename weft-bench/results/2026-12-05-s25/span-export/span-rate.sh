#!/bin/bash
# Spans exported per second per sidecar and its export threads' CPU, in the mesh's on window.
cd /tmp/b19
./weft bench observability --proxy-threads 2 --pairs 1 --window 90s --jit-settle 60s --results /tmp/s25-spanrate > /tmp/s25-spanrate.log 2>&1 &
B=$!
for i in $(seq 1 300); do grep -q "×2 on: " /tmp/s25-spanrate.log 2>/dev/null && break; sleep 2; done
sleep 10
S=/tmp/b19/weft-bench/scripts
snap() {
  python3 $S/mesh_procs.py sidecars | while read -r pid role; do
    a=$(tr '\0' '\n' < /proc/$pid/cmdline | grep -A1 -x -- '--admin' | tail -1 | sed 's/.*://')
    spans=$(curl -s -m 5 http://127.0.0.1:$a/metrics | grep -E '^weft_spans_exported_total' | awk '{s+=$NF} END {print s+0}')
    reqs=$(curl -s -m 5 http://127.0.0.1:$a/metrics | grep -E '^weft_requests_total' | awk '{s+=$NF} END {print s+0}')
    ticks=0
    for t in /proc/$pid/task/*; do
      c=$(cat $t/comm 2>/dev/null)
      case "$c" in weft-http-span*|weft-span-expor*) ticks=$(( ticks + $(awk '{print $14+$15}' $t/stat) )) ;; esac
    done
    echo "$pid $role $spans $reqs $ticks"
  done
}
snap > /tmp/s25-spanrate-a.txt; date +%s.%N > /tmp/s25-spanrate-ta.txt
sleep 30
snap > /tmp/s25-spanrate-b.txt; date +%s.%N > /tmp/s25-spanrate-tb.txt
kill $B; wait $B
