#!/usr/bin/env python3
"""Decodes a gzipped pprof profile with the protobuf runtime and checks it.

Usage: validate_pprof.py FILE.pb.gz

profile.proto (beside this script) is compiled with grpc_tools.protoc into a
temporary folder, the file is gunzipped and parsed, and the profile is held to
pprof's rules: string_table starts with "", every string index is in range,
ids are nonzero and unique, every location, function and mapping a profile
refers to exists, every sample has one value per sample type. On success
prints a JSON summary on stdout (stacks resolved to names, root first, counts
per hang label); on failure prints the reasons on stderr and exits 1.
"""
import gzip
import importlib
import json
import os
import sys
import tempfile

from grpc_tools import protoc


def load_profile_module():
    """Compiles profile.proto into a temporary folder and imports the result."""
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory(prefix="hangwatch-proto-") as out:
        code = protoc.main(["protoc", "-I" + here, "--python_out=" + out, os.path.join(here, "profile.proto")])
        if code != 0:
            sys.exit("protoc could not compile profile.proto (exit %d)" % code)
        sys.path.insert(0, out)
        sys.dont_write_bytecode = True  # nothing left behind once the folder goes
        try:
            return importlib.import_module("profile_pb2")
        finally:
            sys.path.remove(out)


class Checker:
    def __init__(self, profile):
        self.p = profile
        self.problems = []

    def fail(self, message):
        self.problems.append(message)

    def string(self, index, where):
        if not 0 <= index < len(self.p.string_table):
            self.fail("%s: string index %d out of range (%d strings)" % (where, index, len(self.p.string_table)))
            return "<bad>"
        return self.p.string_table[index]

    def unique_ids(self, items, kind):
        ids = {}
        for item in items:
            if item.id == 0:
                self.fail("%s with id 0" % kind)
            if item.id in ids:
                self.fail("duplicate %s id %d" % (kind, item.id))
            ids[item.id] = item
        return ids

    def run(self):
        p = self.p
        if not p.string_table or p.string_table[0] != "":
            self.fail('string_table[0] must be ""')
        mappings = self.unique_ids(p.mapping, "mapping")
        functions = self.unique_ids(p.function, "function")
        locations = self.unique_ids(p.location, "location")
        for m in p.mapping:
            self.string(m.filename, "mapping %d filename" % m.id)
        for f in p.function:
            self.string(f.name, "function %d name" % f.id)
            self.string(f.system_name, "function %d system_name" % f.id)
        for loc in p.location:
            if loc.mapping_id and loc.mapping_id not in mappings:
                self.fail("location %d: no mapping %d" % (loc.id, loc.mapping_id))
            if not loc.line:
                self.fail("location %d has no line, so no function name" % loc.id)
            for line in loc.line:
                if line.function_id not in functions:
                    self.fail("location %d: no function %d" % (loc.id, line.function_id))
        sample_types = [[self.string(t.type, "sample_type"), self.string(t.unit, "sample_type")]
                        for t in p.sample_type]
        stacks = []
        for number, s in enumerate(p.sample):
            if len(s.value) != len(p.sample_type):
                self.fail("sample %d has %d values for %d sample types" % (number, len(s.value), len(p.sample_type)))
            names = []
            for loc_id in s.location_id:
                loc = locations.get(loc_id)
                if loc is None:
                    self.fail("sample %d: no location %d" % (number, loc_id))
                    continue
                for line in loc.line:
                    function = functions.get(line.function_id)
                    if function is not None:
                        names.append(self.string(function.name, "function"))
            labels = {}
            for label in s.label:
                key = self.string(label.key, "label key")
                labels[key] = self.string(label.str, "label str") if label.str else label.num
            stacks.append({"frames": list(reversed(names)), "values": list(s.value), "labels": labels})
        return {
            "sampleTypes": sample_types,
            "periodType": [self.string(p.period_type.type, "period_type"), self.string(p.period_type.unit, "period_type")],
            "period": p.period,
            "timeNanos": p.time_nanos,
            "durationNanos": p.duration_nanos,
            "defaultSampleType": self.string(p.default_sample_type, "default_sample_type"),
            "comments": [self.string(c, "comment") for c in p.comment],
            "mappings": [self.string(m.filename, "mapping") for m in p.mapping],
            "mappingsHaveFunctions": all(m.has_functions for m in p.mapping),
            "locationCount": len(p.location),
            "functionCount": len(p.function),
            "stringCount": len(p.string_table),
            "stacks": stacks,
        }


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: validate_pprof.py FILE")
    module = load_profile_module()
    with open(sys.argv[1], "rb") as f:
        packed = f.read()
    try:
        raw = gzip.decompress(packed)
    except OSError as error:
        sys.stderr.write("not a gzip file: %s\n" % error)
        sys.exit(1)
    profile = module.Profile()
    try:
        profile.ParseFromString(raw)
    except Exception as error:  # DecodeError and friends: the bytes are not a Profile
        sys.stderr.write("not a profile.proto message: %s\n" % error)
        sys.exit(1)
    checker = Checker(profile)
    result = checker.run()
    if checker.problems:
        sys.stderr.write("invalid pprof profile:\n  " + "\n  ".join(checker.problems[:20]) + "\n")
        sys.exit(1)
    result["compressedSize"] = len(packed)
    result["rawSize"] = len(raw)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
