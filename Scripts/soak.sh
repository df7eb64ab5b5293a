#!/bin/sh
# Soak: run Tests/safety/soak.c under `hangwatch run` at 1 kHz sampling for
# SECONDS (default 600) while it churns threads, fork/exec, dlopen/dlclose,
# malloc and signals, with a main loop that has real hangs. Then print:
#
#   host crashes       1 when the program did not exit 0 (its status is shown)
#   unexpected EINTR   EINTRs the program's main thread saw (it gets no signal of its own)
#   phantom hangs      report hangs that match none of the program's own measured work
#                      (within 10 ms, plus the CPU time the VM stole around that work:
#                      steal in /proc/stat, read every 50 ms beside the run)
#   lost hangs         measured hangs (>= 110 ms) missing from the report
#   reader peak RSS    VmHWM of the hangwatch process
#
# Usage: Scripts/soak.sh [SECONDS]      (needs `make build` first)
# Environment: HANGWATCH=path/to/hangwatch (default .build/release/hangwatch),
#              SOAK_DIR=directory to keep the report, measure file and output in.
# Exit status: 0 when crashes, EINTR, phantom and lost hangs are all 0.
set -eu

seconds=${1:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
hangwatch=${HANGWATCH:-$root/.build/release/hangwatch}
work=${SOAK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/hangwatch-soak.XXXXXX")}
mkdir -p "$work"

[ -x "$hangwatch" ] || { echo "soak: no hangwatch at $hangwatch (run make build)" >&2; exit 2; }

# A tiny plugin for the dlopen/dlclose churn.
cat > "$work/soak_plugin.c" <<'EOF'
long plugin_work(long n)
{
    long h = 0;
    for (long i = 0; i < n; i++)
        h = h * 31 + i;
    return h;
}
EOF
cc -O2 -g -shared -fPIC -o "$work/libsoakplugin.so" "$work/soak_plugin.c"
cc -O2 -g -Wall -o "$work/soak" "$root/Tests/safety/soak.c" -lpthread -ldl

rm -f "$work/measure.txt" "$work/report.json"
echo "soak: ${seconds} s under $hangwatch, files in $work" >&2
"$hangwatch" run --sample-hz 1000 --thread main --thread 'soak-w-*' -o "$work/report.json" --format json -- \
    "$work/soak" "$seconds" --plugin "$work/libsoakplugin.so" --measure "$work/measure.txt" \
    > "$work/stdout.txt" 2> "$work/stderr.txt" &
pid=$!
# The VM's steal per CPU beside the run, on the clock the measure file uses
# (CLOCK_MONOTONIC): a hang's length is off by at most the time stolen
# around it, as the test suite's StolenTime allows for a whole run.
python3 - "$work/steal.txt" "$pid" <<'EOF' &
import os, sys, time
out, pid = open(sys.argv[1], "w"), int(sys.argv[2])
while os.path.exists(f"/proc/{pid}"):
    with open("/proc/stat") as stat:
        steal = [line.split()[8] for line in stat if line.startswith("cpu") and line[3:4].isdigit()]
    out.write(f"{time.monotonic_ns()} {' '.join(steal)}\n")
    out.flush()
    time.sleep(0.05)
EOF
sampler=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    if [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ]; then peak=$hwm; fi
    sleep 0.5
done
status=0
wait "$pid" || status=$?
wait "$sampler" 2>/dev/null || true

python3 - "$work" "$status" "$peak" <<'EOF'
import json, os, sys

work, status, peak_kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = open(f"{work}/stdout.txt").read().strip()
eintr = None
for word in out.replace(",", "").split("unexpected EINTR ")[1:2]:
    eintr = int(word.split()[0])
steal = []  # (monotonic ns, [steal ticks per CPU])
try:
    for line in open(f"{work}/steal.txt"):
        f = line.split()
        if len(f) >= 2:
            steal.append((int(f[0]), [int(x) for x in f[1:]]))
except (OSError, ValueError):
    steal = []
tick_ms = 1000 / os.sysconf("SC_CLK_TCK")

def stolen_ms(start_ns, end_ns):
    """The most one CPU lost between the last reading before start_ns and the
    first after end_ns (readings are whole ticks: any loss counts a tick or more)."""
    before = [r for t, r in steal if t <= start_ns]
    after = [r for t, r in steal if t >= end_ns]
    if not before or not after:
        return 0.0
    return max((b - a for a, b in zip(before[-1], after[0])), default=0) * tick_ms

measured = []
for line in open(f"{work}/measure.txt"):
    f = line.split()
    if len(f) == 4 and f[0] in ("soak_hang", "soak_small", "soak_shutdown"):
        # The loop's heartbeat ends the hang a little after the work: 50 ms of room.
        measured.append((f[0], float(f[3]), stolen_ms(int(f[1]), int(f[2]) + 50_000_000)))
try:
    report = json.load(open(f"{work}/report.json"))
    hangs = report["hangs"]
except (OSError, ValueError, KeyError):
    report, hangs = None, []

# Each report hang must be a piece of the main thread's measured work (within 10 ms).
left = [m for m in measured]
phantoms = []
for h in hangs:
    best = None
    if h["thread"]["role"] == "main-thread":
        candidates = [i for i, m in enumerate(left) if abs(m[1] - h["durationMs"]) <= 10 + m[2]]
        if candidates:
            best = min(candidates, key=lambda i: abs(left[i][1] - h["durationMs"]))
    if best is None:
        phantoms.append(h)
    else:
        left.pop(best)
lost = [m for m in left if m[1] >= 110]

crashes = 0 if status == 0 and report is not None else 1
print(f"files: {work}")
print(f"program: {out or '(no output)'}")
print(f"host crashes: {crashes} (exit status {status})")
print(f"unexpected EINTR: {eintr if eintr is not None else 'unknown'}")
print(f"phantom hangs: {len(phantoms)}")
for h in phantoms[:10]:
    print(f"  phantom: {h['thread']['name']} ({h['thread']['tid']}) {h['durationMs']:.1f} ms at +{h['startMs']:.0f} ms"
          f"{' in progress' if h['inProgress'] else ''}")
print(f"lost hangs: {len(lost)} of {sum(1 for m in measured if m[1] >= 110)}")
if steal:
    worst = max((b - a for a, b in zip(steal[0][1], steal[-1][1])), default=0) * tick_ms
    print(f"VM steal: {worst:.0f} ms on the worst CPU over the run; "
          f"{sum(1 for m in measured if m[2] > 0)} measured pieces allowed for it")
print(f"reader peak RSS: {peak_kb / 1024:.1f} MiB")
if report is not None:
    print(f"report: {len(hangs)} hangs, notes: {report.get('notes', [])[:5]}")
ok = crashes == 0 and eintr == 0 and not phantoms and not lost
sys.exit(0 if ok else 1)
EOF
