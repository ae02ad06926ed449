#!/usr/bin/env python3
"""Where CPU per request differs between two states of the same processes, from JFR CPU-time samples (JEP 509).

Record each state with, for every process of interest,
  jcmd PID JFR.start duration=20s filename=STATE-PID.jfr jdk.CPUTimeSample#enabled=true jdk.CPUTimeSample#throttle=1ms
(every Java thread is sampled by its CPU time, in Java or in native code, with inlined frames kept), then
  jfr-cpu-diff.py --a on --a-requests N on-*.jfr --b paused --b-requests M paused-*.jfr
Each sample is weighted by its sampling period, so a state's sum is its threads' CPU time; dividing by the requests
served while recording gives microseconds per request. Printed per thread group, per leaf frame, and per innermost
dev.weft frame (the Weft method whose work, or whose calls into Netty, the JDK and the kernel, the sample is in).
"""
import argparse, collections, json, re, subprocess, sys

def load(files):
    by_group, by_leaf, by_weft, by_pkg = (collections.Counter() for _ in range(4))
    total = 0.0
    for f in files:
        out = subprocess.run(['jfr', 'print', '--json', '--stack-depth', '96', '--events', 'jdk.CPUTimeSample', f],
                             capture_output=True, text=True, check=True).stdout
        for e in json.loads(out)['recording']['events']:
            v = e['values']
            if v.get('failed'):
                continue
            period = v.get('samplingPeriod')
            ms = parse_ms(period)
            thread = ((v.get('eventThread') or {}).get('javaName') or '?')
            group = re.sub(r'[-#]?\d+$', '', thread)
            frames = [(fr['method']['type']['name'].replace('/', '.') + '.' + fr['method']['name'])
                      for fr in (v.get('stackTrace') or {}).get('frames', [])]
            total += ms
            by_group[group] += ms
            by_leaf[frames[0] if frames else '(no Java frame)'] += ms
            weft = next((fr for fr in frames if fr.startswith('dev.weft.')), '(no Weft frame)')
            by_weft[weft] += ms
            pkg = weft.rsplit('.', 2)[0] if weft.startswith('dev.weft.') else weft
            by_pkg[pkg] += ms
    return total, by_group, by_leaf, by_weft, by_pkg

def parse_ms(p):
    if isinstance(p, (int, float)):
        return p / 1e6  # nanoseconds
    s = str(p)
    iso = re.fullmatch(r'PT([\d.]+)S', s)  # jfr print --json writes durations as ISO-8601
    if iso:
        return float(iso.group(1)) * 1000
    m = re.match(r'([\d.]+)\s*(ms|s|us|ns)?', s)
    n = float(m.group(1)); unit = m.group(2) or 'ms'
    return n * {'s': 1000, 'ms': 1, 'us': 1e-3, 'ns': 1e-6}[unit]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--a', default='A'); ap.add_argument('--a-requests', type=float, required=True)
    ap.add_argument('--b', default='B'); ap.add_argument('--b-requests', type=float, required=True)
    ap.add_argument('--top', type=int, default=25)
    ap.add_argument('files', nargs='+', help='the A files, then the B files (named by --a / --b in their path)')
    o = ap.parse_args()
    fa = [f for f in o.files if o.a in f.rsplit('/', 1)[-1]]
    fb = [f for f in o.files if o.b in f.rsplit('/', 1)[-1]]
    a, b = load(fa), load(fb)
    ua, ub = 1000.0 / o.a_requests, 1000.0 / o.b_requests  # ms of CPU -> us per request
    print(f"{o.a}: {len(fa)} files, {a[0]:.0f} ms CPU sampled, {a[0]*ua:.1f} us/req;  "
          f"{o.b}: {len(fb)} files, {b[0]:.0f} ms, {b[0]*ub:.1f} us/req;  difference {a[0]*ua - b[0]*ub:+.2f} us/req")
    for title, i in (('thread group', 1), ('Weft package', 4), ('innermost Weft frame', 3), ('leaf frame', 2)):
        keys = set(a[i]) | set(b[i])
        rows = sorted(((a[i][k] * ua - b[i][k] * ub, a[i][k] * ua, b[i][k] * ub, k) for k in keys),
                      key=lambda r: -abs(r[0]))
        print(f"\n## by {title}: us/req {o.a}, {o.b}, difference (largest first)")
        for d, x, y, k in rows[:o.top]:
            print(f"  {x:7.2f} {y:7.2f} {d:+7.2f}  {k}")

if __name__ == '__main__':
    main()
