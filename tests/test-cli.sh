#!/usr/bin/env bash
# test-cli.sh: the planscope-cli contract of spec/cli.md: exit codes, usage,
# located errors, the plan document, verification of the examples and of
# generated graphs, and gen's determinism.
#
# Usage: test-cli.sh PATH/TO/planscope-cli   (PS_SOURCE_ROOT: the source tree)
set -u

CLI=${1:?usage: test-cli.sh PATH/TO/planscope-cli}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
ROOT=${PS_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
EXAMPLES=("$ROOT"/data/examples/*.json)
SHAPES=(chain fanout layered transformer)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

pass=0
fail=0
ok () { pass=$((pass + 1)); }
bad () {
  fail=$((fail + 1))
  echo "FAIL: $*" >&2
}

# run CMD...: runs the CLI, leaving stdout in $TMP/out, stderr in $TMP/err
# and the exit code in $rc.
run () {
  "$CLI" "$@" >"$TMP/out" 2>"$TMP/err"
  rc=$?
}

# expect WANT-RC DESCRIPTION ARGS...
expect () {
  local want=$1 desc=$2
  shift 2
  run "$@"
  if [ "$rc" -eq "$want" ]; then ok; else
    bad "$desc: exit $rc, wanted $want (planscope-cli $*)"
    sed 's/^/  | /' "$TMP/err" | head -5 >&2
  fi
}

# first_line_is_error FILE-AS-GIVEN DESCRIPTION: stderr's first line is a
# located error for that file.
first_line_is_error () {
  local file=$1 desc=$2 first
  first=$(head -n 1 "$TMP/err")
  case $first in
    "$file":[0-9]*:[0-9]*": error: "?*) ok ;;
    *) bad "$desc: first stderr line is not '$file:LINE:COL: error: ...': '$first'" ;;
  esac
}

# A build without render/ (-Drender=disabled) has no export: it must say
# so, and the checks below that need it use the other writers instead.
have_export=true
if "$CLI" export --help | grep -q 'built without render'; then
  have_export=false
  expect 1 "export in a build without render/" export "${EXAMPLES[0]}" --view dag -o "$TMP/x.svg"
  grep -q 'not built' "$TMP/err" && ok || bad "export without render/ does not say it was not built"
  [ -e "$TMP/x.svg" ] && bad "export without render/ wrote a file" || ok
  echo "left out: the export checks (this planscope-cli was built without render/)"
fi

if [ ${#EXAMPLES[@]} -lt 4 ] || [ ! -f "${EXAMPLES[0]}" ]; then
  bad "fewer than four examples in $ROOT/data/examples"
fi

# ---- help, version, usage errors --------------------------------------------

COMMANDS=(plan verify gen simulate profile export analyze import replay diff kernels)
for h in --help -h; do
  expect 0 "top-level $h" "$h"
  grep -q '^Usage: planscope-cli' "$TMP/out" && ok || bad "top-level $h prints no usage"
  for c in "${COMMANDS[@]}"; do
    expect 0 "$c $h" "$c" "$h"
    grep -q "^Usage: planscope-cli $c" "$TMP/out" && ok || bad "$c $h prints no usage on stdout"
    [ -s "$TMP/err" ] && bad "$c $h writes to stderr" || ok
  done
done
expect 0 "--version" --version
grep -Eq '^planscope-cli [0-9]+\.[0-9]+' "$TMP/out" && ok || bad "--version prints no version"

expect 2 "no arguments"
expect 2 "unknown command" frobnicate
expect 2 "unknown top-level option" --frobnicate
for c in plan verify; do
  expect 2 "$c without FILE" "$c"
  expect 2 "$c with two files" "$c" "${EXAMPLES[0]}" "${EXAMPLES[0]}"
  expect 2 "$c unknown option" "$c" "${EXAMPLES[0]}" --frobnicate
  for s in 0 65 abc -1 4x "" 1e1 " 4" 99999999999999999999; do
    expect 2 "$c --streams '$s'" "$c" "${EXAMPLES[0]}" --streams "$s"
  done
  expect 2 "$c --streams without value" "$c" "${EXAMPLES[0]}" --streams
  [ -s "$TMP/out" ] && bad "usage error wrote to stdout" || ok
  grep -q "planscope-cli $c" "$TMP/err" && ok || bad "$c usage error does not say who complains"
  expect 0 "$c --streams 1" "$c" "${EXAMPLES[0]}" --streams 1
  expect 0 "$c --streams=64" "$c" "${EXAMPLES[0]}" --streams=64
done
expect 2 "verify --json is not an option" verify "${EXAMPLES[0]}" --json

# Every command of spec/cli.md is recognised: a plain FILE argument is no
# usage error.
for c in simulate profile export analyze kernels; do
  run "$c" "${EXAMPLES[0]}"
  grep -q "unknown command" "$TMP/err" && bad "$c is not recognised" || ok
done

# ---- bad input files: exit 1, located first line ----------------------------

cd "$TMP" || exit 1
printf '{"format": "planscope-graph", "version": 1, "nodes": [\n  {"name": "a", "op": "host"' \
  >truncated.json
printf '{"format": "planscope-graph", "version": 1, "nodes": [\n  {"name": "a", "op": "kernel",\n   "function": "f", "grd": 1, "block": 1}\n]}\n' \
  >unknown-key.json
printf '{"format": "planscope-graph", "version": 2, "nodes": [{"name": "a", "op": "host"}]}\n' \
  >version.json
printf '{"format": "planscope-graph", "version": 1,\n "nodes": [{"name": "a", "op": "host"},\n           {"name": "a", "op": "host"}]}\n' \
  >duplicate.json
printf '{"format": "planscope-graph", "version": 1,\n "nodes": [{"name": "a", "op": "memcpy", "dir": "h2d", "writes": ["nope"]}]}\n' \
  >unknown-buffer.json
printf '{"format": "planscope-graph", "version": 1,\n "nodes": [{"name": "a", "op": "host", "after": ["b"]},\n           {"name": "b", "op": "host"}]}\n' \
  >forward-after.json
printf '{"format": "planscope-graph", "version": 1, "nodes": [{"name": "a", "op": "host",}]}\n' \
  >trailing-comma.json
printf '{"format": "planscope-graph", "version": 1, "nodes": []}\n' >no-nodes.json
printf '' >empty.json
for f in truncated unknown-key version duplicate unknown-buffer forward-after trailing-comma \
         no-nodes empty; do
  for c in plan verify; do
    expect 1 "$c $f.json" "$c" "$f.json"
    first_line_is_error "$f.json" "$c $f.json"
    [ -s "$TMP/out" ] && bad "$c $f.json printed a plan" || ok
  done
done
run plan unknown-key.json
grep -q 'did you mean "grid"' "$TMP/err" && ok || bad "unknown key without a suggestion"
grep -q '^unknown-key.json:3:' "$TMP/err" && ok || bad "unknown key not located on line 3"
expect 1 "missing file" plan "$TMP/does-not-exist.json"
case $(head -n 1 "$TMP/err") in
  "$TMP/does-not-exist.json: error: "?*) ok ;;
  *) bad "missing file: unexpected message '$(head -n 1 "$TMP/err")'" ;;
esac

# A warning is not an error: exit 0, warning on stderr, plan on stdout.
printf '{"format": "planscope-graph", "version": 1,\n "buffers": [{"name": "t", "bytes": 1024}],\n "nodes": [{"name": "k", "op": "kernel", "function": "f", "grid": 1, "block": 32,\n            "reads": ["t"]}]}\n' \
  >uninit.json
expect 0 "plan with a warning" plan uninit.json
grep -q '^uninit.json:[0-9]*:[0-9]*: warning: ' "$TMP/err" && ok || bad "no located warning"
[ -s "$TMP/out" ] && ok || bad "plan with a warning printed nothing"

# Launch limits every CUDA GPU has: refused at load, located, not by the
# driver at run time.
for dims in '"grid": [1, 65536], "block": 32|grid[1]: 65536' \
            '"grid": [1, 1, 70000], "block": 32|grid[2]: 70000' \
            '"grid": 1, "block": [32, 1, 65]|block[2]: 65' \
            '"grid": 1, "block": 1025|block: 1025'; do
  printf '{"format": "planscope-graph", "version": 1,\n "nodes": [{"name": "k", "op": "kernel", "function": "f", %s}]}\n' \
    "${dims%%|*}" >limits.json
  expect 1 "plan with ${dims%%|*}" plan limits.json
  want=${dims#*|}
  want=${want//[/\\[}
  want=${want//]/\\]}
  grep -q "^limits.json:2:[0-9]*: error: nodes\[0\]\.$want is out of range" "$TMP/err" && ok ||
    bad "${dims%%|*}: not refused with a located error ($(head -n 1 "$TMP/err"))"
done
cd - >/dev/null || exit 1

# ---- write errors on stdout --------------------------------------------------

if [ -w /dev/full ]; then
  for args in "plan ${EXAMPLES[0]}" "plan ${EXAMPLES[0]} --json" "verify ${EXAMPLES[0]}" \
              "gen layered --nodes 2000" "--help"; do
    # shellcheck disable=SC2086
    "$CLI" $args >/dev/full 2>"$TMP/err"
    rc=$?
    [ "$rc" -eq 1 ] && ok || bad "'$args > /dev/full' exit $rc, wanted 1"
    grep -q 'error' "$TMP/err" && ok || bad "'$args > /dev/full' says nothing"
  done
else
  bad "/dev/full is missing; cannot check write errors"
fi

# ---- the plan document -------------------------------------------------------

cat >"$TMP/check_plan.py" <<'EOF'
"""check_plan.py GRAPH PLAN STREAMS FUSION: the plan document of spec/cli.md
(json.load is as strict as python3 -m json.tool)."""
import json, sys

graph = json.load(open(sys.argv[1]))
plan = json.load(open(sys.argv[2]))
streams, fusion = int(sys.argv[3]), sys.argv[4] == "true"
errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)

check(plan.get("format") == "planscope-plan", "format")
check(plan.get("version") == 1, "version")
check(plan.get("options") == {"streams": streams, "fusion": fusion}, "options %r" % plan.get("options"))
check(plan.get("graph") == graph.get("name", ""), "graph name")
check(isinstance(plan.get("streams"), int) and 1 <= plan["streams"] <= streams, "streams")
pool = plan.get("pool_bytes")
check(isinstance(pool, int) and pool >= 0, "pool_bytes")
peak = plan.get("pool_peak")
check(isinstance(peak, int) and 0 <= peak <= pool, "pool_peak %r above pool_bytes %r" % (peak, pool))
check(plan.get("pool_peak_exact") is True, "pool_peak_exact")
ratio = plan.get("pool_ratio")
check(isinstance(ratio, (int, float)) and (peak == 0 or abs(ratio - pool / peak) < 1e-4), "pool_ratio")
for key in ("kernels_before", "kernels_after", "events"):
    check(isinstance(plan.get(key), int) and plan[key] >= 0, key)
check(plan["kernels_after"] <= plan["kernels_before"], "kernels_after > kernels_before")
if not fusion:
    check(plan["kernels_after"] == plan["kernels_before"], "fused with --no-fusion")

gbufs = {b["name"]: b for b in graph.get("buffers", [])}
pbufs = {b["name"]: b for b in plan.get("buffers", [])}
check(set(gbufs) == set(pbufs), "buffers differ from the graph's")
for name, b in pbufs.items():
    ext = gbufs.get(name, {}).get("external", False)
    check(b.get("external") == ext, "buffer %s external" % name)
    check(b.get("bytes") == gbufs.get(name, {}).get("bytes"), "buffer %s bytes" % name)
    if not ext:
        off = b.get("offset")
        check(isinstance(off, int) and 0 <= off and off + b["bytes"] <= pool,
              "buffer %s offset %r outside the pool" % (name, off))

seen = {}
recorded = set()
for i, s in enumerate(plan.get("steps", [])):
    check(isinstance(s.get("stream"), int) and 0 <= s["stream"] < streams, "step %d stream" % i)
    if s["op"] in ("event_record", "event_wait"):
        check(isinstance(s.get("event"), int), "step %d event" % i)
        if s["op"] == "event_record":
            recorded.add(s["event"])
        else:
            check(s["event"] in recorded, "step %d waits for an event never recorded" % i)
    for n in s.get("nodes", []):
        seen[n] = seen.get(n, 0) + 1
    if s["op"] == "kernel":
        check(isinstance(s.get("function"), str), "step %d function" % i)
        check(len(s.get("nodes", [])) >= 1, "kernel step %d without nodes" % i)
        if not fusion:
            check(len(s["nodes"]) == 1, "step %d fused with --no-fusion" % i)
names = [n["name"] for n in graph["nodes"]]
for n in names:
    check(seen.get(n) == 1, "node %s appears %d times" % (n, seen.get(n, 0)))
check(len(seen) == len(names), "steps name nodes that are not in the graph")
for e in errors[:10]:
    print("%s: %s" % (sys.argv[1], e))
sys.exit(1 if errors else 0)
EOF

check_plan_json () { # GRAPH STREAMS FUSION(true|false) [PLAN-OPTIONS...]
  local graph=$1 streams=$2 fusion=$3
  shift 3
  "$CLI" plan "$graph" --json --streams "$streams" "$@" >"$TMP/plan.json" 2>"$TMP/err"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    bad "plan --json $graph --streams $streams $*: exit $rc"
    sed 's/^/  | /' "$TMP/err" | head -5 >&2
  elif python3 "$TMP/check_plan.py" "$graph" "$TMP/plan.json" "$streams" "$fusion" >&2; then
    ok
  else
    bad "plan --json $graph --streams $streams $*: not the plan document"
  fi
}

for f in "${EXAMPLES[@]}"; do
  for s in 1 2 4 8; do
    check_plan_json "$f" "$s" true
    check_plan_json "$f" "$s" false --no-fusion
  done
  expect 0 "plan (text) $f" plan "$f"
  [ -s "$TMP/out" ] && ok || bad "plan $f printed nothing"
  [ -s "$TMP/err" ] && bad "plan $f printed to stderr: $(head -n 1 "$TMP/err")" || ok
done

# ---- verify: every example and generated graphs of every shape ---------------

verify_ok () { # DESCRIPTION ARGS...
  local desc=$1
  shift
  run verify "$@"
  if [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = "ok" ]; then ok; else
    bad "verify $desc $*: exit $rc, output '$(head -n 3 "$TMP/out")'"
    sed 's/^/  | /' "$TMP/err" | head -5 >&2
  fi
}

for f in "${EXAMPLES[@]}"; do
  for s in 1 2 3 4 5 6 7 8; do
    verify_ok "" "$f" --streams "$s"
    verify_ok "" "$f" --streams "$s" --no-fusion
  done
done

for shape in "${SHAPES[@]}"; do
  "$CLI" gen "$shape" --nodes 400 --seed 7 -o "$TMP/$shape.json" || bad "gen $shape"
  "$CLI" gen "$shape" --nodes 400 --seed 8 --extras --pin-streams 1 -o "$TMP/$shape-x.json" \
    || bad "gen $shape --extras"
  for s in 1 2 3 4 5 6 7 8; do
    for g in "$TMP/$shape.json" "$TMP/$shape-x.json"; do
      verify_ok "" "$g" --streams "$s"
      verify_ok "" "$g" --streams "$s" --no-fusion
    done
  done
  check_plan_json "$TMP/$shape-x.json" 4 true
  # Pins on streams 0-2 cannot be honoured with two streams: an input error.
  "$CLI" gen "$shape" --nodes 400 --pins --pin-streams 3 -o "$TMP/$shape-p.json" || bad "gen --pins"
  verify_ok "" "$TMP/$shape-p.json" --streams 3
  expect 1 "plan with pins above --streams" plan "$TMP/$shape-p.json" --streams 2
  grep -q 'error' "$TMP/err" && ok || bad "unhonourable pin without an error message"
done

# ---- --streams auto, --fusion, --sweep-streams -----------------------------------

moe_auto="$ROOT/data/examples/moe-experts.json"
for s in auto 0 65 x; do
  case $s in auto) want=0 ;; *) want=2 ;; esac
  expect $want "plan --streams $s" plan "$moe_auto" --streams "$s"
done
grep -q "or 'auto'" "$TMP/err" && ok || bad "--streams x: the message does not offer auto"
expect 0 "plan --streams auto" plan "$moe_auto" --streams auto
grep -q '^plan for .*(--streams auto: [1-8], fusion on)$' "$TMP/out" && ok ||
  bad "plan --streams auto: the header does not say the count it chose"
grep -q 'auto: the fewest streams within 1% of the fastest plan on up to 8, ' "$TMP/out" && ok ||
  bad "plan --streams auto: the summary does not say how it chose"
expect 0 "plan --streams auto --json" plan "$moe_auto" --streams auto --json
python3 - "$TMP/out" <<'PY' && ok || bad "plan --streams auto --json: no streams_auto, or a count above 8"
import json, sys
p = json.load(open(sys.argv[1]))
a = p["streams_auto"]
assert a["max"] == 8 and a["fastest_ns"] > 0
assert 1 <= p["options"]["streams"] <= 8 and p["streams"] <= p["options"]["streams"]
assert p["estimated_makespan_ns"] <= 1.01 * a["fastest_ns"] + 1
PY
verify_ok "" "$moe_auto" --streams auto
for f in auto all off; do
  expect 0 "plan --fusion $f" plan "$moe_auto" --fusion "$f" --json
  python3 - "$TMP/out" "$f" <<'PY' && ok || bad "plan --fusion $f: the document says otherwise"
import json, sys
p, mode = json.load(open(sys.argv[1])), sys.argv[2]
assert p["options"]["fusion"] == (mode != "off")
assert p.get("fusion_mode") == (None if mode == "off" else mode)
assert (mode == "off") == ("fused_groups_kept_back" not in p)
PY
  verify_ok "" "$moe_auto" --fusion "$f"
done
expect 2 "plan --fusion maybe" plan "$moe_auto" --fusion maybe
grep -q 'is auto, all or off' "$TMP/err" && ok || bad "--fusion maybe: no message"

# A graph of more groups than the search simulates (262,144): its one list
# schedule is simulated once, so the plan's makespan is simulate's.
"$CLI" gen chain --nodes 270000 -o "$TMP/big.json" || bad "gen chain --nodes 270000"
expect 0 "plan of 270,000 groups" plan "$TMP/big.json" --no-fusion --json
cp "$TMP/out" "$TMP/big-plan.json"
expect 0 "simulate of 270,000 groups" simulate "$TMP/big.json" --no-fusion --json
python3 - "$TMP/big-plan.json" "$TMP/out" <<'PY' && ok || bad "plan of 270,000 groups: its makespan is not simulate's"
import json, sys
p, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert p["estimated_makespan_ns"] == s["makespan_ns"] > 0, (p["estimated_makespan_ns"], s["makespan_ns"])
PY
expect 0 "plan text of 270,000 groups" plan "$TMP/big.json" --no-fusion
grep -q '^  est\. makespan   .* on h200 (simulated)$' "$TMP/out" && ok ||
  bad "plan of 270,000 groups: the summary's makespan is not the simulated one"
rm -f "$TMP/big.json" "$TMP/big-plan.json"

# Counts below the pins' need are skipped, and said so, in both forms.
"$CLI" gen layered --nodes 120 --pins --pin-streams 3 -o "$TMP/pins.json" || bad "gen --pins"
expect 0 "simulate --sweep-streams over pins" simulate "$TMP/pins.json" --sweep-streams 1..4
grep -q '^1 to 2 streams skipped: the graph pins nodes to streams up to 2$' "$TMP/out" && ok ||
  bad "sweep over pins: no line for the skipped counts"
grep -Eq '^3 +[0-9.]+ [mµ]?s' "$TMP/out" && ok || bad "sweep over pins: no row for 3 streams"
expect 0 "simulate --sweep-streams over pins --json" simulate "$TMP/pins.json" --sweep-streams 1..4 --json
python3 - "$TMP/out" <<'PY' && ok || bad "sweep over pins --json: rows or skipped wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["streams"] for r in d["rows"]] == [3, 4] and d["skipped"] == [1, 2]
assert all(r["fused_ns"] <= r["unfused_ns"] for r in d["rows"])
assert d["rows"][1]["fused_ns"] <= d["rows"][0]["fused_ns"]
PY

# ---- --timing and standard input ----------------------------------------------

expect 0 "plan --timing" plan "${EXAMPLES[0]}" --timing
grep -Eq '^timing: read [0-9]+\.[0-9]+ s$' "$TMP/err" && ok || bad "--timing: no read time"
grep -Eq '^timing: parse [0-9]+\.[0-9]+ s$' "$TMP/err" && ok || bad "--timing: no parse time"
grep -Evq '^timing: [a-z0-9_ -]+ [0-9]+\.[0-9]+ s$' "$TMP/err" && bad "--timing: odd line" || ok
[ -s "$TMP/out" ] && ok || bad "plan --timing printed no plan"
run plan "${EXAMPLES[0]}"
[ -s "$TMP/err" ] && bad "timing printed without --timing" || ok

"$CLI" gen fanout --nodes 300 | "$CLI" verify - >"$TMP/out" 2>"$TMP/err"
[ "$(cat "$TMP/out")" = "ok" ] && ok || bad "gen | verify - failed"
printf '{"format": "planscope-graph",\n "version": 3, "nodes": []}' | "$CLI" plan - 2>"$TMP/err" >/dev/null
rc=$?
[ "$rc" -eq 1 ] && ok || bad "bad graph on stdin: exit $rc"
grep -q '^<stdin>:2:[0-9]*: error: ' "$TMP/err" && ok || bad "stdin error not located: $(head -n 1 "$TMP/err")"

# ---- gen ---------------------------------------------------------------------

for shape in "${SHAPES[@]}"; do
  for n in 1 7 1000; do
    "$CLI" gen "$shape" --nodes "$n" --seed 3 --extras >"$TMP/a.json" || bad "gen $shape $n"
    "$CLI" gen "$shape" --nodes "$n" --seed 3 --extras >"$TMP/b.json" || bad "gen $shape $n"
    cmp -s "$TMP/a.json" "$TMP/b.json" && ok || bad "gen $shape --nodes $n is not deterministic"
    "$CLI" gen "$shape" --nodes "$n" --seed 3 --extras -o "$TMP/c.json" || bad "gen -o"
    cmp -s "$TMP/a.json" "$TMP/c.json" && ok || bad "gen -o differs from stdout"
    count=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"]))' \
      "$TMP/a.json")
    tol=$((n / 33))
    [ "$count" -ge $((n - tol)) ] && [ "$count" -le $((n + tol)) ] && ok \
      || bad "gen $shape --nodes $n made $count nodes"
    expect 0 "plan of gen $shape --nodes $n" plan "$TMP/a.json" --streams 2
    [ -s "$TMP/err" ] && bad "gen $shape --nodes $n: loader complains: $(head -n 1 "$TMP/err")" || ok
  done
  "$CLI" gen "$shape" --nodes 1000 --seed 4 --extras >"$TMP/d.json"
  cmp -s "$TMP/a.json" "$TMP/d.json" && bad "gen $shape: seeds 3 and 4 give the same graph" || ok
done
expect 0 "gen --seed=S form" gen chain --nodes=50 --seed=18446744073709551615
expect 2 "gen without shape" gen --nodes 10
expect 2 "gen without --nodes" gen chain
expect 2 "gen unknown shape" gen ring --nodes 10
expect 2 "gen --nodes 0" gen chain --nodes 0
expect 2 "gen --nodes abc" gen chain --nodes abc
expect 2 "gen --nodes too many" gen chain --nodes 99999999
expect 2 "gen --seed -1" gen chain --nodes 10 --seed -1
expect 2 "gen --seed overflow" gen chain --nodes 10 --seed 18446744073709551616
expect 2 "gen --pin-streams 0" gen chain --nodes 10 --pins --pin-streams 0
expect 2 "gen unknown option" gen chain --nodes 10 --frobnicate
expect 2 "gen two shapes" gen chain fanout --nodes 10
expect 1 "gen -o into a missing folder" gen chain --nodes 10 -o "$TMP/no/such/dir/g.json"
[ -e "$TMP/no/such/dir/g.json" ] && bad "gen -o left a file behind" || ok
printf 'old' >"$TMP/keep.json"
expect 0 "gen -o over an existing file" gen chain --nodes 10 -o "$TMP/keep.json"
"$CLI" gen chain --nodes 10 | cmp -s - "$TMP/keep.json" && ok || bad "gen -o did not replace the file"

# ---- --device, one of the PLAN-OPTIONS ------------------------------------------

# Every planning command plans for the device named, so the makespan the
# plan estimates, the simulation and the exported timeline agree, and
# differ from the default device's.
moe_dev="$ROOT/data/examples/moe-experts.json"
spans=()
for d in h200 a100; do
  "$CLI" plan "$moe_dev" --device "$d" --json >"$TMP/dp.json" &&
  "$CLI" simulate "$moe_dev" --device "$d" --json >"$TMP/ds.json" &&
  if $have_export; then
    "$CLI" export "$moe_dev" --device "$d" --view timeline --format json -o "$TMP/dt.json"
  else
    cp "$TMP/ds.json" "$TMP/dt.json"
  fi ||
    bad "--device $d: plan, simulate or export failed"
  m=$(python3 - "$TMP/dp.json" "$TMP/ds.json" "$TMP/dt.json" "$d" <<'PY'
import json, sys
plan, sim, tl = (json.load(open(f)) for f in sys.argv[1:4])
same = plan["estimated_makespan_ns"] == sim["makespan_ns"] == tl["makespan_ns"]
ok = same and sim["device"] == tl["device"] == sys.argv[4]
print(sim["makespan_ns"] if ok else "mismatch")
PY
)
  [ "$m" != mismatch ] && [ -n "$m" ] && ok || bad "--device $d: plan, simulate and export disagree"
  spans+=("$m")
done
[ "${spans[0]}" != "${spans[1]}" ] && ok || bad "--device a100 plans the same as h200"
device_cmds=(plan verify simulate kernels profile)
$have_export && device_cmds+=(export)
for c in "${device_cmds[@]}"; do
  extra=()
  case $c in export) extra=(-o "$TMP/nodev.svg") ;; kernels) extra=(-o "$TMP/nodev") ;; esac
  expect 1 "$c --device unknown" $c "$moe_dev" --device no-such-gpu "${extra[@]}"
  grep -q 'unknown device "no-such-gpu"' "$TMP/err" && ok || bad "$c --device unknown: no message"
done
expect 2 "--device without a name" plan "$moe_dev" --device

# ---- never over an input -----------------------------------------------------

# Every output is refused when it names a file the run read, under any name
# (the same path, a hard link, a symbolic link), and the input is untouched.
cp "$ROOT/data/examples/transformer-block.json" "$TMP/in.json"
cp "$TMP/in.json" "$TMP/in.orig"
ln "$TMP/in.json" "$TMP/in-hard.json"
ln -s in.json "$TMP/in-sym.json"
"$CLI" simulate "$TMP/in.json" --trace "$TMP/in-trace.json" >/dev/null
cp "$TMP/in-trace.json" "$TMP/in-trace.orig"
refused () {
  local desc=$1 file=$2 orig=$3
  shift 3
  expect 1 "$desc" "$@"
  grep -q "refusing to write" "$TMP/err" && ok || bad "$desc: no 'refusing to write' message"
  cmp -s "$file" "$orig" && ok || bad "$desc: the input was changed"
}
if $have_export; then
  refused "export over its input" "$TMP/in.json" "$TMP/in.orig" \
    export "$TMP/in.json" --view dag -o "$TMP/in.json"
  refused "export over a hard link to its input" "$TMP/in.json" "$TMP/in.orig" \
    export "$TMP/in.json" --format json -o "$TMP/in-hard.json"
  refused "export over its input through a symbolic link" "$TMP/in.json" "$TMP/in.orig" \
    export "$TMP/in-sym.json" --view plan -o "$TMP/in.json"
else
  refused "simulate --trace over a hard link to its input" "$TMP/in.json" "$TMP/in.orig" \
    simulate "$TMP/in.json" --trace "$TMP/in-hard.json"
  refused "simulate --trace over its input through a symbolic link" "$TMP/in.json" \
    "$TMP/in.orig" simulate "$TMP/in-sym.json" --trace "$TMP/in.json"
fi
refused "simulate --trace over its input" "$TMP/in.json" "$TMP/in.orig" \
  simulate "$TMP/in.json" --trace "$TMP/in.json"
refused "analyze --trace over its input" "$TMP/in-trace.json" "$TMP/in-trace.orig" \
  analyze "$TMP/in-trace.json" --trace "$TMP/in-trace.json"
[ -z "$(find "$TMP" -name '.in*' -newer "$TMP/in.orig")" ] && ok || bad "a refused write left a temporary file"
if $have_export; then
  expect 0 "export next to its input" export "$TMP/in.json" --view dag -o "$TMP/in.svg"

  # An output through a symbolic link replaces the file it names and keeps
  # the link; a pipe is written into, not replaced by a regular file.
  ln -s in.svg "$TMP/out-link.svg"
  expect 0 "export through a symbolic link" export "$TMP/in.json" --view plan -o "$TMP/out-link.svg"
  [ -L "$TMP/out-link.svg" ] && grep -q "<svg" "$TMP/in.svg" && ok ||
    bad "export replaced the symbolic link"
  mkfifo "$TMP/pipe"
  timeout 60 cat "$TMP/pipe" >"$TMP/pipe.out" &
  reader=$!
  expect 0 "export into a pipe" export "$TMP/in.json" --view plan --format json -o "$TMP/pipe"
  wait "$reader"
  [ -p "$TMP/pipe" ] && grep -q planscope-plan "$TMP/pipe.out" && ok || bad "export replaced the pipe"
  expect 1 "export onto a folder" export "$TMP/in.json" --view dag --format svg -o "$TMP"
else
  # The same contract through the trace writer.
  printf 'old' >"$TMP/in.trace.json"
  ln -s in.trace.json "$TMP/out-link.json"
  expect 0 "simulate --trace through a symbolic link" simulate "$TMP/in.json" \
    --trace "$TMP/out-link.json"
  [ -L "$TMP/out-link.json" ] && grep -q traceEvents "$TMP/in.trace.json" && ok ||
    bad "simulate --trace replaced the symbolic link"
  mkfifo "$TMP/pipe"
  timeout 60 cat "$TMP/pipe" >"$TMP/pipe.out" &
  reader=$!
  expect 0 "simulate --trace into a pipe" simulate "$TMP/in.json" --trace "$TMP/pipe"
  wait "$reader"
  [ -p "$TMP/pipe" ] && grep -q traceEvents "$TMP/pipe.out" && ok ||
    bad "simulate --trace replaced the pipe"
  expect 1 "simulate --trace onto a folder" simulate "$TMP/in.json" --trace "$TMP"
fi

# Independent work runs side by side: the mixture-of-experts example must
# simulate at least 1.6x faster on 4 streams than on 1.
moe="$PS_SOURCE_ROOT/data/examples/moe-experts.json"
if "$CLI" simulate "$moe" --streams 1 --json >"$TMP/s1.json" \
   && "$CLI" simulate "$moe" --streams 4 --json >"$TMP/s4.json"; then
  python3 - "$TMP/s1.json" "$TMP/s4.json" <<'PY' && ok || bad "moe-experts: 4 streams not 1.6x faster than 1"
import json, sys
one = json.load(open(sys.argv[1]))["makespan_ns"]
four = json.load(open(sys.argv[2]))["makespan_ns"]
sys.exit(0 if four > 0 and one / four >= 1.6 else 1)
PY
else
  bad "simulate moe-experts failed"
fi

# ---- memory budget ------------------------------------------------------------
# moe-experts' pool is 40.1 MiB on 4 streams and 16.1 MiB on one: a budget
# of 40M moves the plan to fewer streams and says what that costs; 10M is
# below every count's pool.
moe_ex="$ROOT/data/examples/moe-experts.json"
expect 0 "plan --memory-budget 40M" plan "$moe_ex" --memory-budget 40M
grep -q '^  memory budget   40 MiB: planned on [123] streams\? instead of 4, pool .* instead of 40.1 MiB, makespan .*instead of .*(+' \
  "$TMP/out" && ok || bad "plan --memory-budget 40M: no line saying what the budget cost"
expect 0 "plan --memory-budget 40M --json" plan "$moe_ex" --memory-budget 40M --json
python3 - "$TMP/out" <<'PY' && ok || bad "plan --memory-budget 40M --json: pool over the budget"
import json, sys
d = json.load(open(sys.argv[1]))
b = d["memory_budget"]
assert b["bytes"] == 40 << 20 and b["streams_from"] == 4, b
assert d["pool_bytes"] <= b["bytes"] < b["pool_bytes_from"], d
assert d["estimated_makespan_ns"] >= b["makespan_from_ns"], d
PY
expect 0 "verify --memory-budget 40M" verify "$moe_ex" --memory-budget 40M
expect 1 "plan --memory-budget 10M" plan "$moe_ex" --memory-budget 10M
grep -q 'cannot plan within the memory budget of 10 MiB' "$TMP/err" && ok ||
  bad "plan --memory-budget 10M does not say why"
expect 0 "plan --memory-budget 1G" plan "$moe_ex" --memory-budget 1G
grep -q '^  memory budget   1 GiB: the pool fits$' "$TMP/out" && ok || bad "a budget that fits"
expect 2 "--memory-budget 0" plan "$moe_ex" --memory-budget 0
expect 2 "--memory-budget 12X" plan "$moe_ex" --memory-budget 12X

# ---- diff ---------------------------------------------------------------------

# Two plans of one graph: one stream against four.  The makespan and each
# kernel's count are in the document; nothing is new or gone.
moe="$ROOT/data/examples/moe-experts.json"
if "$CLI" diff "$moe" "$moe" --json >"$TMP/d0.json" &&
   "$CLI" diff "$moe" "$moe" --streams 1 --json >"$TMP/d1.json"; then
  python3 - "$TMP/d0.json" "$TMP/d1.json" <<'PY' && ok || bad "diff of moe-experts: wrong document"
import json, sys
same, one = (json.load(open(f)) for f in sys.argv[1:3])
assert same["format"] == "planscope-diff" and same["makespan_ns"][0] == same["makespan_ns"][1]
assert all(k["count"][0] == k["count"][1] and k["total_ns"][0] == k["total_ns"][1]
           for k in same["kernels"])
assert one["gpu_ops"] == same["gpu_ops"]
PY
else
  bad "diff of moe-experts failed"
fi
expect 2 "diff with one file" diff "$moe"
# ---- import ----------------------------------------------------------------------

# A trace as a graph file: two kernels on two streams, the second waiting
# for the first; the file plans, keeps both pins and the wait.
cat >"$TMP/tiny-trace.json" <<'EOF2'
{"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "ts": 5, "dur": 1, "pid": 1, "tid": 1, "args": {"correlation": 9}},
 {"ph": "X", "cat": "kernel", "name": "first", "ts": 2, "dur": 10, "pid": 0, "tid": 7, "args": {"device": 0, "stream": 7}},
 {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "ts": 6, "dur": 0, "pid": 0, "tid": 8, "args": {"device": 0, "stream": 8, "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 9, "cuda_sync_kind": "Stream Wait Event"}},
 {"ph": "X", "cat": "kernel", "name": "second", "ts": 13, "dur": 4, "pid": 0, "tid": 8, "args": {"device": 0, "stream": 8}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "ts": 18, "dur": 2, "pid": 0, "tid": 8, "args": {"device": 0, "stream": 8}}
]}
EOF2
expect 0 "import a trace" import "$TMP/tiny-trace.json" -o "$TMP/tiny.json"
expect 0 "plan an imported trace" plan "$TMP/tiny.json" --json
python3 - "$TMP/tiny.json" "$TMP/out" <<'PY' && ok || bad "import: the graph file lost the trace's streams or its wait"
import json, sys
g, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
nodes = {n["name"]: n for n in g["nodes"]}
first, second = nodes["first #1"], nodes["second #2"]
assert first["stream"] == 0 and second["stream"] == 1
assert first["cost_ns"] == 10000 and second["cost_ns"] == 4000
assert "first #1" in second["after"]
copy = nodes["Memcpy DtoH (Device -> Pinned) #3"]
assert copy["dir"] == "d2h" and copy["reads"] and copy["after"] == ["second #2"]
assert p["streams"] == 2
PY
expect 0 "import --free-streams" import "$TMP/tiny-trace.json" --free-streams
grep -q '"stream"' "$TMP/out" && bad "import --free-streams kept pins" || ok
expect 1 "import --et of a missing file" import "$TMP/tiny-trace.json" --et "$TMP/no-such-et.json"
grep -q "^$TMP/no-such-et.json: error: cannot open" "$TMP/err" && ok ||
  bad "import --et of a missing file: no message naming it"
echo '{"traceEvents": []}' >"$TMP/not-et.json"
expect 1 "import --et of a Chrome trace" import "$TMP/tiny-trace.json" --et "$TMP/not-et.json"
grep -q 'not an execution trace' "$TMP/err" && ok || bad "import --et of a Chrome trace: no message"
expect 1 "import a graph file" import "$moe"
expect 2 "import --durations of a trace" import "$TMP/tiny-trace.json" --durations "$TMP/tiny-trace.json"
grep -q 'is for a CUDA-graph dump' "$TMP/err" && ok || bad "import --durations of a trace: no message"

# A CUDA-graph dump timed by a trace of its replays: each kernel takes the
# median of its launches, and plans with that time, not an estimate.
cat >"$TMP/dump.dot" <<'EOF2'
digraph dot {
subgraph cluster_1 {
label="graph_1" graph[style="dashed"];
"graph_1_node_0"[style="bold" shape="octagon" label="0
_Z10exp_kernelPKfPfi
"];
"graph_1_node_1"[style="bold" shape="octagon" label="1
_Z11relu_kernelPKfPfi
"];
"graph_1_node_0" -> "graph_1_node_1";
}
}
EOF2
python3 - "$TMP/dump-replay.json" <<'PY'
import json, sys
ev, t = [], 0
for r in range(3):
    for name, d in (("exp_kernel(float const*, float*, int)", 100 + r),
                    ("relu_kernel(float const*, float*, int)", 50)):
        ev.append({"ph": "X", "cat": "kernel", "name": name, "ts": t, "dur": d, "pid": 0,
                   "tid": 7, "args": {"stream": 7}})
        t += d + 1
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
expect 0 "import a dump --durations" import "$TMP/dump.dot" --durations "$TMP/dump-replay.json" -o "$TMP/dump.json"
grep -q '2 of 2 kernels timed by .* (median of 3 replays)' "$TMP/err" && ok || bad "import --durations: no summary"
expect 0 "plan a timed dump" plan "$TMP/dump.json"
grep -q '^  durations ' "$TMP/out" && bad "plan of a timed dump: durations not measured" || ok
python3 - "$TMP/dump.json" <<'PY' && ok || bad "import --durations: wrong durations"
import json, sys
g = json.load(open(sys.argv[1]))
cost = {n["name"]: n["cost_ns"] for n in g["nodes"]}
assert cost == {"graph_1_node_0": 101000, "graph_1_node_1": 50000}, cost
PY
expect 0 "plan an untimed dump" plan "$TMP/dump.dot"
grep -q '^  durations       2 of 2 kernels unknown .*--durations TRACE' "$TMP/out" && ok ||
  bad "plan of an untimed dump: unknown durations not said"

expect 1 "import an untimed default-flag dump" import "$TMP/dump.dot" -o "$TMP/untimed.json"
grep -q 'dump.dot:[0-9]*:[0-9]*: error: 2 kernels .* neither a launch configuration .* nor a measured duration' \
  "$TMP/err" && [ ! -e "$TMP/untimed.json" ] && ok ||
  bad "import of an untimed default-flag dump: no located refusal, or a file written"

# A conditional of a CUDA-graph dump: a WHILE with its body graph as its
# branch; --assume takes the loop out, import writes it as a conditional
# and empty nodes are left out with their order kept.
cat >"$TMP/while.dot" <<'EOF2'
digraph dot {
subgraph cluster_1 {
label="graph_1" graph[style="dashed"];
"graph_1_node_0"[style="bold" shape="record" label="{KERNEL
| {ID | 0 (topoId: 3) | _Z4initPi\<\<\<1024,256,0\>\>\>}
}"];
"graph_1_node_1"[style="solid" shape="record" label="{CONDITIONAL
| {{ID | node handle | type | size | handle} | {1 (topoId: 2) | 0x55D0 | WHILE | 1 | 0x1}}
| {body graphs | graph_2}
}"];
"graph_1_node_2"[style="solid" shape="record" label="{EMPTY
| {ID | 2 (topoId: 1)}
}"];
"graph_1_node_3"[style="bold" shape="record" label="{KERNEL
| {ID | 3 (topoId: 0) | _Z6finishPi\<\<\<1024,256,0\>\>\>}
}"];
"graph_1_node_0" -> "graph_1_node_1";
"graph_1_node_1" -> "graph_1_node_2";
"graph_1_node_2" -> "graph_1_node_3";
}
subgraph cluster_2 {
label="graph_2" graph[style="dashed"];
"graph_2_node_0"[style="bold" shape="record" label="{KERNEL
| {ID | 0 (topoId: 0) | _Z4stepPi\<\<\<65536,256,0\>\>\>}
}"];
}
}
EOF2
expect 0 "plan a dump with a WHILE" plan "$TMP/while.dot"
grep -q 'cond    graph_1_node_1 \[while handle 0x1\]' "$TMP/out" && ok ||
  bad "plan of a WHILE: the conditional is not shown as one"
expect 0 "simulate a WHILE" simulate "$TMP/while.dot" --json
once=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["makespan_ns"])' "$TMP/out")
expect 0 "simulate a WHILE not entered" simulate "$TMP/while.dot" --json --assume graph_1_node_1=else
none=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["makespan_ns"])' "$TMP/out")
python3 -c 'import sys; sys.exit(0 if float(sys.argv[2]) + 10000 < float(sys.argv[1]) else 1)' \
  "$once" "$none" && ok || bad "--assume NODE=else did not take the loop's body out ($once, $none)"
expect 1 "--assume of a kernel" plan "$TMP/while.dot" --assume graph_1_node_0=else
grep -q 'node "graph_1_node_0" is a kernel, not a conditional' "$TMP/err" && ok ||
  bad "--assume of a kernel: no message"
expect 2 "--assume without a branch" plan "$TMP/while.dot" --assume graph_1_node_1
expect 0 "import a dump with a WHILE" import "$TMP/while.dot" -o "$TMP/while.json"
grep -q 'leaves out 1 empty or unmodelled nodes' "$TMP/err" && ok || bad "import: no note of the empty node"
python3 - "$TMP/while.json" <<'PY' && ok || bad "import of a WHILE: wrong conditional or order"
import json, sys
nodes = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
c = nodes["graph_1_node_1"]
assert c["op"] == "conditional" and c["then"] == ["graph_2_node_0"], c
assert c["condition"] == "handle 0x1", c
assert "graph_1_node_2" not in nodes
assert nodes["graph_1_node_3"]["after"] == ["graph_2_node_0"], nodes["graph_1_node_3"]
PY
expect 0 "plan an imported WHILE" plan "$TMP/while.json" --assume graph_1_node_1=then

# The before/after pair of Kineto's docs, when the third-party data is here.
data=${PLANSCOPE_REAL_DATA:-$ROOT/../shared/data}
if [ -f "$data/real/kineto/before_fix_trace.json" ]; then
  expect 0 "diff of the before/after traces" diff "$data/real/kineto/before_fix_trace.json" \
    "$data/real/kineto/after_fix_trace.json"
  grep -q '^  makespan   A ' "$TMP/out" && grep -q 'critical path: ' "$TMP/out" && ok ||
    bad "diff of the before/after traces prints no makespans"
  # What the fix changed: the stream wait names the stream it waits on.
  grep -q '^ *naming the stream or event they wait on *0 *1$' "$TMP/out" && ok ||
    bad "diff of the before/after traces does not show the named stream wait"
  expect 0 "diff --json of the before/after traces" diff \
    "$data/real/kineto/before_fix_trace.json" "$data/real/kineto/after_fix_trace.json" --json
  python3 - "$TMP/out" <<'PY' && ok || bad "diff --json: wrong synchronisation counts"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sync"] == {"stream_waits": [1, 1], "stream_waits_named": [0, 1],
                     "host_syncs": [1, 1]}, d["sync"]
PY
  expect 0 "replay of a trace" replay "$data/real/kineto/after_fix_trace.json" --json
  grep -q '"format": "planscope-replay"' "$TMP/out" && ok || bad "replay --json: no document"
fi
# HTA's Kineto + execution trace pair: the tensors become buffers, and a
# re-plan on two streams is ordered by them.
kin="$data/wild/kineto/hta_execution_trace_simple_add_kineto.json.gz"
et="$data/wild/other/hta_execution_trace_simple_add_et.json.gz"
if [ -f "$kin" ] && [ -f "$et" ]; then
  expect 0 "import --et" import "$kin" --et "$et" --free-streams -o "$TMP/et-graph.json"
  grep -q 'linked 4 of 4 GPU ops' "$TMP/err" && ok || bad "import --et: no link summary"
  python3 - "$TMP/et-graph.json" <<'PY' && ok || bad "import --et: wrong buffers or accesses"
import json, sys
g = json.load(open(sys.argv[1]))
assert len(g["buffers"]) == 4
adds = [n for n in g["nodes"] if "CUDAFunctor_add" in n["function"]]
assert len(adds) == 2 and all(len(n["reads"]) == 2 and len(n["writes"]) == 1 for n in adds)
assert not any("stream" in n for n in g["nodes"])
PY
  expect 0 "plan of an --et import on 2 streams" plan "$TMP/et-graph.json" --streams 2
  expect 0 "replay --et --streams 2" replay "$kin" --et "$et" --streams 2 --json
  python3 - "$TMP/out" <<'PY' && ok || bad "replay --et --streams: wrong what-if"
import json, sys
r = json.load(open(sys.argv[1]))
w = r["what_if"]
assert w["streams"] == 2 and w["data_ordered_ops"] == 4
assert w["what_if_end_ns"] <= w["measured_end_ns"] + 1
PY
  expect 1 "an execution trace alone" plan "$et"
  grep -q 'import KINETO --et THIS' "$TMP/err" && ok || bad "an execution trace alone: no pairing hint"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
