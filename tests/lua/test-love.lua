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

-- A row of the report's scope table: its count, the four times (in
-- seconds; each a number, a no-break space and a unit) and the four KB columns, found at an indentation (two spaces a
-- level) after a position in the report.
local units = { ns = 1e-9, ["µs"] = 1e-6, ms = 1e-3, s = 1 }
local function row (report, indent, scope, from)
  local at, line = report:find ("\n" .. indent .. scope:gsub ("%.", "%%.") .. "%s+%d[^\n]*", from or 1)
  if not at then return nil end
  line = report:sub (at + 1, line)
  local fields = {}
  for w in line:gmatch ("%S+") do fields[#fields + 1] = w end
  local r = { count = tonumber (fields[2]), at = at }
  for i, key in ipairs { "avg", "p50", "p90", "max" } do
    local value, unit = fields[2 + i]:match ("^([%d.]+)\194\160(.+)$")    -- a no-break space between
    r[key] = tonumber (value) * assert (units[unit], line)
  end
  for i, key in ipairs { "delta_kb", "alloc_kb", "self_kb", "drift_kb" } do r[key] = tonumber (fields[6 + i]) end
  return r
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
  for _, scope in ipairs { "frame", "love.update", "love.draw", "physics", "ai", "particles", "balls", "hud" } do
    t.ok (report:find ("\n%s*" .. scope:gsub ("%.", "%%.") .. "%s+%d"), scope .. " in the report")
  end
  -- The loader thread, with a Lua state and a tree of its own.
  t.ok (report:find ("“loader”", 1, true), "the loader thread")
  t.ok (report:find ("\n  decode%s+%d"), "decode under load")
  -- The leak is in update's particles: it carries update's growth.
  local upd = row (report, "  ", "love.update")
  local part = upd and row (report, "    ", "particles", upd.at)
  t.ok (upd and upd.delta_kb > 0, "love.update grows: " .. tostring (upd and upd.delta_kb))
  t.ok (part and part.delta_kb >= 0.9 * upd.delta_kb, "particles carries it: " .. tostring (part and part.delta_kb))
  -- One frame per update (issue 21 item 15): a "frame" scope around
  -- love.update and the love.draw after it, so the thread's frames, the
  -- frame scope's calls, the updates and the draws are one count, and a
  -- frame's time is the whole of both. The recording may stop inside a
  -- frame whose update (or draw too) already closed: one more of those.
  local frames = tonumber (report:match ("Thread %d+ “love”[^\n]-: (%d+) frames"))
  local frame = row (report, "", "frame")
  local draw = row (report, "  ", "love.draw")
  local function one_a_frame (n) return n and frames and (n == frames or n == frames + 1) end
  t.ok (frames and frames > 30, "frames recorded: " .. tostring (frames))
  t.ok (frame and frame.count == frames, "the frame scope is the frame: " .. tostring (frame and frame.count))
  t.ok (upd and one_a_frame (upd.count), "one update a frame: " .. tostring (upd and upd.count) .. " for " .. tostring (frames))
  t.ok (draw and one_a_frame (draw.count), "one draw a frame: " .. tostring (draw and draw.count))
  t.ok (frame and upd and draw and frame.avg >= 0.99 * (upd.avg + draw.avg),
        string.format ("a frame's time is update's and draw's: %s against %s + %s",
                       frame and frame.avg, upd and upd.avg, draw and draw.avg))
  t.ok (frame and upd and draw and frame.p50 > upd.p50 and frame.p50 > draw.p50, "a frame's median is above both halves'")
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
