-- SPDX-License-Identifier: MIT
-- test-love.lua — the LÖVE demo (examples/love), a real LÖVE 11 process on
-- the test display, recorded by the real `mach6 record` and reported.
local t = require ("harness")
local cli = assert (os.getenv ("MACH6_CLI"))
local root = assert (os.getenv ("MACH6_SOURCE_ROOT"))
local love_bin = os.getenv ("LOVE") or "love"

local function read_command (cmd)
  local p = assert (io.popen (cmd .. " 2>&1"))
  local out = p:read ("*a")
  p:close ()
  return out
end

if not (os.getenv ("DISPLAY") or os.getenv ("WAYLAND_DISPLAY")) then
  print ("1..0 # SKIP no display (tools/test.sh runs the suite under Xvfb)")
  os.exit (0)
end

t.test ("/lua/love/recorded", function ()
  local tmp = os.tmpname ()
  local pidfile = tmp .. ".pid"
  os.execute (string.format ("%s %q/examples/love --leak --hitch --quit-after 20 >%q.log 2>&1 & echo $! > %q",
                             love_bin, root, tmp, pidfile))
  local f = io.open (pidfile) local pid = f:read ("*l") f:close ()
  -- Wait for its segment: the first mark creates it.
  local listed = false
  for _ = 1, 300 do      -- LÖVE can take a while to start on a loaded machine
    if read_command (string.format ("%q list", cli)):find ("\n" .. pid .. "%s") then listed = true break end
    os.execute ("sleep 0.1")
  end
  t.ok (listed, "love " .. pid .. " in mach6 list")
  local report = read_command (string.format ("%q record %s --duration 1.5 -o %q.mach6 >/dev/null && %q report %q.mach6",
                                              cli, pid, tmp, cli, tmp))
  os.execute ("kill " .. pid .. " 2>/dev/null")
  for line in report:gmatch ("[^\n]+") do print ("# " .. line) end
  os.remove (tmp .. ".mach6") os.remove (tmp .. ".log") os.remove (pidfile) os.remove (tmp)
  t.ok (report:find ("0 unbalanced", 1, true), "balanced")
  for _, scope in ipairs { "love.update", "love.draw", "physics", "ai", "particles", "balls", "hud" } do
    t.ok (report:find ("\n%s*" .. scope:gsub ("%.", "%%.") .. "%s+%d"), scope .. " in the report")
  end
  -- The loader thread, with a Lua state and a tree of its own.
  t.ok (report:find ("“loader”", 1, true), "the loader thread")
  t.ok (report:find ("\n  decode%s+%d"), "decode under load")
  -- The leak is in update's particles: it carries update's growth.
  local upd = report:match ("\nlove%.update%s+%d+%s+%S+%s+%S+%s+%S+%s+%S+%s+(%S+)")
  local part = report:match ("\nlove%.update.-\n  particles%s+%d+%s+%S+%s+%S+%s+%S+%s+%S+%s+(%S+)")
  t.ok (tonumber (upd) and tonumber (upd) > 0, "love.update grows: " .. tostring (upd))
  t.ok (tonumber (part) and tonumber (part) >= 0.9 * tonumber (upd), "particles carries it: " .. tostring (part))
end)

-- report --leaks on a LÖVE recording: two threads, each reading its own
-- Lua state's heap, so no advice to record per thread (MACH6_HEAP changes
-- only the preload shim's readings).
t.test ("/lua/love/leaks-advice", function ()
  local tmp = os.tmpname ()
  local pidfile = tmp .. ".pid"
  os.execute (string.format ("%s %q/examples/love --leak --quit-after 20 >%q.log 2>&1 & echo $! > %q",
                             love_bin, root, tmp, pidfile))
  local f = io.open (pidfile) local pid = f:read ("*l") f:close ()
  for _ = 1, 300 do
    if read_command (string.format ("%q list", cli)):find ("\n" .. pid .. "%s") then break end
    os.execute ("sleep 0.1")
  end
  local leaks = read_command (string.format ("%q record %s --duration 1.5 -o %q.mach6 >/dev/null && %q report %q.mach6 --leaks",
                                             cli, pid, tmp, cli, tmp))
  os.execute ("kill " .. pid .. " 2>/dev/null")
  for line in leaks:gmatch ("[^\n]+") do print ("# " .. line) end
  os.remove (tmp .. ".mach6") os.remove (tmp .. ".log") os.remove (pidfile) os.remove (tmp)
  t.ok (leaks:find ("“loader”", 1, true), "two threads: the loader's too")
  t.ok (not leaks:find ("MACH6_HEAP", 1, true), "no MACH6_HEAP advice")
  t.ok (not leaks:find ("process-wide", 1, true), "not called process-wide")
end)

t.run ()
