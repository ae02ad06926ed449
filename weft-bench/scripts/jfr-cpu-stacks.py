#!/usr/bin/env python3
"""Who calls a frame, from JFR CPU-time samples (JEP 509): the stacks that lead to every sample whose stack holds a
method matching FRAME_REGEX, cut DEPTH frames from that method, most frequent first.

Record as for jfr-cpu-diff.py (jcmd PID JFR.start ... jdk.CPUTimeSample#enabled=true jdk.CPUTimeSample#throttle=1ms),
then e.g.
  jfr-cpu-stacks.py 'MpmcArrayQueue.relaxed' 8 hop-*.jfr
Session 15 found with it that every ByteBuf of a sidecar is recycled through a shared lock-free queue
(docs/benchmarks.md, "Session 15").
"""
import collections, json, re, subprocess, sys

def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    pat, depth = re.compile(sys.argv[1]), int(sys.argv[2])
    stacks, total = collections.Counter(), 0
    for f in sys.argv[3:]:
        out = subprocess.run(['jfr', 'print', '--json', '--stack-depth', '64', '--events', 'jdk.CPUTimeSample', f],
                             capture_output=True, text=True, check=True).stdout
        for e in json.loads(out)['recording']['events']:
            frames = [fr['method']['type']['name'].split('/')[-1] + '.' + fr['method']['name']
                      for fr in (e['values'].get('stackTrace') or {}).get('frames', [])]
            at = next((i for i, fr in enumerate(frames) if pat.search(fr)), None)
            if at is not None:
                total += 1
                stacks[' < '.join(frames[at:at + depth])] += 1
    print(f"samples {total}")
    for stack, n in stacks.most_common(25):
        print(f"{n:6d}  {stack}")

if __name__ == '__main__':
    main()
