#!/usr/bin/env bash
# Allocation by site from a JFR recording's jdk.ObjectAllocationSample events.
#
#   weft-bench/scripts/alloc-sites.sh RECORDING.jfr [TOP] [BYTES_PER_OP] [THREAD_PREFIX]
#
# Prints the TOP (default 40) sites by sampled weight: the allocated class, the frame that allocated it, and the
# first dev.weft frame on the stack (who asked for it), each with its share of all sampled weight. Given
# BYTES_PER_OP (e.g. HotPathBenchmark.mesh's gc.alloc.rate.norm from the same build), it also prints each site's
# share of that figure in bytes per operation: an estimate, since sampling is statistical and the share counts every
# thread of the JVM (the benchmark's client and backend, JFR itself). Given THREAD_PREFIX (e.g. "weft-", the
# sidecars' threads), only those threads' samples count; then pass their own B/op (HotPathBenchmark prints the
# sidecar threads' bytes per request).
#
# Record with, for example (from weft-cli/target):
#   java -cp "weft-cli.jar:lib/*" org.openjdk.jmh.Main 'HotPathBenchmark.mesh' -p observability=on -f 1 -wi 6 -w 2 \
#     -i 2 -r 5 -jvmArgsAppend \
#     '-XX:StartFlightRecording=filename=/tmp/mesh.jfr,settings=default,jdk.ObjectAllocationSample#throttle=5000/s'
# Needs the JDK's `jfr` on PATH (or JAVA_HOME) and python3.
set -euo pipefail
rec=${1:?usage: alloc-sites.sh RECORDING.jfr [TOP] [BYTES_PER_OP]}
top=${2:-40}
perop=${3:-0}
prefix=${4:-}
jfr=jfr
if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/jfr" ]]; then jfr="$JAVA_HOME/bin/jfr"; fi
command -v "$jfr" >/dev/null || { echo "alloc-sites: no 'jfr' tool found (set JAVA_HOME to a JDK 25)" >&2; exit 2; }
"$jfr" print --json --stack-depth 24 --events jdk.ObjectAllocationSample "$rec" | python3 -c '
import json, sys, collections
top, perop, prefix = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
events = json.load(sys.stdin)["recording"]["events"]
seen_threads = set()
sites = collections.Counter()
total = 0
for e in events:
    v = e["values"]
    thread = (v.get("eventThread") or {}).get("javaThreadId")
    # A thread'"'"'s first sample carries everything it allocated before sampling started: dropped.
    if thread not in seen_threads:
        seen_threads.add(thread)
        continue
    if not ((v.get("eventThread") or {}).get("javaName") or "").startswith(prefix):
        continue
    w = v["weight"]
    frames = (v.get("stackTrace") or {}).get("frames") or []
    def cls_of(f):
        return f["method"]["type"]["name"].replace("/", ".")
    def name(f):
        return cls_of(f).split(".")[-1] + "." + f["method"]["name"]
    first = name(frames[0]) if frames else "?"
    weft = next((name(f) for f in frames if cls_of(f).startswith("dev.weft")), "-")
    cls = v["objectClass"]["name"].replace("/", ".")
    sites[(cls, first, weft)] += w
    total += w
print(f"{len(events)} samples, {total/1e6:.1f} MB sampled weight")
hdr = "share    " + ("B/op   " if perop else "") + "class | allocating frame | first dev.weft frame"
print(hdr)
for (cls, first, weft), w in sites.most_common(top):
    share = w / total
    b = f"{share*perop:6.0f} " if perop else ""
    print(f"{share*100:5.2f}%  {b}{cls} | {first} | {weft}")
' "$top" "$perop" "$prefix"
