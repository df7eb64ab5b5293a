#!/usr/bin/env bash
# The first hang after a quiet spell: how much of its start goes unsampled, for two
# `hangwatch` executables side by side, interleaved (BENCHMARKS.md, "The first hang after a
# quiet spell"). Each run: the loop waits 1.5 s, then one 300 ms CPU hang (Tests/safety/
# quiet_then_hang.c). Unsampled = duration x (1 - sample coverage); the hang's runnable time
# (waiting for a CPU, which the kernel's task-clock sampler cannot sample) is shown beside it.
#
#   make build && Bench/first_hang.sh BEFORE_HANGWATCH AFTER_HANGWATCH [RUNS]
#
# Both use the agent of this checkout (HANGWATCH_AGENT), so only the CLI differs.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 && -x $1 && -x $2 ]] || { echo "usage: Bench/first_hang.sh BEFORE_HANGWATCH AFTER_HANGWATCH [RUNS]" >&2; exit 2; }
declare -A HW=([before]=$(realpath "$1") [after]=$(realpath "$2"))
RUNS=${3:-10}
export HANGWATCH_AGENT=${HANGWATCH_AGENT:-$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/libhangwatch-agent.so}
# Another process holding a per-task perf event (a `perf record`, another `hangwatch run`) keeps
# the kernel's hooks on for both binaries, and the comparison shows nothing.
holders=$( (find /proc/[0-9]*/fd -lname '*perf_event*' 2>/dev/null || true) | cut -d/ -f3 | sort -u | tr '\n' ' ')
[[ -z $holders ]] || echo "first_hang: warning: processes $holders hold perf events; the before runs will look fast" >&2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -g -o "$TMP/quiet_then_hang" Tests/safety/quiet_then_hang.c
for ((i = 0; i < RUNS; i++)); do
    for which in before after; do
        "${HW[$which]}" run -o "$TMP/r.json" --format json -- "$TMP/quiet_then_hang" > /dev/null
        python3 - "$TMP/r.json" >> "$TMP/$which.txt" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["hangs"][0]
print(f"{h['durationMs'] * (1 - h['sampleCoverage']):.1f} {h.get('runnableMs') or 0:.1f}")
PY
    done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for which in before after; do
    printf '%-6s unsampled ms: %s (median %s); runnable ms: %s\n' "$which" \
        "$(cut -d' ' -f1 "$TMP/$which.txt" | tr '\n' ' ')" "$(cut -d' ' -f1 "$TMP/$which.txt" | median)" \
        "$(cut -d' ' -f2 "$TMP/$which.txt" | tr '\n' ' ')"
done
