#!/usr/bin/env python3
"""How the proxies' event loops spent one window, per request: wake-census.sh's output directory in, tables out.

  wake-census.py DIR

DIR holds tid-roles.txt (mesh_procs.py roles), threads.txt ("PID TID COMM" of every thread), served-before.txt and
served-after.txt (the providers' served counters and the CLOCK_MONOTONIC time each was read) and wake.txt.gz (perf
script -F comm,pid,tid,time,event,trace of sched:sched_wakeup and raw_syscalls enter/exit on every CPU, recorded
on CLOCK_MONOTONIC). Only the events between the two reads count, against the requests served between them. The
loops are Weft's Workers (threads named weft-worker-*) and every thread of HAProxy, nginx or Caddy. Prints, per side
(consumer, provider; the three provider sides together):
  - wake-ups of the loops per request, by who woke them (the waker is the thread running when the wake-up is made);
  - their system calls per request, by name;
  - what their epoll_wait calls returned (events per call), per request.
"""
import collections, gzip, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_events  # noqa: E402  (this folder's)

SYSCALLS = {0: 'read', 1: 'write', 7: 'poll', 16: 'ioctl', 19: 'readv', 20: 'writev', 24: 'sched_yield',
            44: 'sendto', 45: 'recvfrom', 46: 'sendmsg', 47: 'recvmsg', 202: 'futex', 228: 'clock_gettime',
            232: 'epoll_wait', 233: 'epoll_ctl', 281: 'epoll_pwait', 441: 'epoll_pwait2', 286: 'timerfd_settime'}
EPOLL = {232, 281, 441}
LINE = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s+(.*)$')


def load(d):
    roles = perf_events.roles(d)
    pid_of, comm_of = {}, {}
    for line in open(os.path.join(d, 'threads.txt')):
        f = line.split(None, 2)
        if len(f) == 3:
            pid_of[int(f[1])], comm_of[int(f[1])] = int(f[0]), f[2].strip()
    return (roles, pid_of, comm_of, *perf_events.served(d))


def side(role):
    return role.split(':')[1] if ':' in role else role


def main(d):
    roles, pid_of, comm_of, requests, start, end = load(d)
    if requests <= 0:
        sys.exit(f'{d}: no requests served in the window')
    proxy = lambda r: r.startswith(('sidecar:', 'haproxy', 'nginx', 'caddy'))
    loops = {t for t, r in roles.items()
             if r.startswith(('haproxy', 'nginx', 'caddy'))
             or (r.startswith('sidecar:') and comm_of.get(t, '').startswith('weft-worker'))}
    wakers, calls, returns = (collections.Counter() for _ in range(3))
    for line in gzip.open(os.path.join(d, 'wake.txt.gz'), 'rt', errors='replace'):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, tid, at, event, rest = m.groups()
        if not start <= float(at) <= end:
            continue
        pid, tid = int(pid), int(tid)
        if event == 'sched:sched_wakeup':
            woken = int(re.search(r'\bpid=(\d+)', rest).group(1))
            if woken not in loops:
                continue
            r = roles.get(tid)
            if pid == pid_of.get(woken):
                who = 'another loop of the same proxy' if tid in loops else 'another thread of the same proxy'
            elif r and proxy(r):
                who = f'the {side(r)} side'
            elif r:
                who = {'consumer-app': 'the consumer app', 'wrk': 'wrk'}.get(
                    r, 'a provider' if r.startswith('provider:') else r)
            else:
                who = 'an interrupt on an idle CPU' if comm == 'swapper' else 'another process'
            wakers[(side(roles[woken]), who)] += 1
        elif tid in loops and event == 'raw_syscalls:sys_enter':
            nr = int(rest.split()[1])
            calls[(side(roles[tid]), SYSCALLS.get(nr, f'#{nr}'))] += 1
        elif tid in loops and event == 'raw_syscalls:sys_exit':
            nr = int(rest.split()[1])
            if nr in EPOLL:
                n = int(rest.rsplit('=', 1)[1])
                bucket = 'error' if n < 0 else str(n) if n < 2 else '2-3' if n < 4 else '4-7' if n < 8 else '8 or more'
                returns[(side(roles[tid]), bucket)] += 1
    print(f'# {len(loops)} event-loop threads, {requests:,} requests in the {end - start:.2f} s between the reads\n')
    for title, counter in (('woken by', wakers), ('system call', calls), ('epoll_wait returned events', returns)):
        print(f'| side | {title} | per request |\n|---|---|---:|')
        for s in ('consumer', 'provider'):
            rows = sorted(((k, v) for (x, k), v in counter.items() if x == s), key=lambda kv: -kv[1])
            for k, v in rows:
                if v / requests >= 0.001:
                    print(f'| {s} | {k} | {v / requests:.3f} |')
            print(f'| {s} | **all** | **{sum(v for _, v in rows) / requests:.3f}** |')
        print()


if __name__ == '__main__':
    main(sys.argv[1])
