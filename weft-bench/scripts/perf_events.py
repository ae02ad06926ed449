"""Reads what perf-reads.py printed (reads.txt.gz, runs.txt.gz): the one parser unread-ages.py, edge-bursts.py and
cpu-runs.py share.

Each event is a tuple, sorted by time:
  (seconds, 'ready', tid, socket, 0)                 bytes became readable (fired in the sender's thread)
  (seconds, 'recv', tid, socket, bytes or -errno)    a read
  (seconds, 'switch', tid, prev, prev_state, next, stack, next_name, prev_name)
Traces made before perf-reads.py printed the names or signed the read's result read the same ('?' for a name).
"""
import gzip


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
