#!/bin/bash
# alternates control runs (apply.py logging only) with runs whose Workers get an EEVDF slice of $1 ns
ns=$1; shift; n=$1; shift; out=/tmp/s27/slice/ab-$ns; mkdir -p $out
cd /tmp/b19
for i in $(seq 1 $n); do
  for v in ctl s$ns; do
    if [ $v = ctl ]; then s=0; else s=$ns; fi
    python3 /tmp/s27/slice/apply.py $s 'weft-worker' $out/$v-$i.applied & ap=$!
    ./weft bench --profile issue12 --planes weft --proxy-threads 1 --rounds 1 --sections mesh --results $out/$v-$i "$@" > $out/$v-$i.log 2>&1
    kill $ap
    grep "^| weft " $out/$v-$i/summary.md | head -1 | cut -d'|' -f2-12,19-20 | sed "s/^/$v-$i /" >> $out/rows.txt
  done
done
