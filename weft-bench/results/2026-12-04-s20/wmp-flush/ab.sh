#!/bin/bash
# Usage: ab.sh OUTDIR PAIRS A B   (from a built clone's root with scratch-hook.patch applied)
# Alternates one-round `./weft bench --profile issue12 --planes weft --proxy-threads 1` runs with the WMP link's
# flush-after-frames at A and at B (-Dweft.scratch.flushAfterFrames, scratch-hook.patch). Both sides run the
# sidecar's shipped JVM options plus that property, so both run without the AOT cache (bench --sidecar-jvm).
O=$1; N=$2; A=$3; B=$4; mkdir -p $O
SHIPPED=$(grep -v '^#' weft-dataplane/src/main/resources/dev/weft/dataplane/sidecar-jvm.options | tr '\n' ' ')
for i in $(seq 1 $N); do
  for v in $A $B; do
    timeout 900 ./weft bench --profile issue12 --planes weft --proxy-threads 1 --rounds 1 \
        --sidecar-jvm "$SHIPPED -Dweft.scratch.flushAfterFrames=$v" --results $O/f$v-$i > $O/f$v-$i.out 2>&1
    echo "$(date +%T) f$v-$i $(grep -m1 'qps' $O/f$v-$i.out | sed 's/.*512 conns//')"
  done
done
