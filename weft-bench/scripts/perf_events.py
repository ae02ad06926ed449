"""Reads what perf-reads.py printed (reads.txt.gz, runs.txt.gz): the one parser its readers share (unread-ages.py,
edge-bursts.py, cycle-memory.py, edge-timeline.py, cpu-runs.py), and the messages between the mesh's processes
(messages()) for the three that count them. Also what every recording beside a round keeps: the threads' roles
(roles()) and the requests served between two reads inside it (served(): wake-census.py, perf-ab.py).

Each event is a tuple, sorted by time:
  (seconds, 'ready', tid, socket, 0)                 bytes became readable (fired in the sender's thread)
  (seconds, 'recv', tid, socket, bytes or -errno)    a read
  (seconds, 'switch', tid, prev, prev_state, next, stack, next_name, prev_name)
Traces made before perf-reads.py printed the names or signed the read's result read the same ('?' for a name).
"""
import gzip, os


def signed(n):
    """A read's result: bytes, or a negative errno (perf hands it over unsigned; older traces kept it so)."""
    return n - (1 << 32) if n >= 1 << 31 else n


def load(path):
    events = []
    for line in gzip.open(path, 'rt'):
        f = line.split()
        if len(f) >= 4 and f[2] in ('ready', 'recv'):
            events.append((float(f[1]), f[2], int(f[0]), f[3], signed(int(f[4])) if f[2] == 'recv' else 0))
        elif len(f) >= 7 and f[2] == 'switch':
            events.append((float(f[1]), 'switch', int(f[0]), int(f[3]), int(f[4]), int(f[5]), f[6],
                           f[7] if len(f) > 7 else '?', f[8] if len(f) > 8 else '?'))
    events.sort(key=lambda e: e[0])
    return events


def served(d):
    """(requests, t0, t1): the served counters' difference between served-before.txt and served-after.txt beside a
    recording (`mesh_procs.py served`: a total and the CLOCK_MONOTONIC seconds it was read), and the two times."""
    (n0, t0), (n1, t1) = (open(os.path.join(d, f)).read().split() for f in ('served-before.txt', 'served-after.txt'))
    return int(n1) - int(n0), float(t0), float(t1)


def roles(d):
    """tid -> mesh role, as `mesh_procs.py roles` wrote it into tid-roles.txt beside the trace."""
    return {int(l.split()[0]): l.split()[1] for l in open(os.path.join(d, 'tid-roles.txt'))}


def messages(events, role):
    """The messages between the mesh's processes: (seconds, sender's role, reader's role), in time order.

    A message is the first time a socket becomes readable (sk_data_ready, fired in the sender's thread on loopback)
    since its reader last read bytes from it. Sockets are named by their reader, the first known thread that read
    from them. Readiness the kernel delivered from ksoftirqd (a sender outside `role`) is left out, and so is a
    socket whose reader is not in `role` (a generator started after the role map was made)."""
    reader = {}
    for e in events:
        if e[1] == 'recv' and e[4] > 0 and e[2] in role:
            reader.setdefault(e[3], role[e[2]])
    unread, out = set(), []
    for e in events:
        if e[1] == 'ready':
            if e[3] not in unread and e[2] in role and e[3] in reader:
                unread.add(e[3])
                out.append((e[0], role[e[2]], reader[e[3]]))
        elif e[1] == 'recv' and e[4] > 0:
            unread.discard(e[3])
    return out
