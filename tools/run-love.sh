#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make run GAME=love: the LÖVE demo (examples/love, leaking, with hitches)
# and the mach6 viewer attached to it. Without a display, both run under
# one Xvfb: screenshots of the game and of the viewer in BUILD/, and the
# CLI's report of the game.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1

viewer="$build/app/mach6-viewer"
cli="$build/app/mach6"
export MACH6_LUA_CPATH="$PWD/$build/lua/5.1/?.so"
export GSETTINGS_SCHEMA_DIR="$PWD/$build/data${GSETTINGS_SCHEMA_DIR:+:$GSETTINGS_SCHEMA_DIR}"

if [ ! -e "$build/lua/5.1/mach6.so" ] || ! command -v love >/dev/null; then
  echo "mach6: the LÖVE demo needs love and the LuaJIT module ($build/lua/5.1/mach6.so); make deps build" >&2
  exit 1
fi

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  if [ -z "${MACH6_UNDER_XVFB:-}" ]; then
    if ! command -v xvfb-run >/dev/null; then
      echo "mach6: no display and no xvfb-run: LÖVE needs one of them (make deps installs xvfb)" >&2
      exit 1
    fi
    echo "mach6: no display here; running the LÖVE demo and the viewer under Xvfb"
    MACH6_UNDER_XVFB=1 exec xvfb-run -a -s "-screen 0 1600x1000x24" bash "$0" "$build"
  fi
fi

headless=${MACH6_UNDER_XVFB:-}
love examples/love --leak --hitch ${headless:+--screenshot "$PWD/$build/mach6-love-game.png" --quit-after 30} >/dev/null 2>&1 &
game=$!
trap 'kill $game 2>/dev/null; wait $game 2>/dev/null' EXIT INT TERM
for _ in $(seq 100); do
  "$cli" list 2>/dev/null | awk -v p="$game" '$1 == p { found = 1 } END { exit !found }' && break
  sleep 0.1
done
echo "mach6: started the LÖVE demo (pid $game): a leak in particles (L toggles), 30 ms hitches in ai (H)"

if [ -z "$headless" ]; then
  echo "mach6: opening the viewer; close it to stop the game"
  "$viewer" --attach "$game"
  exit $?
fi

shot="$build/mach6-love-screenshot.png"
GSK_RENDERER=${GSK_RENDERER:-cairo} GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 \
  "$viewer" --attach "$game" --screenshot "$shot" --quit-after 8 2>&1 \
  | grep -v -e 'Unable to acquire session bus' -e 'dbus-launch' -e '^$'
echo "mach6: the game's own picture is $build/mach6-love-game.png; the CLI's report (2 s):"
"$cli" report --duration 2 "$game"
