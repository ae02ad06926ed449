#!/usr/bin/env python3
# Usage: waves-by-plane.py BENCH.stamped INFLIGHT.tsv
# BENCH.stamped: ./weft bench's output with each line prefixed by the epoch time it was printed; a "512 conns" line
# ends a measured 20 s window. Prints, per plane and threads, the providers' in-flight statistics in those windows.
import collections, re, statistics as st, sys, gzip
ends = []
for l in open(sys.argv[1]):
    m = re.match(r'([\d.]+) .*mesh (\S+) ×(\d)\s+512 conns', l)
    if m: ends.append((float(m.group(1)), m.group(2) + ' x' + m.group(3)))
rows = []
for l in (gzip.open(sys.argv[2], 'rt') if sys.argv[2].endswith('.gz') else open(sys.argv[2])):
    p = l.split('\t')
    if len(p) == 4 and min(int(x) for x in p[1:]) >= 0:
        rows.append((float(p[0]), sum(int(x) for x in p[1:])))
by = collections.defaultdict(list)
for end, name in ends:
    xs = [v for t, v in rows if end - 20 <= t <= end]
    if xs: by[name].append(xs)
for name in sorted(by):
    for xs in by[name]:
        print(f"{name:14} n={len(xs):4} mean {st.mean(xs):4.0f} sd {st.pstdev(xs):4.0f} >=500 {100*sum(x>=500 for x in xs)/len(xs):5.1f}% <=200 {100*sum(x<=200 for x in xs)/len(xs):5.1f}%")
