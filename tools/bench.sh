#!/usr/bin/env bash
# Run every benchmark in bench/; each prints its figures as JSON lines.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
status=0
for b in "$build"/bench/bench-*; do
  [ -x "$b" ] && [ -f "$b" ] || continue
  case "$b" in *.p) continue ;; esac
  case "$(basename "$b")" in bench-ui|bench-live|bench-timeline) needs_display=1 ;; *) needs_display= ;; esac
  if [ -n "$needs_display" ] && [ -z "${DISPLAY:-}" ] && command -v xvfb-run >/dev/null; then
    xvfb-run -a "$b" || status=1
  else
    "$b" || status=1
  fi
done
# The Lua module, from the interpreters themselves.
bash bench/bench-lua.sh "$build" || status=1
exit $status
