#!/usr/bin/env python3
"""How long the consumer app's requests wait, unread, in the consumer-side proxy's sockets.

Usage: unread-ages.py DIR   (made by `trace-consumer-side.sh reads`: reads.txt.gz from perf-reads.py, threads.txt, app-threads.txt)

For every socket the proxy reads from and the consumer app writes into, pairs the first time bytes became readable
(sock:sk_data_ready, fired in the sending thread's context on loopback) since the proxy's last read that returned
bytes with the proxy's next read that returns bytes (sock:sock_recv_length), and prints the distribution of that
wait. Its mean times the request rate is the average number of connections holding unread bytes (Little's law),
which the `ss` sampler in where-requests-wait.py counts directly.
"""
import gzip, os, sys

d = sys.argv[1]
proxy = {int(l.split()[0]) for l in open(os.path.join(d, 'threads.txt'))}
app = {int(l) for l in open(os.path.join(d, 'app-threads.txt')) if l.strip()}
events = []
for line in gzip.open(os.path.join(d, 'reads.txt.gz'), 'rt'):
    f = line.split()
    if len(f) >= 4 and f[2] in ('ready', 'recv'):
        events.append((int(f[0]), float(f[1]), f[2], f[3], int(f[4]) if f[2] == 'recv' else 0))
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
