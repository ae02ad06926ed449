#!/bin/bash
cd /tmp/x19
for v in E1c E0c E1d E0d; do
  echo "$(date +%T) start $v" >> /tmp/w19/log
  python3 /work/main/weft-bench/scripts/provider-inflight.py /tmp/w19/$v.inflight.tsv 240 &
  S=$!
  case $v in E0*) unset WEFT_X_MESH_RCV;; E1*) export WEFT_X_MESH_RCV=4096;; esac
  WEFT_X_READSTATS=1 timeout 900 ./weft bench --profile issue12 --planes weft --proxy-threads 1 --rounds 1 --keep-logs \
      --results /tmp/w19/$v > /tmp/w19/$v.out 2>&1
  kill $S 2>/dev/null; wait $S 2>/dev/null
  echo "$(date +%T) end $v" >> /tmp/w19/log
done
#!/bin/bash
cd /tmp/x19
for v in F1 G1 E0e E1e F2 G2 E0f E1f; do
  echo "$(date +%T) start $v" >> /tmp/w19/log
  python3 /work/main/weft-bench/scripts/provider-inflight.py /tmp/w19/$v.inflight.tsv 240 &
  S=$!
  unset WEFT_X_MESH_RCV WEFT_X_MESH_MPR
  case $v in
    E1*) export WEFT_X_MESH_RCV=4096 WEFT_X_MESH_MPR=1;;
    F*) export WEFT_X_MESH_RCV=4096 WEFT_X_MESH_MPR=16;;
    G*) export WEFT_X_MESH_MPR=1;;
  esac
  WEFT_X_READSTATS=1 timeout 900 ./weft bench --profile issue12 --planes weft --proxy-threads 1 --rounds 1 --keep-logs \
      --results /tmp/w19/$v > /tmp/w19/$v.out 2>&1
  kill $S 2>/dev/null; wait $S 2>/dev/null
  echo "$(date +%T) end $v" >> /tmp/w19/log
done
