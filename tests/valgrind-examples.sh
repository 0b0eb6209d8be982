#!/usr/bin/env bash
# tests/valgrind-examples.sh CLI: runs planscope-cli plan (text and JSON),
# verify and simulate (with --json and a --trace file, which analyze then
# reads back) on every graph of data/examples/ under valgrind.  Any invalid
# read or write, use of uninitialised memory, or leak fails the test.
# Wired as the meson test 'valgrind-examples' (suite valgrind) of builds
# without sanitizers.
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

examples=("$root"/data/examples/*.json)
[ ${#examples[@]} -gt 0 ] && [ -f "${examples[0]}" ] || { echo "no examples in $root/data/examples" >&2; exit 1; }
for f in "${examples[@]}"; do
  vg plan "$f"
  vg plan "$f" --json --streams 2 --no-fusion
  vg verify "$f"
  vg simulate "$f"
  vg simulate "$f" --json --trace "$tmp/trace.json"
  vg analyze "$tmp/trace.json"
done
echo "valgrind: $runs runs, $failed failed"
[ "$failed" -eq 0 ]
