#!/usr/bin/env bash
# Run HERE (the dev machine): builds what the lent GPU machine needs and
# packs it into the git-ignored folder _device/, which the device tool
# carries along with the working tree.  That machine has the CUDA toolkit,
# python3, meson and ninja but no Debian packages (no cmocka, Graphviz,
# cairo, GTK) and no network, so everything beyond glibc and zlib travels.
#
#   bash build-aux/device-bundle.sh           # build in _build/device
#   BUILD=_build/x bash build-aux/device-bundle.sh
#
# _device/ afterwards:
#   bin/planscope-cli        CLI-only release build with the GPU backend
#   bin/test-gpu             the cmocka suite "gpu" (needs a real GPU)
#   lib/                     shared libraries those two need outside glibc/zlib
#   lib/libfake-cuda.so      the fake driver, for `device-check.sh --fake` here
#   MANIFEST                 commit, date, options, sizes, glibc version
#
# Then: device tool, carry ["_device"], command `bash build-aux/device-check.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD:-_build/device}
toolkit=${CUDA_HOME:-/usr/local/cuda}
bundle=_device
max_mib=40

options=(
  --buildtype=release
  -Dgpu=enabled
  -Drender=disabled
  -Dapp=disabled
  -Dtests=enabled
  -Dprefer_static=true
  "-Dtoolkit_root=$toolkit"
)

# --- configure (reuse an existing build folder) and build ----------------
if [ ! -f "$build/build.ninja" ]; then
  echo "== meson setup $build ${options[*]}"
  meson setup "$build" "${options[@]}"
else
  echo "== reusing $build (meson setup --reconfigure if its options are stale)"
fi
echo "== ninja: planscope-cli, test-gpu, libfake-cuda.so"
ninja -C "$build" app/planscope-cli tests/test-gpu tests/libfake-cuda.so

cli="$build/app/planscope-cli"
test_gpu="$build/tests/test-gpu"
fake="$build/tests/libfake-cuda.so"
for f in "$cli" "$test_gpu" "$fake"; do
  [ -f "$f" ] || { echo "device-bundle: $f was not built" >&2; exit 1; }
done

# --- the bundle -----------------------------------------------------------
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
cp "$cli" "$test_gpu" "$bundle/bin/"
cp "$fake" "$bundle/lib/libfake-cuda.so"

# Libraries that are part of glibc (or zlib) are on every Linux machine and
# must come from that machine; everything else the two programs need (e.g.
# libcmocka.so.0, which Debian ships only as a shared library) travels.
is_system_lib() {
  case "$1" in
    linux-vdso.so.*|linux-gate.so.*|ld-linux*.so.*|ld64.so.*) return 0 ;;
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*) return 0 ;;
    libutil.so.*|libresolv.so.*|libanl.so.*|libmvec.so.*) return 0 ;;
    libnss_*|libBrokenLocale.so.*|libthread_db.so.*|libcrypt.so.*) return 0 ;;
    libz.so.*) return 0 ;;
    *) return 1 ;;
  esac
}

copied=()
for exe in "$cli" "$test_gpu"; do
  # ldd resolves the whole tree (NEEDED of NEEDED); lines look like
  # "libcmocka.so.0 => /usr/lib/x86_64-linux-gnu/libcmocka.so.0 (0x...)".
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    is_system_lib "$name" && continue
    if [ ! -f "$path" ]; then
      echo "device-bundle: $exe needs $name, which ldd did not find" >&2
      exit 1
    fi
    if [ ! -f "$bundle/lib/$name" ]; then
      cp -L "$path" "$bundle/lib/$name"
      copied+=("$name")
    fi
  done < <(ldd "$exe")
done

# --- MANIFEST -----------------------------------------------------------
glibc=$(ldd --version 2>/dev/null | sed -n 1p | sed 's/.* //')
# The newest GLIBC_x.y symbol version the programs ask for: the least glibc
# the GPU machine must have for them to run.
glibc_needed=$(for f in "$bundle"/bin/* "$bundle"/lib/*; do
                 objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' || true
               done | sed 's/GLIBC_//' | sort -u -V | tail -n 1)
{
  echo "planscope device bundle"
  echo "describe:  $(git describe --always --dirty --tags 2>/dev/null || echo '-')"
  echo "commit:    $(git rev-parse HEAD 2>/dev/null || echo '-')"
  echo "date:      $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host:      $(uname -srm)"
  echo "build:     $build"
  echo "options:   ${options[*]}"
  echo "compiler:  $(cc --version 2>/dev/null | sed -n 1p)"
  echo "glibc:     built against $glibc; needs at least GLIBC_${glibc_needed:-?}"
  echo "bundled:   ${copied[*]:-(no shared libraries beyond glibc and zlib)}"
  echo "needed (readelf -d):"
  for f in "$bundle"/bin/*; do
    echo "  $(basename "$f"): $(readelf -d "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
  done
  echo "files:"
  (cd "$bundle" && find . -type f ! -name MANIFEST | sort | while read -r f; do
     printf '  %10d  %s\n' "$(stat -c %s "$f")" "${f#./}"
   done)
} >"$bundle/MANIFEST"

# --- size check and the call to make --------------------------------------
bytes=$(du -sb "$bundle" | cut -f 1)
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
cat "$bundle/MANIFEST"
echo
echo "device-bundle: $bundle/ is $mib MiB ($bytes bytes)"
if [ "$bytes" -gt $((max_mib * 1048576)) ]; then
  echo "device-bundle: FAIL: over $max_mib MiB (the device tool carries 64 MiB with the tree)" >&2
  exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && ! git check-ignore -q "$bundle/"; then
  echo "device-bundle: FAIL: $bundle/ is not git-ignored (add /$bundle/ to .gitignore)" >&2
  exit 1
fi
cat <<EOF

Dry run here:   bash build-aux/device-check.sh --fake
On the GPU:     device tool run with
                  carry:     ["$bundle"]
                  command:   bash build-aux/device-check.sh
                  timeout_s: 420
EOF
