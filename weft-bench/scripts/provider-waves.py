#!/usr/bin/env python3
# Usage: provider-waves.py SCHED.tsv INFLIGHT.tsv (from sched-sample.py and provider-inflight.py, run together).
# Splits the inflight samples by which plane ran (haproxy process present or not, from the
# sched sampler's 2 s snapshots) and prints the wave statistics of each contiguous stretch longer than 20 s.
import bisect, collections, statistics as st, sys
snap = collections.defaultdict(set)
for l in open(sys.argv[1]):
    p = l.split('\t'); snap[round(float(p[0]))].add('haproxy' if p[7].startswith('haproxy') else ('weft' if 'sidecar' in p[7] else 'x'))
times = sorted(snap)
def plane(t):
    i = min(bisect.bisect_left(times, t), len(times) - 1)
    if abs(times[i] - t) > 5:
        return None  # the scheduler sampler was not running then: no plane to name
    s = snap[times[i]]
    return 'haproxy' if 'haproxy' in s else 'weft' if 'weft' in s else None
rows = [l.split('\t') for l in open(sys.argv[2])]
rows = [(float(r[0]), sum(int(x) for x in r[1:])) for r in rows if len(r) == 4 and min(int(x) for x in r[1:]) >= 0]
seg = []; cur = None
for t, s in rows:
    p = plane(t)
    if cur is None or p != cur[0] or t - cur[2] > 2:
        cur = [p, t, t, []]; seg.append(cur)
    cur[2] = t; cur[3].append(s)
for p, a, b, xs in seg:
    if b - a < 20 or p is None: continue
    xs = xs[len(xs)//2:]  # the stretch's second half: the measured window rather than the warm-up
    print(f"{p:8s} {b-a:5.0f}s n={len(xs)} mean {st.mean(xs):.0f} sd {st.pstdev(xs):.0f} >=500 {100*sum(x>=500 for x in xs)/len(xs):.1f}% <=200 {100*sum(x<=200 for x in xs)/len(xs):.1f}%")
