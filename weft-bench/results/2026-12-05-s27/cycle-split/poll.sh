#!/bin/bash
# polls each example provider's /stats every 2 s; the provider ports come from the provider sidecars' --app
out=$1
while true; do
  for pid in $(pgrep -f 'WeftCli sidecar --service provider'); do
    port=$(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | grep -o -- '--app [^ ]*' | grep -o '[0-9]*$')
    [ -n "$port" ] && echo "$(date +%s) $(curl -s -m 1 http://127.0.0.1:$port/stats)" >> $out
  done
  for pid in $(pgrep -x haproxy); do echo "$(date +%s) haproxy $pid" >> $out; done
  sleep 2
done
