#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print, for each test that failed in a meson run, the lines of its output
that say why (GLib's "Bail out!", ERROR and CRITICAL lines, TAP "not ok"),
so the end of `make test` shows them even where only its tail is kept.
Usage: test-failures.py BUILD/meson-logs/testlog.json"""
import json
import sys

GOOD = {"OK", "SKIP", "EXPECTEDFAIL"}
KEYS = ("Bail out!", "ERROR", "CRITICAL", "not ok", "assertion", "Sanitizer", "killed")

try:
    lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
except OSError:
    sys.exit(0)
for line in lines:
    try:
        result = json.loads(line)
    except ValueError:
        continue
    if result.get("result") in GOOD:
        continue
    output = (result.get("stdout") or "") + "\n" + (result.get("stderr") or "")
    why = [l for l in output.splitlines() if any(k in l for k in KEYS) and "DEBUG" not in l]
    if not why:
        why = [l for l in output.splitlines() if l.strip()][-4:]
    print("why %s failed (%s):" % (result.get("name", "?"), result.get("result", "?")))
    for l in why[-6:]:
        print("  " + l[:400])
