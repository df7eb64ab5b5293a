#!/usr/bin/env python3
"""Checks a Trace Event Format file (JSON object form) as trace viewers read it.

Usage: validate_chrome_trace.py FILE.trace.json

Checks the top level (traceEvents array, displayTimeUnit "ms" or "ns"), the
fields each event phase needs (complete "X": name, ts, dur >= 0, pid, tid;
metadata "M": process_name/thread_name with args.name), and that complete
events on one thread nest properly: any two either do not overlap or one lies
entirely inside the other. On success prints a JSON summary on stdout; on
failure prints the reasons on stderr and exits 1.
"""
import json
import sys

NUMBER = (int, float)


def field_problems(index, event):
    where = "traceEvents[%d]" % index
    if not isinstance(event, dict):
        yield "%s is not an object" % where
        return
    phase = event.get("ph")
    for key in ("name", "ph"):
        if not isinstance(event.get(key), str):
            yield "%s: %s must be a string" % (where, key)
    for key in ("pid", "tid"):
        if not isinstance(event.get(key), int) or isinstance(event.get(key), bool):
            yield "%s: %s must be an integer" % (where, key)
    if "args" in event and not isinstance(event["args"], dict):
        yield "%s: args must be an object" % where
    if phase == "X":
        for key in ("ts", "dur"):
            if not isinstance(event.get(key), NUMBER) or isinstance(event.get(key), bool):
                yield "%s: complete event needs a numeric %s" % (where, key)
        if isinstance(event.get("dur"), NUMBER) and event["dur"] < 0:
            yield "%s: negative dur" % where
    elif phase == "M":
        if event.get("name") not in ("process_name", "thread_name", "process_sort_index", "thread_sort_index",
                                     "process_labels"):
            yield "%s: unknown metadata event %r" % (where, event.get("name"))
        elif event["name"].endswith("_name") and not isinstance(event.get("args", {}).get("name"), str):
            yield "%s: %s needs args.name" % (where, event["name"])
    else:
        yield "%s: hangwatch writes only X and M events, found %r" % (where, phase)


def nesting_problems(events):
    """Sorts each thread's slices by start, longer first, and walks them with a stack of open slices."""
    by_thread = {}
    for index, event in enumerate(events):
        if event.get("ph") == "X":
            by_thread.setdefault((event["pid"], event["tid"]), []).append((event["ts"], -event["dur"], index, event))
    depth = {}
    for thread, slices in by_thread.items():
        slices.sort(key=lambda item: item[:3])
        open_slices = []
        for ts, _, index, event in slices:
            end = ts + event["dur"]
            while open_slices and ts >= open_slices[-1][0]:
                open_slices.pop()
            if open_slices and end > open_slices[-1][0]:
                parent = events[open_slices[-1][1]]
                yield ("traceEvents[%d] %r [%r, %r] overlaps the end of traceEvents[%d] %r (ends %r) on thread %r"
                       % (index, event["name"], ts, end, open_slices[-1][1], parent["name"], open_slices[-1][0], thread))
            open_slices.append((end, index))
            depth[index] = len(open_slices)
    yield depth


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: validate_chrome_trace.py FILE")
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    problems = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        problems.append("top level must be an object with a traceEvents array")
        events = []
    else:
        events = doc["traceEvents"]
        if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
            problems.append("displayTimeUnit must be ms or ns")
    for index, event in enumerate(events):
        problems.extend(field_problems(index, event))
    depth = {}
    if not problems:
        for item in nesting_problems(events):
            if isinstance(item, dict):
                depth = item
            else:
                problems.append(item)
    if problems:
        sys.stderr.write("invalid trace:\n  " + "\n  ".join(problems[:20]) + "\n")
        sys.exit(1)
    slices = [dict(e, depth=depth[i]) for i, e in enumerate(events) if e["ph"] == "X"]
    json.dump({
        "displayTimeUnit": doc.get("displayTimeUnit"),
        "metadata": [{"name": e["name"], "pid": e["pid"], "tid": e["tid"], "value": e["args"]["name"]}
                     for e in events if e["ph"] == "M"],
        "slices": [{"name": s["name"], "cat": s.get("cat", ""), "pid": s["pid"], "tid": s["tid"],
                    "ts": s["ts"], "dur": s["dur"], "depth": s["depth"]} for s in slices],
    }, sys.stdout)


if __name__ == "__main__":
    main()
