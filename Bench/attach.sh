#!/usr/bin/env bash
# Benchmarks of `hangwatch attach` and `hangwatch dump` (see BENCHMARKS.md,
# "Attach and dump"). Needs `make build`, a C compiler, perf and gdb.
# Takes about 2 minutes.
#
#   (a) slowdown of a 2 s CPU-bound hang sampled at 1 kHz: plain, `hangwatch
#       run`, `hangwatch attach` (started 300 ms before the hang, on the
#       running process) and `perf record -F 1000 --call-graph dwarf`;
#   (b) the attach poller's idle cost: CPU time of hangwatch watching an idle
#       epoll loop for BENCH_IDLE_S seconds, scaled to an hour;
#   (c) `hangwatch dump` of a 50-thread process, against gdb.
#
# Knobs: BENCH_RUNS=5, BENCH_IDLE_S=20, CC=cc.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HW="$ROOT/.build/release/hangwatch"
RUNS=${BENCH_RUNS:-5}
IDLE_S=${BENCH_IDLE_S:-20}
CC=${CC:-cc}
[[ -x "$HW" ]] || { echo "bench: run 'make build' first" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hangwatch-attach-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$CC" -O2 -pthread -o "$TMP/delayed_hang" "$ROOT/Bench/delayed_hang.c"
"$CC" -O2 -g -o "$TMP/thread_pool" "$ROOT/Demos/c/thread_pool.c" -lpthread
HANG="$TMP/delayed_hang"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { grep -o "\\b$2=[0-9]*" "$1" | cut -d= -f2; }
wait_pid_file() { while [[ ! -s "$1" ]]; do sleep 0.002; done; cat "$1"; }

echo "hangwatch attach benchmarks — $(date '+%Y-%m-%d %H:%M'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
ITERS=$("$HANG" --calibrate 2000)

echo "(a) slowdown of a 2 s CPU-bound hang sampled at 1 kHz ($RUNS runs each, rotating order; medians)"
CONFIGS=(plain run attach perf)
for ((i = 0; i < RUNS; i++)); do
    for ((k = 0; k < 4; k++)); do
        cfg=${CONFIGS[$(((i + k) % 4))]}
        out="$TMP/a_$cfg.txt"
        case $cfg in
        plain) "$HANG" --iters "$ITERS" --out "$out" ;;
        run) "$HW" run -o /dev/null -- "$HANG" --iters "$ITERS" --out "$out" ;;
        attach) rm -f "$TMP/pid"
                "$HANG" --iters "$ITERS" --out "$out" --pid-file "$TMP/pid" &
                "$HW" attach "$(wait_pid_file "$TMP/pid")" --duration 30s -o "$TMP/attach_report.txt" 2>/dev/null
                wait ;;
        perf) perf record -q -F 1000 --call-graph dwarf -e cpu-clock -o "$TMP/perf.data" -- \
                  "$HANG" --iters "$ITERS" --out "$out" >/dev/null 2>&1; rm -f "$TMP/perf.data" ;;
        esac
    done
done
plain=$(field "$TMP/a_plain.txt" work_ns | median)
plain_best=$(field "$TMP/a_plain.txt" work_ns | sort -g | head -1)
plain_cpu=$(field "$TMP/a_plain.txt" work_cpu_ns | median)
for cfg in "${CONFIGS[@]}"; do
    wall=$(field "$TMP/a_$cfg.txt" work_ns | median)
    best=$(field "$TMP/a_$cfg.txt" work_ns | sort -g | head -1)
    printf '  %-7s work %7.1f ms  slowdown %+6.2f %% (median), %+6.2f %% (fastest run)   (runs: %s)\n' "$cfg" \
        "$(awk -v w="$wall" 'BEGIN{print w/1e6}')" "$(awk -v w="$wall" -v p="$plain" 'BEGIN{print (w/p - 1) * 100}')" \
        "$(awk -v w="$best" -v p="$plain_best" 'BEGIN{print (w/p - 1) * 100}')" \
        "$(field "$TMP/a_$cfg.txt" work_ns | awk '{ printf "%s%.0f", (NR > 1 ? " " : ""), $1 / 1e6 }')"
    # The target's own CPU time for the work: blind to run-queue waits, so it
    # still compares on a machine other processes load.
    cpu=$(field "$TMP/a_$cfg.txt" work_cpu_ns | median)
    printf '  %-7s work CPU %7.1f ms  %+6.2f %% (median)\n' "$cfg" "$(awk -v w="$cpu" 'BEGIN{print w/1e6}')" \
        "$(awk -v w="$cpu" -v p="$plain_cpu" 'BEGIN{print (w/p - 1) * 100}')"
done
tr -s ' \n' ' ' < "$TMP/attach_report.txt" | grep -oE "samples: [0-9]+ with a ptrace stop \([^)]*\)" | sed 's/^/  last attach: /' || true

echo "(b) attach poller, idle target: hangwatch's own CPU while watching an idle loop for $IDLE_S s"
rm -f "$TMP/pid"
"$HANG" --idle-s "$((IDLE_S + 2))" --pid-file "$TMP/pid" &
pid=$(wait_pid_file "$TMP/pid")
target_before=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
/usr/bin/time -f "%U %S" -o "$TMP/time.txt" "$HW" attach "$pid" --duration "${IDLE_S}s" -o "$TMP/idle_report.txt" 2>/dev/null
target_after=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
wait
read -r user sys < "$TMP/time.txt"
awk -v u="$user" -v s="$sys" -v d="$IDLE_S" -v tb="$target_before" -v ta="$target_after" -v hz="$(getconf CLK_TCK)" 'BEGIN {
    cpu = u + s; printf "  hangwatch CPU %.2f s in %d s = %.2f %% of one core = %.0f s per hour (target used %.2f s meanwhile)\n",
    cpu, d, cpu / d * 100, cpu / d * 3600, (ta - tb) / hz }'
tr -s ' \n' ' ' < "$TMP/idle_report.txt" | grep -oE "poller CPU [0-9]+ ms \([0-9.]+ % of one core\)" | sed 's/^/  report note: /' || true

echo "(c) dump of a 50-thread process (10 dumps), and gdb 'thread apply all bt' (3 runs)"
rm -f "$TMP/pid"
"$TMP/thread_pool" --threads 50 --seconds 30 --pid-file "$TMP/pid" &
pid=$(wait_pid_file "$TMP/pid")
sleep 0.3
for i in $(seq 10); do
    s=$(date +%s%N)
    "$HW" dump "$pid" --format json > "$TMP/dump.json"
    e=$(date +%s%N)
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['captureMs'], d['totalMs'], ($e-$s)/1e6, len(d['threads']))" "$TMP/dump.json"
done > "$TMP/dumps.txt"
for i in 1 2 3; do
    s=$(date +%s%N)
    gdb -p "$pid" -batch -ex 'thread apply all bt' > "$TMP/gdb.txt" 2>&1 || true
    e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
done > "$TMP/gdb_ms.txt"
kill "$pid"; wait || true
printf '  dump: capture %.1f ms, in-process total %.1f ms, wall %.1f ms (medians; %s threads each)\n' \
    "$(cut -d' ' -f1 "$TMP/dumps.txt" | median)" "$(cut -d' ' -f2 "$TMP/dumps.txt" | median)" \
    "$(cut -d' ' -f3 "$TMP/dumps.txt" | median)" "$(cut -d' ' -f4 "$TMP/dumps.txt" | sort -u | tr '\n' ' ')"
printf '  gdb:  wall %s ms (median of 3: %s)\n' "$(median < "$TMP/gdb_ms.txt")" "$(tr '\n' ' ' < "$TMP/gdb_ms.txt")"
