#!/usr/bin/env bash
# tests/valgrind-examples.sh CLI [real-data]: runs planscope-cli under
# valgrind on every graph of data/examples/: plan (text and JSON), verify,
# simulate (with --json and a --trace file, which analyze then reads back)
# and export (the DAG laid out by Graphviz as SVG, the timeline as PNG; the
# plan and memory views of two examples).  With `real-data`, instead: plan
# and simulate on the real CUDA-graph DOT dumps and analyze on the real
# traces of $PLANSCOPE_REAL_DATA/real (default ../shared/data/real).
# Any invalid read or write, use of uninitialised memory, or leak fails the
# test.  Runs that draw (cairo, pango, Graphviz) count definite and indirect
# leaks, with tests/valgrind.supp for the caches of fontconfig and
# Graphviz; GLib's type system leaves "possibly lost" blocks by design.
# Wired as the meson tests 'valgrind-examples' and 'valgrind-real-data'
# (suite valgrind) of builds without sanitizers.
set -uo pipefail
cli=${1:?usage: valgrind-examples.sh PLANSCOPE-CLI}
root=${PS_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
command -v valgrind >/dev/null || { echo "valgrind not found (bash build-aux/install-deps.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failed=0
runs=0
vg () {
  runs=$((runs + 1))
  if ! valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
      --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes \
      "$cli" "$@" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: planscope-cli $*" >&2
    cat "$tmp/err" >&2
    failed=$((failed + 1))
  fi
}

# vg_draw ARGS: the same for runs that draw.
vg_draw () {
  runs=$((runs + 1))
  if ! valgrind -q --error-exitcode=99 --suppressions="$root/tests/valgrind.supp" \
      --leak-check=full --show-leak-kinds=definite,indirect \
      --errors-for-leak-kinds=definite,indirect --track-origins=yes \
      "$cli" "$@" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: planscope-cli $*" >&2
    cat "$tmp/err" >&2
    failed=$((failed + 1))
  fi
}

if [ "${2:-}" = real-data ]; then
  real=${PLANSCOPE_REAL_DATA:-$root/../shared/data}/real
  [ -d "$real" ] || { echo "the third-party data is missing: no folder $real" >&2; exit 1; }
  for f in "$real"/cudagraph_dot/*.dot; do
    vg plan "$f"
    vg simulate "$f" --json
  done
  for f in "$real"/kineto/*.json "$real"/hta/*.json.gz; do
    [ -f "$f" ] && vg analyze "$f"
  done
  echo "valgrind: $runs runs, $failed failed"
  [ "$runs" -gt 0 ] && [ "$failed" -eq 0 ]
  exit
fi

examples=("$root"/data/examples/*.json)
[ ${#examples[@]} -gt 0 ] && [ -f "${examples[0]}" ] || { echo "no examples in $root/data/examples" >&2; exit 1; }
for f in "${examples[@]}"; do
  vg plan "$f"
  vg plan "$f" --json --streams 2 --no-fusion
  vg verify "$f"
  vg simulate "$f"
  vg simulate "$f" --json --trace "$tmp/trace.json"
  vg analyze "$tmp/trace.json"
  vg_draw export "$f" --view dag -o "$tmp/dag.svg"
  vg_draw export "$f" --view timeline -o "$tmp/timeline.png"
done
for f in "${examples[@]:0:2}"; do
  vg_draw export "$f" --view plan -o "$tmp/plan.png"
  vg_draw export "$f" --view memory -o "$tmp/memory.svg"
done
echo "valgrind: $runs runs, $failed failed"
[ "$failed" -eq 0 ]
