#!/usr/bin/env python3
"""What a sidecar's JIT compiles in a measured window, and what still runs interpreted: JFR's jdk.Compilation,
jdk.Deoptimization and jdk.ExecutionSample events, recorded by jit-window.sh (jcmd JFR.start settings=none with
only those three events), summed.

  jit-window.py F.jfr...

Prints per recording: the compilations and their time by compiler and level; the methods compiled most often and
for longest; the deoptimizations by reason and action and the methods they hit; the execution samples whose top
frame runs in the interpreter, by method. JFR's own methods, which starting a recording compiles, are left out of the
compilations (jdk.jfr.*).
"""
import collections, json, os, subprocess, sys

JFR = os.path.join(os.environ.get('JAVA_HOME') or sorted(
    d for d in (os.path.join('/usr/lib/jvm', x) for x in os.listdir('/usr/lib/jvm')) if 'temurin-25' in d)[0],
    'bin', 'jfr')


def events(path):
    out = subprocess.run([JFR, 'print', '--json', '--events', 'jdk.Compilation,jdk.Deoptimization,jdk.ExecutionSample', path],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)['recording']['events']


def name(m):
    return f"{m['type']['name']}.{m['name']}".replace('/', '.') if m else '?'


def millis(d):
    """JFR's JSON duration (e.g. 'PT0.000208S') in ms."""
    return float(d[2:-1]) * 1000 if d.startswith('PT') and d.endswith('S') else 0.0


def report(path):
    ev = events(path)
    comp = [e['values'] for e in ev if e['type'] == 'jdk.Compilation']
    comp = [c for c in comp if not name(c['method']).startswith('jdk.jfr.')]
    deopt = [e['values'] for e in ev if e['type'] == 'jdk.Deoptimization']
    print(f'## {path}: {len(comp)} compilations (JFR\'s own left out), {len(deopt)} deoptimizations')
    by_level = collections.defaultdict(lambda: [0, 0.0])
    for c in comp:
        k = (c['compiler'], c['compileLevel'], c['isOsr'])
        by_level[k][0] += 1
        by_level[k][1] += millis(c['duration'])
    print('\n| compiler | level | OSR | compilations | ms |')
    print('|---|---:|---|---:|---:|')
    for (cc, lv, osr), (n, ms) in sorted(by_level.items(), key=lambda kv: -kv[1][1]):
        print(f'| {cc} | {lv} | {osr} | {n} | {ms:.1f} |')
    per = collections.defaultdict(lambda: [0, 0.0, set()])
    for c in comp:
        p = per[name(c['method'])]
        p[0] += 1
        p[1] += millis(c['duration'])
        p[2].add(c['compileLevel'])
    print('\nLongest in total (ms, times, levels):')
    for m, (n, ms, lv) in sorted(per.items(), key=lambda kv: -kv[1][1])[:30]:
        print(f'  {ms:8.1f}  {n:3d}  {sorted(lv)}  {m}')
    print('\nCompiled most often:')
    for m, (n, ms, lv) in sorted(per.items(), key=lambda kv: -kv[1][0])[:15]:
        print(f'  {n:3d}  {ms:8.1f}  {sorted(lv)}  {m}')
    reasons = collections.Counter((d.get('reason'), d.get('action')) for d in deopt)
    print('\nDeoptimizations by reason and action:')
    for (r, a), n in reasons.most_common():
        print(f'  {n:4d}  {r} / {a}')
    hit = collections.Counter((name(d.get('method')), d.get('reason')) for d in deopt)
    print('\nDeoptimized methods:')
    for (m, r), n in hit.most_common(20):
        print(f'  {n:4d}  {r}  {m}')
    samples = [e['values'] for e in ev if e['type'] == 'jdk.ExecutionSample']
    frames = [s['stackTrace']['frames'] for s in samples if s.get('stackTrace') and s['stackTrace']['frames']]
    interp = collections.Counter()
    first = collections.Counter()
    for f in frames:
        if f[0].get('type') == 'Interpreted':
            interp[name(f[0]['method'])] += 1
        for x in f:
            if x.get('type') == 'Interpreted':
                first[name(x['method'])] += 1
                break
    print(f'Execution samples: {len(frames)}, the top frame interpreted in {sum(interp.values())}, some frame in '
          f'{sum(first.values())}')
    print('Interpreted top frames:')
    for m, n in interp.most_common(15):
        print(f'  {n:4d}  {m}')
    print('Innermost interpreted frame, where the top one is compiled or native:')
    for m, n in (first - interp).most_common(10):
        print(f'  {n:4d}  {m}')
    print()


if __name__ == '__main__':
    for f in sys.argv[1:]:
        report(f)
