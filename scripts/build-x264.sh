#!/usr/bin/env bash
# Builds the patched x264 CLI that band rendering needs (native/x264/band-splice.patch on Debian's x264 source package)
# into a cache folder outside the repository, and prints where it put it. Idempotent: a binary built from the same
# patch is kept. Exits 0 without building (saying why) when the machine cannot build it; wmark then renders whole
# frames as before.
#   WMARK_X264_CACHE  the cache folder (default ~/.cache/wmark/x264); the binary is $WMARK_X264_CACHE/bin/x264
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
patch_file="$repo/native/x264/band-splice.patch"
cache="${WMARK_X264_CACHE:-$HOME/.cache/wmark/x264}"
bin="$cache/bin/x264"
stamp="$cache/bin/x264.patch-sha256"
want="$(sha256sum "$patch_file" | cut -d' ' -f1)"

if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "patched x264 is up to date: $bin"
  exit 0
fi

missing=()
for tool in gcc make nasm; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
src_dir="$(ls -d "$cache"/src/x264-*/ 2>/dev/null | head -n1 || true)"
can_apt=0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 && command -v dpkg-source >/dev/null 2>&1; then can_apt=1; fi
if [ -z "$src_dir" ] && [ $can_apt = 0 ]; then missing+=("apt-get source (root, apt-get and dpkg-dev)"); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "not building the patched x264 (band rendering stays off): missing ${missing[*]}"
  exit 0
fi

echo "scripts/build-x264.sh builds the patched x264 CLI for band rendering (1-4 min on 2 cores, longer when they are busy):"
if [ -z "$src_dir" ]; then
  grep -rqs '^deb-src\|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/ ||
    echo "  - adds /etc/apt/sources.list.d/wmark-deb-src.sources (a deb-src line for Debian's main archive) and runs apt-get update"
  echo "  - downloads Debian's x264 source package (apt-get source x264) into $cache/src"
fi
echo "  - applies native/x264/band-splice.patch, configures (8-bit only; without OpenCL, lavf, ffms, gpac, lsmash), runs make -j2"
echo "  - installs the static x264 CLI at $bin"

if [ -z "$src_dir" ]; then
  if ! grep -rqs '^deb-src\|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    suite="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$suite" >/etc/apt/sources.list.d/wmark-deb-src.sources
    apt-get update -qq
  fi
  mkdir -p "$cache/src"
  (cd "$cache/src" && apt-get source -qq x264 >/dev/null 2>&1) || (cd "$cache/src" && apt-get update -qq && apt-get source -qq x264 >/dev/null)
  src_dir="$(ls -d "$cache"/src/x264-*/ | head -n1)"
fi

# A fresh copy of the pristine source for every build, so a patch change never meets the last one's edits.
build="$cache/build"
rm -rf "$build"
cp -a "$src_dir" "$build"
cd "$build"
patch -p1 --quiet <"$patch_file"
./configure --bit-depth=8 --disable-opencl --disable-lavf --disable-ffms --disable-gpac --disable-lsmash >"$cache/configure.log" 2>&1 ||
  { echo "x264 configure failed: see $cache/configure.log"; exit 1; }
make -j2 >"$cache/make.log" 2>&1 || { echo "x264 build failed: see $cache/make.log"; exit 1; }
mkdir -p "$cache/bin"
install -m 0755 x264 "$bin.tmp" && mv "$bin.tmp" "$bin"
echo "$want" >"$stamp"
echo "built the patched x264: $bin"
