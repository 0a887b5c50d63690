#!/bin/bash
# SPDX-License-Identifier: MIT
# budget-record.sh — the node budget in real processes (issue 26 item 3):
# tests/accounting/many-paths.c (4,000 labels in changing nestings) recorded
# by `mach6 record --max-nodes 8192` for 4 s; report --json of the capture
# must show the scopes over the budget in (other) nodes and count them, and
# the recorder's, report's and diff's peak RSS (as each process reports it,
# MACH6_TEST=print-peak-rss=1) must stay under a bound that an unbounded
# tree passes within a second of this game.
# Usage: budget-record.sh MACH6 MANY_PATHS
set -euo pipefail

mach6=$1
game=$2
budget=8192
bound_kb=$((160 * 1024))

dir=$(mktemp -d)
game_pid=
cleanup () {
  exec 3>&- || true
  [ -n "$game_pid" ] && kill "$game_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
export LANGUAGE=C MACH6_TEST=print-peak-rss=1

mkfifo "$dir/stdin"
exec 3<>"$dir/stdin"
"$game" 30 "${MANY_PATHS_SEED:-$RANDOM}" <"$dir/stdin" >"$dir/game.out" &
game_pid=$!
for _ in $(seq 200); do
  ls /dev/shm | grep -q "^mach6-[0-9]*-$game_pid-" && break
  sleep 0.05
done
"$mach6" record "$game_pid" -d 4 --max-nodes $budget -o "$dir/paths.mach6" 2>"$dir/record.err"
cat "$dir/game.out"
cat "$dir/record.err" | tail -2
"$mach6" report --json --max-nodes $budget "$dir/paths.mach6" >"$dir/report.json" 2>"$dir/report.err"
"$mach6" diff --max-nodes $budget "$dir/paths.mach6" "$dir/paths.mach6" >"$dir/diff.txt" 2>"$dir/diff.err"
cat "$dir/report.err" "$dir/diff.err"

python3 - "$dir" $budget $bound_kb <<'PY'
import json, re, sys
d, budget, bound = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
report = json.load(open(d + "/report.json"))
assert report["max_nodes"] == budget, report["max_nodes"]
for t in report["threads"]:
    nodes = others = other_calls = 0
    stack = [t["payload"]]
    while stack:
        n = stack.pop()
        nodes += 1
        if n["label"] == "(other)" and nodes > 1:
            others += 1
            other_calls += n["stats"]["count"]
            assert n["children"] == []
        stack.extend(n["children"])
    print("thread %d: %d nodes (%d (other)), %d calls in (other), over_budget %d"
          % (t["index"], nodes, others, other_calls, t["over_budget"]))
    assert nodes - others <= budget
    assert others > 0 and t["over_budget"] >= other_calls > 0
assert report["over_budget"] == sum(t["over_budget"] for t in report["threads"])
for cmd in ("record", "report", "diff"):
    rss = int(re.search(r"peak RSS (\d+) KB", open("%s/%s.err" % (d, cmd)).read()).group(1))
    print("mach6 %s: peak RSS %d KB (bound %d KB)" % (cmd, rss, bound))
    assert rss < bound, cmd
PY
