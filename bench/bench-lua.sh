#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run bench-lua.lua on every interpreter the module was built for.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
status=0
for pair in "lua5.4 5.4" "luajit 5.1"; do
  set -- $pair
  [ -f "$build/lua/$2/mach6.so" ] && command -v "$1" >/dev/null || continue
  MACH6_CLI="$PWD/$build/app/mach6" MACH6_LIB="$PWD/$build/producer/libmach6.so" \
    LUA_CPATH="$PWD/$build/lua/$2/?.so" "$1" bench/bench-lua.lua || status=1
done
exit $status
