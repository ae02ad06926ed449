#!/usr/bin/env python3
"""What one measured window of a mesh round cost per request, by process role and thread kind: profile-window.sh's
output directory in, a table out.

  window-costs.py DIR

DIR holds res/rounds.csv (the round: its QPS), tid-roles.txt (mesh_procs.py roles), counts.txt (perf stat
--per-thread over 5 s: system calls, context switches, task-clock) and cpu.txt.gz (perf script -F
comm,pid,tid,ip,sym,dso of 5 s of 999 Hz samples of every CPU). Requests in the window are the round's QPS times
5 s (the window lies inside the round's measured run). Prints
  - per role and thread kind (a thread's name with its digits dropped): CPU µs, system calls and context switches per
    request, and the calls by kind;
  - the proxies' CPU divided by the apps' and wrk's, with and without the sidecars' compiler threads;
  - per role: the share of its CPU samples by code region (kernel, libjvm, JIT-compiled code by package, ...), and
    the sidecars' hottest symbols.
"""
import collections, csv, gzip, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_events  # noqa: E402  (this folder's)

WINDOW_S = 5.0


def kind(comm):
    """A thread's kind: its name without the numbers that tell instances apart (weft-worker-1-3 -> weft-worker-)."""
    return re.sub(r'[0-9]+', '#', comm)


def qps(d):
    with open(os.path.join(d, 'res', 'rounds.csv')) as f:
        rows = [r for r in csv.DictReader(f) if r['section'] == 'mesh']
    return float(rows[0]['qps']), rows[0]['plane'], rows[0]['proxy_threads']


def roles(d):
    """tid -> role (perf_events.roles), the three providers counted as one role."""
    return {t: 'provider' if r.startswith('provider:') else r for t, r in perf_events.roles(d).items()}


def counts(d, role_of):
    """{(role, kind): {event: total}} from perf stat's CSV lines (comm-tid,count,unit,event,...)."""
    out = collections.defaultdict(collections.Counter)
    for line in open(os.path.join(d, 'counts.txt')):
        f = line.rstrip('\n').split(',')
        if len(f) < 4 or line.startswith('#'):
            continue
        comm, _, tid = f[0].rpartition('-')
        if not tid.isdigit():
            continue
        n = 0.0 if f[1].startswith('<') else float(f[1])
        out[(role_of.get(int(tid), '?'), kind(comm))][f[3].replace('syscalls:sys_enter_', '')] += n
    return out


def method(sym):
    """A JIT symbol's qualified method (Compiler.perfmap writes "RET pkg.Class.method(ARGS)"), else the symbol."""
    return sym.split('(')[0].split()[-1] if '(' in sym else sym


def region(sym, dso):
    """Where a sample's code lives."""
    if dso.startswith('[kernel') or dso == '[unknown]' and sym.startswith('0xffff'):
        return 'kernel'
    if 'libjvm' in dso:
        return 'libjvm'
    if re.fullmatch(r'(?:/tmp/)?perf-\d+\.map', dso):
        m = method(sym)
        if sym == '[unknown]':
            return 'JIT: no symbol map'
        if m.startswith('io.netty.'):
            return 'JIT: netty'
        if m.startswith('dev.weft.'):
            return 'JIT: weft ' + m.split('.')[2]
        if m.startswith(('java.', 'jdk.', 'sun.')):
            return 'JIT: jdk'
        if m.startswith(('com.', 'org.')):
            return 'JIT: ' + '.'.join(m.split('.')[:2])
        return 'JIT: ' + sym.split()[0]
    if dso == '[unknown]':
        return 'unknown'
    return re.sub(r'[0-9]+\.so.*', '.so', os.path.basename(dso))


# A `perf script -F comm,pid,tid[,time],ip,sym,dso` line.
SAMPLE = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+(?:([0-9.]+):\s+)?([0-9a-f]+)\s+(.*)\s\(([^()]*)\)\s*$')


def sample(line):
    """(comm, tid, seconds or None, symbol, dso) of one sample line, or None (perf-ab.py reads the same lines)."""
    m = SAMPLE.match(line)
    if not m:
        return None
    comm, _, tid, t, _, sym, dso = m.groups()
    return comm, int(tid), float(t) if t else None, sym, dso


def samples(d, role_of):
    """{role: Counter(region)} and {role: Counter(symbol)}."""
    by_region = collections.defaultdict(collections.Counter)
    by_symbol = collections.defaultdict(collections.Counter)
    path = os.path.join(d, 'cpu.txt.gz')
    for line in gzip.open(path, 'rt', errors='replace'):
        s = sample(line)
        if s is None:
            continue
        comm, tid, _, sym, dso = s
        r = role_of.get(tid)
        if r is None:
            continue
        by_region[r][region(sym, dso)] += 1
        by_symbol[r][method(sym) if sym != '[unknown]' else os.path.basename(dso)] += 1
    return by_region, by_symbol


def ratio_line(totals, by_kind, req):
    """The proxies' CPU divided by the apps' and wrk's (the machine's speed divided out, as the bench's
    proxy_cpu_per_work), with and without the sidecars' compiler threads, whose share moves with the JIT's progress
    between rounds: the figure to compare variants of one plane by (docs/benchmarks.md, sessions 22-24)."""
    def cpu(pred):
        return sum(e['task-clock'] for r, e in totals.items() if pred(r))
    proxies = cpu(lambda r: r.startswith(('sidecar:', 'haproxy', 'nginx', 'caddy')))
    work = cpu(lambda r: r in ('consumer-app', 'provider', 'wrk'))
    jit = sum(e['task-clock'] for (r, k), e in by_kind.items() if r.startswith('sidecar:') and 'CompilerThre' in k)
    if work == 0:
        return '\nproxies ÷ (apps + wrk): n/a (no apps or wrk counted)'
    return (f'\nproxies ÷ (apps + wrk): {proxies / work:.3f}; without the sidecars\' compiler threads '
            f'({jit / req * 1000:.1f} µs/req): {(proxies - jit) / work:.3f}')


def main(d):
    q, plane, threads = qps(d)
    req = q * WINDOW_S
    role_of = roles(d)
    print(f'# {plane}, {threads} thread(s) per proxy: {q:,.0f} QPS in the round, {req:,.0f} requests in the window')
    c = counts(d, role_of)
    print('\n| role | thread kind | CPU µs/req | syscalls/req | cs/req |')
    print('|---|---|---:|---:|---:|')
    totals = collections.defaultdict(collections.Counter)
    for (r, k), e in sorted(c.items(), key=lambda kv: -kv[1]['task-clock']):
        totals[r].update(e)
        if e['task-clock'] / req * 1000 < 0.5:
            continue
        print(f"| {r} | {k} | {e['task-clock'] / req * 1000:.1f} | {e['raw_syscalls:sys_enter'] / req:.2f} | "
              f"{e['context-switches'] / req:.2f} |")
    print('\n| role (all threads) | CPU µs/req | syscalls/req | cs/req |')
    print('|---|---:|---:|---:|')
    for r, e in sorted(totals.items(), key=lambda kv: -kv[1]['task-clock']):
        print(f"| {r} | {e['task-clock'] / req * 1000:.1f} | {e['raw_syscalls:sys_enter'] / req:.2f} | "
              f"{e['context-switches'] / req:.2f} |")
    print(ratio_line(totals, c, req))
    s, syms = samples(d, role_of)
    print('\n| role | region | share of its samples | µs/req (samples at 999 Hz) |')
    print('|---|---|---:|---:|')
    for r, regions in sorted(s.items(), key=lambda kv: -sum(kv[1].values())):
        n = sum(regions.values())
        for g, k in regions.most_common(12):
            print(f'| {r} | {g} | {100 * k / n:.1f} % | {k / 999 * 1e6 / req:.1f} |')
    for r in (x for x in syms if x.startswith('sidecar:')):
        print(f'\n{r}: the 25 hottest symbols, µs/req')
        for name, k in syms[r].most_common(25):
            print(f'  {k / 999 * 1e6 / req:6.2f}  {name[:150]}')


if __name__ == '__main__':
    main(sys.argv[1])
