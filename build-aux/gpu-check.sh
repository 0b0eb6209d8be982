#!/usr/bin/env bash
# On a developer's own machine with an NVIDIA GPU and every dependency:
# builds planscope with the GPU backend in _build/gpu-check, then runs
# build-aux/device-check.sh on that build's CLI and test-gpu, which profiles
# every example in both modes with --check (fused and unfused runs must
# compute the same outputs), prints predicted against measured makespans,
# CUPTI's records and overhead, runs the `gpu` test suite and (unless
# --no-torch) records PyTorch traces.  Takes a few minutes at most; exits 3
# with the reason when no GPU can be used, else 0 (PASS) or 1 (FAIL).
#
#   bash build-aux/gpu-check.sh            # build in _build/gpu-check
#   BUILD=_build/x ITERATIONS=20 bash build-aux/gpu-check.sh --no-torch
#
# Results go to $OUT (default $BUILD/gpu-check-out): device-check.tar.gz,
# device-check.txt and the torch data.  (On the lent GPU machine, which has
# no Debian packages, use build-aux/device-bundle.sh here and
# build-aux/device-check.sh there instead; see README.md, "GPU runs".)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD:-_build/gpu-check}
toolkit=${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}

if [ ! -d "$build" ]; then
  meson setup "$build" --buildtype=release -Dgpu=enabled -Dtests=enabled \
    -Dtoolkit_root="$toolkit" >/dev/null
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

# The table, test-gpu and the torch data: one script for this machine and
# the lent one.
CLI="$cli" TEST_GPU="$build/tests/test-gpu" OUT="${OUT:-$build/gpu-check-out}" \
  exec bash build-aux/device-check.sh "$@"
