#!/usr/bin/env python3
"""Mean request duration per interval between two scrapes of each sidecar's /metrics (scrape.sh's files):
the consumer side's outbound exchanges (its read of the app's request to its write of the answer) and each
provider side's inbound ones (its read of the WMP request to its write of the answer frame, the app's 50 ms
inside). Usage: durations.py DIR"""
import glob, re, sys

PAT = re.compile(r'weft_request_duration_seconds_(sum|count)\{service="(\w+)",direction="(\w+)"\} (\S+)')

def read(path):
    d = {}
    for line in open(path):
        m = PAT.match(line)
        if m:
            d[(m[2], m[3], m[1])] = float(m[4])
    return d

for side, key in [("consumer", ("consumer", "outbound")), ("provider-small", ("provider", "inbound")),
                  ("provider-medium", ("provider", "inbound")), ("provider-large", ("provider", "inbound"))]:
    prev, out = None, []
    for path in sorted(glob.glob(f"{sys.argv[1]}/{side}-*.prom")):
        t, d = int(path.rsplit("-", 1)[1][:-5]), read(path)
        if prev and key + ("count",) in d:
            n = d[key + ("count",)] - prev[1][key + ("count",)]
            s = d[key + ("sum",)] - prev[1][key + ("sum",)]
            if n > 0:
                out.append(f"{n / (t - prev[0]):.0f}/s {1000 * s / n:.1f} ms")
        prev = (t, d)
    print(f"{side}: " + " | ".join(out[-6:]))
