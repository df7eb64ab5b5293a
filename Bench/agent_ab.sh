#!/usr/bin/env bash
# Two agents side by side, interleaved in one session, five runs each (BENCHMARKS.md,
# "The watchdog polls a running hung thread every 4th tick"):
#   - a 2 s CPU hang (Bench/cpu_hang.c): the hung work's wall time and the watchdog's CPU;
#   - (h) FrameLoopDemo under --frame-ms 16.667: the program's CPU;
#   - Tests/safety/spin_then_block.c: the blocked time in the report against the sleeps measured.
#
#   make build && Bench/agent_ab.sh BEFORE.so AFTER.so
#
# Build the BEFORE agent from another checkout with `make agent` and copy it out of .build.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 2 && -f $1 && -f $2 ]] || { echo "usage: Bench/agent_ab.sh BEFORE.so AFTER.so" >&2; exit 2; }
declare -A AGENT=([before]=$(realpath "$1") [after]=$(realpath "$2"))
B=$(swift build -c release --show-bin-path)
HW=$B/hangwatch
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -pthread -o "$TMP/cpu_hang" Bench/cpu_hang.c
cc -O2 -g -Wall -o "$TMP/spin_then_block" Tests/safety/spin_then_block.c -lpthread
ITERS=$("$TMP/cpu_hang" --calibrate 2000)
# blocked_ms REPORT MEASURE: "<waiting ms in the report> <ms slept>"
blocked_ms() {
    python3 - "$1" "$2" <<'PY'
import json, sys
tree = json.load(open(sys.argv[1]))["hangs"][0]["callTree"]
slept = sum(float(f[3]) for f in (l.split() for l in open(sys.argv[2])) if f[0] == "block")
print(f"{tree.get('waitingMs', 0):g} {slept:.1f}")
PY
}
for ((i = 0; i < 5; i++)); do
    "$TMP/cpu_hang" --iters "$ITERS" --depth 30 --out "$TMP/hang_plain.txt"
    "$B/FrameLoopDemo" --cpu-file "$TMP/frame.txt" && grep -o '[0-9.]*$' "$TMP/frame.txt" >> "$TMP/frame_plain.txt"
    for a in before after; do
        HANGWATCH_AGENT=${AGENT[$a]} "$HW" run -o /dev/null -- "$TMP/cpu_hang" --iters "$ITERS" --depth 30 --out "$TMP/hang_$a.txt"
        HANGWATCH_AGENT=${AGENT[$a]} "$HW" run --frame-ms 16.667 -o /dev/null -- "$B/FrameLoopDemo" --cpu-file "$TMP/frame.txt"
        grep -o '[0-9.]*$' "$TMP/frame.txt" >> "$TMP/frame_$a.txt"
        rm -f "$TMP/measure.txt"
        HANGWATCH_AGENT=${AGENT[$a]} "$HW" run -o "$TMP/stb.json" --format json -- \
            "$TMP/spin_then_block" --measure "$TMP/measure.txt" > /dev/null
        blocked_ms "$TMP/stb.json" "$TMP/measure.txt" >> "$TMP/blocked_$a.txt"
    done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
field() { grep -o "$1=[0-9]*" "$2" | cut -d= -f2; }
for c in plain before after; do
    work=$(field work_ns "$TMP/hang_$c.txt" | awk '{ printf "%.1f\n", $1 / 1e6 }')
    wd=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } printf "%.1f\n", (v["proc_cpu_ns"] - v["main_cpu_ns"]) / 1e6 }' "$TMP/hang_$c.txt")
    printf '2 s CPU hang, %-6s work ms: %s (median %s); watchdog CPU ms: %s (median %s)\n' "$c" \
        "$(echo $work)" "$(median <<<"$work")" "$(echo $wd)" "$(median <<<"$wd")"
done
for c in plain before after; do
    printf '(h) FrameLoopDemo, %-6s CPU ms: %s (median %s)\n' "$c" "$(tr '\n' ' ' < "$TMP/frame_$c.txt")" "$(median < "$TMP/frame_$c.txt")"
done
for a in before after; do
    printf 'spin_then_block, %-6s blocked ms in the report / slept: %s\n' "$a" "$(awk '{ printf "%s/%s ", $1, $2 }' "$TMP/blocked_$a.txt")"
done
