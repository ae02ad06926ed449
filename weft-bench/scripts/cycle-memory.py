#!/usr/bin/env python3
"""Whether the mesh's bunches come back cycle after cycle (they persist) or are made anew (something forms them).

Usage: cycle-memory.py DIR [EDGE]   (made by `trace-consumer-side.sh reads`: reads.txt.gz, tid-roles.txt)

EDGE is "SENDER -> READER" as edge-bursts.py prints it (spaces optional) (default: the consumer app's requests into its proxy, whatever
that proxy is). The edge's messages are counted per millisecond and the series' autocorrelation printed by lag. A
request goes round the loop (wrk, consumer app, proxies, the providers' 50 ms, back) in about 512 / QPS, the cycle:
if a bunch or a gap rides the loop unchanged, the correlation peaks again at one, two, three cycles and falls slowly
from one to the next; if what forms bunches acts anew each time, it stays near zero past a few milliseconds. The
rate at which the peaks fall is how fast the mesh spreads a bunch out: the lower their ratio, the faster.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_events import load, messages, roles

d = sys.argv[1]
events = [e for e in load(os.path.join(d, 'reads.txt.gz')) if e[1] != 'switch']
want = sys.argv[2].replace(' ', '') if len(sys.argv) > 2 else None
times = [t for t, a, b in messages(events, roles(d))
         if (want is None and a == 'consumer-app' and b.endswith(':consumer')) or f'{a}->{b}' == want]
t0, span = events[0][0], events[-1][0] - events[0][0]
c = [0] * (int(span * 1000) + 1)
for t in times:
    c[int((t - t0) * 1000)] += 1
n = len(c)
m = sum(c) / n
v = sum((x - m) ** 2 for x in c) / n


def acf(lag):
    return sum((c[i] - m) * (c[i + lag] - m) for i in range(n - lag)) / ((n - lag) * v)


qps = len(times) / span
cycle = 512 / qps * 1000
r = [acf(k) for k in range(0, min(400, n // 3))]
# The first peak past half a cycle is where the loop brings a bunch back.
lo = int(cycle * 0.6)
peaks = []
k0 = lo
while k0 + int(cycle * 0.8) < len(r) and len(peaks) < 4:
    k = max(range(k0, k0 + int(cycle * 0.8)), key=lambda i: r[i])
    peaks.append(k)
    k0 = k + int(cycle * 0.6)
print(f'{span:.2f} s, {qps:.0f} messages/s on the edge ({want or "consumer app -> consumer-side proxy"}); '
      f'a cycle of 512 is about {cycle:.1f} ms')
print('autocorrelation of the messages per ms at lag (ms): '
      + '  '.join(f'{k}: {r[k]:.2f}' for k in (1, 2, 5, 10, 20) if k < len(r)))
print('peaks one, two, three... cycles on: '
      + '  '.join(f'{k} ms: {r[k]:.2f}' for k in peaks))
if len(peaks) >= 2 and r[peaks[0]] > 0:
    print(f'kept from one cycle to the next (peak ratio): '
          + '  '.join(f'{r[b] / r[a]:.2f}' for a, b in zip(peaks, peaks[1:]) if r[a] > 0))
