#!/usr/bin/env python3
# summ.py TAG: medians per (workers, variant) from results.csv
import csv, sys, statistics, collections
tag = sys.argv[1]
rows = collections.defaultdict(list)
for line in open('/tmp/obs/results.csv'):
    f = line.rstrip('\n').split(',')
    if f[0] != tag or len(f) < 10 or not f[5]: continue
    th = dict(kv.split('=') for kv in f[7].split(';'))
    r = dict(workers=f[1], variant=f[2], round=f[3], qps=float(f[5]), total=float(f[6]), control=float(f[8]),
             load=float(f[10]), errors=f[12], p99=f[13], **{k: float(v) for k, v in th.items()})
    r['steady'] = r['loops'] + r['obs'] + r['gc'] + r['other']
    rows[(f[1], f[2])].append(r)
def med(l, k): return statistics.median(x[k] for x in l)
print('workers variant n | QPS | proxies total | steady (loops+obs+gc+other) | loops | obs | jit | control | load')
for (w, v), l in sorted(rows.items()):
    print(f"{w} {v} {len(l)} | {med(l,'qps'):.0f} | {med(l,'total'):.1f} | {med(l,'steady'):.1f} [{min(x['steady'] for x in l):.1f}-{max(x['steady'] for x in l):.1f}] | {med(l,'loops'):.1f} | {med(l,'obs'):.1f} | {med(l,'jit'):.1f} | {med(l,'control'):.1f} | {min(x['load'] for x in l):.1f}-{max(x['load'] for x in l):.1f}")
    for x in l: print(f"     r{x['round']} qps {x['qps']:.0f} total {x['total']} steady {x['steady']:.1f} loops {x['loops']} obs {x['obs']} jit {x['jit']} control {x['control']} load {x['load']} {x['errors']} {x['p99']}")
