-- SPDX-License-Identifier: MIT
-- test-live.lua — the module live: this interpreter is the game, the real
-- `mach6` CLI (list, record, report) attaches to it through shared memory.
local t = require ("harness")
local mach6 = require ("mach6")
local profiler = mach6.profiler
local cli = assert (os.getenv ("MACH6_CLI"), "MACH6_CLI not set")

local function own_pid ()
  local f = assert (io.open ("/proc/self/stat"))
  local pid = f:read ("*l"):match ("^(%d+)")
  f:close ()
  return pid
end
local pid = own_pid ()

local function read_command (cmd)
  local p = assert (io.popen (cmd .. " 2>&1"))
  local out = p:read ("*a")
  p:close ()
  return out
end

local function exists (path)
  local f = io.open (path)
  if f then f:close () end
  return f ~= nil
end

local tmp = os.tmpname ()

-- Run frames of @frame until a `mach6 record` started in the background
-- has saved its capture; return the text of `mach6 report`.
local function record_while (frame, seconds)
  local capture, rc = tmp .. ".mach6", tmp .. ".rc"
  os.remove (capture) os.remove (rc)
  os.execute (string.format ("(%q record %s --duration %s -o %q >/dev/null 2>&1; echo $? > %q) &",
                             cli, pid, seconds, capture, rc))
  local deadline = os.time () + 60
  local n = 0
  while not exists (rc) do
    frame ()
    n = n + 1
    t.ok (os.time () < deadline, "mach6 record did not finish")
  end
  os.execute ("sleep 0.1")   -- the rc file is being written
  local f = io.open (rc) local status = f:read ("*l") f:close ()
  t.eq (status, "0", "mach6 record exit status")
  print ("# " .. n .. " frames while recording")
  local report = read_command (string.format ("%q report %q", cli, capture))
  for line in report:gmatch ("[^\n]+") do print ("# " .. line) end
  os.remove (capture) os.remove (rc)
  return report
end

-- The columns of a scope's row in the report table.
local function row (report, label)
  for line in report:gmatch ("[^\n]+") do
    local indent, name, rest = line:match ("^(%s*)(%S+)%s+(%d.*)$")
    if name == label then
      -- One field a cell (a time is "12.3 µs" with a no-break space).
      local cols = {}
      for c in rest:gmatch ("%S+") do cols[#cols + 1] = c end
      return { depth = #indent / 2, count = tonumber (cols[1]), mem_delta = tonumber (cols[6]),
               mem_net = tonumber (cols[7]) }
    end
  end
end

t.test ("/lua/live/listed", function ()
  profiler.mark ("start") profiler.done ()     -- the segment exists from the first mark
  local list = read_command (string.format ("%q list", cli))
  local found = false
  for line in list:gmatch ("[^\n]+") do
    if line:match ("^%s*" .. pid .. "%s") then found = true end
  end
  t.ok (found, "mach6 list shows pid " .. pid .. ":\n" .. list)
end)

-- A table that keeps growing in one scope, found there by the CLI.
local leak = {}
local function make_garbage () local g = {} for i = 1, 40 do g[i] = { i } end end
local function frame ()
  profiler.mark ("frame")
  profiler.mark ("physics") make_garbage () profiler.done ()
  profiler.mark ("inventory") for i = 1, 8 do leak[#leak + 1] = { i } end profiler.done ()
  profiler.mark ("render") local s = 0 for i = 1, 200 do s = s + i end profiler.done ()
  profiler.done ()
end

t.test ("/lua/live/leak-found-by-cli", function ()
  if jit then jit.off () end    -- compiled traces are heap too (docs/lua.md)
  mach6.collect (true)
  local report = record_while (frame, 1)
  mach6.collect (false)
  t.ok (report:find ("0 unbalanced", 1, true), "balanced stream")
  local f, phys, inv, ren = row (report, "frame"), row (report, "physics"), row (report, "inventory"), row (report, "render")
  t.ok (f and phys and inv and ren, "frame and its three systems in the report")
  t.eq (inv.depth, 1, "inventory under frame")
  t.ok (f.count > 10, "frames recorded")
  t.ok (f.mem_net > 0, "the frame drifts up: " .. f.mem_net)
  -- The frame's own part is the interpreter's (a collection may shrink its
  -- stacks), a few bytes a frame: inventory carries the rest.
  t.ok (inv.mem_delta > 0.9 * f.mem_delta, "the drift is inventory's: " .. inv.mem_delta .. " of " .. f.mem_delta)
  t.ok (math.abs (phys.mem_delta) < 0.05, "physics retains nothing")
  t.ok (math.abs (ren.mem_delta) < 0.05, "render retains nothing")
end)

local function fib (n) if n < 2 then return n end return fib (n - 1) + fib (n - 2) end
local function boom () error ("boom") end
local function step () for i = 1, 3 do coroutine.yield (i) end end
local function auto_frame ()
  profiler.mark ("frame")
  fib (6)
  pcall (boom)
  local a, b = coroutine.wrap (step), coroutine.wrap (step)
  for _ = 1, 3 do a () b () end
  profiler.done ()
end

t.test ("/lua/live/auto-balanced", function ()
  mach6.auto (true)
  local report = record_while (auto_frame, 1)
  mach6.auto (false)
  t.ok (report:find (" 0 unbalanced, 0 rejected", 1, true), "the ring stream stayed balanced")
  t.ok (report:find ("fib (", 1, true), "functions in the report")
  t.ok (report:find ("function (", 1, true), "coroutine and pcall'd functions in the report")
end)

-- Random programs under auto, a frame each: the reader validates every
-- event of the stream it records.
t.test ("/lua/live/auto-random-balanced", function ()
  local seed = tonumber (os.getenv ("MACH6_TEST_SEED") or "") or os.time () % 100000 + 1
  local round = require ("random-program") (profiler, t.rng (seed))
  local function random_frame ()
    profiler.mark ("frame")
    round ()
    profiler.done ()
  end
  mach6.auto (true)
  local report = record_while (random_frame, 1)
  mach6.auto (false)
  t.ok (report:find (" 0 unbalanced, 0 rejected", 1, true), "the ring stream stayed balanced")
  t.ok (report:find ("\nframe ", 1, true), "frames recorded")
end)

-- An unmodified program under the launcher, its frame named by a pattern.
t.test ("/lua/live/launcher", function ()
  local interp = arg[-1]
  local src = debug.getinfo (1, "S").source:match ("^@(.*)/[^/]*$") or "."
  local tmp = os.tmpname ()
  os.execute (string.format ("MACH6_AUTO_FRAME='^tick ' %q -l mach6.auto %q/unmodified.lua 30 >/dev/null 2>&1 & echo $! > %q",
                             interp, src, tmp))
  local f = io.open (tmp) local child = f:read ("*l") f:close ()
  local listed = false
  for _ = 1, 300 do
    if read_command (string.format ("%q list", cli)):find ("\n" .. child .. "%s") then listed = true break end
    os.execute ("sleep 0.1")
  end
  t.ok (listed, "the launched program is listed")
  local report = read_command (string.format ("%q record %s --duration 1 -o %q.mach6 >/dev/null && %q report %q.mach6",
                                              cli, child, tmp, cli, tmp))
  os.execute ("kill " .. child)
  os.remove (tmp) os.remove (tmp .. ".mach6")
  for line in report:gmatch ("[^\n]+") do print ("# " .. line) end
  t.ok (report:find (" 0 unbalanced", 1, true), "balanced")
  t.ok (report:find ("\ntick %(") ~= nil, "tick is the top-level scope")
  t.ok (report:find ("\n  update %(") ~= nil, "update inside it")
  t.ok (report:find ("\n    fib %(") ~= nil, "fib inside update")
  t.ok (report:find ("\n  draw %(") ~= nil, "draw inside tick")
end)

t.run ()
