#!/usr/bin/env bash
# Installs a built hangwatch under a prefix, or removes it: `make install` and
# `make uninstall` (with DESTDIR prepended), and the tree of `make deb`.
#
#   Scripts/install.sh PREFIX BIN_DIR     install from BIN_DIR (swift build's bin path)
#   Scripts/install.sh --uninstall PREFIX remove what the first form installs
#
# The agent goes to PREFIX/lib/hangwatch/, where bin/hangwatch looks for it
# (../lib/hangwatch/ from the executable: AgentLocator), so the tree works
# wherever it is copied. The man page is written by the binary itself
# (`hangwatch help --man`, from the same text as --help).
set -euo pipefail

files=(bin/hangwatch lib/hangwatch/libhangwatch-agent.so share/man/man1/hangwatch.1
       share/bash-completion/completions/hangwatch share/zsh/site-functions/_hangwatch)

if [[ ${1:-} == --uninstall ]]; then
    prefix=${2:?usage: install.sh --uninstall PREFIX}
    for f in "${files[@]}"; do rm -f "$prefix/$f"; done
    rmdir "$prefix/lib/hangwatch" 2>/dev/null || true
    echo "removed hangwatch from $prefix"
    exit 0
fi

prefix=${1:?usage: install.sh PREFIX BIN_DIR}
bin=${2:?usage: install.sh PREFIX BIN_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
agent=$bin/hangwatch_hangwatch.resources/libhangwatch-agent.so
for f in "$bin/hangwatch" "$agent"; do
    [[ -r $f ]] || { echo "install.sh: $f is missing: build first (swift build -c release)" >&2; exit 1; }
done

install -d "$prefix/bin" "$prefix/lib/hangwatch" "$prefix/share/man/man1" \
    "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions"
install -m 755 "$bin/hangwatch" "$prefix/bin/hangwatch"
install -m 644 "$agent" "$prefix/lib/hangwatch/libhangwatch-agent.so"
"$bin/hangwatch" help --man > "$prefix/share/man/man1/hangwatch.1"
chmod 644 "$prefix/share/man/man1/hangwatch.1"
install -m 644 "$here/completions/hangwatch.bash" "$prefix/share/bash-completion/completions/hangwatch"
install -m 644 "$here/completions/_hangwatch" "$prefix/share/zsh/site-functions/_hangwatch"
echo "installed hangwatch in $prefix"
