#!/usr/bin/env python3
"""The hangwatch process's memory over a long service run (issue: bounded
reader memory whatever the uptime). See "Reader memory of a long-running
service" in BENCHMARKS.md.

    Bench/service_memory.py [SECONDS] [--varied]       default 600

Runs RunLoopDemo's `service` scenario (one hang a second: three CPU-bound
lengths and one blocked in usleep) under `hangwatch run --events` twice, side
by side in the same minutes:

  rotating  --rotate 1m --keep 3   (closed files leave the reader's memory)
  growing   no --rotate            (every hang's samples kept to the end)

Every 5 s it reads VmRSS of both hangwatch processes from /proc; at the end it
prints RSS at a few points in time, each run's peak (VmHWM, the report
included), and the hangs each run saw. With --varied, each 300 ms hang walks
random call paths eight calls deep, so nearly every sample is a stack never
seen before: the case where keeping everything costs the most. The two runs share the machine's two
cores, which slows the demo's hangs a little but not what the reader keeps.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("HW_BUILD", os.path.join(ROOT, ".build", "release"))


def status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    args = [a for a in sys.argv[1:] if a != "--varied"]
    varied = ["--varied"] if "--varied" in sys.argv[1:] else []
    seconds = int(args[0]) if args else 600
    hangwatch = os.path.join(BUILD, "hangwatch")
    demo = os.path.join(BUILD, "RunLoopDemo")
    if not os.access(hangwatch, os.X_OK):
        sys.exit(f"service_memory: {hangwatch} not found: run 'make build'")
    work = tempfile.mkdtemp(prefix="hangwatch-servicemem.")
    runs = {
        "rotating": ["--rotate", "1m", "--keep", "3"],
        "growing": [],
    }
    procs = {}
    for name, extra in runs.items():
        d = os.path.join(work, name)
        os.mkdir(d)
        procs[name] = subprocess.Popen(
            [hangwatch, "run", "--events", os.path.join(d, "hangs.jsonl"), *extra,
             "--format", "json", "-o", os.path.join(d, "report.json"), "--",
             demo, "--scenario", "service", "--seconds", str(seconds), *varied],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    series = {name: [] for name in runs}
    peaks = {name: 0 for name in runs}
    while any(p.poll() is None for p in procs.values()):
        t = time.monotonic() - start
        for name, p in procs.items():
            rss = status_kb(p.pid, "VmRSS")
            hwm = status_kb(p.pid, "VmHWM")
            if rss is not None:
                series[name].append((t, rss))
            if hwm is not None:
                peaks[name] = max(peaks[name], hwm)
        time.sleep(5)

    def at(name, when):
        points = [rss for t, rss in series[name] if t <= when]
        return points[-1] / 1024 if points else float("nan")

    marks = [m for m in (60, 120, 300, 600, 1200, 3600) if m <= seconds] or [seconds]
    print(f"service demo{' --varied' if varied else ''}, {seconds} s, one hang a second; hangwatch VmRSS (MB) at:")
    print("  %-9s " % "" + " ".join("%7s" % f"{m}s" for m in marks) + "   peak (VmHWM)")
    for name in runs:
        print("  %-9s " % name + " ".join("%7.1f" % at(name, m) for m in marks)
              + "   %.1f MB" % (peaks[name] / 1024))
    for name in runs:
        d = os.path.join(work, name)
        files = sorted(f for f in os.listdir(d) if f.endswith(".jsonl"))
        ended = 0
        for f in files:
            with open(os.path.join(d, f)) as fh:
                ended += sum(1 for line in fh if '"event":"hang"' in line)
        with open(os.path.join(d, "report.json")) as fh:
            report = json.load(fh)
        print(f"  {name}: {len(files)} event files kept, {ended} hang lines in them, "
              f"report at exit: {report['summary']['hangCount']} hangs")
    print(f"  (files in {work})")


if __name__ == "__main__":
    main()
