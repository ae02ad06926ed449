#!/usr/bin/env python3
"""How long the consumer app's requests wait, unread, in the consumer-side proxy's sockets.

Usage: unread-ages.py DIR   (made by `trace-consumer-side.sh reads`: reads.txt.gz from perf-reads.py, threads.txt, app-threads.txt)

For every socket the proxy reads from and the consumer app writes into, pairs the first time bytes became readable
(sock:sk_data_ready, fired in the sending thread's context on loopback) since the proxy's last read that returned
bytes with the proxy's next read that returns bytes (sock:sock_recv_length), and prints the distribution of that
wait. Its mean times the request rate is the average number of connections holding unread bytes (Little's law),
which the `ss` sampler in where-requests-wait.py counts directly.
Then the event loop's silences (target.txt's thread: 2 ms or more between two of its reads) and where it was during
them, from its context switches: on a core, waiting for one (switched out runnable), or asleep (in epoll_wait, or
stopped at a JVM safepoint such as a garbage collection); with a Weft sidecar also how much of the silences its JVM's
safepoints cover (pauses.log, -Xlog safepoint lines time-stamped on perf's clock).
"""
import gzip, os, re, sys

d = sys.argv[1]
proxy = {int(l.split()[0]) for l in open(os.path.join(d, 'threads.txt'))}
app = {int(l) for l in open(os.path.join(d, 'app-threads.txt')) if l.strip()}
events, switches = [], []
loop = int(open(os.path.join(d, 'target.txt')).read().split()[3])
for line in gzip.open(os.path.join(d, 'reads.txt.gz'), 'rt'):
    f = line.split()
    if len(f) >= 4 and f[2] in ('ready', 'recv'):
        events.append((int(f[0]), float(f[1]), f[2], f[3], int(f[4]) if f[2] == 'recv' else 0))
    elif len(f) == 7 and f[2] == 'switch':
        switches.append((float(f[1]), int(f[3]), int(f[4]), int(f[5]), f[6]))
# The sockets the app writes into: readiness fires in the sender's thread on loopback, unless the kernel defers
# the receive to ksoftirqd; once a socket is known as the app's, all of its readiness events count.
fed = {sk for tid, _, ev, sk, _ in events if ev == 'ready' and tid in app}
pending, waits, reads, empty = {}, [], 0, 0
for tid, t, ev, sk, n in events:
    if sk not in fed:
        continue
    if ev == 'ready':
        pending.setdefault(sk, t)
    elif tid in proxy:
        if n > 0:
            reads += 1
            since = pending.pop(sk, None)
            if since is not None:
                waits.append(t - since)
        else:
            empty += 1
if not waits:
    sys.exit('no paired waits')
waits.sort()
span = events[-1][1] - events[0][1]
q = lambda p: waits[min(len(waits) - 1, int(p * len(waits)))] * 1e3
mean = sum(waits) / len(waits)
print(f'{len(waits)} paired waits over {span:.2f} s ({len(waits) / span:.0f}/s); proxy reads with bytes {reads}, '
      f'empty or failed {empty}')
print(f'wait ms: mean {mean * 1e3:.3f}  p50 {q(.5):.3f}  p90 {q(.9):.3f}  p99 {q(.99):.3f}  max {waits[-1] * 1e3:.3f}')
print(f'Little: {mean * len(waits) / span:.1f} connections unread on average')
for lim in (0.1, 0.5, 1, 2, 5, 10):
    print(f'  > {lim} ms: {sum(1 for w in waits if w > lim / 1e3) / len(waits) * 100:.1f} %')

# The event loop's silences, and its state through them.
reads_at = [t for tid, t, ev, _, n in events if tid == loop and ev == 'recv']
state, spent = 'on', {}


def where_asleep(stack):
    """The call the loop sleeps in, named by its stack's first telling frame."""
    for f in stack.split(';'):
        for k in ('epoll', 'futex', 'nanosleep', 'poll', 'select', 'Safepoint', 'Monitor', 'Parker', 'Mutex'):
            if k.lower() in f.lower():
                return f
    return stack.split(';')[0][:40]



silences = [(a, b) for a, b in zip(reads_at, reads_at[1:]) if b - a >= 0.002]
timeline = []  # (time, state from then on)
for t, prev, prev_state, nxt, stack in switches:
    if prev == loop:
        timeline.append((t, 'runnable' if prev_state == 0 else 'asleep:' + where_asleep(stack)))
    elif nxt == loop:
        timeline.append((t, 'on'))
i = 0
for a, b in silences:
    while i < len(timeline) and timeline[i][0] <= a:
        state = timeline[i][1]
        i += 1
    t, j = a, i
    while j < len(timeline) and timeline[j][0] < b:
        spent[state] = spent.get(state, 0.0) + timeline[j][0] - t
        t, state = timeline[j]
        j += 1
    spent[state] = spent.get(state, 0.0) + b - t
total = sum(spent.values())
print(f'event loop silences >= 2 ms: {len(silences)}, {total:.3f} s of {span:.2f} s; through them '
      + ', '.join(f'{k} {v / total * 100:.0f} %' for k, v in sorted(spent.items(), key=lambda kv: -kv[1]) if total))
print('longest silences ms: ' + ' '.join(f'{(b - a) * 1e3:.1f}' for a, b in sorted(silences, key=lambda s: s[0] - s[1])[:10]))

pauses_path = os.path.join(d, 'pauses.log')
if os.path.exists(pauses_path):
    pauses = []  # (start, end) in seconds; each line is written as its safepoint ends
    for line in open(pauses_path):
        m = re.match(r'\[(\d+)ns\] Safepoint "(\w+)".*Total: (\d+) ns', line)
        if m:
            end = int(m.group(1)) / 1e9
            pauses.append((end - int(m.group(3)) / 1e9, end, m.group(2)))
    inside = [p for p in pauses if events[0][1] <= p[1] <= events[-1][1]]
    covered = sum(max(0.0, min(b, pe) - max(a, ps)) for a, b in silences for ps, pe, _ in inside)
    kinds = {}
    for ps, pe, k in inside:
        kinds[k] = kinds.get(k, 0) + 1
    print(f'safepoints in the window: {len(inside)} ({", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))}), '
          f'{sum(pe - ps for ps, pe, _ in inside) * 1e3:.1f} ms in all, '
          f'longest {max((pe - ps for ps, pe, _ in inside), default=0) * 1e3:.1f} ms; '
          f'they cover {covered / total * 100 if total else 0:.0f} % of the silences')
