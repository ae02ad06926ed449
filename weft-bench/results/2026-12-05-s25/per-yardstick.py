#!/usr/bin/env python3
"""Observability's cost per pair from `weft bench observability`'s windows.csv, three ways (session 25):

  per-yardstick.py windows.csv...

  raw          proxy CPU per request on over paused, minus one (the bench's "cost");
  per work     the same over the apps' and wrk's CPU per request in each window (proxy_cpu_per_work);
  per wrk CPU  the same over wrk's alone (the bench's "per wrk CPU" since session 25: wrk does the same work per
               request in both states, the backend reads one field more when on).
Prints the median and quartiles of each, and how much slower wrk and the apps ran in the on windows (median).
"""
import csv, statistics, sys


def pairs(rows, threads):
    by = {}
    for r in rows:
        if r['proxy_threads'] == threads:
            by.setdefault(r['round'], {})[r['plane']] = r
    return [(p['on'], p['paused']) for p in by.values() if 'on' in p and 'paused' in p]


def ratio(on, off, f):
    return f(on) / f(off) - 1


def spread(v):
    q = statistics.quantiles(v, n=4, method='inclusive')  # as the bench's report
    return f'{100 * q[1]:+.1f} % (quartiles {100 * q[0]:+.1f} to {100 * q[2]:+.1f} %)'


for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    for t in sorted({r['proxy_threads'] for r in rows}):
        ps = pairs(rows, t)
        cpu = lambda r: float(r['proxy_cpu_us_per_req'])
        wrk = lambda r: float(r['generator_cpu_us_per_req'])
        apps = lambda r: float(r['apps_cpu_us_per_req'])
        print(f'{path}, {t} Worker(s), {len(ps)} pairs:')
        print(f'  raw          {spread([ratio(a, b, cpu) for a, b in ps])}')
        print(f'  per work     {spread([ratio(a, b, lambda r: float(r["proxy_cpu_per_work"])) for a, b in ps])}')
        print(f'  per wrk CPU  {spread([ratio(a, b, lambda r: cpu(r) / wrk(r)) for a, b in ps])}')
        print(f'  wrk on/paused {100 * statistics.median(ratio(a, b, wrk) for a, b in ps):+.1f} %, '
              f'apps {100 * statistics.median(ratio(a, b, apps) for a, b in ps):+.1f} %')
