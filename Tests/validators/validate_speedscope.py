#!/usr/bin/env python3
"""Checks a speedscope file the way the viewer will read it.

Usage: validate_speedscope.py FILE.speedscope.json

Validates against speedscope_schema.json (beside this script) with jsonschema,
then checks what a schema cannot express: every frame index exists, samples
and weights pair up, weights are not negative, endValue >= startValue.
On success prints a JSON summary on stdout for the calling test; on failure
prints the reasons on stderr and exits 1.
"""
import json
import os
import sys

import jsonschema


def problems_beyond_schema(doc):
    frame_count = len(doc["shared"]["frames"])
    profiles = doc["profiles"]
    if profiles and not doc.get("activeProfileIndex", 0) < len(profiles):
        yield "activeProfileIndex %r is past the last profile" % doc.get("activeProfileIndex")
    for number, profile in enumerate(profiles):
        where = "profiles[%d]" % number
        if profile["endValue"] < profile["startValue"]:
            yield "%s: endValue is before startValue" % where
        if profile["type"] != "sampled":
            continue
        if len(profile["samples"]) != len(profile["weights"]):
            yield "%s: %d samples but %d weights" % (where, len(profile["samples"]), len(profile["weights"]))
        for index, stack in enumerate(profile["samples"]):
            if not stack:
                yield "%s.samples[%d] is an empty stack" % (where, index)
            for frame in stack:
                if frame >= frame_count:
                    yield "%s.samples[%d] refers to frame %d of %d" % (where, index, frame, frame_count)
        for index, weight in enumerate(profile["weights"]):
            if weight < 0:
                yield "%s.weights[%d] is negative" % (where, index)


def summary(doc):
    frames = doc["shared"]["frames"]
    return {
        "frameCount": len(frames),
        "profiles": [
            {
                "name": p["name"],
                "unit": p["unit"],
                "startValue": p["startValue"],
                "endValue": p["endValue"],
                "totalWeight": sum(p.get("weights", [])),
                "stacks": [[frames[i]["name"] for i in stack] for stack in p.get("samples", [])],
            }
            for p in doc["profiles"]
        ],
    }


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: validate_speedscope.py FILE")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "speedscope_schema.json")) as f:
        schema = json.load(f)
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    validator = jsonschema.Draft7Validator(schema)
    errors = ["%s: %s" % ("/".join(map(str, e.absolute_path)) or "(top)", e.message)
              for e in validator.iter_errors(doc)]
    if not errors:
        errors = list(problems_beyond_schema(doc))
    if errors:
        sys.stderr.write("invalid speedscope file:\n  " + "\n  ".join(errors[:20]) + "\n")
        sys.exit(1)
    json.dump(summary(doc), sys.stdout)


if __name__ == "__main__":
    main()
