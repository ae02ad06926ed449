#!/bin/bash
# every 10 s: each sidecar's /metrics (admin port from its command line) into DIR/<id>-<epoch>.prom
dir=$1; mkdir -p $dir
while true; do
  for pid in $(pgrep -f 'WeftCli sidecar'); do
    cl=$(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null)
    port=$(echo "$cl" | grep -o -- '--admin [^ ]*' | grep -o '[0-9]*$')
    id=$(echo "$cl" | grep -o -- '--id [^ ]*' | cut -d' ' -f2)
    [ -n "$port" ] && curl -s -m 2 http://127.0.0.1:$port/metrics > $dir/${id:-consumer}-$(date +%s).prom
  done
  sleep 10
done
