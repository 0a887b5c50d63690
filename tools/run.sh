#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make run: start the demo game (heap shim preloaded, leaking 4 KB a frame)
# and the mach6 viewer attached to it. Without a display, show it under
# Xvfb instead: a screenshot to BUILD/mach6-screenshot.png and the CLI's
# report of the game.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
# make run GAME=love: the LÖVE demo instead.
[ "${GAME:-}" = love ] && exec bash tools/run-love.sh "$build"

game_bin="$build/examples/demo-game"
viewer="$build/app/mach6-viewer"
cli="$build/app/mach6"
shim="$build/producer/libmach6-heap.so"

for f in "$game_bin" "$cli" "$shim"; do
  if [ ! -e "$f" ]; then
    echo "mach6: $f is missing; build first (make build)" >&2
    exit 1
  fi
done

# The uninstalled viewer reads its settings schema from the build tree.
export GSETTINGS_SCHEMA_DIR="$PWD/$build/data${GSETTINGS_SCHEMA_DIR:+:$GSETTINGS_SCHEMA_DIR}"

# Each thread's own bytes (MACH6_HEAP=process for the whole heap's).
MACH6_HEAP=${MACH6_HEAP:-thread} LD_PRELOAD="$PWD/$shim" "$game_bin" --fps 60 --leak-kb 4 --threads 2 >/dev/null &
game=$!
stop_game() {
  if kill -0 "$game" 2>/dev/null; then
    kill "$game" 2>/dev/null
    wait "$game" 2>/dev/null
  fi
}
trap stop_game EXIT INT TERM
echo "mach6: started demo-game (pid $game): 60 fps, 2 worker threads, leaking 4 KB per frame"

# Wait until its shared-memory segment is there to attach to.
for _ in $(seq 50); do
  "$cli" list 2>/dev/null | awk -v p="$game" '$1 == p { found = 1 } END { exit !found }' && break
  sleep 0.1
done

if [ ! -x "$viewer" ]; then
  echo "mach6: the viewer was not built (GTK 4 or libadwaita missing); the CLI report instead:"
  "$cli" report --duration 3 "$game"
  exit $?
fi

if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  echo "mach6: opening the viewer; close it to stop the game"
  "$viewer" --attach "$game"
  exit $?
fi

shot="$build/mach6-screenshot.png"
echo "mach6: no display here. To watch it live, run \`make run\` on a desktop, or"
echo "       xvfb-run -a -s '-screen 0 1600x1000x24' $viewer --attach PID --screenshot shot.png"
if ! command -v xvfb-run >/dev/null; then
  echo "mach6: xvfb-run is not installed either; the CLI report instead:"
  "$cli" report --duration 3 "$game"
  exit $?
fi

echo "mach6: running the viewer under Xvfb for 6 s, then saving a screenshot to $shot"
# Software GL under Xvfb is slow; GTK's cairo renderer keeps up at 60 fps.
GSK_RENDERER=${GSK_RENDERER:-cairo} GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$viewer" --attach "$game" --screenshot "$shot" --quit-after 6 2>&1 \
  | grep -v -e 'Unable to acquire session bus' -e 'dbus-launch' -e '^$'
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || echo "mach6: the viewer failed (status $status)" >&2

echo "mach6: and what the CLI sees of the same game (2 s):"
"$cli" report --duration 2 "$game"
exit "$status"
