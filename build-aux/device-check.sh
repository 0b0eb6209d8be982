#!/usr/bin/env bash
# The GPU check, run from the repository root on the lent GPU machine (with
# the bundle that build-aux/device-bundle.sh wrote into _device/), on a
# developer's GPU workstation (through build-aux/gpu-check.sh), or here
# with --fake as a dry run through the fake driver.
#
#   bash build-aux/device-check.sh                 # on the GPU machine
#   bash build-aux/device-check.sh --fake [LIB]    # dry run, no GPU
#   bash build-aux/device-check.sh --no-torch      # leave out the torch data
#
# It prints the GPU and the driver, CUPTI and NVRTC versions; profiles every
# data/examples/*.json in both modes with --check and prints one row per
# example and mode (measured against predicted makespan, CUPTI records and
# the fused/unfused comparison); runs test-gpu (the cmocka suite "gpu");
# then, if build-aux/device-torch-data.py is there, records PyTorch traces
# with it.  Results: $OUT/device-check.tar.gz (every JSON, stderr and log)
# and $OUT/device-check.txt (what was printed); the torch script writes
# $OUT/torch-data.tar.gz and $OUT/torch-data.json itself.  Ends with
# "device-check: PASS" (exit 0) or "device-check: FAIL (N problems)" (1).
#
# Environment:
#   OUT         output folder (default _device/out)
#   CLI         planscope-cli to use (default _device/bin/planscope-cli, or a
#               CLI-only build made on the spot when that one does not run)
#   TEST_GPU    test-gpu to run (default _device/bin/test-gpu; "none": skip)
#   LIBDIR      shared libraries for test-gpu (default _device/lib when CLI
#               is not given)
#   ITERATIONS  --iterations of every profile (default 10)
#   BUDGET      seconds the whole check may take (default 330): a phase that
#               would run past it is cut short, and that counts as a failure
#   CUDA_HOME   the toolkit for a build on the spot (default /usr/local/cuda)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

# --- options ---------------------------------------------------------------
fake=
torch=1
while [ $# -gt 0 ]; do
  case "$1" in
    --fake)
      fake=_device/lib/libfake-cuda.so
      if [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; then
        fake=$2
        shift
      fi
      ;;
    --fake=*) fake=${1#--fake=} ;;
    --no-torch) torch= ;;
    -h|--help) usage; exit 0 ;;
    *) echo "device-check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

iterations=${ITERATIONS:-10}
budget=${BUDGET:-330}
# test-gpu's libraries (libcmocka.so.0) travel in the bundle's lib/.
libdir=${LIBDIR:-}
[ -n "$libdir" ] || [ -n "${CLI:-}" ] || libdir=_device/lib
case "$libdir" in /*|"") ;; *) libdir=$root/$libdir ;; esac
out=${OUT:-_device/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Everything but the two result files is written into a work folder outside
# $OUT (the device tool brings back only a few files) and packed into one
# archive, after every phase, so that a run cut short still leaves one.
work_parent=$(mktemp -d "${TMPDIR:-/tmp}/device-check.XXXXXX")
work=$work_parent/device-check
mkdir -p "$work/profiles"
trap 'rm -rf "$work_parent"' EXIT
summary=$out/device-check.txt
archive=$out/device-check.tar.gz
: >"$summary"
rm -f "$archive"

# say: print a line and keep it for device-check.txt.
say() {
  printf '%s\n' "$*" | tee -a "$summary"
}
loud() {                            # a problem: counted, and printed loudly
  problems=$((problems + 1))
  say "FAIL: $*"
}
pack() {
  cp "$summary" "$work/device-check.txt"
  tar -czf "$archive.part" -C "$work_parent" device-check && mv "$archive.part" "$archive"
}

# Times in milliseconds since the start, and the seconds left of the budget.
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
t_start=$(now_ms)
left_s() { echo $(( budget - ($(now_ms) - t_start) / 1000 )); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
phase_start=$t_start
phase_times=()
phase_end() {                       # phase_end NAME: prints and keeps its time
  local t
  t=$(now_ms)
  phase_times+=("$1 $(secs $((t - phase_start)))s")
  say "-- $1: $(secs $((t - phase_start))) s"
  phase_start=$t
  pack
}
# cap SECONDS [RESERVE]: a step's timeout, cut to what is left of the budget
# once RESERVE seconds are kept for the phases after it.
cap() {
  local left
  left=$(( $(left_s) - ${2:-0} ))
  if [ "$left" -lt 1 ]; then left=1; fi
  if [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}
# What the later phases keep: test-gpu and the torch data keep 120 s from
# the profiles, the torch data 30 s from test-gpu.
reserve_profiles=120
reserve_test_gpu=30

problems=0
say "== planscope device check ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n))"
say "tree: $(git describe --always --dirty --tags 2>/dev/null || echo '(no git)')"
if [ -z "${CLI:-}" ] && [ -f _device/MANIFEST ]; then
  say "bundle: $(sed -n 's/^describe: *//p' _device/MANIFEST), built $(sed -n 's/^date: *//p' _device/MANIFEST)"
  cp _device/MANIFEST "$work/MANIFEST"
fi
{
  uname -a
  ldd --version 2>&1 | sed -n 1p
  python3 --version 2>&1 || true
  echo "CUDA_HOME=${CUDA_HOME:-}"
  echo "fake=${fake:-}"
} >"$work/host.txt" 2>&1

# --- fake driver (dry run) --------------------------------------------------
if [ -n "$fake" ]; then
  case "$fake" in /*) ;; *) fake=$root/$fake ;; esac
  if [ ! -f "$fake" ]; then
    echo "device-check: no fake driver at $fake (run build-aux/device-bundle.sh)" >&2
    exit 2
  fi
  export PLANSCOPE_LIBCUDA=$fake PLANSCOPE_LIBCUPTI=$fake
  say "DRY RUN: PLANSCOPE_LIBCUDA and PLANSCOPE_LIBCUPTI = $fake"
  say "         (the fake's kernels compute nothing: times and checks mean nothing)"
fi

# --- the CLI and test-gpu ---------------------------------------------------
cli_runs() { "$1" --version >/dev/null 2>&1; }

test_gpu=${TEST_GPU:-}
if [ -n "${CLI:-}" ]; then
  cli=$CLI
  if ! cli_runs "$cli"; then
    say "device-check: CLI=$cli does not run:"
    "$cli" --version 2>&1 | tail -n 3 | sed 's/^/  /' | tee -a "$summary" || true
    exit 1
  fi
else
  cli=_device/bin/planscope-cli
  [ -n "$test_gpu" ] || test_gpu=_device/bin/test-gpu
  if [ ! -x "$cli" ] || ! cli_runs "$cli"; then
    # No bundle, or it does not run here (e.g. a newer glibc than this
    # machine's): build a CLI-only build on the spot.  test-gpu needs cmocka,
    # which is not here, so it is left out.
    say "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    if [ -x "$cli" ]; then
      say "!!! $cli does not run here:"
      "$cli" --version 2>&1 | tail -n 3 | sed 's/^/!!!   /' | tee -a "$summary" || true
    else
      say "!!! no $cli (run build-aux/device-bundle.sh on the dev machine)"
    fi
    say "!!! BUILDING A CLI-ONLY BUILD HERE in _build/device-local; test-gpu is LEFT OUT"
    say "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
    build=_build/device-local
    toolkit=${CUDA_HOME:-/usr/local/cuda}
    meson=(meson)
    command -v meson >/dev/null 2>&1 || meson=(python3 -m mesonbuild.mesonmain)
    set +e
    {
      if [ ! -f "$build/build.ninja" ]; then
        timeout -k 5 "$(cap 180 "$reserve_profiles")" "${meson[@]}" setup "$build" --buildtype=release \
          -Drender=disabled -Dapp=disabled -Dtests=disabled -Dgpu=enabled \
          "-Dtoolkit_root=$toolkit"
      fi && timeout -k 5 "$(cap 180 "$reserve_profiles")" ninja -C "$build" app/planscope-cli
    } >"$work/local-build.log" 2>&1
    rc=$?
    set -e
    cli=$build/app/planscope-cli
    if [ "$rc" -ne 0 ] || ! cli_runs "$cli"; then
      say "FAIL: the build on the spot failed (exit $rc); its last lines:"
      tail -n 15 "$work/local-build.log" | sed 's/^/  /' | tee -a "$summary"
      problems=$((problems + 1))
      phase_end build
      say "device-check: FAIL (1 problem)"
      pack
      exit 1
    fi
    loud "test-gpu left out: no bundle that runs here, and this build has no cmocka"
    test_gpu=none
  fi
fi
case "$cli" in /*) ;; *) cli=$root/$cli ;; esac
say "CLI: $cli ($("$cli" --version 2>&1 | sed -n 1p))"
phase_end setup

# --- the GPU ----------------------------------------------------------------
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu_line=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total \
               --format=csv,noheader 2>&1 || true)
  timeout 30 nvidia-smi >"$work/nvidia-smi.txt" 2>&1 || true
  say "GPU: ${gpu_line//$'\n'/; }"
else
  say "GPU: nvidia-smi: not here"
fi

# --- profiles ---------------------------------------------------------------
# The JSON is read with python3's standard library; a key the CLI does not
# write (yet) prints "-".
rowpy=$work_parent/row.py
cat >"$rowpy" <<'PY'
import json, sys

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def get(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d or d[k] is None:
            return None
        d = d[k]
    return d

def num(v):
    return "-" if v is None else str(v)

def us(ns):
    return "-" if not isinstance(ns, (int, float)) else "%.1f us" % (ns / 1e3)

def pct(frac):
    return "-" if not isinstance(frac, (int, float)) else "%+.1f%%" % (100.0 * frac)

if sys.argv[1] == "versions":
    v = get(load(sys.argv[2]), "versions") or {}
    print("driver %s, CUPTI API %s, NVRTC %s" % (
        num(v.get("driver")), num(v.get("cupti_api")), num(v.get("nvrtc"))))
    sys.exit(0)

# row JSON STDERR NAME MODE EXIT TIMEOUT
_, _, jpath, epath, name, mode, rc, limit = sys.argv
rc = int(rc)
d = load(jpath)
try:
    with open(epath, errors="replace") as f:
        lines = [l.strip() for l in f if l.strip()]
except OSError:
    lines = []
last = lines[-1] if lines else "(no message)"

o = get(d, "overhead") or {}
trace, untr = o.get("traced_ns"), o.get("untraced_ns")
cupti = "-"
if isinstance(trace, (int, float)) and isinstance(untr, (int, float)) and untr:
    cupti = "%+.1f%%" % (100.0 * (trace - untr) / untr)

problems = []
chk = get(d, "check")
if rc == 124 or rc == 137:
    check = "FAILED: timed out after %s s" % limit
    problems.append("%s %s: timed out after %s s" % (name, mode, limit))
elif rc != 0:
    check = "FAILED: " + (last if len(last) <= 100 else last[:97] + "...")
    problems.append("%s %s: exit %d: %s" % (name, mode, rc, last))
elif d is None:
    check = "FAILED: no JSON on stdout"
    problems.append("%s %s: exit 0 but no JSON document" % (name, mode))
elif not isinstance(chk, dict):
    check = "FAILED: no \"check\" in the JSON"
    problems.append("%s %s: no check result" % (name, mode))
elif chk.get("equal"):
    check = "ok"
else:
    check = "DIFFER: " + num(chk.get("first_mismatch"))
    problems.append("%s %s: fused and unfused outputs differ (%s mismatches, max %s): %s" % (
        name, mode, num(chk.get("mismatches")), num(chk.get("max_abs_diff")),
        num(chk.get("first_mismatch"))))
if d is not None:
    for key, what in (("unmatched", "CUPTI records left unmatched"),
                      ("missing", "steps without a CUPTI record"),
                      ("dropped", "CUPTI records dropped")):
        v = o.get(key)
        if isinstance(v, (int, float)) and v > 0:
            problems.append("%s %s: %s %s" % (name, mode, v, what))

print("%-26s %-7s %11s %11s %7s %6s %7s %5s %6s %5s  %s" % (
    name, mode, us(get(d, "makespan_ns")), us(get(d, "prediction", "makespan_ns")),
    pct(get(d, "prediction", "makespan_error")), cupti,
    num(o.get("records")), num(o.get("unmatched")), num(o.get("untimed")),
    num(o.get("missing")), check))
for p in problems:
    print("FAIL: " + p)
PY

header=$(printf '%-26s %-7s %11s %11s %7s %6s %7s %5s %6s %5s  %s' \
  example mode measured predicted error cupti records unm untimed miss check)
header_said=
versions_done=
no_gpu=
shopt -s nullglob
examples=(data/examples/*.json)
for ex in "${examples[@]}"; do
  name=$(basename "$ex" .json)
  for mode in streams graph; do
    json=$work/profiles/$name-$mode.json
    err=$work/profiles/$name-$mode.stderr
    limit=$(cap 120 "$reserve_profiles")
    if [ -n "$no_gpu" ]; then            # counted once, where it was found
      say "$(printf '%-26s %-7s skipped: no usable GPU' "$name" "$mode")"
      continue
    fi
    if [ "$limit" -lt 10 ]; then
      [ -n "$header_said" ] || { say "$header"; header_said=1; }
      say "$(printf '%-26s %-7s skipped: out of time (BUDGET=%s s)' "$name" "$mode" "$budget")"
      problems=$((problems + 1))
      continue
    fi
    set +e
    timeout -k 5 "$limit" "$cli" profile "$ex" --mode "$mode" --check \
      --iterations "$iterations" --json >"$json" 2>"$err"
    rc=$?
    set -e
    # The versions come from the first profile that printed its JSON.
    if [ -z "$versions_done" ] && [ "$rc" -eq 0 ] && [ -s "$json" ]; then
      [ -n "$header_said" ] || say "versions: $(python3 "$rowpy" versions "$json")"
      versions_done=$json
    fi
    if [ -z "$header_said" ]; then
      say ""
      say "$header"
      header_said=1
    fi
    set +e
    rows=$(python3 "$rowpy" row "$json" "$err" "$name" "$mode" "$rc" "$limit" 2>&1)
    prc=$?
    set -e
    [ "$prc" -eq 0 ] || rows="$rows
FAIL: $name $mode: reading its JSON failed (python3 exit $prc)"
    while IFS= read -r line; do
      case "$line" in
        "FAIL: "*) loud "${line#FAIL: }" ;;
        *) say "$line" ;;
      esac
    done <<<"$rows"
    if [ "$rc" -eq 3 ] && [ -z "$no_gpu" ]; then
      # No usable GPU: every other profile would say the same.
      no_gpu=1
      say "!!! no usable GPU (exit 3): the other profiles and test-gpu are left out"
    fi
  done
done
[ ${#examples[@]} -gt 0 ] || loud "no data/examples/*.json"
if [ -z "$versions_done" ]; then
  say "versions: - (no profile succeeded)"
elif [ "$versions_done" != "$work/profiles/$(basename "${examples[0]}" .json)-streams.json" ]; then
  say "versions (from $(basename "$versions_done" .json)): $(python3 "$rowpy" versions "$versions_done")"
fi
say "(error: predicted against measured makespan; cupti: a traced run against an untraced"
say " one; records: CUPTI records mapped to steps; unm: unmatched; untimed: no timestamps;"
say " miss: expected records that never came)"
phase_end profiles

# --- test-gpu -----------------------------------------------------------------
say ""
case "$test_gpu" in /*|none|"") ;; *) test_gpu=$root/$test_gpu ;; esac
if [ -n "$fake" ]; then
  say "test-gpu: skipped (it needs a real GPU; the fake driver's kernels compute nothing)"
elif [ "$test_gpu" = none ] || [ -z "$test_gpu" ]; then
  say "test-gpu: not run"
elif [ -n "$no_gpu" ]; then
  say "test-gpu: not run (no usable GPU, counted above)"
elif [ ! -x "$test_gpu" ]; then
  loud "test-gpu: $test_gpu is not there"
elif [ "$(cap 240 "$reserve_test_gpu")" -lt 20 ]; then
  loud "test-gpu: not run, out of time (BUDGET=$budget s)"
else
  limit=$(cap 240 "$reserve_test_gpu")
  log=$work/test-gpu.log
  set +e
  env PS_CLI="$cli" PS_SOURCE_ROOT="$root" \
    LD_LIBRARY_PATH="$libdir${libdir:+${LD_LIBRARY_PATH:+:}}${LD_LIBRARY_PATH:-}" \
    timeout -k 5 "$limit" "$test_gpu" >"$log" 2>&1
  rc=$?
  set -e
  if [ "$rc" -eq 0 ]; then
    say "test-gpu: PASS ($(grep -c '^\[       OK \]' "$log" || true) tests)"
  else
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      loud "test-gpu: timed out after $limit s"
    else
      loud "test-gpu: exit $rc"
    fi
    tail -n 25 "$log" | sed 's/^/  | /' | tee -a "$summary"
  fi
fi
phase_end test-gpu

# --- PyTorch traces (their own archive; never changes the status) --------------
torch_script="build-aux/device-torch-data.py"
if [ -z "$torch" ]; then
  say "torch data: left out (--no-torch)"
elif [ ! -f "$torch_script" ]; then
  say "torch data: no $torch_script"
elif [ "$(cap 180)" -lt 20 ]; then
  say "torch data: NOT RUN, out of time (BUDGET=$budget s)"
else
  limit=$(cap 180)
  set +e
  PYTHONUNBUFFERED=1 timeout -k 5 "$limit" python3 "$torch_script" --cli "$cli" --out "$out" \
    >"$work/torch-data.log" 2>&1
  rc=$?
  set -e
  if [ "$rc" -eq 0 ]; then
    say "torch data: done -> $out/torch-data.tar.gz, $out/torch-data.json"
    python3 - "$out/torch-data.json" <<'PY' 2>/dev/null | tee -a "$summary" || true
import json, sys
d = json.load(open(sys.argv[1]))
if isinstance(d, dict) and d.get("skipped"):
    print("  skipped: %s" % d["skipped"])
PY
  else
    say "torch data: FAILED (exit $rc; this does not change the check's status); last lines:"
    tail -n 8 "$work/torch-data.log" | sed 's/^/  | /' | tee -a "$summary"
  fi
fi
phase_end torch

# --- the end ----------------------------------------------------------------
say ""
say "time: ${phase_times[*]}; total $(secs $(( $(now_ms) - t_start ))) s"
say "results: $archive, $summary"
if [ "$problems" -eq 0 ]; then
  say "device-check: PASS"
  pack
  exit 0
fi
if [ "$problems" -eq 1 ]; then
  say "device-check: FAIL (1 problem)"
else
  say "device-check: FAIL ($problems problems)"
fi
pack
exit 1
