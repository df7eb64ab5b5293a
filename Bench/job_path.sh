#!/usr/bin/env bash
# The agent's pool-job path alone (Bench/job_path.c), agents side by side, in turns:
#   make build && Bench/job_path.sh [AGENT.so ...]      (default: .build/release's)
# Each run: 9 rounds of 1,000,000 jobs on CPU 1, the fastest round kept (the
# others met more interference). Per agent: the runs, their median, and the
# paired difference from the first agent's run of the same turn. Without the
# agent (the first line) is the loop's own floor. BENCH_RUNS turns (9).
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(swift build -c release --show-bin-path)
(( $# )) || set -- "$B/libhangwatch-agent.so"
RUNS=${BENCH_RUNS:-9}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -fPIC -shared -o "$TMP/job_path_dispatch.so" Bench/job_path_dispatch.c
cc -O2 -pthread -o "$TMP/job_path" Bench/job_path.c "$TMP/job_path_dispatch.so" -Wl,-rpath,"$TMP"
fastest() { sort -g | head -1 | awk '{ print $1 }'; }
for ((i = 0; i < RUNS; i++)); do
    echo "plain $(taskset -c 1 "$TMP/job_path" | fastest)" >> "$TMP/runs"
    for a in "$@"; do
        v=$(HANGWATCH_AGENT=$(realpath "$a") LD_PRELOAD="$TMP/job_path_dispatch.so" taskset -c 1 \
            "$B/hangwatch" run -o /dev/null -- "$TMP/job_path" | fastest)
        echo "$a $v" >> "$TMP/runs"
    done
done
python3 - "$TMP/runs" "$@" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, value = line.rsplit(None, 1)
    runs.setdefault(name, []).append(float(value))
first = sys.argv[2]
for name, values in runs.items():
    text = f"{name}: {' '.join(f'{v:.1f}' for v in values)}  median {statistics.median(values):.2f} ns per job"
    if name not in ("plain", first):
        diffs = [a - b for a, b in zip(values, runs[first])]
        text += (f"; against the first, paired: median {statistics.median(diffs):+.2f} ns,"
                 f" lower in {sum(d < 0 for d in diffs)} of {len(diffs)}")
    print(text)
PY
