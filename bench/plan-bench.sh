#!/bin/sh
# plan-bench.sh: load + compile times and peak memory of the planner on
# generated graphs.
#
#   bench/plan-bench.sh [PLANSCOPE-CLI] [SHAPE] [NODES...]
#
# Defaults: _build/release/app/planscope-cli (else the first planscope-cli
# found under _build/), shape `layered`, sizes 10000 100000 1000000.  For
# each size it writes `planscope-cli gen SHAPE --nodes N` to a temporary
# file, runs `planscope-cli plan FILE --timing` under /usr/bin/time -v and
# prints the load time (read and parse) and the file's size over it in
# MB/s, the compile time (the sum of the passes, and of the wait for the
# unfused plan made on a second thread), their sum and its growth
# from the previous size, the whole run's wall time (output included), its
# peak RSS and the per-pass wall times the CLI reports.  Targets (issue
# 16): 1M nodes load + compile <= 1.2 s, <= 1 GiB, growth <= 11x per 10x
# nodes; parse >= 500 MB/s (bench/json-bench FILE --load gives the parse
# alone, best of several runs).
set -eu

cli=${1:-}
shape=${2:-layered}
[ $# -ge 1 ] && shift
[ $# -ge 1 ] && shift
sizes=${*:-"10000 100000 1000000"}

if [ -z "$cli" ]; then
  for c in _build/release/app/planscope-cli _build/*/app/planscope-cli; do
    if [ -x "$c" ]; then
      cli=$c
      break
    fi
  done
fi
if [ -z "$cli" ] || [ ! -x "$cli" ]; then
  echo "plan-bench: no planscope-cli found; pass its path as the first argument" >&2
  exit 2
fi
timer=
if [ -x /usr/bin/time ]; then
  timer="/usr/bin/time -v"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

printf '%-9s %7s %7s %8s %13s %7s %9s  %s\n' nodes load_s MB/s compile_s load+compile wall_s \
  peak_rss "passes (s)"
prev=
for n in $sizes; do
  f=$tmp/g$n.json
  "$cli" gen "$shape" --nodes "$n" > "$f"
  cat "$f" > /dev/null # warm the page cache
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  $timer "$cli" plan "$f" --timing > /dev/null 2> "$tmp/err"
  end=$(date +%s.%N)
  wall=$(echo "$start $end" | awk '{ printf "%.3f", $2 - $1 }')
  load=$(awk '/^timing: (read|parse|load)/ { s += $3 } END { printf "%.3f", s }' "$tmp/err")
  compile=$(awk '/^timing: (analyse|fuse|streams|sync|memory|unfused|simulate)/ { s += $3 } END { printf "%.3f", s }' \
    "$tmp/err")
  both=$(echo "$load $compile" | awk '{ printf "%.3f", $1 + $2 }')
  mbs=$(echo "$(wc -c < "$f") $load" | awk '{ if ($2 > 0) printf "%.0f", $1 / 1e6 / $2; else print "-" }')
  passes=$(awk '/^timing: (analyse|fuse|streams|sync|memory|unfused|simulate)/ { printf "%s %s  ", $2, $3 }' \
    "$tmp/err")
  rss=$(awk -F: '/Maximum resident set size/ { printf "%.0fMiB", $2 / 1024 }' "$tmp/err")
  growth=
  if [ -n "$prev" ]; then
    growth=$(echo "$prev $both" | awk '{ printf " (x%.1f)", $2 / $1 }')
  fi
  printf '%-9s %7s %7s %8s %13s %7s %9s  %s\n' "$n" "$load" "$mbs" "$compile" "$both$growth" \
    "$wall" "${rss:-?}" "$passes"
  prev=$both
done
