#!/usr/bin/env python3
"""Observability's cost by code: perf-ab.sh's output directory in, on minus paused per request out.

  perf-ab.py DIR

Each window directory (wNN-on, wNN-off) holds cpu.txt.gz (perf script -F comm,pid,tid,time,ip,sym,dso of 999 Hz
samples of every CPU, times on CLOCK_MONOTONIC), tid-roles.txt (mesh_procs.py roles) and served-before.txt /
served-after.txt (the providers' served counters, summed, and when they were read). A window's requests are the counter's
difference, and only the samples between the two reads count. Windows pair up in order (1-2, 3-4, ...); every
figure is the median over pairs of (on - paused), in µs of CPU per request, with the median paused figure beside it:
  - per process role (the sidecars, the apps, wrk, the control plane);
  - per sidecar thread kind (a thread's name without its digits) and per code region (window-costs.py's regions);
  - the symbols whose cost moved most.
"""
import collections, glob, gzip, importlib.util, os, statistics, sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('window_costs', os.path.join(HERE, 'window-costs.py'))
wc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wc)
import perf_events  # noqa: E402  (this folder's, on the path window-costs.py put it on)

US_PER_SAMPLE = 1e6 / 999


def window(d):
    """{figure key: µs/req} of one window, and its requests."""
    req, t0, t1 = perf_events.served(d)
    role_of = perf_events.roles(d)
    counts = collections.Counter()
    for line in gzip.open(os.path.join(d, 'cpu.txt.gz'), 'rt', errors='replace'):
        s = wc.sample(line)
        if s is None or s[2] is None or not t0 <= s[2] <= t1:
            continue
        comm, tid, _, sym, dso = s
        r = role_of.get(tid)
        if r is None:
            continue
        counts[('role', r)] += 1
        if r.startswith('sidecar:'):
            side = r.split(':')[1]
            counts[('thread', side + ' ' + wc.kind(comm))] += 1
            counts[('region', side + ' ' + wc.region(sym, dso))] += 1
            counts[('symbol', side + ' ' + (wc.method(sym) if sym != '[unknown]' else os.path.basename(dso)))] += 1
            counts[('role', 'sidecars (all)')] += 1
    return {k: v * US_PER_SAMPLE / req for k, v in counts.items()}, req, t1 - t0


def main(d):
    dirs = sorted(glob.glob(os.path.join(d, 'w[0-9][0-9]-*')))
    wins = [(os.path.basename(x).split('-')[1], *window(x)) for x in dirs]
    pairs = []
    for i in range(0, len(wins) - 1, 2):
        a, b = wins[i], wins[i + 1]
        if {a[0], b[0]} != {'on', 'off'}:
            sys.exit(f'windows {i + 1} and {i + 2} are not an on/paused pair')
        on, off = (a, b) if a[0] == 'on' else (b, a)
        pairs.append((on, off))
    print(f'# perf A/B of observability, {len(pairs)} pairs: µs of CPU per request (999 Hz samples of every CPU '
          f'between two reads of the served counter)\n')
    print('| pair | requests on | paused | QPS on | paused | sidecars on | paused | on − paused |')
    print('|---:|---:|---:|---:|---:|---:|---:|---:|')
    key = ('role', 'sidecars (all)')
    for i, (on, off) in enumerate(pairs, 1):
        print(f'| {i} | {on[2]:,} | {off[2]:,} | {on[2] / on[3]:,.0f} | {off[2] / off[3]:,.0f} | '
              f'{on[1].get(key, 0):.1f} | {off[1].get(key, 0):.1f} | {on[1].get(key, 0) - off[1].get(key, 0):+.2f} |')
    keys = set()
    for on, off in pairs:
        keys |= on[1].keys() | off[1].keys()

    def med(k):
        diff = statistics.median(on[1].get(k, 0) - off[1].get(k, 0) for on, off in pairs)
        return diff, statistics.median(off[1].get(k, 0) for _, off in pairs)

    for group, title, top in (('role', 'process role', 99), ('thread', 'sidecar thread kind', 25),
                              ('region', 'sidecar code region', 30), ('symbol', 'sidecar symbol', 45)):
        rows = sorted(((med(k), k[1]) for k in keys if k[0] == group), key=lambda r: (-abs(r[0][0]), r[1]))[:top]
        print(f'\n| {title} | on − paused (median of pairs) | paused (median) |')
        print('|---|---:|---:|')
        for (diff, base), name in rows:
            print(f'| {name[:140]} | {diff:+.2f} | {base:.2f} |')


if __name__ == '__main__':
    main(sys.argv[1])
