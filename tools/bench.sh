#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every benchmark in bench/; each prints its figures as JSON lines.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
status=0
for b in "$build"/bench/bench-*; do
  [ -x "$b" ] && [ -f "$b" ] || continue
  case "$b" in *.p) continue ;; esac
  case "$(basename "$b")" in bench-ui|bench-live|bench-timeline|bench-capture) needs_display=1 ;; *) needs_display= ;; esac
  if [ -n "$needs_display" ] && [ -z "${DISPLAY:-}" ] && command -v xvfb-run >/dev/null; then
    xvfb-run -a "$b" || status=1
  else
    "$b" || status=1
  fi
done
# The ring sizes behind the default (README "Figures"): what a recording
# keeps of one thread flat out and at 10 M scopes/s, per ring size.
if [ -x "$build/bench/bench-record" ]; then
  for ring in 262144 524288 1048576 4194304; do
    MACH6_RING_EVENTS=$ring MACH6_BENCH_10M_SECONDS=${MACH6_BENCH_RING_10M_SECONDS:-15} \
      "$build/bench/bench-record" | grep -E '"e2e_record_(scopes_flat|keep_pct_flat|drop_pct_10m)' || status=1
  done
fi
# Luau: the binding and the Roblox Studio module, in real Luau.
if [ -x "$build/bench/bench-luau" ]; then
  MACH6_CLI="$PWD/$build/app/mach6" "$build/bench/bench-luau" || status=1
fi
# The Lua module, from the interpreters themselves.
bash bench/bench-lua.sh "$build" || status=1
exit $status
