#!/usr/bin/env python3
# Example: run beside `./weft bench --profile issue12 --planes weft,haproxy` to see the load travel in waves
# (session 18, docs/benchmarks.md); provider-waves.py splits the samples by plane.
# Usage: provider-inflight.py OUT.tsv SECONDS: every ~20 ms, the sum of the example providers' inFlight (GET /stats), with the time.
import sys, time, subprocess, re, http.client, json, os
out = open(sys.argv[1], 'w'); end = time.time() + float(sys.argv[2])
conns = {}
def providers():
    found = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try: c = open(f'/proc/{pid}/cmdline','rb').read().split(b'\0')
        except OSError: continue
        if b'dev.weft.cli.WeftCli' in c and b'provider' in c and b'sidecar' not in c:
            found[pid] = c[c.index(b'--name')+1].decode()
    ports = {}
    if not found: return ports
    ss = subprocess.run(['ss', '-ltnpH'], capture_output=True, text=True).stdout
    for line in ss.splitlines():
        m = re.search(r'127\.0\.0\.1\]?:(\d+).*pid=(\d+)', line)
        if m and m.group(2) in found: ports[found[m.group(2)]] = int(m.group(1))
    return ports
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
        try:
            c = conns.get(name) or http.client.HTTPConnection('127.0.0.1', port, timeout=1)
            conns[name] = c
            c.request('GET', '/stats'); r = c.getresponse(); vals.append(json.loads(r.read())['inFlight'])
        except Exception:
            conns.pop(name, None); vals.append(-1)
    out.write(f'{now:.3f}\t' + '\t'.join(map(str, vals)) + '\n')
    time.sleep(max(0, 0.02 - (time.time() - now)))
