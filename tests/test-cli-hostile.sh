#!/usr/bin/env bash
# test-cli-hostile.sh: planscope-cli against hostile paths, pipes and
# faults: devices and FIFOs where files are expected (refused at once, no
# hang), pipes the user names (read once), outputs that would overwrite an
# input (standard input included), empty output names, full disks (a small
# tmpfs where this can mount one, and /dev/full), signals during a write,
# the umask, long names, link chains and loops, read-only files.
#
# Usage: test-cli-hostile.sh PATH/TO/planscope-cli   (PS_SOURCE_ROOT: the source tree)
set -u

CLI=${1:?usage: test-cli-hostile.sh PATH/TO/planscope-cli}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
ROOT=${PS_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
EXAMPLE=$ROOT/data/examples/moe-experts.json
DUMP=$ROOT/tests/fuzz/seeds/dot/verbose-all-types.dot
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

pass=0
fail=0
ok () { pass=$((pass + 1)); }
bad () {
  fail=$((fail + 1))
  echo "FAIL: $*" >&2
}

# run CMD...: the CLI with a time limit (a hang is a failure, exit 124),
# stdout in $TMP/out, stderr in $TMP/err, the exit code in $rc.
run () {
  timeout 60 "$CLI" "$@" >"$TMP/out" 2>"$TMP/err"
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

# says TEXT DESCRIPTION: stderr of the last run contains TEXT.
says () {
  grep -qF -- "$1" "$TMP/err" && ok || {
    bad "$2: stderr does not say '$1'"
    sed 's/^/  | /' "$TMP/err" | head -5 >&2
  }
}

have_export=true
"$CLI" export --help | grep -q 'built without render' && have_export=false

# ---- devices and FIFOs where a file is expected --------------------------------

# A device is refused before a byte is read (/dev/zero would give 2 GiB).
start=$(date +%s%N)
expect 1 "plan /dev/zero" plan /dev/zero
says "it is a character device, not a regular file or a pipe" "plan /dev/zero"
[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 5000 ] && ok || bad "plan /dev/zero took over 5 s"
expect 1 "plan - < /dev/zero" plan - </dev/zero
says "standard input: it is a character device" "plan - < /dev/zero"
expect 1 "analyze /dev/urandom" analyze /dev/urandom
says "character device" "analyze /dev/urandom"

# A FIFO named inside a graph (its device profile, a kernel's module) is
# refused at once: no writer will ever come.
mkfifo "$TMP/device.json" "$TMP/module.cu"
python3 - "$EXAMPLE" "$ROOT/data/examples/user-module.json" "$TMP" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
g["device"] = sys.argv[3] + "/device.json"
json.dump(g, open(sys.argv[3] + "/dev-fifo.json", "w"))
g = json.load(open(sys.argv[2]))
for n in g["nodes"]:
    if "module" in n:
        n["module"] = sys.argv[3] + "/module.cu"
json.dump(g, open(sys.argv[3] + "/mod-fifo.json", "w"))
PY
expect 1 "a graph whose device is a FIFO" plan "$TMP/dev-fifo.json"
says "it is a pipe, not a regular file" "a graph whose device is a FIFO"
expect 1 "--device naming a FIFO" simulate "$EXAMPLE" --device "$TMP/device.json"
says "it is a pipe, not a regular file" "--device naming a FIFO"
expect 1 "kernels of a graph whose module is a FIFO" kernels "$TMP/mod-fifo.json" -o "$TMP/k"
says "it is a pipe, not a regular file" "kernels of a graph whose module is a FIFO"

# A pipe the user names is read once, DOT dumps as JSON graphs: a FIFO
# whose writer comes late, /dev/stdin, a process substitution.
for f in "$DUMP" "$EXAMPLE"; do
  name=$(basename "$f")
  mkfifo "$TMP/in.pipe"
  (sleep 0.3; cat "$f" >"$TMP/in.pipe") &
  expect 0 "plan of $name through a FIFO" plan "$TMP/in.pipe"
  wait
  rm -f "$TMP/in.pipe"
  expect 0 "plan of $name through /dev/stdin" plan /dev/stdin <"$f"
  expect 0 "plan of $name through a process substitution" plan <(cat "$f")
  expect 0 "plan of $name as -" plan - <"$f"
done

# ---- never over an input, standard input included ---------------------------

cp "$EXAMPLE" "$TMP/g.json"
cp "$EXAMPLE" "$TMP/g.orig"
if $have_export; then
  expect 1 "export - -o g.json < g.json" export - --view plan --format json -o "$TMP/g.json" \
    <"$TMP/g.json"
else
  expect 1 "simulate - --trace g.json < g.json" simulate - --trace "$TMP/g.json" <"$TMP/g.json"
fi
says "refusing to write" "an output over standard input's file"
cmp -s "$TMP/g.json" "$TMP/g.orig" && ok || bad "the input given as - was overwritten"
expect 1 "import - -o g.json < g.json" import - -o "$TMP/g.json" <"$TMP/g.json"
cmp -s "$TMP/g.json" "$TMP/g.orig" && ok || bad "import overwrote its standard input's file"

# ---- empty output names --------------------------------------------------------

expect 2 "gen -o ''" gen chain --nodes 3 -o ""
says "needs a value, not an empty one" "gen -o ''"
expect 2 "simulate --trace ''" simulate "$EXAMPLE" --trace ""
expect 2 "kernels -o ''" kernels "$EXAMPLE" -o ""
expect 2 "import -o ''" import "$DUMP" -o ""
$have_export && expect 2 "export -o ''" export "$EXAMPLE" --format svg -o ""
expect 2 "--device ''" plan "$EXAMPLE" --device ""

# ---- full disks ----------------------------------------------------------------

# no_space DESCRIPTION ARGS...: the command fails with exit 1 and says why.
no_space () {
  local desc=$1
  shift
  expect 1 "$desc" "$@"
  says "No space left on device" "$desc"
}
no_space "gen -o /dev/full" gen layered --nodes 2000 -o /dev/full
no_space "simulate --trace /dev/full" simulate "$EXAMPLE" --trace /dev/full
timeout 60 "$CLI" gen layered --nodes 2000 >/dev/full 2>"$TMP/err"
rc=$?
[ "$rc" -eq 1 ] && ok || bad "gen > /dev/full: exit $rc"
says "No space left on device" "gen > /dev/full"
if $have_export; then
  no_space "export -o /dev/full" export "$EXAMPLE" --format svg -o /dev/full
  timeout 60 "$CLI" export "$EXAMPLE" --format svg -o - >/dev/full 2>"$TMP/err"
  rc=$?
  [ "$rc" -eq 1 ] && ok || bad "export -o - > /dev/full: exit $rc"
  says "cannot write to standard output: No space left on device" "export -o - > /dev/full"
fi

# A file system that fills up: a 64 KiB tmpfs in a mount namespace of its
# own, where this runs as root with unshare; the old file stays whole and
# nothing is left beside it.
if command -v unshare >/dev/null && unshare -m --propagation private true 2>/dev/null; then
  mkdir "$TMP/small"
  cat >"$TMP/full.sh" <<'SH'
set -u
cli=$1 dir=$2 example=$3 export=$4
mount -t tmpfs -o size=64k tmpfs "$dir" || exit 3
printf 'old' >"$dir/out.json"
printf 'old' >"$dir/out.svg"
# Every block taken: any write beyond these fails.
dd if=/dev/zero of="$dir/filler" bs=4k 2>/dev/null
status=0
check () {
  local what=$1
  shift
  if "$cli" "$@" >/dev/null 2>"$dir.err"; then echo "$what: succeeded on a full disk"; status=1; fi
  grep -q "No space left on device" "$dir.err" || { echo "$what: $(cat "$dir.err")"; status=1; }
  [ "$(cat "$dir/out.json")" = old ] || { echo "$what: the old file changed"; status=1; }
  [ "$(ls -A "$dir" | sort | tr '\n' ' ')" = "filler out.json out.svg " ] ||
    { echo "$what: left $(ls -A "$dir")"; status=1; }
}
check "gen -o" gen layered --nodes 20000 -o "$dir/out.json"
check "simulate --trace" simulate "$example" --trace "$dir/out.json"
if [ "$export" = true ]; then
  check "export" export "$example" --format svg -o "$dir/out.svg"
  [ "$(cat "$dir/out.svg")" = old ] || { echo "export: the old file changed"; status=1; }
fi
exit $status
SH
  unshare -m --propagation private bash "$TMP/full.sh" "$CLI" "$TMP/small" "$EXAMPLE" \
    "$have_export" >"$TMP/full.log" 2>&1
  case $? in
    0) ok ;;
    3) echo "left out: the full tmpfs checks (tmpfs cannot be mounted here); /dev/full was checked" ;;
    *) bad "a full tmpfs: $(cat "$TMP/full.log")" ;;
  esac
else
  echo "left out: the full tmpfs checks (no mount namespace here); /dev/full was checked"
fi

# ---- signals during a write ----------------------------------------------------

# Killed while it writes a large graph, by each signal a user or a session
# sends: the old file stays as it was and no temporary file is left.
# (env --default-signal: a shell starts background jobs with SIGINT
# ignored, which the CLI would then keep.)
for sig in TERM INT HUP; do
  printf 'old' >"$TMP/big.json"
  env --default-signal "$CLI" gen layered --nodes 3000000 -o "$TMP/big.json" 2>/dev/null &
  pid=$!
  sleep 0.5
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  [ "$rc" -gt 128 ] && ok || bad "SIG$sig during gen -o: exit $rc (finished before the signal?)"
  [ "$(cat "$TMP/big.json")" = old ] && ok || bad "SIG$sig during gen -o: the old file changed"
  left=$(find "$TMP" -maxdepth 1 -name '.*' -newer "$TMP/g.orig" | head -3)
  [ -z "$left" ] && ok || bad "SIG$sig during gen -o left $left"
done

# ---- modes, names, links --------------------------------------------------------

(umask 077 && "$CLI" gen chain --nodes 3 -o "$TMP/private.json") && ok || bad "gen under umask 077"
[ "$(stat -c %a "$TMP/private.json")" = 600 ] && ok ||
  bad "umask 077: the new file is $(stat -c %a "$TMP/private.json"), not 600"
(umask 022 && "$CLI" gen chain --nodes 3 -o "$TMP/shared.json") && ok || bad "gen under umask 022"
[ "$(stat -c %a "$TMP/shared.json")" = 644 ] && ok || bad "umask 022: not 644"
chmod 4755 "$TMP/shared.json"
expect 0 "gen over a setuid file" gen chain --nodes 4 -o "$TMP/shared.json"
[ "$(stat -c %a "$TMP/shared.json")" = 755 ] && ok ||
  bad "a replaced setuid file is $(stat -c %a "$TMP/shared.json"), not 755"
chmod 444 "$TMP/shared.json"
cp "$TMP/shared.json" "$TMP/shared.orig"
expect 1 "gen over a read-only file" gen chain --nodes 5 -o "$TMP/shared.json"
says "it is read-only (mode 0444)" "gen over a read-only file"
cmp -s "$TMP/shared.json" "$TMP/shared.orig" && ok || bad "a read-only file was replaced"

long=$(printf 'n%.0s' $(seq 250)).json
expect 0 "gen -o a 255-byte name" gen chain --nodes 3 -o "$TMP/$long"
expect 0 "gen -o a 255-byte name again" gen chain --nodes 4 -o "$TMP/$long"

ln -s b.json "$TMP/a.json"
ln -s nowhere.json "$TMP/b.json"
expect 1 "gen -o a link to a link to nothing" gen chain --nodes 3 -o "$TMP/a.json"
says "a symbolic link that leads to no file" "a dangling link chain"
[ -L "$TMP/a.json" ] && [ -L "$TMP/b.json" ] && [ ! -e "$TMP/nowhere.json" ] && ok ||
  bad "a dangling link chain: a link was replaced"
rm "$TMP/b.json"
ln -s a.json "$TMP/b.json"
expect 1 "gen -o a link loop" gen chain --nodes 3 -o "$TMP/a.json"
says "Too many levels of symbolic links" "a link loop"
[ -L "$TMP/a.json" ] && [ -L "$TMP/b.json" ] && ok || bad "a link loop: a link was replaced"

# ---- smaller things ----------------------------------------------------------------

expect 1 "an undirected graph" plan "$ROOT/tests/hostile/undirected.dot"
says "an undirected graph; a CUDA graph dump is a 'digraph'" "an undirected graph"
expect 1 "a memcpy without its target" plan "$ROOT/tests/hostile/memcpy-no-target.json"
says "(node \"upload_x\")" "a memcpy without its target"
expect 1 "a device profile with a key twice" plan "$EXAMPLE" \
  --device "$ROOT/tests/hostile/device-duplicate-key.json"
says "duplicate key \"copy_engines\"" "a device profile with a key twice"
expect 1 "a device profile with a NUL in a key" plan "$EXAMPLE" \
  --device "$ROOT/tests/hostile/device-nul-key.json"
says "unknown key \"sm_count?garbage\"" "a device profile with a NUL in a key"
expect 1 "a .json.gz cut before its CRC" analyze "$ROOT/tests/hostile/trace-no-trailer.json.gz"
says "the data ends before the end of the gzip stream" "a .json.gz cut before its CRC"
expect 1 "a .json.gz with a bad CRC" plan "$ROOT/tests/hostile/trace-bad-crc.json.gz"
[ "$(grep -c error "$TMP/err")" = 1 ] && ok || bad "a bad CRC: more than one error"
says "incorrect data check" "a .json.gz with a bad CRC"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
