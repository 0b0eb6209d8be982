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
#
# PLAN_BENCH_RUNS=N runs each size N times (default 1) and prints the
# median of each figure (the passes are the run of median load +
# compile's).  PLAN_BENCH_BASE=CLI also runs a second planscope-cli (a
# build of an earlier commit, say) on the same file, in turn with the
# first, and prints its figures on a line of their own with the ratios
# of load + compile and of the whole run to it: speed-ups measured on one
# machine in the same minutes, which figures from another machine or
# another day are not.
set -eu

cli=${1:-}
shape=${2:-layered}
[ $# -ge 1 ] && shift
[ $# -ge 1 ] && shift
sizes=${*:-"10000 100000 1000000"}
runs=${PLAN_BENCH_RUNS:-1}
base=${PLAN_BENCH_BASE:-}

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
if [ -n "$base" ] && [ ! -x "$base" ]; then
  echo "plan-bench: PLAN_BENCH_BASE is not an executable: $base" >&2
  exit 2
fi
case $runs in
  '' | *[!0-9]* | 0)
    echo "plan-bench: PLAN_BENCH_RUNS must be a whole number of at least 1" >&2
    exit 2
    ;;
esac
timer=
if [ -x /usr/bin/time ]; then
  timer="/usr/bin/time -v"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# One run of CLI on FILE, appended to OUT as one line:
#   load compile load+compile wall rss_kib passes...
measure() {
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  $timer "$1" plan "$2" --timing > /dev/null 2> "$tmp/err"
  end=$(date +%s.%N)
  awk -v start="$start" -v end="$end" '
    /^timing: (read|parse|load)/ { load += $3 }
    /^timing: (analyse|fuse|streams|sync|memory|unfused|simulate)/ {
      compile += $3
      passes = passes sprintf("%s %s  ", $2, $3)
    }
    /Maximum resident set size/ { split($0, kv, ":"); rss = kv[2] + 0 }
    END {
      printf "%.3f %.3f %.3f %.3f %d %s\n", load, compile, load + compile, end - start, rss, passes
    }' "$tmp/err" >> "$3"
}

# The median of column C of FILE's lines (the lower of the two middle
# ones for an even count).
median() {
  sort -n -k"$1","$1" "$2" | awk -v c="$1" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

# Prints the figures of FILE (the runs of one build on a graph of BYTES
# bytes): label, load, MB/s, compile, load + compile and GROWTH, wall,
# peak RSS, passes.
report() {
  label=$1 file=$2 bytes=$3 growth=$4
  load=$(median 1 "$file")
  compile=$(median 2 "$file")
  both=$(median 3 "$file")
  wall=$(median 4 "$file")
  rss=$(median 5 "$file" | awk '{ if ($1 > 0) printf "%.0fMiB", $1 / 1024; else print "?" }')
  passes=$(sort -n -k3,3 "$file" | awk -v m="$both" '$3 == m { $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print; exit }')
  mbs=$(echo "$bytes $load" | awk '{ if ($2 > 0) printf "%.0f", $1 / 1e6 / $2; else print "-" }')
  printf '%-9s %7s %7s %8s %13s %7s %9s  %s\n' "$label" "$load" "$mbs" "$compile" "$both$growth" \
    "$wall" "$rss" "$passes"
}

if [ "$runs" -gt 1 ]; then
  echo "medians of $runs runs${base:+, each in turn with the base ($base)}"
elif [ -n "$base" ]; then
  echo "base: $base, run in turn"
fi
printf '%-9s %7s %7s %8s %13s %7s %9s  %s\n' nodes load_s MB/s compile_s load+compile wall_s \
  peak_rss "passes (s)"
prev=
for n in $sizes; do
  f=$tmp/g$n.json
  "$cli" gen "$shape" --nodes "$n" > "$f"
  cat "$f" > /dev/null # warm the page cache
  bytes=$(wc -c < "$f")
  : > "$tmp/a"
  : > "$tmp/b"
  i=0
  while [ "$i" -lt "$runs" ]; do
    measure "$cli" "$f" "$tmp/a"
    if [ -n "$base" ]; then
      measure "$base" "$f" "$tmp/b"
    fi
    i=$((i + 1))
  done
  both=$(median 3 "$tmp/a")
  growth=
  if [ -n "$prev" ]; then
    growth=$(echo "$prev $both" | awk '{ printf " (x%.1f)", $2 / $1 }')
  fi
  report "$n" "$tmp/a" "$bytes" "$growth"
  prev=$both
  if [ -n "$base" ]; then
    report "  base" "$tmp/b" "$bytes" ""
    # The ratios pair the runs in the order they were made.
    cut -d ' ' -f 3,4 "$tmp/a" > "$tmp/a34"
    cut -d ' ' -f 3,4 "$tmp/b" > "$tmp/b34"
    paste -d ' ' "$tmp/a34" "$tmp/b34" \
      | awk '{ printf "%.2f %.2f\n", ($1 > 0 ? $3 / $1 : 0), ($2 > 0 ? $4 / $2 : 0) }' > "$tmp/r"
    echo "  speed-up: load + compile x$(median 1 "$tmp/r"), whole run x$(median 2 "$tmp/r")" \
      "(base over this build, median of the pairs)"
  fi
done
