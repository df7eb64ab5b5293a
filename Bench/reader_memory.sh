#!/usr/bin/env bash
# The hangwatch process's own cost during one long CPU hang at 1 kHz: its peak
# RSS (VmHWM, whole run including the report) and its CPU share while the hang
# lasts (utime+stime from /proc, between 2 s after the start and 2 s before
# the end). See "Reader memory during a long hang" in BENCHMARKS.md.
#
#   Bench/reader_memory.sh [SECONDS...]        default: 12 60
#   HW_BUILD=DIR Bench/reader_memory.sh 12     another build's hangwatch (DIR/hangwatch)
#
# The hang is Bench/cpu_hang.c's callback, calibrated to SECONDS at depth 1 and
# run with --variants --depth 6 (16 stack shapes, ~10 frames), so it lasts a
# little longer than asked.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${HW_BUILD:-$ROOT/.build/release}
CC=${CC:-cc}
[[ -x "$BUILD/hangwatch" ]] || { echo "reader_memory: $BUILD/hangwatch not found: run 'make build'" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hangwatch-readermem.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$CC" -O2 -pthread -o "$TMP/cpu_hang" "$ROOT/Bench/cpu_hang.c"
TICK=$(getconf CLK_TCK)

for seconds in "${@:-12 60}"; do
    for s in $seconds; do
        iters=$("$TMP/cpu_hang" --calibrate $((s * 1000)))
        "$BUILD/hangwatch" run --format json -o "$TMP/report.json" -- \
            "$TMP/cpu_hang" --iters "$iters" --variants --depth 6 &
        pid=$!
        start=$(date +%s.%N); hwm=0; : > "$TMP/cpu"
        while kill -0 "$pid" 2>/dev/null; do
            v=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
            [[ -n "$v" ]] && hwm=$v
            c=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || true)
            [[ -n "$c" ]] && echo "$(date +%s.%N) $c" >> "$TMP/cpu"
            sleep 0.1
        done
        wait "$pid" || true
        hang=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); h=max(r['hangs'], key=lambda h: h['durationMs']); print('%.1f s, %d samples' % (h['durationMs']/1000, h['sampleCount']))" "$TMP/report.json")
        awk -v s="$start" -v hwm="$hwm" -v tck="$TICK" -v hang="$hang" '{ t[NR] = $1 - s; c[NR] = $2 }
            END { last = t[NR]; for (i = 1; i <= NR; i++) { if (!a && t[i] >= 2) a = i; if (t[i] <= last - 2) b = i }
                  printf "hang %s: reader peak RSS %.1f MB, reader CPU during the hang %.2f %% of a core\n",
                         hang, hwm / 1024, 100 * (c[b] - c[a]) / tck / (t[b] - t[a]) }' "$TMP/cpu"
    done
done
