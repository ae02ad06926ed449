#!/bin/bash
# Alternating A/B of the sidecar's young generation: A = shipped (-Xmn8m), B = -Xms32m -Xmx48m -Xmn16m.
cd /tmp/b19
REST="-XX:MaxDirectMemorySize=64m -XX:+UseCompactObjectHeaders -Xss512k -XX:-UsePerfData -Dio.netty.jfr.enabled=false -XX:TrimNativeHeapInterval=1000"
A="-Xms24m -Xmx48m -Xmn8m $REST"
B="-Xms32m -Xmx48m -Xmn16m $REST"
for i in 1 2; do
  for v in A B; do
    opts=$A; [[ $v == B ]] && opts=$B
    echo "$(date +%T) start $v$i" >> /tmp/ab19/log
    timeout 1500 ./weft bench --profile issue12 --planes weft --proxy-threads 1,2 --rounds 1 \
      --sidecar-jvm "$opts" --results /tmp/ab19/$v$i > /tmp/ab19/$v$i.out 2>&1
    echo "$(date +%T) end $v$i rc=$?" >> /tmp/ab19/log
  done
done
