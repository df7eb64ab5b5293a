#!/usr/bin/env python3
"""Share of public and package declarations in Sources/ that carry a `///` doc comment.

Usage: Scripts/doc-coverage.py [--list] [--level public|package] [ROOT]

A declaration is a line whose first words (after attributes) are `public` or
`package` (with `--level package`, the default: both) followed by one of
func, var, let, init, subscript, struct, class, enum, protocol, typealias,
case, actor, extension or a modifier. It is documented when the nearest
non-blank line above it, skipping attribute lines, is a `///` line or the end
of a `/** */` block. `public extension`/`package extension` lines are not
counted (their members are). Enum cases listed after `case` inside a
documented enum count on their own.
"""
import os
import re
import sys

KEYWORDS = r"(?:func|var|let|init|subscript|struct|class|enum|protocol|typealias|actor|case|static|final|convenience|mutating|nonisolated|lazy|override|indirect|required|weak|unowned|private\(set\)|fileprivate\(set\)|internal\(set\)|package\(set\))"


def declarations(path, levels):
    lines = open(path, encoding="utf-8").read().split("\n")
    pattern = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:" + "|".join(levels) + r")\s+" + KEYWORDS + r"\b")
    for index, line in enumerate(lines):
        if not pattern.match(line) or re.match(r"^\s*(?:public|package)\s+extension\b", line):
            continue
        above = index - 1
        while above >= 0 and re.match(r"^\s*@\w+", lines[above]):
            above -= 1
        documented = above >= 0 and (lines[above].strip().startswith("///") or lines[above].strip().endswith("*/"))
        yield index + 1, line.strip(), documented


def main():
    args = sys.argv[1:]
    listing = "--list" in args
    level = "package"
    if "--level" in args:
        level = args[args.index("--level") + 1]
    rest = [a for i, a in enumerate(args) if not a.startswith("--") and (i == 0 or args[i - 1] != "--level")]
    root = rest[0] if rest else "Sources"
    levels = ["public"] if level == "public" else ["public", "package"]
    total = documented = 0
    missing = []
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(folder, name)
            for number, text, has_doc in declarations(path, levels):
                total += 1
                documented += has_doc
                if not has_doc:
                    missing.append(f"{path}:{number}: {text}")
    if listing:
        print("\n".join(sorted(missing)))
    share = 100.0 * documented / total if total else 100.0
    print(f"{level} declarations in {root}: {documented}/{total} documented ({share:.1f} %)")


if __name__ == "__main__":
    main()
