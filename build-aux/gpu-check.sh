#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds planscope with the GPU backend,
# profiles every example in both modes with --check (fused and unfused runs
# must compute the same outputs), prints predicted against measured
# makespans and CUPTI's overhead, then runs the `gpu` test suite.  Takes a
# few minutes at most; exits 3 with the reason when no GPU can be used.
#
#   bash build-aux/gpu-check.sh            # build in _build/gpu-check
#   BUILD=_build/x ITERATIONS=20 bash build-aux/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD:-_build/gpu-check}
iterations=${ITERATIONS:-10}
toolkit=${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}

if [ ! -d "$build" ]; then
  meson setup "$build" --buildtype=release -Dgpu=enabled -Dtoolkit_root="$toolkit" >/dev/null
fi
ninja -C "$build" app/planscope-cli tests/test-gpu >/dev/null
cli="$build/app/planscope-cli"

# A GPU at all?  (profile exits 3 with the reason when not.)
set +e
probe=$("$cli" profile data/examples/user-module.json --iterations 1 --warmup 0 2>&1 >/dev/null)
rc=$?
set -e
if [ "$rc" -eq 3 ]; then
  echo "gpu-check: no usable GPU: ${probe#planscope-cli profile: }" >&2
  exit 3
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
printf '%-28s %-8s %12s %12s %8s %10s %s\n' example mode measured predicted error "cupti" check
for ex in data/examples/*.json; do
  name=$(basename "$ex" .json)
  for mode in streams graph; do
    json="$out/$name-$mode.json"
    if ! "$cli" profile "$ex" --mode "$mode" --iterations "$iterations" --check --json \
        >"$json" 2>"$out/err"; then
      printf '%-28s %-8s FAILED: %s\n' "$name" "$mode" "$(tail -n 1 "$out/err")"
      status=1
      continue
    fi
    python3 - "$json" "$name" "$mode" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d.get("prediction") or {}
o = d["overhead"]
def us(ns):
    return "%.1f us" % (ns / 1e3) if ns is not None else "-"
err = p.get("makespan_error")
cup = ("%+.1f%%" % (100.0 * (o["traced_ns"] - o["untraced_ns"]) / o["untraced_ns"])
       if o.get("untraced_ns") else "-")
print("%-28s %-8s %12s %12s %8s %10s %s" % (
    sys.argv[2], sys.argv[3], us(d["makespan_ns"]), us(p.get("makespan_ns")),
    "%+.1f%%" % (100 * err) if err is not None else "-", cup,
    "ok" if d["check"]["equal"] else "DIFFER: " + d["check"].get("first_mismatch", "")))
PY
  done
done
echo "(error: predicted against measured makespan; cupti: a traced run against an untraced one)"

echo "== gpu test suite"
meson test -C "$build" --suite gpu --print-errorlogs --no-rebuild || status=1
exit $status
