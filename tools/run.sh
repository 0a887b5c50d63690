#!/usr/bin/env bash
# make run: start the demo and show it.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
echo "mach6: running the in-process demo (300 frames, leaking 4 KB per frame)"
"$build"/examples/demo-inprocess --frames 300 --leak-kb 4 --pretty
