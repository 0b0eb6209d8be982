#!/usr/bin/env bash
# test-profile-fake.sh: `profile` end to end through the fake driver
# (tests/fake-cuda.c), in every build that has the GPU backend, the
# CLI-only one too: every example in both modes with --check passes, every
# CUPTI record is tied to a step and none is missing, and the driver, CUPTI
# and NVRTC versions are printed; records that never come fail the run.
#
# Usage: test-profile-fake.sh PATH/TO/planscope-cli PATH/TO/libfake-cuda.so
set -u
CLI=${1:?usage: test-profile-fake.sh CLI FAKE}
FAKE=${2:?usage: test-profile-fake.sh CLI FAKE}
ROOT=${PS_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PLANSCOPE_LIBCUDA=$FAKE PLANSCOPE_LIBCUPTI=$FAKE XDG_CACHE_HOME=$TMP/cache

pass=0
fail=0
ok () { pass=$((pass + 1)); }
bad () {
  fail=$((fail + 1))
  echo "FAIL: $*" >&2
}

n=0
for ex in "$ROOT"/data/examples/*.json; do
  name=$(basename "$ex" .json)
  n=$((n + 1))
  for mode in streams graph; do
    if "$CLI" profile "$ex" --mode "$mode" --iterations 3 --check --json >"$TMP/out.json" \
        2>"$TMP/err"; then
      python3 - "$TMP/out.json" <<'PY' && ok || bad "$name ($mode): $(cat "$TMP/err")"
import json, sys
d = json.load(open(sys.argv[1]))
o = d["overhead"]
assert d["source"] == "measured" and d["iterations"] == 3, "not a measured timeline"
assert o["unmatched"] == 0 and o["missing"] == 0, "records: %r" % o
assert o["records"] + o["untimed"] == o["expected"] > 0, "records: %r" % o
assert d["check"]["equal"], d["check"]
v = d["versions"]
assert v["driver"] == "13.0" and v["cupti_api"] > 0 and v["nvrtc"], v
PY
    else
      bad "$name ($mode): exit $? $(tail -n 2 "$TMP/err")"
    fi
  done
done
[ "$n" -ge 6 ] && ok || bad "only $n examples in $ROOT/data/examples"

# Lost records are never a silent empty result.
PS_FAKE_DROP=5 "$CLI" profile "$ROOT/data/examples/copy-compute-overlap.json" >"$TMP/out" \
  2>"$TMP/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'CUPTI records do not match the run: .* missing (' "$TMP/err" && ok ||
  bad "dropped records: exit $rc, $(head -n 1 "$TMP/err")"
[ -s "$TMP/out" ] && bad "dropped records: a report was printed" || ok

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
