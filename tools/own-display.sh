#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run one UI test on an X server of its own, so that UI tests can run side
# by side: each gets its own Xvfb (its pointer, keyboard focus and XTest
# input are its own), its own recent-files list and runtime folder.
#   tools/own-display.sh PROGRAM ARGS...
# Without Xvfb the program runs on the display it was given (or none, and
# the test reports that itself).
set -u
if ! command -v Xvfb >/dev/null 2>&1; then
  exec "$@"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mach6-display-XXXXXX")
fifo="$tmp/displayfd"
mkfifo "$fifo"
# -displayfd: the server picks a free display number and writes it once it
# accepts connections, so there is no race between tests picking numbers.
Xvfb -displayfd 3 -screen 0 3840x2160x24 -nolisten tcp -noreset 3>"$fifo" 2>"$tmp/xvfb.log" &
xvfb=$!
cleanup () { kill "$xvfb" 2>/dev/null; wait "$xvfb" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 143' TERM INT

display=""
if ! read -r -t 30 display <"$fifo" || [ -z "$display" ]; then
  echo "own-display.sh: Xvfb did not start: $(cat "$tmp/xvfb.log")" >&2
  exit 1
fi

export DISPLAY=":$display"
unset WAYLAND_DISPLAY
mkdir -m 0700 "$tmp/data" "$tmp/runtime"
export XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/runtime"
"$@"
