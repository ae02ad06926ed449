#!/usr/bin/env python3
"""The mesh's messages around the loop, bin by bin: what each edge carried, and how much the traced event loop ran.

Usage: edge-timeline.py DIR START SECONDS [BIN_MS]   (made by `trace-consumer-side.sh reads`: reads.txt.gz,
tid-roles.txt, target.txt; START counts from the trace's first event; BIN_MS 2 unless given)

One row per bin, one column per edge in the order a request and its answer travel (wrk -> app -> consumer side ->
provider side -> providers, and back), counted as edge-bursts.py counts them (a socket's first readiness since its
reader last read it, the sender's process known), and the share of the bin the traced loop (target.txt's thread:
the consumer-side proxy's event loop) spent on a core. What it shows that edge-bursts.py's figures cannot: where a
lull starts, and whether a generator's restart (a new wrk, whose threads the role map does not know, so its edges
read 0) fell inside the trace.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_events import load, messages, roles

d, start, dur = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
width = (float(sys.argv[4]) if len(sys.argv) > 4 else 2.0) / 1000
loop = int(open(os.path.join(d, 'target.txt')).read().split()[3])
events = load(os.path.join(d, 'reads.txt.gz'))


def hop(role):
    """A process's place on the loop, whichever proxy plays it."""
    if role.startswith('provider:') or role == 'providers':
        return 'providers'
    if role.endswith(':consumer'):
        return 'consumer side'
    if role.endswith(':provider'):
        return 'provider side'
    return {'consumer-app': 'app'}.get(role, role)


order = ['wrk', 'app', 'consumer side', 'provider side', 'providers', 'provider side', 'consumer side', 'app', 'wrk']
columns = list(zip(order, order[1:]))
t0 = events[0][0] + start
bins = int(dur / width)
counts = {c: [0] * bins for c in columns}
on_core = [0.0] * bins
for t, a, b in messages(events, roles(d)):
    c = (hop(a), hop(b))
    if c in counts and t0 <= t < t0 + dur:
        counts[c][int((t - t0) / width)] += 1
since = None
for e in events:
    t = e[0]
    if e[1] == 'switch':
        prev, nxt = e[3], e[5]
        if nxt == loop:
            since = t
        elif prev == loop and since is not None:
            a, b = max(since, t0), min(t, t0 + dur)
            while a < b:  # spread the run over the bins it covers
                i = min(int((a - t0) / width), bins - 1)
                edge = min(b, t0 + (i + 1) * width)
                if edge <= a:  # a run that ends on a bin's edge, as floating point sees it
                    edge = b
                on_core[i] += edge - a
                a = edge
            since = None
names = ['wrk>app', 'app>cons', 'cons>prov', 'prov>apps', 'apps>prov', 'prov>cons', 'cons>app', 'app>wrk']
print(f'{d}: from {start:.3f} s, bins of {width * 1000:g} ms; messages per edge (cons: consumer side, prov: provider '
      f'side, apps: the providers); loop: the consumer side\'s event loop on a core, % of the bin')
print('   ms ' + ''.join(f'{n:>10}' for n in names) + '   loop')
for i in range(bins):
    print(f'{i * width * 1000:5.0f} ' + ''.join(f'{counts[c][i]:10d}' for c in columns)
          + f'   {on_core[i] / width * 100:4.0f}')
