#!/usr/bin/env python3
"""How bunched the mesh's messages travel on each of its edges (which process sends to which).

Usage: edge-bursts.py DIR   (made by `trace-consumer-side.sh reads`: reads.txt.gz from perf-reads.py, tid-roles.txt)

The messages are perf_events.messages()'s (a socket's first readiness since its reader last read it); an edge is
the pair (sender's process, reader's process), from tid-roles.txt. For each edge, the messages are counted in bins
of 1 and 5 ms: the variance over the mean (1 for messages that arrive independently, larger the more they come in
bunches) and the share of empty bins. The edges into and out of the three example providers are also shown summed
("providers").
"""
import os, statistics as st, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_events import load, messages, roles

d = sys.argv[1]
events = [e for e in load(os.path.join(d, 'reads.txt.gz')) if e[1] != 'switch']
edges = {}
for t, a, b in messages(events, roles(d)):
    edges.setdefault((a, b), []).append(t)
    # The three providers taken together too: a load split 1:2:3 is less bunched per provider.
    pa, pb = ('providers' if r.startswith('provider:') else r for r in (a, b))
    if (pa, pb) != (a, b):
        edges.setdefault((pa, pb), []).append(t)
t0, span = events[0][0], events[-1][0] - events[0][0]
print(f'{span:.2f} s traced; per edge: messages/s, then per 1 ms and 5 ms bin: variance/mean, empty bins')
for (a, b), ts in sorted(edges.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    if len(ts) / span < 100:
        continue
    cells = []
    for w in (0.001, 0.005):
        c = [0] * (int(span / w) + 1)
        for t in ts:
            c[int((t - t0) / w)] += 1
        m = st.mean(c)
        cells.append(f'{st.pvariance(c) / m:6.1f} {sum(1 for x in c if x == 0) / len(c) * 100:4.0f} %')
    print(f'{a:>20} -> {b:<20} {len(ts) / span:7.0f}/s   1 ms: {cells[0]}   5 ms: {cells[1]}')
