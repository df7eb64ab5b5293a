#!/usr/bin/env python3
"""Checks that the Swift stages import only downward, and which C modules each imports.

Usage: Scripts/check-stage-imports.py

The stages are the Swift targets under Sources/, in the order Package.swift
lists them (model -> symbols -> capture -> analysis -> render -> live ->
session -> library -> CLI). SwiftPM lets a target import any module of its
dependencies' dependencies, so a stage could reach a C module it does not
list; this reads every `import` line and reports:
  - an import of a stage listed after the importer (an upward import);
  - an import of a C module (C...) by a stage in NO_C (analysis and render).
Exit status 1 when either is found.
"""
import os
import re
import sys

NO_C = {"HangWatchAnalysis", "HangWatchRender"}


def stages():
    text = open("Package.swift", encoding="utf-8").read()
    names = re.findall(r'\.(?:target|executableTarget)\(name: "([A-Za-z]+)"', text)
    return [n for n in names if os.path.isdir(os.path.join("Sources", n)) and not n.startswith("C")]


def main():
    order = stages()
    rank = {name: i for i, name in enumerate(order)}
    problems = []
    for name in order:
        c_modules = set()
        for folder, _, files in os.walk(os.path.join("Sources", name)):
            for file in files:
                if not file.endswith(".swift"):
                    continue
                path = os.path.join(folder, file)
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = re.match(r"\s*(?:@\w+\s+)?import\s+(\w+)", line)
                    if not m:
                        continue
                    module = m.group(1)
                    if module in rank and rank[module] >= rank[name]:
                        problems.append(f"{path}:{number}: {name} imports {module}, which is not below it")
                    if re.match(r"C[A-Z]", module):
                        c_modules.add(module)
                        if name in NO_C:
                            problems.append(f"{path}:{number}: {name} imports the C module {module}")
        print(f"{name}: C modules {', '.join(sorted(c_modules)) or 'none'}")
    for problem in problems:
        print(problem)
    print("stages import only downward" if not any("not below" in p for p in problems) else "UPWARD IMPORTS FOUND")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
