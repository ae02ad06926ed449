#!/usr/bin/env python3
"""How long the consumer app's requests wait, unread, in the consumer-side proxy's sockets, and why.

Usage: unread-ages.py DIR   (made by `trace-consumer-side.sh reads`: reads.txt.gz from perf-reads.py, threads.txt,
                             app-threads.txt, target.txt, and for a Weft sidecar pauses.log)

For every socket the event loop reads from and the consumer app writes into, pairs the first time bytes became
readable (sock:sk_data_ready, fired in the sending thread's context on loopback) since the loop's last read that
returned bytes with its next read that returns bytes (sock:sock_recv_length), and prints the distribution of that
wait. Its mean times the request rate is the average number of connections holding unread bytes (Little's law),
which the `ss` sampler in where-requests-wait.py counts directly.
Then, over the whole window, the time during which at least one request waits unread, split by where the event
loop was, from its context switches: on a core; switched out while runnable (preempted: who took the core); or
asleep (named by the call it sleeps in; the time from its wake-up to running again counts here too). With a Weft
sidecar also how much of that time its JVM's safepoints cover (pauses.log: -Xlog safepoint lines on perf's clock).
"""
import os, re, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_events import load

d = sys.argv[1]
app = {int(l) for l in open(os.path.join(d, 'app-threads.txt')) if l.strip()}
loop = int(open(os.path.join(d, 'target.txt')).read().split()[3])
events = load(os.path.join(d, 'reads.txt.gz'))
# The app's sockets into the proxy: written by the app's threads and read by the loop. (The app also writes to
# the load generator's sockets; the loop also reads the link and the providers' side.)
fed = ({e[3] for e in events if e[1] == 'ready' and e[2] in app}
       & {e[3] for e in events if e[1] == 'recv' and e[2] == loop})


def where_asleep(stack):
    """The call the loop sleeps in, named by its stack's first telling frame."""
    for f in stack.split(';'):
        for k in ('epoll', 'futex', 'nanosleep', 'poll', 'select', 'Safepoint', 'Monitor', 'Parker', 'Mutex'):
            if k.lower() in f.lower():
                return f
    return stack.split(';')[0][:40]


pending, waits, state, taker, last = {}, [], 'on a core', None, events[0][0]
# Running totals, so each wait can say what the loop did meanwhile: its time on a core, its wake-ups (switched
# in), and its reads that returned bytes (of any socket, and of the app's).
on_core, wakes, reads, app_reads, during = 0.0, 0, 0, 0, []
waiting_in, taken_by = {}, {}  # time with a request unread, by the loop's state; and by who took its core
for e in events:
    t = e[0]
    if state == 'on a core':
        on_core += t - last
    if pending:
        waiting_in[state] = waiting_in.get(state, 0.0) + t - last
        if state == 'preempted':
            taken_by[taker] = taken_by.get(taker, 0.0) + t - last
    last = t
    if e[1] == 'ready' and e[3] in fed:
        pending.setdefault(e[3], (t, on_core, wakes, reads, app_reads))
    elif e[1] == 'recv' and e[2] == loop and e[4] > 0:
        reads += 1
        app_reads += e[3] in fed
        since = pending.pop(e[3], None) if e[3] in fed else None
        if since is not None:
            waits.append(t - since[0])
            during.append((t - since[0], on_core - since[1], wakes - since[2], reads - since[3] - 1,
                           app_reads - since[4] - 1))
    elif e[1] == 'switch' and e[3] == loop:
        state, taker = ('preempted', e[7]) if e[4] == 0 else ('asleep in ' + where_asleep(e[6]), None)
    elif e[1] == 'switch' and e[5] == loop:
        state = 'on a core'
        wakes += 1
if not waits:
    sys.exit('no paired waits')
span = events[-1][0] - events[0][0]
w = sorted(waits)
q = lambda p: w[min(len(w) - 1, int(p * len(w)))] * 1e3
mean = sum(w) / len(w)
print(f'{len(fed)} app sockets; {len(w)} requests read over {span:.2f} s ({len(w) / span:.0f}/s)')
print(f'unread for ms: mean {mean * 1e3:.3f}  p50 {q(.5):.3f}  p90 {q(.9):.3f}  p99 {q(.99):.3f}  max {w[-1] * 1e3:.3f}'
      f'; Little: {mean * len(w) / span:.1f} connections unread on average')
print('  share unread longer than: ' + '  '.join(
    f'{lim} ms {sum(1 for x in w if x > lim / 1e3) / len(w) * 100:.1f} %' for lim in (0.1, 0.5, 1, 2, 5, 10)))
print(f'the event loop: on a core {on_core:.3f} s ({on_core / len(w) * 1e6:.1f} us per request read), '
      f'switched in {wakes} times')
for label, lim in (('all waits', 0), ('waits over 2 ms', 0.002), ('waits over 5 ms', 0.005)):
    sel = [x for x in during if x[0] > lim]
    if sel:
        med = lambda i: sorted(x[i] for x in sel)[len(sel) // 2]
        print(f'  {label} ({len(sel)}), medians: {med(0) * 1e3:.2f} ms, of which the loop on a core {med(1) * 1e3:.2f} ms, '
              f'switched in {med(2)} times, reading {med(3)} other sockets ({med(4)} of them the app\'s) first')
total = sum(waiting_in.values())
print(f'time with a request unread: {total:.3f} s of {span:.2f} s ({total / span * 100:.0f} %); the event loop meanwhile:')
for k, v in sorted(waiting_in.items(), key=lambda kv: -kv[1]):
    if v / total >= 0.005:
        print(f'  {k}: {v:.3f} s ({v / total * 100:.0f} %)')
if taken_by:
    print('  its core taken by: ' + ', '.join(f'{k} {v * 1e3:.0f} ms' for k, v in
                                               sorted(taken_by.items(), key=lambda kv: -kv[1])[:8]))

pauses_path = os.path.join(d, 'pauses.log')
if os.path.exists(pauses_path):
    pauses = []  # (start, end, kind) in seconds; each line is written as its safepoint ends
    for line in open(pauses_path):
        m = re.match(r'\[(\d+)ns\] Safepoint "(\w+)".*Total: (\d+) ns', line)
        if m:
            end = int(m.group(1)) / 1e9
            pauses.append((end - int(m.group(3)) / 1e9, end, m.group(2)))
    inside = [p for p in pauses if events[0][0] <= p[1] <= events[-1][0]]
    kinds = {}
    for _, _, k in inside:
        kinds[k] = kinds.get(k, 0) + 1
    print(f'safepoints in the window: {len(inside)} ({", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))}), '
          f'{sum(pe - ps for ps, pe, _ in inside) * 1e3:.1f} ms in all, '
          f'longest {max((pe - ps for ps, pe, _ in inside), default=0) * 1e3:.1f} ms')
