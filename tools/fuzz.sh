#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzz the capture loader (+ every exporter), the event-stream validator and
# the segment reader with libFuzzer. The harnesses are built here with clang
# straight from the sources (-fsanitize=fuzzer,address,undefined): the main
# build uses gcc. Seeds are real captures and event streams written by
# fuzz/fuzz-seeds.c.
#
#   tools/fuzz.sh [BUILD]           run each harness FUZZ_SECONDS (default 60);
#                                   the corpus grows in BUILD/fuzz/corpus-NAME
#   tools/fuzz.sh --smoke [BUILD]   a few seconds each on the seeds (a test)
#
# A crash leaves BUILD/fuzz/crash-* (the input) and exits non-zero; replay it
# with BUILD/fuzz/fuzz-NAME FILE (BUILD/fuzz/smoke/fuzz-NAME after --smoke).
set -eu
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
build=${1:-build}
cd "$(dirname "$0")/.."
src=$PWD
mkdir -p "$build/fuzz"
out=$(cd "$build/fuzz" && pwd)
seconds=${FUZZ_SECONDS:-60}
[ "$smoke" = 1 ] && seconds=${FUZZ_SMOKE_SECONDS:-2}
harnesses=${FUZZ_HARNESSES:-"capture ingest"}
[ -f fuzz/fuzz-segment.c ] && [ -z "${FUZZ_HARNESSES:-}" ] && harnesses="$harnesses segment"
[ -f fuzz/fuzz-remote.c ] && [ -z "${FUZZ_HARNESSES:-}" ] && harnesses="$harnesses remote"
[ -f fuzz/fuzz-bridge.c ] && [ -z "${FUZZ_HARNESSES:-}" ] && harnesses="$harnesses bridge"

# The smoke test builds at -O0, in BUILD/fuzz/smoke: clang compiles core
# at -O0 in 2/5 of the time -O1 takes (core is compiled a third time in a
# fresh clone's make test, for this test alone), and its checks hold the
# same: every seed runs under ASan and UBSan, which miss nothing at -O0,
# then two seconds of mutations (fewer of them than at -O1). The long runs
# keep -O1 in BUILD/fuzz, where executions a second count.
opt=-O1 bin=$out
[ "$smoke" = 1 ] && opt=-O0 bin=$out/smoke

CC=${FUZZ_CC:-clang}
if ! command -v "$CC" >/dev/null; then
  echo "fuzz: $CC is not installed (make deps installs clang)" >&2
  exit 77
fi
# Every floor of core/ (core/meson.build), each its own include folder.
core_includes=()
for d in "$src"/core/*/; do core_includes+=(-I"${d%/}"); done
pkgs="glib-2.0 gobject-2.0 gio-2.0 gio-unix-2.0 json-glib-1.0 liblz4 libzstd gnutls libdw"
cflags=(-g "$opt" -Wno-string-plus-int -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE '-DGETTEXT_PACKAGE="mach6"'
        "${core_includes[@]}" -I"$src/producer" $(pkg-config --cflags $pkgs))
libs=($(pkg-config --libs $pkgs) -lstdc++ -lm -lpthread)
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
core_sources=("$src"/core/*/*.c)

# Build only what is older than a source (the smoke test runs often).
stale() {
  local target=$1
  [ ! -e "$target" ] && return 0
  [ -n "$(find "$src/core" "$src/fuzz" "$src/tests/big-trees.h" "$src/producer" -newer "$target" \
           \( -name '*.c' -o -name '*.h' \) -print -quit)" ]
}

# Each core object is rebuilt only when its source or a header it includes
# (clang -MMD's list) is newer than it: after a change to one file, one
# compile, not all of core's.
obj_stale() {
  local obj=$1 dep
  [ -e "$obj" ] && [ -e "$obj.d" ] || return 0
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$obj.d"); do
    [ "$dep" -nt "$obj" ] && return 0
    [ -e "$dep" ] || return 0
  done
  return 1
}

mkdir -p "$bin/obj"
objs=() stale_objs=0 jobs=0 failed=0
for f in "${core_sources[@]}"; do
  rel=${f#"$src/core/"}
  obj="$bin/obj/${rel//\//_}.o"
  objs+=("$obj")
  obj_stale "$obj" || continue
  stale_objs=$((stale_objs + 1))
  rm -f "$obj" "$obj.d"
  # One compiler a core at a time, as ninja would.
  "$CC" "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer-no-link -MMD -MF "$obj.d" -c "$f" -o "$obj" &
  jobs=$((jobs + 1))
  if [ "$jobs" -ge "$(nproc)" ]; then wait -n || failed=1; jobs=$((jobs - 1)); fi
done
while [ "$jobs" -gt 0 ]; do wait -n || failed=1; jobs=$((jobs - 1)); done
[ "$failed" = 0 ] || { echo "fuzz: building core failed" >&2; exit 1; }
if [ "$stale_objs" -gt 0 ] || [ ! -e "$bin/libcore-fuzz.a" ]; then
  echo "fuzz: built $stale_objs of ${#objs[@]} core objects with $CC $opt and sanitizers"
  # Only the objects of today's sources (a moved file leaves its old one).
  rm -f "$bin/libcore-fuzz.a"
  ar rcs "$bin/libcore-fuzz.a" "${objs[@]}"
fi
for h in $harnesses; do
  if stale "$bin/fuzz-$h"; then
    "$CC" "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer "$src/fuzz/fuzz-$h.c" "$bin/libcore-fuzz.a" \
      "${libs[@]}" -o "$bin/fuzz-$h"
  fi
done
if stale "$bin/fuzz-seeds"; then
  "$CC" "${cflags[@]}" "${san[@]}" "$src/fuzz/fuzz-seeds.c" "$bin/libcore-fuzz.a" "${libs[@]}" -o "$bin/fuzz-seeds"
fi

seeds="$out/seeds"
rm -rf "$seeds"
"$bin/fuzz-seeds" "$seeds/capture" "$seeds/ingest" "$seeds/segment" "$seeds/remote"
# The bridge's batches (docs/bridge-protocol.md): two bytes of what the
# bridge knows, then the body.
mkdir -p "$seeds/bridge"
printf '\003\000{"mach6":1,"session":"s1","name":"MyPlace","seq":2,"label_base":3,"labels":["ai"],"t":5000,"h":512,"events":[1,100,0,4,20,1,0,300,-1,0,5,0],"dropped":0,"unbalanced":0,"end":false}' >"$seeds/bridge/batch"
printf '\000\000{"mach6":1,"session":"new","name":"x","seq":1,"label_base":0,"labels":["frame","physics"],"t":0,"h":0,"events":[1,0,0,2,1e+3,0,0,10,2,0,1,0,1,5,0],"dropped":1,"unbalanced":0,"end":true}' >"$seeds/bridge/end"
printf '\000\000{"mach6":1,"session":"new","name":"x","seq":1,"label_base":0,"labels":[],"t":0,"h":0,"events":[],"dropped":0,"unbalanced":0,"end":false}' >"$seeds/bridge/empty"

status=0
for h in $harnesses; do
  if [ "$smoke" = 1 ]; then
    corpus=$(mktemp -d)
  else
    corpus="$out/corpus-$h"
    mkdir -p "$corpus"
  fi
  log="$out/fuzz-$h.log"
  # The segment harness records a real producer of the main build first.
  export M6_FUZZ_PRODUCER="$(cd "$build" && pwd)/tests/live/reader-producer"
  set +e
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin/fuzz-$h" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=262144 \
    -print_final_stats=1 -artifact_prefix="$out/" "$corpus" "$seeds/$h" >"$log" 2>&1
  rc=$?
  set -e
  # A crashed segment harness cannot remove the segment it recreated.
  for name in $(sed -n 's/^fuzz-segment: segment \/*//p' "$log"); do rm -f "/dev/shm/$name"; done
  [ "$smoke" = 1 ] && rm -rf "$corpus"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1)
  if [ "$rc" -ne 0 ]; then
    echo "fuzz-$h: FAILED after ${execs:-?} executions (exit $rc); log $log" >&2
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" | head -n 12 >&2
    status=1
  else
    echo "fuzz-$h: ${execs:-?} executions in ${seconds} s, ${rate:-?} exec/s, ${cov:-cov ?}, no findings"
  fi
done
exit $status
