cd /tmp/b19
export JAVA_HOME=$(ls -d /usr/lib/jvm/temurin-25*|head -1); PATH=$JAVA_HOME/bin:$PATH
timeout 900 ./weft bench observability --shape hop --proxy-threads 1 --pairs 2 --window 30s --results /tmp/s24/jfr/res > /tmp/s24/jfr/bench.log 2>&1 &
B=$!
bash weft-bench/results/2026-12-03-s16/jfr-cpu-hop/jfr-ab.sh /tmp/s24/jfr/bench.log /tmp/s24/jfr/rec > /tmp/s24/jfr/jfr-ab.log 2>&1
wait $B
echo done >> /tmp/s24/jfr/jfr-ab.log
