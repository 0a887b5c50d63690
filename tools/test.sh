#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run the whole meson test suite (under Xvfb when there is no display) and
# end with one line of our own: "N passed, N failed".
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1

runner=()
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && command -v xvfb-run >/dev/null; then
  # Large enough for the UI tests that look at a 3840 × 2160 window.
  runner=(xvfb-run -a -s "-screen 0 3840x2160x24")
fi

# The UI tests run with a display (Xvfb above), XTest and the tools the
# Makefile installs: here their lack is a failure, never a skip.
export MACH6_TEST_STRICT=1

# Two suites a core: most of them wait on a real game's frames, a real
# Prometheus or a timeout, not on the CPU (MACH6_TEST_JOBS overrides).
jobs=${MACH6_TEST_JOBS:-$(( $(nproc) * 2 ))}
log=$(mktemp)
"${runner[@]}" meson test -C "$build" --print-errorlogs --num-processes "$jobs" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
fail=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
xpass=$(sed -n 's/^Unexpected Pass: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
timeout=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
xfail=$(sed -n 's/^Expected Fail: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
skipped=$(sed -n 's/^Skipped: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
rm -f "$log"

# Why each failure failed, where the last lines of the run are all one sees.
python3 tools/test-failures.py "$build/meson-logs/testlog.json" 2>/dev/null

passed=$(( ${ok:-0} + ${xfail:-0} ))
failed=$(( ${fail:-0} + ${xpass:-0} + ${timeout:-0} ))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1   # meson itself failed (e.g. a build error): never report green
fi
if [ "${skipped:-0}" -gt 0 ]; then
  echo "${passed} passed, ${failed} failed, ${skipped} skipped"
else
  echo "${passed} passed, ${failed} failed"
fi
[ "$failed" -eq 0 ]
