#!/usr/bin/env python3
"""How long each thread of the mesh held a core at a stretch, from every context switch on the machine.

Usage: cpu-runs.py DIR   (made by `trace-consumer-side.sh runs`: runs.txt.gz from perf-reads.py, tid-roles.txt)

A run is the time from a thread being switched in to being switched out (on either core). Per process (its role
from tid-roles.txt, else "other") and thread name: its share of the two cores, its runs of 1 ms or more and 5 ms or
more, and its longest. A thread that holds a core for milliseconds while the mesh's requests wait leaves one core
for everything else: that is what to look for beside the proxies' own event loops.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_events import load, roles

d = sys.argv[1]
role_of = roles(d)
switches = [e for e in load(os.path.join(d, 'runs.txt.gz')) if e[1] == 'switch']
since, name, runs = {}, {}, {}
for t, _, _, prev, _, nxt, _, next_name, prev_name in switches:
    if prev in since and prev != 0:
        runs.setdefault(prev, []).append(t - since.pop(prev))
        name[prev] = prev_name
    since[nxt] = t
    name.setdefault(nxt, next_name)
first, last = switches[0][0], switches[-1][0]
span = last - first
groups = {}
for tid, rs in runs.items():
    key = (role_of.get(tid, 'other'), name.get(tid, '?'))
    groups.setdefault(key, []).extend(rs)
print(f'{span:.2f} s traced on 2 cores; per process and thread name: share of the cores, runs >= 1 ms, >= 5 ms, '
      f'longest ms')
for (role, comm), rs in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
    share = sum(rs) / (2 * span) * 100
    if share < 0.5 and max(rs) < 0.002:
        continue
    print(f'{role:>20} {comm:<18} {share:5.1f} %  {sum(1 for r in rs if r >= 0.001):5d} {sum(1 for r in rs if r >= 0.005):4d}'
          f'  {max(rs) * 1e3:6.2f}')
