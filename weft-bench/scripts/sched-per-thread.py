#!/usr/bin/env python3
# Usage: sched-per-thread.py SCHED.tsv [--by-kind] (from sched-sample.py). Each thread's CPU, run-queue wait and
# timeslices from its first to its last sample. By default one row per proxy event-loop thread (Weft Workers,
# HAProxy, nginx) with wait and CPU per timeslice; --by-kind sums every thread by process kind and thread name.
import collections, re, sys
first = {}; last = {}
for line in open(sys.argv[1]):
    t, pid, tid, comm, cpu, wait, slices, kind = line.rstrip('\n').split('\t')
    v = (float(t), int(cpu), int(wait), int(slices), comm, kind)
    first.setdefault((pid, tid), v); last[(pid, tid)] = v

def who(kind):
    """A process named by its role: the sidecar's --id, the example app, or the proxy."""
    m = re.search(r'sidecar-(consumer|provider-\w+)|WeftCli (provider|consumer|control|bench)', kind)
    return ('java ' + (m.group(0) if m else '?')) if kind.startswith('java') else kind

deltas = [(key, a, last[key]) for key, a in first.items()]
if '--by-kind' in sys.argv[2:]:
    agg = collections.defaultdict(lambda: [0, 0, 0])
    for key, a, b in deltas:
        name = re.sub(r'WeftCli provider', 'app-provider', re.sub(r'provider-(small|medium|large)', 'provider-*', who(b[5])))
        g = agg[(name, re.sub(r'\d+$', 'N', b[4]))]
        g[0] += b[1] - a[1]; g[1] += b[2] - a[2]; g[2] += b[3] - a[3]
    print(f"{'process':40s} {'thread':18s} {'cpu s':>8s} {'wait s':>8s} {'wait/cpu':>8s} {'slices':>9s} {'us/slice wait':>12s}")
    for (name, comm), (cpu, wait, sl) in sorted(agg.items(), key=lambda kv: -kv[1][0])[:30]:
        print(f"{name[:40]:40s} {comm[:18]:18s} {cpu/1e9:8.1f} {wait/1e9:8.1f} {wait/max(cpu,1):8.2f} {sl:9d} {wait/1e3/max(sl,1):12.1f}")
    sys.exit()
rows = []
for key, a, b in deltas:
    comm = b[4]
    if not (comm.startswith('weft-worker') or comm in ('haproxy', 'nginx')): continue
    m = re.search(r'sidecar-(consumer|provider-\w+)', b[5])
    cpu = b[1]-a[1]; wait = b[2]-a[2]; sl = b[3]-a[3]
    rows.append((a[0], key[0], m.group(0) if m else b[5][:20], comm, cpu/1e9, wait/1e9, sl, wait/1e3/max(sl,1), cpu/1e3/max(sl,1), b[0]-a[0]))
rows.sort()
print("start pid who thread cpu_s wait_s slices wait_us/slice cpu_us/slice life_s")
for r in rows:
    print(f"{r[0]:.0f} {r[1]} {r[2]:24s} {r[3]:14s} {r[4]:6.1f} {r[5]:6.1f} {r[6]:8d} {r[7]:7.0f} {r[8]:6.0f} {r[9]:5.0f}")
