#!/usr/bin/env bash
# The main job on a bundled example: installs what is missing, builds, and
# opens data/examples/transformer-block.json in the desktop app.  Without
# a display (no DISPLAY or WAYLAND_DISPLAY), or with PS_DEMO_CLI=1, it
# plans and verifies the example with planscope-cli instead and writes a
# screenshot of the app under Xvfb when xvfb-run is there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash build-aux/install-deps.sh
[ -d _build/release ] || meson setup _build/release --buildtype=release >/dev/null
ninja -C _build/release >/dev/null
example=${1:-data/examples/transformer-block.json}
export PS_SOURCE_ROOT="$PWD"

if [ -z "${PS_DEMO_CLI:-}" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  exec _build/release/app/planscope "$example"
fi

echo "run-demo: no display, so the command line instead of the app" >&2
_build/release/app/planscope-cli plan "$example"
_build/release/app/planscope-cli verify "$example"
if command -v xvfb-run >/dev/null; then
  shot=_build/release/demo.png
  GTK_A11Y=none GSK_RENDERER=cairo xvfb-run -a -s "-screen 0 1600x1000x24" \
    _build/release/app/planscope --screenshot "$shot" "$example"
  echo "run-demo: a screenshot of the app on $example is in $shot" >&2
fi
