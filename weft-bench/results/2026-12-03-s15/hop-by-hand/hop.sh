#!/usr/bin/env bash
# Per-hop pair by hand: control, provider app, two sidecars (1 Worker each), wrk -t1 -c64 POST through the consumer
# side; JDK 25 CPU-time samples of both sidecars over 20 s of a measured window. Usage: hop.sh NAME [MTLS] [extra sidecar flags]
set -u
cd /work/main
export JAVA_HOME=$(ls -d /usr/lib/jvm/temurin-25*|head -1); export PATH=$JAVA_HOME/bin:$PATH
NAME=$1; MTLS=${2:-strict}; shift 2 || true; EXTRA="$*"
OUT=/work/runs/s15/hop/$NAME; rm -rf $OUT; mkdir -p $OUT/w; cd $OUT/w
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill $p 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
/work/main/weft control --listen 127.0.0.1:17700 > $OUT/control.log 2>&1 & PIDS+=($!)
for i in $(seq 100); do grep -q listening $OUT/control.log >/dev/null 2>&1 && break; sleep 0.2; done
/work/main/weft token create --control weft://127.0.0.1:17700 --service provider > p.token 2>>$OUT/control.log
/work/main/weft token create --control weft://127.0.0.1:17700 --service consumer > c.token 2>>$OUT/control.log
/work/main/weft provider --listen 127.0.0.1:19101 --name small --delay-ms 0 --max-concurrency 100000 > $OUT/app.log 2>&1 & PIDS+=($!)
WEFT_JAVA_OPTS="${SC_OPTS:-}" /work/main/weft sidecar --service provider --app 127.0.0.1:19101 --inbound 127.0.0.1:17001 --admin 127.0.0.1:19901 \
  --registry weft://127.0.0.1:17700 --token-file p.token --workers 1 --mtls $MTLS $EXTRA > $OUT/ps.log 2>&1 & PS=$!; PIDS+=($PS)
WEFT_JAVA_OPTS="${SC_OPTS:-}" /work/main/weft sidecar --service consumer --app 127.0.0.1:19102 --upstream provider=127.0.0.1:19100 --inbound 127.0.0.1:17002 \
  --admin 127.0.0.1:19900 --registry weft://127.0.0.1:17700 --token-file c.token --workers 1 --mtls $MTLS $EXTRA > $OUT/cs.log 2>&1 & CS=$!; PIDS+=($CS)
for i in $(seq 300); do curl -sf http://127.0.0.1:19900/ready >/dev/null && curl -sf http://127.0.0.1:19901/ready >/dev/null && break; sleep 0.2; done
for i in $(seq 100); do curl -sf -d hello http://127.0.0.1:19100/ >/dev/null && break; sleep 0.3; done
curl -s -d hello http://127.0.0.1:19100/ > $OUT/answer.txt
SPID=$(pgrep -P $PS java || echo $PS); CPID=$(pgrep -P $CS java || echo $CS)
echo "sidecar pids $SPID $CPID" > $OUT/pids
if [[ "${RID:-0}" == 1 ]]; then
cat > post.lua <<'L'
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/", {["Content-Type"] = "text/plain", ["X-Request-Id"] = string.format("r-%d-%d", math.random(1, 1000000000), n)}, "hello from the per-hop")
end
L
else
cat > post.lua <<'L'
wrk.method = "POST"; wrk.body = "hello from the per-hop"; wrk.headers["Content-Type"] = "text/plain"
L
fi
wrk -t1 -c64 -d${WARM:-60s} -s post.lua http://127.0.0.1:19100/ > $OUT/warm.txt 2>&1
for p in $SPID $CPID; do jcmd $p JFR.start name=settle duration=5s jdk.CPUTimeSample#enabled=true 'jdk.CPUTimeSample#throttle=1ms' >/dev/null; done
sleep 6
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
wrk -t1 -c64 -d26s -s post.lua http://127.0.0.1:19100/ > $OUT/measure.txt 2>&1 &
W=$!
sleep 3
a1=$(cpu $SPID); b1=$(cpu $CPID); t1=$(date +%s.%N)
if [[ "${JFR:-1}" == 1 ]]; then for p in $SPID $CPID; do jcmd $p JFR.start name=m duration=20s filename=$OUT/hop-$p.jfr jdk.CPUTimeSample#enabled=true 'jdk.CPUTimeSample#throttle=1ms' >/dev/null; done; fi
r1=$(curl -s http://127.0.0.1:19901/metrics | awk '/^weft_requests_total/ {s+=$2} END{print s}')
sleep 20
r2=$(curl -s http://127.0.0.1:19901/metrics | awk '/^weft_requests_total/ {s+=$2} END{print s}')
a2=$(cpu $SPID); b2=$(cpu $CPID); t2=$(date +%s.%N)
wait $W
python3 - <<P | tee $OUT/result.txt
req=$r2-$r1; ticks=($a2-$a1)+($b2-$b1); secs=$t2-$t1
print(f"requests {req:.0f} in {secs:.1f} s = {req/secs:.0f} QPS; sidecar CPU {ticks*10:.0f} ms; per hop {ticks*10*1000/req/2:.1f} us/request (pair / 2)")
P
grep -E "Requests/sec|Non-2xx|errors" $OUT/measure.txt
for p in $SPID $CPID; do grep -E "VmHWM|VmRSS" /proc/$p/status | tr "\n" " "; echo; done | tee -a $OUT/result.txt
