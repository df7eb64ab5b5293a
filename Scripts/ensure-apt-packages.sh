#!/usr/bin/env bash
# Installs the given Debian packages, only those missing (a fresh machine of
# this kind has the Swift toolchain but not libunwind-dev, libelf-dev, ...).
set -euo pipefail
missing=()
for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
((${#missing[@]})) || exit 0
echo "installing: ${missing[*]}"
sudo=""
[[ $(id -u) == 0 ]] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
