#!/usr/bin/env python3
# epoll-stats.py TRACE.txt (perf trace -e epoll_* of one event-loop thread): per wake-up, the ready events and the
# time the thread spent before waiting again.
import re, sys, statistics as st
rows = []
for l in open(sys.argv[1]):
    m = re.match(r'\s*([\d.]+) \(\s*([\d.]+) ms\): epoll_\w+\(.*\) = (\d+)', l)
    if m: rows.append((float(m.group(1)), float(m.group(2)), int(m.group(3))))
span = rows[-1][0] - rows[0][0]
busy = []
for (t0, d0, n0), (t1, d1, n1) in zip(rows, rows[1:]):
    busy.append((n0, t1 - (t0 + d0)))  # events returned by the wait, ms spent on them before the next wait
ev = [n for n, _ in busy if n > 0]
work = [b for n, b in busy if n > 0]
def q(xs, p): xs = sorted(xs); return xs[int(p * (len(xs) - 1))]
print(f"{sys.argv[1]}: {len(rows)} waits in {span/1000:.1f} s ({len(rows)/span*1000:.0f}/s), {sum(1 for r in rows if r[2]==0)} returned 0")
print(f"  events per wake: mean {st.mean(ev):.1f}, median {q(ev,.5)}, p90 {q(ev,.9)}, max {max(ev)}")
print(f"  ms from wake to next wait: mean {st.mean(work):.3f}, median {q(work,.5):.3f}, p90 {q(work,.9):.3f}, max {max(work):.3f}")
print(f"  µs per event: {1000*sum(work)/sum(ev):.1f}; share of time not waiting {100*sum(work)/span:.0f} %")
