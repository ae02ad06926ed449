#!/usr/bin/env python3
"""Which share of a JFR recording's execution samples on a sidecar's Worker threads has a frame of each package
on its stack (inclusive), and the first such frame by method. JFR keeps inlined frames, which a perf profile of
JIT-compiled code folds into their caller: observe/ code inlined into the exchange shows here, not in perf.

    weft-bench/scripts/jfr-package-share.py RECORDING.jfr... [--package dev.weft.dataplane.observe. ...]

Record with: jcmd PID JFR.start settings=profile duration=20s filename=R.jfr (jfr from JDK 25 on PATH).
Default packages: observe/, metrics/ and Netty's ssl handler."""
import collections
import json
import subprocess
import sys

args = sys.argv[1:]
packages = []
while '--package' in args:
    i = args.index('--package')
    packages.append(args[i + 1])
    del args[i:i + 2]
packages = packages or ['dev.weft.dataplane.observe.', 'dev.weft.dataplane.metrics.', 'io.netty.handler.ssl.']
if not args:
    sys.exit(__doc__)
for f in args:
    out = subprocess.run(['jfr', 'print', '--json', '--stack-depth', '128', '--events', 'jdk.ExecutionSample', f],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    hits = collections.Counter()
    first = collections.Counter()
    for e in json.loads(out)['recording']['events']:
        v = e['values']
        if not ((v.get('sampledThread') or {}).get('javaName') or '').startswith('weft-worker'):
            continue
        total += 1
        frames = [fr['method']['type']['name'].replace('/', '.') + '.' + fr['method']['name']
                  for fr in (v.get('stackTrace') or {}).get('frames', [])]
        for p in packages:
            if any(fr.startswith(p) for fr in frames):
                hits[p] += 1
        for fr in frames:
            if any(fr.startswith(p) for p in packages):
                first[fr] += 1
                break
    print(f"{f}: {total} Worker samples; " + ", ".join(f"{p} {100 * hits[p] / max(total, 1):.1f}%" for p in packages))
    for m, c in first.most_common(12):
        print(f"   {100 * c / max(total, 1):5.1f}%  {m}")
