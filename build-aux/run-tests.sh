#!/usr/bin/env bash
# Every test: installs what is missing, builds twice (a normal build and an
# ASan+UBSan build) and runs the whole suite in both (the normal build also
# runs the CLI on every example under valgrind), then fuzzes every loader
# for PS_FUZZ_SECONDS (default 20) seconds each.
set -euo pipefail
cd "$(dirname "$0")/.."
bash build-aux/install-deps.sh

[ -d _build/test ] || meson setup _build/test --buildtype=debugoptimized >/dev/null
[ -d _build/asan ] || meson setup _build/asan --buildtype=debug \
  -Db_sanitize=address,undefined -Db_lundef=false >/dev/null

status=0
passed=0
failed=0
for dir in _build/test _build/asan; do
  echo "== $dir"
  ninja -C "$dir"
  meson test -C "$dir" --print-errorlogs --no-rebuild --no-suite gpu || status=1
  # Count from meson's log so the closing line covers both builds.
  read -r p f < <(python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("result") in ("OK", "EXPECTEDFAIL"): p += 1
    else: f += 1
print(p, f)
PY
)
  passed=$((passed + p))
  failed=$((failed + f))
done
# Every loader and the pipeline under libFuzzer (ASan+UBSan) for a short
# while, counted as one test; tests/fuzz/run SECONDS runs them longer.
echo "== fuzz"
if bash tests/fuzz/run "${PS_FUZZ_SECONDS:-20}"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
