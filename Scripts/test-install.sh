#!/usr/bin/env bash
# `make test-install` (part of `make test`): the installed hangwatch works
# away from this tree. BIN_DIR holds the --static-swift-stdlib build
# (`make installed-build`).
#   1. Scripts/install.sh into a scratch prefix, the prefix moved elsewhere:
#      the moved copy runs a program and reports (a RunLoop demo's hangs too),
#      with no rpath or library reaching into this tree or the toolchain;
#      uninstall leaves no file behind.
#   2. Scripts/make-deb.sh: the package's Depends are real installed packages,
#      with no Swift toolchain among them; it is installed into a scratch root
#      (dpkg --root when root, else dpkg -x) and runs a program from there.
set -euo pipefail
bin=${1:?usage: test-install.sh BIN_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hangwatch-install-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
failures=0
fail() { echo "test-install: FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "test-install: ok: $*"; }

# A program under an installed hangwatch, from /, with an environment that names
# nothing of this tree: exit 0 and a report on stderr.
check_runs() {
    local hw=$1 what=$2 err
    err=$(cd / && env -i PATH=/usr/bin:/bin "$hw" run -- python3 -c 'import time; time.sleep(0.05)' 2>&1 >/dev/null) \
        || { fail "$what: python3 under hangwatch exited $?: $err"; return; }
    [[ $err == "hangwatch: no hangs"* ]] && pass "$what runs a program and reports" \
        || fail "$what: no report: $err"
}

# No rpath but $ORIGIN, and every library found outside this tree and the toolchain.
check_links() {
    local file=$1 what=$2 runpath libs
    runpath=$(readelf -d "$file" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p; s/.*(RPATH).*\[\(.*\)\]/\1/p')
    [[ -z $runpath || $runpath == '$ORIGIN' ]] && pass "$what: rpath '${runpath}'" || fail "$what: rpath $runpath"
    libs=$(ldd "$file")
    if grep -qE "not found|$here|$toolchain" <<<"$libs"; then fail "$what links into the tree or toolchain: $libs"
    else pass "$what: every library is the system's"; fi
}

# 1. make install, moved.
"$here/Scripts/install.sh" "$scratch/prefix" "$bin" >/dev/null
mv "$scratch/prefix" "$scratch/moved"
hw=$scratch/moved/bin/hangwatch
check_runs "$hw" "installed tree (moved)"
check_links "$hw" "installed hangwatch"
check_links "$scratch/moved/lib/hangwatch/libhangwatch-agent.so" "installed agent"
demo=$(cd / && "$hw" run -- "$bin/RunLoopDemo" 2>&1 >/dev/null) || true
if [[ -x $bin/RunLoopDemo ]]; then
    [[ $demo == "hangwatch: 3 hangs"* ]] && pass "installed tree reports RunLoopDemo's 3 hangs" \
        || fail "RunLoopDemo under the installed tree: ${demo%%$'\n'*}"
fi
"$hw" --version | grep -q '^report schema: ' && pass "--version" || fail "--version: $("$hw" --version)"
[[ $(grep -c '^\.SH' "$scratch/moved/share/man/man1/hangwatch.1") -ge 8 ]] && pass "man page sections" \
    || fail "man page"
"$here/Scripts/install.sh" --uninstall "$scratch/moved" >/dev/null
left=$(find "$scratch/moved" -type f)
[[ -z $left ]] && pass "uninstall removes every file" || fail "left after uninstall: $left"

# 2. make deb.
deb=$("$here/Scripts/make-deb.sh" "$bin" "$scratch/out")
depends=$(dpkg-deb --field "$deb" Depends)
pass "package $(basename "$deb"), Depends: $depends"
grep -qi swift <<<"$depends" && fail "Depends names the Swift toolchain"
for package in $(tr ',' '\n' <<<"$depends" | sed 's/(.*)//; s/|.*//' | tr -d ' '); do
    dpkg -s "$package" >/dev/null 2>&1 || fail "Depends names $package, which is not an installed package"
done
root=$scratch/root
if [[ $(id -u) == 0 ]]; then
    mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info"
    touch "$root/var/lib/dpkg/status"
    # The scratch root holds no libc6 & co: their presence is checked above, on this host.
    dpkg --root="$root" --force-depends --force-script-chrootless -i "$deb" >/dev/null 2>&1 \
        && pass "dpkg -i into a scratch root" || fail "dpkg --root -i"
else
    dpkg-deb -x "$deb" "$root" && pass "dpkg-deb -x into a scratch root"
fi
check_runs "$root/usr/bin/hangwatch" "package's hangwatch"

if ((failures)); then echo "test-install: $failures failed" >&2; exit 1; fi
echo "test-install: all passed"
