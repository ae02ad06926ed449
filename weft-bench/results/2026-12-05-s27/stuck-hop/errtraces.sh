#!/bin/bash
# every 3 s: the failed traces the running control plane holds (its port from a sidecar's --registry), appended once each
out=$1
while true; do
  p=$(pgrep -f 'WeftCli sidecar' | head -1)
  if [ -n "$p" ]; then
    port=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -o -- '--registry weft://[^ ]*' | grep -o '[0-9]*$')
    [ -n "$port" ] && curl -s -m 2 "http://127.0.0.1:$port/api/v2/traces?minDuration=1000000&lookback=120000&limit=50" > /tmp/s27/err.json && \
      python3 - "$out" <<'PY'
import json, sys
try:
    traces = json.load(open('/tmp/s27/err.json'))
except Exception:
    sys.exit(0)
seen = set(l.split(' ', 1)[0] for l in open(sys.argv[1])) if __import__('os').path.exists(sys.argv[1]) else set()
with open(sys.argv[1], 'a') as f:
    for t in traces:
        if t and t[0]['traceId'] not in seen:
            f.write(t[0]['traceId'] + ' ' + json.dumps(t) + '\n')
PY
  fi
  sleep 3
done
