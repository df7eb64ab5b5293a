#!/usr/bin/env bash
# The in-process library's costs (`make bench` runs this after Bench/run.sh):
#   (f) FrameMonitor per frame and LoopHeartbeat per iteration, in ns;
#   (g) extra CPU of an idle dispatchMain() program watched by the library
#       (main-queue probe, watchdog, reader thread), as % of one core;
#   (h) a 60 Hz frame loop's CPU time with and without `hangwatch run --frame-ms`;
#   (i) extra CPU of a server's two idle event loops (EventLoopServerDemo) watched
#       by the library (no code in the loops) and by `hangwatch run`, side by side.
# Needs `make build` (the BenchMonitorCost, BenchIdleDispatch, FrameLoopDemo and
# EventLoopServerDemo products).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B="$ROOT/.build/release"
RUNS=${BENCH_RUNS:-5}
for p in BenchMonitorCost BenchIdleDispatch FrameLoopDemo EventLoopServerDemo hangwatch; do
    [[ -x "$B/$p" ]] || { echo "bench: $B/$p not found: run 'make build' first" >&2; exit 1; }
done
source "$ROOT/Bench/lib.sh"

echo "------------------------------------------------------------------------------"
echo "(f) Library per-iteration costs (median of 5 rounds of 2,000,000 iterations, in-process)"
echo "------------------------------------------------------------------------------"
out=$("$B/BenchMonitorCost")
echo "  $out"
frame_ns=$(echo "$out" | value frame-monitor-ns)
beat_ns=$(echo "$out" | value heartbeat-ns)
before=$(HANGWATCH_HEARTBEAT_CLOCK=vdso "$B/BenchMonitorCost")
echo "  before (HANGWATCH_HEARTBEAT_CLOCK=vdso): $before"
beat_vdso_ns=$(echo "$before" | value heartbeat-ns)

echo "------------------------------------------------------------------------------"
echo "(g) Idle dispatchMain() program for 4 s, CPU time ($RUNS runs each)"
echo "------------------------------------------------------------------------------"
# The row is the steady window, from 1 s in to the end (3 s): the library's start-up (loading the
# engine, its threads, the module map: about 10 ms) is not idle cost, and over 4 s it alone would
# read as 0.25 %. The whole run is printed too.
plain=(); lib=(); plain_all=(); lib_all=()
for ((i = 0; i < RUNS; i++)); do
    a=$("$B/BenchIdleDispatch"); b=$("$B/BenchIdleDispatch" --library)
    plain+=("$(echo "$a" | value steady-cpu-ms)"); plain_all+=("$(echo "$a" | value cpu-ms)")
    lib+=("$(echo "$b" | value steady-cpu-ms)"); lib_all+=("$(echo "$b" | value cpu-ms)")
done
p=$(printf '%s\n' "${plain[@]}" | median); l=$(printf '%s\n' "${lib[@]}" | median)
pa=$(printf '%s\n' "${plain_all[@]}" | median); la=$(printf '%s\n' "${lib_all[@]}" | median)
echo "  plain, 1 s to 4 s (ms):          ${plain[*]}   median $p"
echo "  with the library, 1 s to 4 s:    ${lib[*]}   median $l"
echo "  whole runs (ms): plain ${plain_all[*]}; library ${lib_all[*]}"
idle_pct=$(awk -v a="$l" -v b="$p" 'BEGIN { printf "%.3f", (a - b) / 3000 * 100 }')
idle_all_pct=$(awk -v a="$la" -v b="$pa" 'BEGIN { printf "%.3f", (a - b) / 4000 * 100 }')
echo "  extra CPU: $idle_pct% of one core (main-queue probe only while dispatch work runs, else every 100 ms; watchdog; the reader sleeps while nothing is sampled);"
echo "  over the whole run, start-up included: $idle_all_pct%"

echo "------------------------------------------------------------------------------"
echo "(h) 60 Hz frame loop (FrameLoopDemo, 120 frames), CPU time ($RUNS runs each)"
echo "------------------------------------------------------------------------------"
cpu_file="${TMPDIR:-/tmp}/hw-frame-cpu.txt"
plain=(); watched=()
for ((i = 0; i < RUNS; i++)); do
    "$B/FrameLoopDemo" --cpu-file "$cpu_file"
    plain+=("$(value cpu-ms < "$cpu_file")")
    "$B/hangwatch" run --frame-ms 16.667 -o /dev/null -- "$B/FrameLoopDemo" --cpu-file "$cpu_file"
    watched+=("$(value cpu-ms < "$cpu_file")")
done
p=$(printf '%s\n' "${plain[@]}" | median); w=$(printf '%s\n' "${watched[@]}" | median)
echo "  plain (ms):          ${plain[*]}   median $p"
echo "  under hangwatch:     ${watched[*]}   median $w"
frame_pct=$(awk -v a="$w" -v b="$p" 'BEGIN { printf "%.2f", (a / b - 1) * 100 }')
echo "  extra CPU of the program: $frame_pct% (its own getrusage; includes sampling its 130 ms hang)"

echo "------------------------------------------------------------------------------"
echo "(i) Two idle event loops (EventLoopServerDemo --idle-seconds 4), CPU from 1 s to 4 s ($RUNS runs each)"
echo "------------------------------------------------------------------------------"
# The program's own CPU (every thread: the watchdog and the library's reader
# included) over its steady window; under `hangwatch run` also the hangwatch
# process's CPU over the same 3 s (its /proc stat at 1.2 s and 4.0 s, scaled).
server_cpu() { rm -f "$cpu_file"; "$@"; value steady-cpu-ms < "$cpu_file"; }
tick_ms=$(awk -v hz="$(getconf CLK_TCK)" 'BEGIN { print 1000 / hz }')
hangwatch_cpu_ms() { awk -v t="$tick_ms" '{ print ($14 + $15) * t }' "/proc/$1/stat" 2>/dev/null || echo 0; }
plain=(); lib=(); run=(); tool=()
for ((i = 0; i < RUNS; i++)); do
    plain+=("$(server_cpu "$B/EventLoopServerDemo" --idle-seconds 4 --cpu-file "$cpu_file")")
    lib+=("$(HANGWATCH_THREADS='NIO-ELT-*' server_cpu "$B/EventLoopServerDemo" --idle-seconds 4 --cpu-file "$cpu_file" \
             --library /dev/null)")
    rm -f "$cpu_file"
    "$B/hangwatch" run --thread 'NIO-ELT-*' -o /dev/null -- "$B/EventLoopServerDemo" --idle-seconds 4 \
        --cpu-file "$cpu_file" & hw=$!
    sleep 1.2; a=$(hangwatch_cpu_ms $hw); sleep 2.8; b=$(hangwatch_cpu_ms $hw)
    wait $hw
    run+=("$(value steady-cpu-ms < "$cpu_file")")
    tool+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", (b - a) * 3 / 2.8 }')")
done
p=$(printf '%s\n' "${plain[@]}" | median); l=$(printf '%s\n' "${lib[@]}" | median)
r=$(printf '%s\n' "${run[@]}" | median); t=$(printf '%s\n' "${tool[@]}" | median)
echo "  plain (ms):                        ${plain[*]}   median $p"
echo "  library, HANGWATCH_THREADS (ms):   ${lib[*]}   median $l"
echo "  hangwatch run --thread (ms):       ${run[*]}   median $r  (+ the hangwatch process: ${tool[*]}, median $t)"
loops_lib_pct=$(awk -v a="$l" -v b="$p" 'BEGIN { printf "%.3f", (a - b) / 3000 * 100 }')
loops_run_pct=$(awk -v a="$r" -v b="$p" -v c="$t" 'BEGIN { printf "%.3f", (a + c - b) / 3000 * 100 }')

echo
echo "  measure                                   result     target"
printf "  (f) FrameMonitor per frame               %6.1f ns   ≤ 100 ns\n" "$frame_ns"
printf "  (f) LoopHeartbeat per iteration          %6.1f ns   ≤ 30 ns (issue 11's heartbeat)\n" "$beat_ns"
printf "      same, before: vdso clock             %6.1f ns   (same run)\n" "$beat_vdso_ns"
printf "  (g) idle dispatchMain, library           %6.3f %%    ≤ 0.1 %% of a core (whole run, start-up included: %s %%)\n" "$idle_pct" "$idle_all_pct"
printf "  (h) 60 Hz loop CPU under --frame-ms      %6.2f %%    ≤ 1 %%\n" "$frame_pct"
printf "  (i) two idle NIO-style loops, library   %6.3f %%    ≤ 0.1 %% of a core\n" "$loops_lib_pct"
printf "      same, under hangwatch run            %6.3f %%    (same run; the hangwatch process included)\n" "$loops_run_pct"
