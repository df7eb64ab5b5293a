#!/usr/bin/env bash
# `make deb`: a Debian package of the installed tree (Scripts/install.sh with
# PREFIX=/usr), built with dpkg-deb. Its Depends are read from the binary and
# the agent by dpkg-shlibdeps, so they are what the files really link (the
# Swift runtime is linked in statically: no toolchain is needed to run it).
#
#   Scripts/make-deb.sh BIN_DIR OUT_DIR   writes OUT_DIR/hangwatch_VERSION_ARCH.deb
set -euo pipefail
bin=${1:?usage: make-deb.sh BIN_DIR OUT_DIR}
out=${2:?usage: make-deb.sh BIN_DIR OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
version=$("$bin/hangwatch" --version | sed -n '1s/^hangwatch //p')
arch=$(dpkg --print-architecture)
name=hangwatch_${version}_${arch}
work=$(mktemp -d "${TMPDIR:-/tmp}/hangwatch-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/$name

"$here/Scripts/install.sh" "$root/usr" "$bin" >/dev/null
gzip -9n "$root/usr/share/man/man1/hangwatch.1"
install -d "$root/usr/share/doc/hangwatch"
"$bin/hangwatch" --version > "$root/usr/share/doc/hangwatch/VERSION"

# dpkg-shlibdeps reads debian/control for the package's name; a minimal one will do.
mkdir -p "$work/debian"
printf 'Source: hangwatch\n\nPackage: hangwatch\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "-e$name/usr/bin/hangwatch" \
          "-e$name/usr/lib/hangwatch/libhangwatch-agent.so" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { echo "make-deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

install -d "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: hangwatch
Version: $version
Architecture: $arch
Maintainer: hangwatch developers <hangwatch@invalid>
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Depends: $depends
Section: devel
Priority: optional
Description: find and explain hangs of a program's main loop on Linux
 hangwatch runs a program with a small C agent preloaded, watches the
 heartbeat of its event loop (RunLoop, epoll/poll, dispatchMain, named
 loop threads) and samples the busy thread during every hang, then reports
 each hang with a call tree. It can also attach to a running process.
CONTROL
mkdir -p "$out"
dpkg-deb --build --root-owner-group "$root" "$out/$name.deb" >/dev/null
echo "$out/$name.deb"
