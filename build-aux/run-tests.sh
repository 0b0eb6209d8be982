#!/usr/bin/env bash
# Every test: installs what is missing, builds three times (a normal build,
# an ASan+UBSan build and the CLI alone, as a machine without GTK, Graphviz
# or cmocka builds it) and runs the suites of each (the normal build also
# runs the CLI on every example under valgrind), then fuzzes every loader
# for PS_FUZZ_SECONDS (default 20) seconds each.  Suites that read the
# third-party files of ../shared/data run where that folder is (or
# $PLANSCOPE_REAL_DATA names one); the last line counts those left out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash build-aux/install-deps.sh

[ -d _build/test ] || meson setup _build/test --buildtype=debugoptimized >/dev/null
[ -d _build/asan ] || meson setup _build/asan --buildtype=debug \
  -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
# The CLI alone, as a bare GPU machine builds it: no render/, no app, no
# cmocka, and pkg-config pointed at an empty folder so that nothing it
# knows is used.  Its shell suites run (the CLI's contract, profile through
# the fake driver, the libraries it links).
if [ ! -d _build/cli ]; then
  mkdir -p _build/no-pkg-config
  PKG_CONFIG_LIBDIR=$PWD/_build/no-pkg-config meson setup _build/cli --buildtype=release \
    -Drender=disabled -Dapp=disabled -Dtests=disabled >/dev/null
fi

status=0
passed=0
failed=0
left_out=()
for dir in _build/test _build/asan _build/cli; do
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
  # Suites the build left out for want of the third-party data.
  while read -r name; do
    [ -n "$name" ] && left_out+=("${dir#_build/}/$name")
  done < "$dir/tests/left-out.txt"
done
# Every loader and the pipeline under libFuzzer (ASan+UBSan) for a short
# while, counted as one test; tests/fuzz/run SECONDS runs them longer.
echo "== fuzz"
if bash tests/fuzz/run "${PS_FUZZ_SECONDS:-20}"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
fi
if [ ${#left_out[@]} -gt 0 ]; then
  echo "left out, for want of the third-party data (../shared/data beside the checkout," \
       "or \$PLANSCOPE_REAL_DATA): ${left_out[*]}"
fi
echo "tests: $passed passed, $failed failed, ${#left_out[@]} left out"
[ "$failed" -eq 0 ] || status=1
exit $status
