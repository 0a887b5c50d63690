#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Take the README's "Hunting a hitch" screenshots: runs the hitch UI test
# (the demo game hitching every 120 frames and leaking 2 KB a frame, the
# viewer attached) under Xvfb with MACH6_TEST_SHOTS, which saves the
# drift graph with the frame-time lane, and the frame view with the
# histogram, as PNGs into data/screenshots/.
#   bash tools/screenshots.sh [BUILD]
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."
out="$PWD/data/screenshots"
mkdir -p "$out"
ninja -C "$build" tests/ui/test-hitch >/dev/null
MACH6_TEST_SHOTS="$out" GSETTINGS_SCHEMA_DIR="$PWD/$build/data" GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 \
  xvfb-run -a -s "-screen 0 1920x1080x24" "$build/tests/ui/test-hitch" -p /ui/hitch/lane-marks-every-hitch \
  -p /ui/hitch/click-opens-frame
ls -l "$out"/hitch-*.png
