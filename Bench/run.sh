#!/usr/bin/env bash
# hangwatch benchmarks (`make bench`). See BENCHMARKS.md for what each measure
# means and the figures measured on the reference machine.
#
# Needs what `make build` produced (.build/release/hangwatch and
# libhangwatch-agent.so), a C compiler and perf. Takes about 2 minutes.
#
# Knobs (environment):
#   BENCH_A_RUNS=7    repetitions of each configuration in (a) (medians are reported)
#   BENCH_RUNS=5      repetitions for (c) and (d)
#   BENCH_AB_RUNS=3   runs of each paired (d) measure (Bench/sample_ab.c, about 7 s each)
#   BENCH_IDLE_RUNS=3 repetitions for (b)
#   BENCH_E_SECONDS=11  length of the hang of (e) (≥ 10.5 s for 10,000 samples)
#   BENCH_KEEP=1      keep the temporary directory (raw result files)
#   BENCH_WAIT_QUIET=0  seconds to wait at start for other processes to leave the CPUs idle
#   CC=cc
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HW="$ROOT/.build/release/hangwatch"
AGENT="$ROOT/.build/release/libhangwatch-agent.so"
RUNS=${BENCH_RUNS:-5}
AB_RUNS=${BENCH_AB_RUNS:-3}
A_RUNS=${BENCH_A_RUNS:-7}
IDLE_RUNS=${BENCH_IDLE_RUNS:-3}
E_SECONDS=${BENCH_E_SECONDS:-11}
CC=${CC:-cc}

die() { echo "bench: $*" >&2; exit 1; }
[[ -x "$HW" ]] || die "$HW not found: run 'make build' first"
[[ -r "$AGENT" ]] || die "$AGENT not found: run 'make agent' first"
command -v "$CC" >/dev/null || die "no C compiler ($CC)"
command -v perf >/dev/null || die "perf not found (needed for the comparison in (a))"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/hangwatch-bench.XXXXXX")
if [[ "${BENCH_KEEP:-0}" == 1 ]]; then
    trap 'echo "(raw results kept in $TMP)"' EXIT
else
    trap 'rm -rf "$TMP"' EXIT
fi

# ---- helpers ----------------------------------------------------------------

# median of the numbers on stdin (one per line)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# values of KEY=... in FILE, one per line, in order
field() { grep -o "\\b$2=-\\?[0-9]*" "$1" | cut -d= -f2; }
# float arithmetic: calc 'expr'
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
# format: fmt DECIMALS VALUE
fmt() { awk -v d="$1" -v v="$2" 'BEGIN { printf "%.*f", d, v }'; }
# numbers of FILE's KEY as ms, space separated (raw figures for the tables)
list_ms() { field "$1" "$2" | awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1e6 }'; }
hr() { printf '%s\n' "------------------------------------------------------------------------------"; }
# total samples of the hangs in a JSON report: a hang's "sampleCount" is the key
# right before its "sampleCoverage" (keys are sorted; call-tree nodes have none)
json_samples() { awk '/"sampleCount" *:/ { n = $0; gsub(/[^0-9]/, "", n); next }
    /"sampleCoverage" *:/ { s += n } { n = 0 } END { print s + 0 }' "$1"; }
# samples of every hang in a text report ("Hang #N — ..., 582 samples (..")
text_samples() { grep -E '^Hang #' "$1" | grep -oE '[0-9]+ samples? \(' | grep -oE '^[0-9]+' |
                 awk '{ s += $1 } END { print s + 0 }'; }
# Load from other processes: machine-wide busy CPU time (/proc/stat) minus
# the CPU time of everything this script ran (bash `times`: waited-for children).
HZ_TICKS=$(getconf CLK_TCK)
NCPU=$(nproc)
# Both run in this shell (never in $(...): a subshell has its own, empty, children times).
snapshot() { # sets SNAP="wall_ns busy_ticks children_cpu_s"
    local wall busy kids
    times > "$TMP/times.txt"
    kids=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] } print t }' "$TMP/times.txt")
    wall=$(date +%s%N)
    busy=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat)
    SNAP="$wall $busy $kids"
}
other_load() { # other_load SNAPSHOT_BEFORE: sets OTHER to the % of all CPUs other processes used since
    snapshot
    OTHER=$(awk -v a="$1" -v b="$SNAP" -v hz="$HZ_TICKS" -v n="$NCPU" 'BEGIN { split(a, x, " "); split(b, y, " ");
        wall = (y[1] - x[1]) / 1e9; busy = (y[2] - x[2]) / hz; ours = y[3] - x[3];
        o = (busy - ours) / (wall * n) * 100; if (o < 0) o = 0; printf "%.1f", o }')
}
section_start() { snapshot; S=$SNAP; }
section_end() { # section_end NAME
    other_load "$S"
    LOAD[$1]=$OTHER
    echo "  [other processes used ${OTHER}% of the $NCPU CPUs during this section]"
}
declare -A LOAD
verdict() { # verdict VALUE TARGET [GOAL] (lower is better)
    awk -v v="$1" -v t="$2" -v g="${3:-}" 'BEGIN { if (v != v + 0) print "n/a";
        else if (g != "" && v <= g + 0) print "meets goal"; else if (v <= t + 0) print "meets target";
        else print "MISSED" }'
}

# ---- build the bench programs -----------------------------------------------

for p in cpu_hang idle_loop heartbeat_loop runstat sample_ab wake_floor; do
    "$CC" -O2 -pthread -o "$TMP/$p" "$ROOT/Bench/$p.c" || die "cannot compile Bench/$p.c"
done
CPU_HANG="$TMP/cpu_hang"
RUNSTAT="$TMP/runstat"

echo "hangwatch benchmarks — $(date '+%Y-%m-%d %H:%M'), $NCPU CPUs, kernel $(uname -r), $("$HW" --version)"
# Optionally wait (up to BENCH_WAIT_QUIET seconds) for other processes to calm down.
WAITED=0
while :; do
    section_start; sleep 1; other_load "$S"
    if awk -v b="$OTHER" 'BEGIN { exit !(b <= 5) }' || ((WAITED >= ${BENCH_WAIT_QUIET:-0})); then break; fi
    WAITED=$((WAITED + 1))
done
BUSY=$OTHER
echo "other processes before start: ${BUSY}% of the $NCPU CPUs"
if awk -v b="$BUSY" 'BEGIN { exit !(b > 5) }'; then
    echo "WARNING: the machine is not idle; wall-clock figures will be noisy (see the per-section load)."
fi
ITERS=$("$CPU_HANG" --calibrate 2000)
echo "work calibrated once: $ITERS iterations ≈ 2 s (the same fixed count for every run below)"
echo

declare -A RESULT   # summary values

# ---- (a) slowdown of a 2 s CPU-bound hang sampled at 1 kHz ------------------

hr
echo "(a) Slowdown of a 2 s CPU-bound hang sampled at 1 kHz  ($A_RUNS runs each, rotating order)"
hr
section_start
# hangwatch: the default (the kernel samples the thread); signal: the SIGPROF fallback sampler.
CONFIGS=(plain hangwatch signal perf)
for ((i = 0; i < A_RUNS; i++)); do
    for ((k = 0; k < ${#CONFIGS[@]}; k++)); do
        cfg=${CONFIGS[$(((i + k) % ${#CONFIGS[@]}))]}
        out="$TMP/a_$cfg.txt"
        case $cfg in
        plain) "$CPU_HANG" --iters "$ITERS" --out "$out" ;;
        hangwatch) "$HW" run -o /dev/null -- "$CPU_HANG" --iters "$ITERS" --out "$out" ;;
        signal) "$HW" run --sampler signal -o /dev/null -- "$CPU_HANG" --iters "$ITERS" --out "$out" ;;
        perf) perf record -q -F 1000 --call-graph dwarf -e cpu-clock -o "$TMP/perf.data" -- \
                  "$CPU_HANG" --iters "$ITERS" --out "$out" >/dev/null 2>&1 \
                  || die "perf record failed (perf_event_paranoid? try as root)"
              rm -f "$TMP/perf.data" ;;
        esac
    done
done
declare -A A_WALL A_MIN A_CPU A_OFF
echo "  per run: work wall time ms / of which the main thread was off-CPU ms"
for cfg in "${CONFIGS[@]}"; do
    f="$TMP/a_$cfg.txt"
    A_WALL[$cfg]=$(field "$f" work_ns | median)
    A_MIN[$cfg]=$(field "$f" work_ns | sort -g | head -1)
    A_CPU[$cfg]=$(field "$f" work_cpu_ns | median)
    A_OFF[$cfg]=$(paste -d' ' <(field "$f" work_ns) <(field "$f" work_cpu_ns) | awk '{ print $1 - $2 }' | median)
    printf '    %-10s %s\n' "$cfg" "$(paste -d' ' <(field "$f" work_ns) <(field "$f" work_cpu_ns) |
        awk '{ printf "%s%.1f/%.1f", (NR > 1 ? " " : ""), $1 / 1e6, ($1 - $2) / 1e6 }')"
done
printf '  %-10s %10s %9s | %10s %9s | %9s %12s\n' config "median ms" slowdown "min ms" slowdown cpu-based "off-CPU med"
for cfg in "${CONFIGS[@]}"; do
    printf '  %-10s %10s %+8.2f%% | %10s %+8.2f%% | %+8.2f%% %9s ms\n' "$cfg" \
        "$(fmt 1 "$(calc "${A_WALL[$cfg]} / 1e6")")" "$(calc "(${A_WALL[$cfg]} / ${A_WALL[plain]} - 1) * 100")" \
        "$(fmt 1 "$(calc "${A_MIN[$cfg]} / 1e6")")" "$(calc "(${A_MIN[$cfg]} / ${A_MIN[plain]} - 1) * 100")" \
        "$(calc "(${A_CPU[$cfg]} / ${A_CPU[plain]} - 1) * 100")" "$(fmt 1 "$(calc "${A_OFF[$cfg]} / 1e6")")"
done
RESULT[a]=$(calc "(${A_WALL[hangwatch]} / ${A_WALL[plain]} - 1) * 100")
RESULT[a_perf]=$(calc "(${A_WALL[perf]} / ${A_WALL[plain]} - 1) * 100")
RESULT[a_signal]=$(calc "(${A_WALL[signal]} / ${A_WALL[plain]} - 1) * 100")
RESULT[a_cpu]=$(calc "(${A_CPU[hangwatch]} / ${A_CPU[plain]} - 1) * 100")
RESULT[a_perf_cpu]=$(calc "(${A_CPU[perf]} / ${A_CPU[plain]} - 1) * 100")
echo "  slowdown = median (or min) work wall time / plain's - 1; cpu-based: median of the main"
echo "  thread's CPU time during the work (not inflated by preemption from other processes)"
printf '  ratio of slowdowns hangwatch/perf: %s (wall, median), %s (cpu-based)\n' \
    "$(awk -v h="${RESULT[a]}" -v p="${RESULT[a_perf]}" 'BEGIN { if (p > 0) printf "%.2f", h / p; else print "n/a" }')" \
    "$(awk -v h="${RESULT[a_cpu]}" -v p="${RESULT[a_perf_cpu]}" 'BEGIN { if (p > 0) printf "%.2f", h / p; else print "n/a" }')"
section_end a
echo

# ---- (b) CPU of an idle loop over 4 s ----------------------------------------

hr
echo "(b) CPU time of an idle loop (epoll_wait on a 100 ms timerfd) over 4 s  ($IDLE_RUNS runs each)"
hr
section_start
for ((i = 0; i < IDLE_RUNS; i++)); do
    "$RUNSTAT" "$TMP/b_plain_rs.txt" -- "$TMP/idle_loop" --ms 4000 --out "$TMP/b_plain.txt"
    "$RUNSTAT" "$TMP/b_hw_rs.txt" -- "$HW" run -o /dev/null -- "$TMP/idle_loop" --ms 4000 --out "$TMP/b_hw.txt"
    # A responsive app with a 10 ms timer (the issue's case): the loop wakes 100 times a second.
    "$TMP/idle_loop" --ms 4000 --tick-ms 10 --out "$TMP/b10_plain.txt"
    "$HW" run -o /dev/null -- "$TMP/idle_loop" --ms 4000 --tick-ms 10 --out "$TMP/b10_hw.txt"
done
B_WALL=$(field "$TMP/b_plain.txt" wall_ns | median)
B_PLAIN=$(field "$TMP/b_plain.txt" proc_cpu_ns | median)
B_HW=$(field "$TMP/b_hw.txt" proc_cpu_ns | median)
# hangwatch's own process: wait4 rusage of `hangwatch run` (itself + the program) minus the program's own CPU
paste -d' ' "$TMP/b_hw_rs.txt" "$TMP/b_hw.txt" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    print f["cpu_ns"] - f["proc_cpu_ns"] }' > "$TMP/b_cli.txt"
B_CLI=$(median < "$TMP/b_cli.txt")
printf '  %-34s %-28s %10s\n' "" "CPU per run (ms)" "median"
printf '  %-34s %-28s %10s\n' "plain: program CPU" "$(list_ms "$TMP/b_plain.txt" proc_cpu_ns)" "$(fmt 3 "$(calc "$B_PLAIN / 1e6")") ms"
printf '  %-34s %-28s %10s\n' "hangwatch: program CPU (+watchdog)" "$(list_ms "$TMP/b_hw.txt" proc_cpu_ns)" "$(fmt 3 "$(calc "$B_HW / 1e6")") ms"
printf '  %-34s %-28s %10s\n' "hangwatch CLI process (info)" "$(awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1e6 }' "$TMP/b_cli.txt")" "$(fmt 3 "$(calc "$B_CLI / 1e6")") ms"
RESULT[b]=$(calc "($B_HW - $B_PLAIN) / $B_WALL * 100")
RESULT[b_cli]=$(calc "$B_CLI / $B_WALL * 100")
printf '  extra CPU of the program: %s ms over %s s = %s%% of one core (ratio hangwatch/plain CPU: %sx)\n' \
    "$(fmt 3 "$(calc "($B_HW - $B_PLAIN) / 1e6")")" "$(fmt 2 "$(calc "$B_WALL / 1e9")")" "$(fmt 3 "${RESULT[b]}")" \
    "$(fmt 1 "$(calc "$B_HW / $B_PLAIN")")"
printf '  (not in the target: the hangwatch CLI process - start-up, its idle drain once a second, report - used %s%% of one core)\n' "$(fmt 3 "${RESULT[b_cli]}")"
# The hangwatch process once started, beside the 10 ms-timer loop: its threads' CPU (schedstat) from
# 2 s to 4.5 s in (its first idle drain, about 1 s in, reads the program's start-up records). While
# nothing is sampled its reader sleeps on the log (one idle drain a second).
task_cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
for ((i = 0; i < IDLE_RUNS; i++)); do
    "$HW" run -o /dev/null -- "$TMP/idle_loop" --ms 5000 --tick-ms 10 --out /dev/null &
    hw_pid=$!
    sleep 2; c0=$(task_cpu_ns "$hw_pid"); s0=$(grep -h ctxt_switches /proc/"$hw_pid"/status | awk '{ s += $2 } END { print s }')
    sleep 2.5; c1=$(task_cpu_ns "$hw_pid"); s1=$(grep -h ctxt_switches /proc/"$hw_pid"/status | awk '{ s += $2 } END { print s }')
    wait "$hw_pid"
    echo "cpu_ns=$((c1 - c0)) switches=$((s1 - s0))" >> "$TMP/b_cli_steady.txt"
done
RESULT[b_cli_steady]=$(calc "$(field "$TMP/b_cli_steady.txt" cpu_ns | median) / 2.5e9 * 100")
printf '  the hangwatch process once started (2 s to 4.5 s in): %s%% of one core, %s wake-ups a second (runs: %s)\n' \
    "$(fmt 4 "${RESULT[b_cli_steady]}")" "$(fmt 1 "$(calc "$(field "$TMP/b_cli_steady.txt" switches | median) / 2.5")")" \
    "$(field "$TMP/b_cli_steady.txt" cpu_ns | awk '{ printf "%s%.2f ms", (NR > 1 ? ", " : ""), $1 / 1e6 }')"
# The watchdog's wakeups, counted: the kernel's context switches of the program's other threads
# (the watchdog is the only one), read by idle_loop at exit.
B_WAKEUPS=$(field "$TMP/b_hw.txt" other_switches | median)
printf '  watchdog wakeups (context switches, counted by the kernel): %s per run (median; %s without parking)\n' \
    "$(fmt 0 "$B_WAKEUPS")" "$(fmt 0 "$(calc "$B_WALL / 1e7")")"
printf '  per wakeup: %s µs of CPU\n' "$(fmt 1 "$(calc "($B_HW - $B_PLAIN) / ($B_WAKEUPS > 0 ? $B_WAKEUPS : 1) / 1e3")")"
B10_PLAIN=$(field "$TMP/b10_plain.txt" proc_cpu_ns | median)
B10_HW=$(field "$TMP/b10_hw.txt" proc_cpu_ns | median)
B10_WALL=$(field "$TMP/b10_plain.txt" wall_ns | median)
RESULT[b10]=$(calc "($B10_HW - $B10_PLAIN) / $B10_WALL * 100")
# The watchdog's own CPU (process minus the loop thread) is steadier than the difference of two runs.
RESULT[b10_wd]=$(paste -d' ' <(field "$TMP/b10_hw.txt" proc_cpu_ns) <(field "$TMP/b10_hw.txt" main_cpu_ns) |
    awk '{ print $1 - $2 }' | median)
RESULT[b10_wd]=$(calc "${RESULT[b10_wd]} / $B10_WALL * 100")
printf '  10 ms timer: program CPU plain %s ms, hangwatch %s ms (runs: %s / %s)\n' \
    "$(fmt 3 "$(calc "$B10_PLAIN / 1e6")")" "$(fmt 3 "$(calc "$B10_HW / 1e6")")" \
    "$(list_ms "$TMP/b10_plain.txt" proc_cpu_ns)" "$(list_ms "$TMP/b10_hw.txt" proc_cpu_ns)"
printf '  10 ms timer: extra CPU %s%% of one core; the watchdog thread alone %s%%; its wakeups %s per run\n' \
    "$(fmt 3 "${RESULT[b10]}")" "$(fmt 3 "${RESULT[b10_wd]}")" "$(field "$TMP/b10_hw.txt" watchdog_switches | median)"
# What a timer wake-up costs the thread that wakes, on this machine, with no hangwatch, beside
# what each of the watchdog's wake-ups costs it in the 10 ms run (its CPU / its wake-ups): the
# watchdog does little once awake, so its cost is its wake-ups; a wake-up that follows the loop's
# own (the CPU is awake already) costs less than a bare one.
for ((i = 0; i < IDLE_RUNS; i++)); do "$TMP/wake_floor" --period-ms 20 --ms 2000 >> "$TMP/wake_floor.txt"; done
WAKE_FLOOR_NS=$(field "$TMP/wake_floor.txt" per_wake_ns | median)
B10_WAKES=$(field "$TMP/b10_hw.txt" watchdog_switches | median)
RESULT[wake_floor]=$(calc "$WAKE_FLOOR_NS / 1e3")
RESULT[b10_per_wake]=$(calc "${RESULT[b10_wd]} / 100 * $B10_WALL / ($B10_WAKES > 0 ? $B10_WAKES : 1) / 1e3")
printf '  a timer wake-up costs a bare sleeping thread %s µs of its CPU here (runs: %s µs; no hangwatch);\n' \
    "$(fmt 1 "${RESULT[wake_floor]}")" "$(field "$TMP/wake_floor.txt" per_wake_ns | awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1e3 }')"
printf '    each of the watchdog'"'"'s %s wake-ups in the 10 ms run cost it %s µs\n' \
    "$(fmt 0 "$B10_WAKES")" "$(fmt 1 "${RESULT[b10_per_wake]}")"
section_end b
echo

# ---- (c) heartbeat cost per loop iteration -----------------------------------

hr
echo "(c) Heartbeat cost per loop iteration: 1,000,000 waits that return at once  ($RUNS runs each)"
hr
section_start
C_CONFIGS=(plain thread hw vdso)
for ((i = 0; i < RUNS; i++)); do
    for call in epoll poll; do
        for ((k = 0; k < 4; k++)); do
            cfg=${C_CONFIGS[$(((i + k) % 4))]}
            out="$TMP/c_${cfg}_$call.txt"
            case $cfg in
            plain) "$TMP/heartbeat_loop" --call $call --out "$out" ;;
            thread) "$TMP/heartbeat_loop" --call $call --idle-thread --out "$out" ;;
            hw) "$HW" run -o /dev/null -- "$TMP/heartbeat_loop" --call $call --out "$out" ;;
            vdso) "$HW" run --heartbeat-clock vdso -o /dev/null -- "$TMP/heartbeat_loop" --call $call --out "$out" ;;
            esac
        done
    done
done
printf '  %-40s %-40s %7s\n' "" "loop time per run (ms)" "median"
for call in epoll poll; do
    [[ $call == epoll ]] && name="epoll_wait(-1)" || name="poll(-1)"
    for cfg in "${C_CONFIGS[@]}"; do
        case $cfg in
        plain) label="$name plain" ;;
        thread) label="$name plain + an idle thread" ;;
        hw) label="$name under hangwatch" ;;
        vdso) label="$name hangwatch, vdso clock" ;;
        esac
        printf '  %-40s %-40s %7s\n' "$label" "$(list_ms "$TMP/c_${cfg}_$call.txt" loop_ns)" \
            "$(fmt 1 "$(calc "$(field "$TMP/c_${cfg}_$call.txt" loop_ns | median) / 1e6")")"
    done
    p=$(field "$TMP/c_plain_$call.txt" loop_ns | median)
    t=$(field "$TMP/c_thread_$call.txt" loop_ns | median)
    h=$(field "$TMP/c_hw_$call.txt" loop_ns | median)
    v=$(field "$TMP/c_vdso_$call.txt" loop_ns | median)
    RESULT[c_$call]=$(calc "($h - $t) / 1000000")
    RESULT[c_${call}_vdso]=$(calc "($v - $t) / 1000000")
    RESULT[c_${call}_raw]=$(calc "($h - $p) / 1000000")
    printf '  => %-6s per iteration: plain %s ns, with a 2nd thread %s ns, hangwatch %s ns\n' "$call:" \
        "$(fmt 1 "$(calc "$p / 1e6")")" "$(fmt 1 "$(calc "$t / 1e6")")" "$(fmt 1 "$(calc "$h / 1e6")")"
    printf '     heartbeat: +%s ns vs the 2-thread plain run (ratio %s); +%s ns vs single-threaded plain (ratio %s)\n' \
        "$(fmt 1 "${RESULT[c_$call]}")" "$(fmt 3 "$(calc "$h / $t")")" "$(fmt 1 "${RESULT[c_${call}_raw]}")" "$(fmt 3 "$(calc "$h / $p")")"
    printf '     before (--heartbeat-clock vdso, same run): +%s ns vs the 2-thread plain run\n' "$(fmt 1 "${RESULT[c_${call}_vdso]}")"
done
echo "  (hangwatch's watchdog makes the program multi-threaded; from then on every fd syscall pays"
echo "   for file-table reference counting. Real Swift programs already have several threads, so"
echo "   the heartbeat's own cost is the difference with the 2-thread run.)"
for ((i = 0; i < 3; i++)); do "$TMP/heartbeat_loop" --call clock --iters 10000000 --out "$TMP/c_clock.txt"; done
RESULT[c_clock]=$(calc "$(field "$TMP/c_clock.txt" loop_ns | median) / 10000000")
printf '  floor: one clock_gettime(CLOCK_MONOTONIC) costs %s ns here; the heartbeat reads it twice (%s ns)\n' \
    "$(fmt 1 "${RESULT[c_clock]}")" "$(fmt 1 "$(calc "2 * ${RESULT[c_clock]}")")"
# The runs above differ by 60-90 ns from run to run, more than the heartbeat costs. Paired inside
# one process (heartbeat_loop --paired): blocks of waits through libc, which hangwatch interposes,
# alternate with blocks of the same waits made by the syscall instruction, which nothing
# interposes; the median per-round gap, under hangwatch less the same gap plain (libc's own
# wrapper), is what hangwatch adds to a wait, with the kernel's work cancelled in each round.
for ((i = 0; i < 3; i++)); do
    for call in epoll poll; do
        "$TMP/heartbeat_loop" --paired 2000 --call $call --idle-thread --out "$TMP/cp_plain_$call.txt"
        "$HW" run -o /dev/null -- "$TMP/heartbeat_loop" --paired 2000 --call $call --out "$TMP/cp_hw_$call.txt"
    done
    "$TMP/heartbeat_loop" --call tsc --iters 10000000 --out "$TMP/c_tsc.txt"
done
RESULT[c_tsc]=$(calc "$(field "$TMP/c_tsc.txt" loop_ns | median) / 10000000")
printf '  paired in one process (2000 rounds of 500 waits through libc and 500 raw; 3 runs each):\n'
for call in epoll poll; do
    cp_plain=$(field "$TMP/cp_plain_$call.txt" paired_diff_ns | median)
    cp_hw=$(field "$TMP/cp_hw_$call.txt" paired_diff_ns | median)
    RESULT[c_${call}_unpaired]=${RESULT[c_$call]}
    RESULT[c_$call]=$(calc "$cp_hw - $cp_plain")
    printf '    %-6s libc - raw, plain: %s ns; under hangwatch: %s ns  => hangwatch adds %s ns a wait\n' "$call:" \
        "$(field "$TMP/cp_plain_$call.txt" paired_diff_ns | tr '\n' ' ' | sed 's/ $//')" \
        "$(field "$TMP/cp_hw_$call.txt" paired_diff_ns | tr '\n' ' ' | sed 's/ $//')" "$(fmt 1 "${RESULT[c_$call]}")"
done
printf '  floor: one rdtsc (the heartbeat'"'"'s clock, read at both ends of a wait) costs %s ns here (%s ns twice)\n' \
    "$(fmt 1 "${RESULT[c_tsc]}")" "$(fmt 1 "$(calc "2 * ${RESULT[c_tsc]}")")"
section_end c
echo

# ---- (d) cost per sample at ~30 frames ---------------------------------------

hr
echo "(d) Cost per sample, 2 s hang 30 frames deep (35 with main/libc)  ($RUNS runs each + 3 baselines + 3 floors)"
hr
section_start
for ((i = 0; i < RUNS; i++)); do
    run_hw() {
        "$RUNSTAT" "$TMP/d_hw_rs.txt" -- "$HW" run -o "$TMP/d.json" --format json -- \
            "$CPU_HANG" --iters "$ITERS" --depth 30 --out "$TMP/d_hw.txt"
        json_samples "$TMP/d.json" >> "$TMP/d_samples.txt"
    }
    if ((i % 2 == 0)); then
        "$CPU_HANG" --iters "$ITERS" --depth 30 --out "$TMP/d_plain.txt"; run_hw
    else
        run_hw; "$CPU_HANG" --iters "$ITERS" --depth 30 --out "$TMP/d_plain.txt"
    fi
done
D_PLAIN_MS=$(calc "$(field "$TMP/d_plain.txt" work_ns | median) / 1e6")
# Baseline: same program and lifetime under hangwatch, but idle instead of hung (no samples).
# Floor: no hangwatch; a helper thread signals the working thread at 1 kHz, empty handler.
for ((i = 0; i < 3; i++)); do
    "$RUNSTAT" "$TMP/d_base_rs.txt" -- "$HW" run -o "$TMP/d_base.json" --format json -- \
        "$CPU_HANG" --idle-ms "$(fmt 0 "$D_PLAIN_MS")" --depth 30 --out "$TMP/d_base.txt"
    "$CPU_HANG" --iters "$ITERS" --depth 30 --self-signal-hz 1000 --out "$TMP/d_floor.txt"
done
# per-process figures: cli = hangwatch's own CPU, wd = the program's CPU outside its main thread (watchdog)
join_rs() { paste -d' ' "$1" "$2" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    print f["cpu_ns"] - f["proc_cpu_ns"], f["proc_cpu_ns"] - f["main_cpu_ns"] }'; }
BASE_CLI=$(join_rs "$TMP/d_base_rs.txt" "$TMP/d_base.txt" | awk '{ print $1 }' | median)
BASE_WD=$(join_rs "$TMP/d_base_rs.txt" "$TMP/d_base.txt" | awk '{ print $2 }' | median)
P_WALL=$(field "$TMP/d_plain.txt" work_ns | median)
P_CPU=$(field "$TMP/d_plain.txt" work_cpu_ns | median)
paste -d' ' <(field "$TMP/d_hw.txt" work_ns) <(field "$TMP/d_hw.txt" work_cpu_ns) "$TMP/d_samples.txt" \
    <(join_rs "$TMP/d_hw_rs.txt" "$TMP/d_hw.txt") |
    awk -v pw="$P_WALL" -v pc="$P_CPU" -v bc="$BASE_CLI" -v bw="$BASE_WD" '{
        n = $3; if (n <= 0) n = 1e-9
        # µs per sample: thread (wall), thread (cpu), hangwatch process, watchdog, hangwatch raw
        # and the hangwatch process CPU during the hang as % of one core (the reader steals it from the target)
        printf "%.3f %.3f %.3f %.3f %.3f %d %.3f %.4f\n", ($1 - pw) / n / 1e3, ($2 - pc) / n / 1e3,
               ($4 - bc) / n / 1e3, ($5 - bw) / n / 1e3, $4 / n / 1e3, $3, $1 / 1e6, ($4 - bc) / $1 * 100 }' > "$TMP/d_per.txt"
col() { awk -v c="$1" '{ print $c }' "$TMP/d_per.txt"; }
D_THREAD=$(col 1 | median); D_THREAD_CPU=$(col 2 | median); D_CLI=$(col 3 | median)
D_WD=$(col 4 | median); D_CLI_RAW=$(col 5 | median); D_N=$(col 6 | median); D_READER=$(col 8 | median)
printf '  plain work (ms):          %s   median %s\n' "$(list_ms "$TMP/d_plain.txt" work_ns)" "$(fmt 1 "$D_PLAIN_MS")"
printf '  hangwatch work (ms):      %s   median %s\n' "$(list_ms "$TMP/d_hw.txt" work_ns)" \
    "$(fmt 1 "$(calc "$(field "$TMP/d_hw.txt" work_ns | median) / 1e6")")"
printf '  samples per run:          %s   (%s%% of the 1 kHz ticks in the hang)\n' "$(tr '\n' ' ' < "$TMP/d_samples.txt" | sed 's/ $//')" \
    "$(fmt 0 "$(calc "$D_N / ($(field "$TMP/d_hw.txt" work_ns | median) / 1e6) * 100")")"
printf '  hangwatch CLI CPU, no-hang baseline: %s ms; watchdog CPU in baseline: %s ms\n' \
    "$(fmt 1 "$(calc "$BASE_CLI / 1e6")")" "$(fmt 1 "$(calc "$BASE_WD / 1e6")")"
printf '  main-thread minor page faults, median: plain %s, hangwatch %s (the sample ring being touched)\n' \
    "$(field "$TMP/d_plain.txt" main_minflt | median)" "$(field "$TMP/d_hw.txt" main_minflt | median)"
F_N=$(field "$TMP/d_floor.txt" signals | median)
F_WALL=$(calc "($(field "$TMP/d_floor.txt" work_ns | median) - $P_WALL) / $F_N / 1e3")
F_CPU=$(calc "($(field "$TMP/d_floor.txt" work_cpu_ns | median) - $P_CPU) / $F_N / 1e3")
F_SENDER=$(paste -d' ' <(field "$TMP/d_floor.txt" proc_cpu_ns) <(field "$TMP/d_floor.txt" main_cpu_ns) <(field "$TMP/d_floor.txt" signals) |
    awk '{ print ($1 - $2) / $3 / 1e3 }' | median)
printf '  floor, no hangwatch (empty SIGPROF handler at 1 kHz, %s signals): %s µs/signal wall, %s cpu;\n' \
    "$F_N" "$(fmt 2 "$F_WALL")" "$(fmt 2 "$F_CPU")"
printf '    the sending thread: %s µs/signal (runs: %s ms)\n' "$(fmt 2 "$F_SENDER")" "$(list_ms "$TMP/d_floor.txt" work_ns)"
printf '  per sample (µs), median of the per-run values:\n'
printf '    %-58s %8s\n' "1. sampled thread: (cpu_hw - cpu_plain) / samples" "$(fmt 2 "$D_THREAD_CPU")"
printf '    %-58s %8s\n' "   (same with work wall time instead of thread CPU time)" "$(fmt 2 "$D_THREAD")"
printf '    %-58s %8s\n' "2. hangwatch process: unwind + report, minus baseline" "$(fmt 2 "$D_CLI")"
printf '    %-58s %8s\n' "   (hangwatch process CPU / samples, nothing subtracted)" "$(fmt 2 "$D_CLI_RAW")"
RESULT[d]=$(calc "$D_THREAD_CPU + $D_CLI")
printf '    %-58s %8s\n' "sum 1 + 2 (the measure compared with the target)" "$(fmt 2 "${RESULT[d]}")"
printf '    %-58s %8s\n' "3. watchdog thread in the program (info, minus baseline)" "$(fmt 2 "$D_WD")"
RESULT[d_all]=$(calc "${RESULT[d]} + $D_WD")
printf '    %-58s %8s\n' "all-in 1 + 2 + 3" "$(fmt 2 "${RESULT[d_all]}")"
RESULT[d_wall]=$(calc "$D_THREAD + $D_CLI")
RESULT[d_cli]=$D_CLI
RESULT[reader]=$D_READER

# The sampled thread's cost and the signal floor above are differences between separate processes,
# whose CPU times spread by ±1-2 % here: as much as the cost itself (the floor came out negative).
# Bench/sample_ab.c measures both inside one process: the same work in alternating phases, one
# a sampled busy period, one in 2 ms chunks that are never sampled; per round, on - off. The plain
# run's on - off (no sampling at all) is the noise, subtracted.
AB_ITERS=$(awk -v n="$ITERS" 'BEGIN { printf "%.0f", n * 0.15 }') # about 300 ms per phase
AB_ROUNDS=12
printf '  paired in one process (Bench/sample_ab.c: %s rounds of a 300 ms sampled phase and the same work unsampled; %s runs each)\n' \
    "$AB_ROUNDS" "$AB_RUNS"
for ((i = 0; i < AB_RUNS; i++)); do
    "$TMP/sample_ab" --rounds "$AB_ROUNDS" --iters "$AB_ITERS" --out "$TMP/ab_plain.txt"
    "$TMP/sample_ab" --rounds "$AB_ROUNDS" --iters "$AB_ITERS" --self-signal-hz 1000 --out "$TMP/ab_floor.txt"
    "$TMP/sample_ab" --rounds "$AB_ROUNDS" --iters "$AB_ITERS" --self-perf-hz 1000 --perf-stack 8192 --out "$TMP/ab_perf.txt" ||
        echo "signals=0" >> "$TMP/ab_perf.txt" # perf_event_open refused
    "$HW" run -o "$TMP/ab.json" --format json -- "$TMP/sample_ab" --rounds "$AB_ROUNDS" --iters "$AB_ITERS" --out "$TMP/ab_hw.txt"
    json_samples "$TMP/ab.json" >> "$TMP/ab_hw_samples.txt"
    "$HW" run --sampler signal -o "$TMP/ab.json" --format json -- \
        "$TMP/sample_ab" --rounds "$AB_ROUNDS" --iters "$AB_ITERS" --out "$TMP/ab_sig.txt"
    json_samples "$TMP/ab.json" >> "$TMP/ab_sig_samples.txt"
done
AB_NOISE=$(field "$TMP/ab_plain.txt" diff_med_ns | median)
# per_event FILE COUNTS: median over runs of (per-round median on - off, minus the noise) / events per round, µs
per_event() { paste -d' ' <(field "$1" diff_med_ns) "$2" |
    awk -v z="$AB_NOISE" -v r="$AB_ROUNDS" '{ if ($2 > 0) printf "%.4f\n", ($1 - z) / ($2 / r) / 1e3 }' | median; }
AB_HW=$(per_event "$TMP/ab_hw.txt" "$TMP/ab_hw_samples.txt")
AB_SIG=$(per_event "$TMP/ab_sig.txt" "$TMP/ab_sig_samples.txt")
AB_FLOOR=$(per_event "$TMP/ab_floor.txt" <(field "$TMP/ab_floor.txt" signals))
AB_PERF=$(per_event "$TMP/ab_perf.txt" <(field "$TMP/ab_perf.txt" signals))
printf '    plain on - off per round (the noise, ms):   %s\n' "$(field "$TMP/ab_plain.txt" diff_med_ns | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 / 1e6 }')"
printf '    signal floor, per signal (µs):              %s   (%s signals a run)\n' "$(fmt 2 "$AB_FLOOR")" "$(field "$TMP/ab_floor.txt" signals | tr '\n' ' ')"
printf '    kernel sampler floor, per sample (µs):      %s   (a perf_event task clock on the thread, 8 KiB of stack, no hangwatch)\n' "$(fmt 2 "$AB_PERF")"
printf '    hangwatch (kernel sampler), per sample (µs): %s   (%s samples a run)\n' "$(fmt 2 "$AB_HW")" "$(tr '\n' ' ' < "$TMP/ab_hw_samples.txt")"
printf '    hangwatch --sampler signal, per sample (µs): %s   (%s samples a run)\n' "$(fmt 2 "$AB_SIG")" "$(tr '\n' ' ' < "$TMP/ab_sig_samples.txt")"
RESULT[d_floor]=$AB_FLOOR
RESULT[d_thread]=$AB_HW
RESULT[d_thread_signal]=$AB_SIG
RESULT[d_perf_floor]=$AB_PERF
RESULT[d_thread_runs]=$D_THREAD_CPU
# Below 0.5 µs the floor is noise, and no ratio is given.
RESULT[d_ratio]=$(awk -v t="$AB_HW" -v f="$AB_FLOOR" 'BEGIN { if (f > 0.5) printf "%.6f", t / f; else print "n/a" }')
RESULT[d_ratio_signal]=$(awk -v t="$AB_SIG" -v f="$AB_FLOOR" 'BEGIN { if (f > 0.5) printf "%.6f", t / f; else print "n/a" }')
printf '  sampled thread / bare signal floor: %s (target ≤ 1.5); with --sampler signal: %s\n' "${RESULT[d_ratio]}" "${RESULT[d_ratio_signal]}"
printf '  the hangwatch process during the hang (reader, unwinder): %s%% of one core\n' "$(fmt 3 "$D_READER")"
section_end d
echo

# ---- (e) symbolicate and render 10,000 samples -------------------------------

hr
echo "(e) Time to symbolicate and render a report of ≥ 10,000 samples (one ${E_SECONDS} s hang, 35 frames, 16 stack shapes)"
hr
section_start
E_ITERS=$(awk -v n="$ITERS" -v s="$E_SECONDS" 'BEGIN { printf "%.0f", n * s / 2 }')
E_CMD=("$RUNSTAT" "$TMP/e_rs.txt" -- "$HW" run -o "$TMP/e_report.txt" --
       "$CPU_HANG" --iters "$E_ITERS" --depth 30 --variants --out "$TMP/e.txt")
# Diagnostic: count the rt_sigprocmask syscalls of the run (libunwind's cache lock
# makes two per lock; the target makes almost none). Skipped when the tracepoint
# is not available (not root, no tracefs).
SIGMASK=""
if perf stat -x, -o "$TMP/e_perf.txt" -e syscalls:sys_enter_rt_sigprocmask -- true >/dev/null 2>&1; then
    perf stat -x, -o "$TMP/e_perf.txt" -e syscalls:sys_enter_rt_sigprocmask -- "${E_CMD[@]}"
    SIGMASK=$(awk -F, '/rt_sigprocmask/ { print $1 }' "$TMP/e_perf.txt")
else
    "${E_CMD[@]}"
fi
E_SAMPLES=$(text_samples "$TMP/e_report.txt")
E_DIV=$(( E_SAMPLES > 0 ? E_SAMPLES : 1 ))
E_EXIT=$(field "$TMP/e.txt" exit_ns)
E_END=$(field "$TMP/e_rs.txt" end_ns)
E_TOTAL=$(field "$TMP/e_rs.txt" wall_ns)
E_WORK=$(field "$TMP/e.txt" work_ns)
RESULT[e]=$(calc "($E_END - $E_EXIT) / 1e9")
printf '  hang (program wall time of the work): %s s, samples in the report: %s%s\n' "$(fmt 2 "$(calc "$E_WORK / 1e9")")" \
    "$E_SAMPLES" "$( ((E_SAMPLES < 10000)) && echo "  (fewer than 10,000: raise BENCH_E_SECONDS)" || true)"
printf '  hangwatch run end to end: %s s; report size: %s lines\n' "$(fmt 2 "$(calc "$E_TOTAL / 1e9")")" "$(wc -l < "$TMP/e_report.txt")"
printf '  after the program exited (its last CLOCK_MONOTONIC stamp -> hangwatch reaped): %s ms\n' "$(fmt 1 "$(calc "${RESULT[e]} * 1000")")"
echo "  (measured from outside: the CLI has no timer for this phase; it includes the CLI noticing the"
echo "   exit (a pidfd wakes it), the last drain, symbolication, call trees, rendering and writing)"
if [[ -n "$SIGMASK" && "$SIGMASK" =~ ^[0-9]+$ ]]; then
    printf '  diagnostic for (d): %s rt_sigprocmask syscalls in the run = %s per sample\n' "$SIGMASK" \
        "$(fmt 1 "$(calc "$SIGMASK / $E_DIV")")"
fi
section_end e
echo

# ---- (i) idle event-loop threads watched by name -----------------------------

hr
echo "(i) Idle event-loop threads (each epoll_wait on its own 100 ms timerfd, the timers 5 ms apart in all) over 4 s,"
echo "    watched with --thread 'loop-*'  ($IDLE_RUNS runs each)"
hr
section_start
I_COUNTS=(1 8 64)
for ((i = 0; i < IDLE_RUNS; i++)); do
    for n in "${I_COUNTS[@]}"; do
        "$TMP/idle_loop" --ms 4000 --threads "$n" --spread-ms 5 --out "$TMP/i${n}_plain.txt"
        "$HW" run --thread 'loop-*' -o /dev/null -- "$TMP/idle_loop" --ms 4000 --threads "$n" --spread-ms 5 --out "$TMP/i${n}_hw.txt"
    done
    # 64 loops that wake at unrelated times (timers spread over the whole 100 ms)
    "$TMP/idle_loop" --ms 4000 --threads 64 --spread-ms 100 --out "$TMP/iu_plain.txt"
    "$HW" run --thread 'loop-*' -o /dev/null -- "$TMP/idle_loop" --ms 4000 --threads 64 --spread-ms 100 --out "$TMP/iu_hw.txt"
done
# The row: what hangwatch adds once every loop runs (from 1 s in, so the threads' start-up is not
# counted as idle cost): the watchdog thread's own CPU, plus the heartbeat's cost per iteration
# from (c) times the iterations. The difference between two sets of runs ("runs") is printed too;
# with 64 loops the plain program alone uses over 1 % of a core, and that difference moves by
# ±0.2 % from run to run.
printf '  %-8s %-27s %-27s %9s %9s %8s\n' threads "plain CPU per run (ms)" "hangwatch CPU per run (ms)" "runs" "extra" "wakeups"
for n in "${I_COUNTS[@]}"; do
    ip=$(field "$TMP/i${n}_plain.txt" proc_cpu_ns | median); ih=$(field "$TMP/i${n}_hw.txt" proc_cpu_ns | median)
    iw=$(field "$TMP/i${n}_plain.txt" wall_ns | median)
    RESULT[i${n}_runs]=$(calc "($ih - $ip) / $iw * 100")
    RESULT[i$n]=$(paste -d' ' <(field "$TMP/i${n}_hw.txt" steady_watchdog_ns) <(field "$TMP/i${n}_hw.txt" steady_ns) \
        <(field "$TMP/i${n}_hw.txt" ticks) <(field "$TMP/i${n}_hw.txt" wall_ns) |
        awk -v beat="${RESULT[c_epoll]}" 'BEGIN { if (beat < 0) beat = 0 } { if ($2 > 0) printf "%.6f\n", ($1 + $3 / $4 * $2 * beat) / $2 * 100 }' | median)
    printf '  %-8s %-27s %-27s %8s%% %8s%% %8s\n' "$((n + 1))" "$(list_ms "$TMP/i${n}_plain.txt" proc_cpu_ns)" \
        "$(list_ms "$TMP/i${n}_hw.txt" proc_cpu_ns)" "$(fmt 3 "${RESULT[i${n}_runs]}")" "$(fmt 3 "${RESULT[i$n]}")" \
        "$(field "$TMP/i${n}_hw.txt" watchdog_switches | median)"
done
iup=$(field "$TMP/iu_plain.txt" proc_cpu_ns | median); iuh=$(field "$TMP/iu_hw.txt" proc_cpu_ns | median)
RESULT[iu]=$(calc "($iuh - $iup) / $(field "$TMP/iu_plain.txt" wall_ns | median) * 100")
RESULT[iu_wd]=$(paste -d' ' <(field "$TMP/iu_hw.txt" steady_watchdog_ns) <(field "$TMP/iu_hw.txt" steady_ns) |
    awk '{ if ($2 > 0) printf "%.6f\n", $1 / $2 * 100 }' | median)
printf '  %-8s %-27s %-27s %8s%% %8s%% %8s\n' "65 (u)" "$(list_ms "$TMP/iu_plain.txt" proc_cpu_ns)" \
    "$(list_ms "$TMP/iu_hw.txt" proc_cpu_ns)" "$(fmt 3 "${RESULT[iu]}")" "$(fmt 3 "${RESULT[iu_wd]}")" \
    "$(field "$TMP/iu_hw.txt" watchdog_switches | median)"
echo "  (threads: the loop threads plus the unwatched main loop; (u): the 64 timers spread over the whole"
echo "   100 ms, loops that wake at unrelated times; runs: the difference of the two sets of runs' CPU;"
echo "   extra: the watchdog thread's CPU from 1 s in, plus (c)'s heartbeat cost per loop iteration;"
echo "   both % of one core; wakeups: the watchdog's, per run)"
section_end i
echo

# ---- summary ------------------------------------------------------------------

hr
echo "Summary"
hr
printf '  %-44s %12s %9s %8s  %s\n' measure result target goal verdict
# row LABEL RESULT TARGET GOAL VALUE TARGET_NUM GOAL_NUM SECTION: the verdict gets a warning
# when other processes used more than 10% of the CPUs during SECTION.
noisy() { awk -v l="${LOAD[$1]:-0}" 'BEGIN { if (l > 10) printf " (noisy: other load %.0f%%)", l }'; }
row() { printf '  %-44s %12s %9s %8s  %s%s\n' "$1" "$2" "$3" "$4" "$(verdict "$5" "$6" "$7")" "$(noisy "$8")"; }
A_GOAL=$(calc "${RESULT[a_perf]} / 2")
row "(a) 2 s CPU hang slowdown, hangwatch" "$(fmt 2 "${RESULT[a]}")%" "≤ 1%" "≤ $(fmt 2 "$A_GOAL")%" "${RESULT[a]}" 1 "$A_GOAL" a
printf '  %-44s %12s %9s %8s  %s\n' "    same, cpu-based" "$(fmt 2 "${RESULT[a_cpu]}")%" "" "" "(info)"
printf '  %-44s %12s %9s %8s  %s\n' "    same, --sampler signal (fallback, wall)" "$(fmt 2 "${RESULT[a_signal]}")%" "" "" "(info)"
printf '  %-44s %12s %9s %8s  %s\n' "    perf record --call-graph dwarf (wall)" "$(fmt 2 "${RESULT[a_perf]}")%" "" "" "(reference; goal: half of it)"
printf '  %-44s %12s %9s %8s  %s\n' "    perf record --call-graph dwarf (cpu)" "$(fmt 2 "${RESULT[a_perf_cpu]}")%" "" "" "(reference)"
# The difference of two runs is noisier than the watchdog thread's own CPU, which is a floor of the
# extra: the row takes the larger of the two.
B10_ROW=$(awk -v a="${RESULT[b10]}" -v b="${RESULT[b10_wd]}" 'BEGIN { printf "%.6f", (a > b ? a : b) }')
row "(b) idle loop, 10 ms timer: extra CPU" "$(fmt 3 "$B10_ROW")%" "≤ 0.1%" "≤ 0.05%" "$B10_ROW" 0.1 0.05 b
printf '  %-44s %12s %9s %8s  %s\n' "    program CPU, hangwatch - plain" "$(fmt 3 "${RESULT[b10]}")%" "" "" "(info)"
printf '  %-44s %12s %9s %8s  %s\n' "    the watchdog thread alone" "$(fmt 3 "${RESULT[b10_wd]}")%" "" "" "(info)"
printf '  %-44s %12s %9s %8s  %s\n' "    same, 100 ms timer" "$(fmt 3 "${RESULT[b]}")%" "" "" "(info)"
printf '  %-44s %12s %9s %8s  %s\n' "    the hangwatch process, steady" "$(fmt 4 "${RESULT[b_cli_steady]}")%" "" "" "(info: not in the program)"
printf '  %-44s %12s %9s %8s  %s\n' "    per wake-up: the watchdog's / a bare one" \
    "$(fmt 1 "${RESULT[b10_per_wake]}") µs" "" "" "($(fmt 1 "${RESULT[wake_floor]}") µs, no hangwatch)"
row "(c) heartbeat per iteration, epoll_wait" "$(fmt 1 "${RESULT[c_epoll]}") ns" "≤ 30 ns" "≤ 20 ns" "${RESULT[c_epoll]}" 30 20 c
printf '  %-44s %12s %9s %8s  %s\n' "    same, poll" "$(fmt 1 "${RESULT[c_poll]}") ns" "≤ 30 ns" "≤ 20 ns" "$(verdict "${RESULT[c_poll]}" 30 20)$(noisy c)"
printf '  %-44s %12s %9s %8s  %s\n' "    epoll_wait, separate runs (before 12-04)" "$(fmt 1 "${RESULT[c_epoll_unpaired]}") ns" "" "" "(spread 60-90 ns)"
printf '  %-44s %12s %9s %8s  %s\n' "    before: epoll_wait, --heartbeat-clock vdso" "$(fmt 1 "${RESULT[c_epoll_vdso]}") ns" "" "" "(same run)"
printf '  %-44s %12s %9s %8s  %s\n' "    epoll_wait vs single-threaded plain" "$(fmt 1 "${RESULT[c_epoll_raw]}") ns" "" "" "(info)"
printf '  %-44s %12s %9s %8s  %s\n' "    floor: 2 × rdtsc" "$(fmt 1 "$(calc "2 * ${RESULT[c_tsc]}")") ns" "" "" "(no hangwatch)"
printf '  %-44s %12s %9s %8s  %s\n' "    floor: 2 × clock_gettime" "$(fmt 1 "$(calc "2 * ${RESULT[c_clock]}")") ns" "" "" "(no hangwatch)"
row "(d) per sample, sampled thread / signal floor" "$([[ ${RESULT[d_ratio]} == n/a ]] && echo n/a || echo "$(fmt 2 "${RESULT[d_ratio]}")×")" "≤ 1.5×" "≤ 1×" "${RESULT[d_ratio]}" 1.5 1 d
printf '  %-44s %12s %9s %8s  %s\n' "    sampled thread, kernel sampler (paired)" "$(fmt 2 "${RESULT[d_thread]}") µs" "" "" "(info)"
printf '  %-44s %12s %9s %8s  %s\n' "    same, --sampler signal: ratio" "$(fmt 2 "${RESULT[d_ratio_signal]}")×" "" "" "($(fmt 2 "${RESULT[d_thread_signal]}") µs)"
printf '  %-44s %12s %9s %8s  %s\n' "    floor: bare signal delivery (paired)" "$(fmt 2 "${RESULT[d_floor]}") µs" "" "" "(no hangwatch)"
printf '  %-44s %12s %9s %8s  %s\n' "    floor: bare kernel sampler (paired)" "$(fmt 2 "${RESULT[d_perf_floor]}") µs" "" "" "(no hangwatch)"
printf '  %-44s %12s %9s %8s  %s\n' "    sampled thread, two processes' CPU" "$(fmt 2 "${RESULT[d_thread_runs]}") µs" "" "" "(info: the older, noisier measure)"
row "(d) per sample, hangwatch process (unwind…)" "$(fmt 2 "${RESULT[d_cli]}") µs" "≤ 5 µs" "≤ 2 µs" "${RESULT[d_cli]}" 5 2 d
if [[ -n "$SIGMASK" && "$SIGMASK" =~ ^[0-9]+$ ]]; then
    # The run's own few calls (start-up, exit) are not per sample: judged at one decimal.
    row "    rt_sigprocmask syscalls per sample" "$(fmt 1 "$(calc "$SIGMASK / $E_DIV")")" "0" "" "$(fmt 1 "$(calc "$SIGMASK / $E_DIV")")" 0 "" e
fi
printf '  %-44s %12s %9s %8s  %s\n' "    all-in, with the watchdog thread" "$(fmt 2 "${RESULT[d_all]}") µs" "" "" "(info)"
row "reader CPU during a 1 kHz hang" "$(fmt 3 "${RESULT[reader]}")%" "≤ 1%" "≤ 0.5%" "${RESULT[reader]}" 1 0.5 d
row "(e) report of $E_SAMPLES samples after exit" "$(fmt 3 "${RESULT[e]}") s" "≤ 1 s" "" "${RESULT[e]}" 1 "" e
row "(i) 64 idle loop threads, extra CPU" "$(fmt 3 "${RESULT[i64]}")%" "≤ 0.1%" "" "${RESULT[i64]}" 0.1 "" i
printf '  %-44s %12s %9s %8s  %s\n' "    same, 1 and 8 threads" "$(fmt 3 "${RESULT[i1]}")%, $(fmt 3 "${RESULT[i8]}")%" "" "" "(flat in thread count?)"
printf '  %-44s %12s %9s %8s  %s\n' "    64 loops, difference of two sets of runs" "$(fmt 3 "${RESULT[i64_runs]}")%" "" "" "(info: noisy)"
printf '  %-44s %12s %9s %8s  %s\n' "    64 loops waking at unrelated times" "$(fmt 3 "${RESULT[iu_wd]}")%" "" "" "(info: the watchdog)"
printf '  other processes\x27 load per section (%% of %s CPUs): a %s, b %s, c %s, d %s, e %s, i %s\n' "$NCPU" \
    "${LOAD[a]}" "${LOAD[b]}" "${LOAD[c]}" "${LOAD[d]}" "${LOAD[e]}" "${LOAD[i]}"
