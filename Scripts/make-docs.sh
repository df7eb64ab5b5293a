#!/bin/sh
# API documentation of the library (HangWatch) and the report model
# (HangWatchModel), made with the docc that ships with the Swift toolchain
# from the packages' public symbol graphs. Output: .build/docs/MODULE/
# (static files: serve the folder with any web server, or open it with
# `docc preview`). `make docs` runs this.
set -eu
cd "$(dirname "$0")/.."
command -v docc >/dev/null || { echo "docc not found: it ships with Swift toolchains 5.6 and later" >&2; exit 1; }
# It also tries the test runner's synthesized modules, which have no symbol graph,
# and then exits non-zero: what counts is that the two graphs below were written.
swift package dump-symbol-graph --minimum-access-level public >.build/docs-symbol-graph.log 2>&1 || true
graph=$(find .build -path '*/symbolgraph/HangWatch.symbols.json' -newer Package.swift | head -n 1)
[ -n "$graph" ] || { cat .build/docs-symbol-graph.log >&2; exit 1; }
graphs=$(dirname "$graph")
version=$(sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/HangWatchModel/Version.swift)
for module in HangWatch HangWatchModel; do
    input=.build/docs-input/$module
    rm -rf "$input" ".build/docs/$module"
    mkdir -p "$input" .build/docs
    cp "$graphs/$module.symbols.json" "$input/"
    docc convert --additional-symbol-graph-dir "$input" --output-path ".build/docs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "hangwatch.$module" \
        --fallback-bundle-version "$version" --transform-for-static-hosting --hosting-base-path "$module"
    echo "docs: .build/docs/$module"
done
