#!/usr/bin/env bash
# ./weft bench fuzz: every Jazzer fuzz target of the project (or those named) fuzzed to N executions each.
#
#   ./weft bench fuzz [--executions N] [--target Class[#method] ...] [--round-time 4m] [--out DIR] [--list]
#
# A target is one @FuzzTest method (found in */src/test/java). It is fuzzed in rounds, one surefire run each
# (JAZZER_FUZZ=1, one target per JVM as Jazzer requires), each round capped by Jazzer's own settings
# (JAZZER_MAX_EXECUTIONS: the executions still missing; JAZZER_MAX_DURATION: --round-time, which must stay under
# JUnit's 5-minute timeout, junit.jupiter.execution.timeout.default in the root pom). Every round resumes the working
# corpus the last one grew (<module>/.cifuzz-corpus, ignored by git), as libFuzzer does. The executions of a round
# are libFuzzer's own count ("Done N runs in S second(s)"); rounds go on until they add up to N.
#
# The first finding stops everything (exit 1): a crash file Jazzer wrote into the target's corpus (the test resources
# beside the class, so the next build replays it), a test failure (a leak report fails the class), a round over its
# time limit (a hang), or a round that did no execution. The table (per target: executions, rounds, wall time, time
# fuzzing, executions per second, libFuzzer's coverage `cov` at the start and end, working corpus, findings) is
# printed and appended to DIR/fuzz.md, each round to DIR/rounds.csv; DIR defaults to
# weft-bench/results/<UTC date>-fuzz. Round logs: <module>/target/fuzz-logs/.
#
# Paranoid leak detection stays on (the root pom's argLine), with io.netty.leakDetection.acquireAndReleaseOnly: every
# buffer is still tracked and a leak still fails the run, and its report still shows where the buffer was allocated,
# retained and released, but reads and writes of a buffer no longer each record a stack trace (the WMP decoder reads
# a frame's head and header block a byte at a time; docs/operations.md, "Fuzzing"). Each JVM
# gets a bounded heap (1 GiB, WEFT_FUZZ_HEAP), so that unbounded allocation is a finding too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

EXECUTIONS=1000000
ROUND_TIME=4m
OUT=""
LIST=false
WANTED=()

usage() {
  sed -n '2,4p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  echo "  --executions N     executions per target (default 1000000)"
  echo "  --target T         Class (all its targets) or Class#method; repeatable (default: every target)"
  echo "  --round-time D     Jazzer's duration per round, e.g. 90s, 4m (default 4m, at most 4m30s)"
  echo "  --out DIR          results directory (default weft-bench/results/<UTC date>-fuzz)"
  echo "  --list             print the targets and exit"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --executions) EXECUTIONS="${2:?--executions needs a number}"; shift 2 ;;
    --target) WANTED+=("${2:?--target needs Class or Class#method}"); shift 2 ;;
    --round-time) ROUND_TIME="${2:?--round-time needs a duration such as 4m}"; shift 2 ;;
    --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
    --list) LIST=true; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fuzz: unknown argument '$1' (expected --executions, --target, --round-time, --out, --list)" >&2; exit 2 ;;
  esac
done

[[ "$EXECUTIONS" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --executions '$EXECUTIONS' is not a positive number" >&2; exit 2; }
seconds_of() {  # 90s, 4m, 1m30s -> seconds
  local d="$1" total=0
  [[ "$d" =~ ^([0-9]+m)?([0-9]+s)?$ && -n "$d" ]] || return 1
  [[ -n "${BASH_REMATCH[1]}" ]] && total=$((total + ${BASH_REMATCH[1]%m} * 60))
  [[ -n "${BASH_REMATCH[2]}" ]] && total=$((total + ${BASH_REMATCH[2]%s}))
  echo "$total"
}
ROUND_SECONDS="$(seconds_of "$ROUND_TIME")" || { echo "fuzz: --round-time '$ROUND_TIME' is not a duration such as 90s or 4m" >&2; exit 2; }
if (( ROUND_SECONDS < 10 || ROUND_SECONDS > 270 )); then
  echo "fuzz: --round-time $ROUND_TIME: expected 10s to 4m30s (a round must end before JUnit's 5-minute timeout)" >&2
  exit 2
fi

# Every @FuzzTest method: "module|fully.qualified.Class|method", one a line.
discover() {
  local f module rel cls m
  while IFS= read -r f; do
    rel="${f#"$ROOT"/}"
    module="${rel%%/*}"
    cls="${rel#*/src/test/java/}"
    cls="${cls%.java}"
    cls="${cls//\//.}"
    for m in $(awk '/@FuzzTest/ { want = 1; next }
                    want && match($0, /void [A-Za-z0-9_]+\(/) { print substr($0, RSTART + 5, RLENGTH - 6); want = 0 }' "$f"); do
      echo "$module|$cls|$m"
    done
  done < <(grep -rl --include='*.java' '@FuzzTest' "$ROOT"/*/src/test/java | sort)
}
mapfile -t ALL < <(discover)
(( ${#ALL[@]} > 0 )) || { echo "fuzz: no @FuzzTest method found under $ROOT/*/src/test/java" >&2; exit 2; }

TARGETS=()
if (( ${#WANTED[@]} == 0 )); then
  TARGETS=("${ALL[@]}")
else
  for w in "${WANTED[@]}"; do
    found=false
    for t in "${ALL[@]}"; do
      IFS='|' read -r _ cls m <<<"$t"
      simple="${cls##*.}"
      if [[ "$w" == "$simple" || "$w" == "$cls" || "$w" == "$simple#$m" || "$w" == "$cls#$m" ]]; then
        TARGETS+=("$t"); found=true
      fi
    done
    if [[ "$found" == false ]]; then
      echo "fuzz: no target '$w'. The targets:" >&2
      for t in "${ALL[@]}"; do IFS='|' read -r _ cls m <<<"$t"; echo "  ${cls##*.}#$m" >&2; done
      exit 2
    fi
  done
fi

if [[ "$LIST" == true ]]; then
  for t in "${TARGETS[@]}"; do IFS='|' read -r module cls m <<<"$t"; echo "$module ${cls##*.}#$m"; done
  exit 0
fi

if [[ -z "${JAVA_HOME:-}" || ! -x "$JAVA_HOME/bin/javac" ]]; then
  JAVA_HOME="$(ls -d /usr/lib/jvm/temurin-25* 2>/dev/null | head -1)"
  [[ -n "$JAVA_HOME" ]] || { echo "fuzz: no JDK 25 (set JAVA_HOME, or run it as ./weft bench fuzz)" >&2; exit 3; }
  export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
fi
command -v mvn >/dev/null || { echo "fuzz: Maven (mvn) is not on PATH" >&2; exit 3; }

OUT="${OUT:-$ROOT/weft-bench/results/$(date -u +%F)-fuzz}"
mkdir -p "$OUT"
[[ -f "$OUT/rounds.csv" ]] || echo "utc,target,round,executions,seconds,cov,corpus,exit" >"$OUT/rounds.csv"
# Each JVM's heap (Maven's and the fuzzing fork's, through JDK_JAVA_OPTIONS): an input that makes the code under test
# allocate without bound ends in an OutOfMemoryError, which Jazzer reports as a finding, instead of growing to a
# quarter of the machine's memory.
HEAP="${WEFT_FUZZ_HEAP:-1g}"
# A round's bound: its fuzzing time, the build before it and Jazzer's start; past that it is a hang.
ROUND_LIMIT=$((ROUND_SECONDS + 600))

# Fields of libFuzzer's status lines ("#1234  NEW cov: 371 ft: 912 corp: 12/5233b ...").
# (Each grep may find nothing, and pipefail is on: hence the "|| true".)
last_field() { { grep -aoE "$1: [0-9]+" "$2" || true; } | tail -1 | awk '{print $2}'; }
first_field() { { grep -aoE "$1: [0-9]+" "$2" || true; } | head -1 | awk '{print $2}'; }
done_field() { { grep -aoE 'Done [0-9]+ runs in [0-9]+ second' "$2" || true; } | tail -1 | awk -v f="$1" '{print $f}'; }

commas() { sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta' <<<"$1"; }
COMMAND="./weft bench fuzz --executions $EXECUTIONS --round-time $ROUND_TIME"
for w in "${WANTED[@]}"; do COMMAND+=" --target $w"; done

ROWS=()
STATUS=0
START_UPTIME="$(uptime)"
START_UTC="$(date -u '+%F %T')"
for t in "${TARGETS[@]}"; do
  IFS='|' read -r module cls method <<<"$t"
  name="${cls##*.}#$method"
  logs="$ROOT/$module/target/fuzz-logs"
  resources="$ROOT/$module/src/test/resources"
  mkdir -p "$logs"
  total=0 rounds=0 fuzz_seconds=0 cov_start="" cov_end="?" corpus="?" finding="none"
  t0=$(date +%s)
  while (( total < EXECUTIONS )); do
    rounds=$((rounds + 1))
    log="$logs/${name//#/-}-round$rounds.log"
    marker="$logs/.round-start"
    touch "$marker"
    echo "fuzz: $name round $rounds: $total of $EXECUTIONS executions so far (log: ${log#"$ROOT"/})" >&2
    set +e
    JAZZER_FUZZ=1 JAZZER_MAX_EXECUTIONS=$((EXECUTIONS - total)) JAZZER_MAX_DURATION="$ROUND_TIME" \
      JDK_JAVA_OPTIONS="-Xmx$HEAP -Dio.netty.leakDetection.acquireAndReleaseOnly=true" \
      timeout --kill-after=30s "$ROUND_LIMIT" \
      mvn -B -o -Dstyle.color=never -f "$ROOT/pom.xml" -pl "$module" -am test -Dtest="$cls#$method" \
        -Dsurefire.failIfNoSpecifiedTests=false >"$log" 2>&1
    rc=$?
    set -e
    runs="$(done_field 2 "$log")"
    secs="$(done_field 5 "$log")"
    if [[ -z "$runs" ]]; then  # stopped by a finding: libFuzzer's last status line says how far it got
      runs="$({ grep -aoE '#[0-9]+[[:space:]]+(INITED|NEW|REDUCE|RELOAD|pulse|DONE)' "$log" || true; } | tail -1 |
              awk '{print substr($1, 2)}')"
      secs=""
    fi
    runs="${runs:-0}"
    [[ -n "$secs" ]] || secs=$(( $(date +%s) - $(stat -c %Y "$marker") ))
    total=$((total + runs))
    fuzz_seconds=$((fuzz_seconds + secs))
    [[ -n "$cov_start" ]] || cov_start="$(first_field cov "$log")"
    c="$(last_field cov "$log")"; [[ -z "$c" ]] || cov_end="$c"
    c="$(last_field corp "$log")"; [[ -z "$c" ]] || corpus="$c"
    echo "$(date -u +%FT%TZ),$name,$rounds,$runs,$secs,${cov_end},${corpus},$rc" >>"$OUT/rounds.csv"
    crash="$(find "$resources" "$ROOT/$module" -maxdepth 12 -newer "$marker" -type f \
               \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' -o -name 'slow-unit-*' \) \
               -not -path '*/.cifuzz-corpus/*' -not -path '*/target/*' 2>/dev/null | sort -u | head -5 | tr '\n' ' ')"
    if [[ -n "$crash" ]]; then
      crash="${crash% }"
      finding="finding: ${crash//"$ROOT"\//}"
    elif (( rc == 124 || rc == 137 )); then
      finding="round over its ${ROUND_LIMIT}s limit (a hang?), stopped: see ${log#"$ROOT"/}"
    elif (( rc != 0 )); then
      finding="the round failed (exit $rc; a leak report or a failed assertion?): see ${log#"$ROOT"/}"
    elif (( runs == 0 )); then
      finding="the round did no execution (no libFuzzer output): see ${log#"$ROOT"/}"
    fi
    if [[ "$finding" != none ]]; then
      STATUS=1
      break
    fi
  done
  wall=$(( $(date +%s) - t0 ))
  rate=$(( fuzz_seconds > 0 ? total / fuzz_seconds : 0 ))
  ROWS+=("| \`$name\` | $(commas "$total") | $rounds | ${wall}s | ${fuzz_seconds}s | $(commas "$rate") | ${cov_start:-?} → $cov_end | $corpus | $finding |")
  echo "fuzz: $name: $total executions in $rounds round(s), ${wall}s, $finding" >&2
  [[ $STATUS -eq 0 ]] || break
done

{
  echo
  echo "## $START_UTC UTC: \`$COMMAND\`"
  echo
  echo "Commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)'); $(nproc) cores."
  echo "Load at the start: \`${START_UPTIME#*load average: }\`; at the end: \`$(uptime | sed 's/.*load average: //')\` (\`uptime\`: 1, 5, 15 minutes)."
  echo
  echo "| target | executions | rounds | wall time | fuzzing | executions/s | \`cov\` start → end | corpus | findings |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
} | tee -a "$OUT/fuzz.md"
echo "fuzz: table appended to ${OUT#"$ROOT"/}/fuzz.md, rounds to ${OUT#"$ROOT"/}/rounds.csv" >&2
exit "$STATUS"
