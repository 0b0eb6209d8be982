#!/bin/sh
# pool-bench.sh: the memory pool against its exact peak, on generated
# graphs and the bundled examples.
#
#   bench/pool-bench.sh [PLANSCOPE-CLI] [NODES...]
#
# Defaults: _build/release/app/planscope-cli (else the first planscope-cli
# found under _build/), sizes 1000 10000 100000.  For every shape (chain,
# fanout, layered, transformer), size, seed 1-3, without and with
# --extras, and for every example in data/examples, it runs
# `planscope-cli plan FILE --json --timing` and prints the pool, the exact
# peak of bytes live at once under the plan's order, their ratio (what the
# plan text prints as "N.NNx the peak"), the memory pass's wall time and
# the time to find the peak (the plan's output, which includes it).  Then
# the largest ratio per shape.  Target (issue 16): every ratio <= 1.10.
set -eu

cli=${1:-}
[ $# -ge 1 ] && shift
sizes=${*:-"1000 10000 100000"}

if [ -z "$cli" ]; then
  for c in _build/release/app/planscope-cli _build/*/app/planscope-cli; do
    if [ -x "$c" ]; then
      cli=$c
      break
    fi
  done
fi
if [ -z "$cli" ] || [ ! -x "$cli" ]; then
  echo "pool-bench: no planscope-cli found; pass its path as the first argument" >&2
  exit 2
fi
examples=$(dirname "$0")/../data/examples

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# One row: LABEL FILE.
row () {
  "$cli" plan "$2" --json --timing > "$tmp/plan.json" 2> "$tmp/err"
  pool=$(sed -n 's/.*"pool_bytes": \([0-9]*\).*/\1/p' "$tmp/plan.json")
  peak=$(sed -n 's/.*"pool_peak": \([0-9]*\).*/\1/p' "$tmp/plan.json")
  mem=$(awk '/^timing: memory/ { print $3 }' "$tmp/err")
  out=$(awk '/^timing: output/ { print $3 }' "$tmp/err")
  echo "$1 $pool $peak $mem $out" | awk '{
    ratio = $3 > 0 ? $2 / $3 : 1
    printf "%-40s %12.1f %12.1f %7.3f %9s %9s\n", $1, $2 / 1048576, $3 / 1048576, ratio, $4, $5
  }'
}

printf '%-40s %12s %12s %7s %9s %9s\n' graph pool_MiB peak_MiB ratio memory_s output_s
for shape in chain fanout layered transformer; do
  for n in $sizes; do
    for seed in 1 2 3; do
      for extras in "" --extras; do
        f=$tmp/g.json
        # shellcheck disable=SC2086
        "$cli" gen "$shape" --nodes "$n" --seed "$seed" $extras -o "$f"
        row "$shape-$n-seed$seed${extras:+-extras}" "$f"
      done
    done
  done
done | tee "$tmp/rows"
for f in "$examples"/*.json; do
  row "example-$(basename "$f" .json)" "$f"
done | tee -a "$tmp/rows"

echo
echo "largest ratio per shape:"
awk '{ split($1, a, "-"); s = a[1]; if ($4 > max[s]) max[s] = $4 }
     END { for (s in max) printf "  %-24s %.3f\n", s, max[s] }' "$tmp/rows" | sort
