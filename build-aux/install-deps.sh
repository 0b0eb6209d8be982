#!/usr/bin/env bash
# Installs the Debian packages planscope builds and tests with (as root, or
# through sudo when it is available).  Packages already present are skipped,
# so a second run costs nothing.
set -euo pipefail

packages=(
  meson ninja-build gcc pkg-config python3
  zlib1g-dev libcmocka-dev libiberty-dev
  # The desktop app and its tests: GTK 4, libadwaita, an X server for the
  # tests, fonts for its text, and the desktop file and AppStream validators.
  libgtk-4-dev libadwaita-1-dev xvfb xauth fonts-dejavu-core desktop-file-utils appstream
  # Rendering and exports (render/): Graphviz as a library and its `dot`,
  # cairo and Pango (text is measured in DejaVu Sans, listed above).
  libgraphviz-dev graphviz libcairo2-dev libpango1.0-dev
  # Hardening: libFuzzer harnesses (tests/fuzz/run) built with clang and its
  # sanitizer runtimes, and the CLI under valgrind (tests/valgrind-examples.sh).
  clang libclang-rt-14-dev valgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
