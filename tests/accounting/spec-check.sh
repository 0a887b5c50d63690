#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# accounting-spec: the demo game with two workers recorded by the real
# `mach6 run`, replayed by tools/check-accounting.py (docs/accounting.md
# re-implemented from the documents alone) and compared with `mach6 report
# --json` of the same capture: every stat of every node, and each thread's
# rejected and skipped events, must be equal.
#   spec-check.sh MACH6 DEMO_GAME CHECKER
set -eu
mach6=$1 game=$2 checker=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# 300 frames at 300 fps: enough calls that reservoir slots are replaced.
"$mach6" run -o "$dir/run.mach6" -- "$game" --frames 300 --fps 300 --threads 2 --leak-kb 1 >/dev/null
"$mach6" report "$dir/run.mach6" --json >"$dir/report.json"
python3 "$checker" "$dir/run.mach6" "$dir/report.json"
