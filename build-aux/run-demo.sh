#!/usr/bin/env bash
# The main job on a bundled example: installs what is missing, builds, and
# plans data/examples/transformer-block.json with planscope-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
bash build-aux/install-deps.sh
[ -d _build/release ] || meson setup _build/release --buildtype=release >/dev/null
ninja -C _build/release >/dev/null
example=${1:-data/examples/transformer-block.json}
_build/release/app/planscope-cli plan "$example"
_build/release/app/planscope-cli verify "$example"
