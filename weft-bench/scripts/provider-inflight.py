#!/usr/bin/env python3
# Example: run beside `./weft bench --profile issue12 --planes weft,haproxy` to see the load travel in waves
# (session 18, docs/benchmarks.md); provider-waves.py splits the samples by plane.
# Usage: provider-inflight.py OUT.tsv SECONDS: every ~20 ms, the sum of the example providers' inFlight (GET /stats), with the time.
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mesh_procs import get, providers

out = open(sys.argv[1], 'w'); end = time.time() + float(sys.argv[2])
conns = {}
ports = {}; last_scan = 0
while time.time() < end:
    now = time.time()
    if now - last_scan > 3 or len(ports) < 3:
        p = providers()
        if p != ports: ports = p; conns = {}
        last_scan = now
    if len(ports) < 3: time.sleep(0.5); continue
    vals = []
    for name, port in sorted(ports.items()):
        body = get(conns, name, port, '/stats')
        vals.append(-1 if body is None else json.loads(body)['inFlight'])
    out.write(f'{now:.3f}\t' + '\t'.join(map(str, vals)) + '\n')
    time.sleep(max(0, 0.02 - (time.time() - now)))
