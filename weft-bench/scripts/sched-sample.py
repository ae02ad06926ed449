#!/usr/bin/env python3
# Usage: sched-sample.py OUT.tsv SECONDS: each thread of the proxies, wrk and the Java apps (time, pid, tid, name,
# CPU ns, run-queue wait ns, timeslices, command), every 2 s; used in session 18 (docs/benchmarks.md).
import os, sys, time
out = open(sys.argv[1], 'a')
end = time.time() + float(sys.argv[2])
def kind(pid):
    try:
        cmd = open(f'/proc/{pid}/cmdline','rb').read().replace(b'\0',b' ').decode(errors='replace')
    except OSError:
        return None
    if 'haproxy' in cmd.split(' ')[0]: return 'haproxy'
    if 'nginx' in cmd.split(' ')[0]: return 'nginx'
    if 'java' in cmd.split(' ')[0] or '/java' in cmd:
        return 'java:' + ' '.join(a for a in cmd.split(' ') if not a.startswith('-'))[-120:]
    if cmd.startswith('wrk'): return 'wrk'
    return None
while time.time() < end:
    t = time.time()
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        k = kind(pid)
        if not k: continue
        try:
            for tid in os.listdir(f'/proc/{pid}/task'):
                try:
                    s = open(f'/proc/{pid}/task/{tid}/schedstat').read().split()
                    comm = open(f'/proc/{pid}/task/{tid}/comm').read().strip()
                except OSError:
                    continue
                out.write(f'{t:.1f}\t{pid}\t{tid}\t{comm}\t{s[0]}\t{s[1]}\t{s[2]}\t{k}\n')
        except OSError:
            pass
    out.flush()
    time.sleep(2)
