-- SPDX-License-Identifier: MIT
-- bench-lua.lua — what the Lua module costs, from the interpreter running
-- it (Lua 5.4 or LuaJIT): a mark/done pair unattached and attached, against
-- an empty Lua function call pair measured in the same run, and the
-- overhead of mach6.auto() on a call-heavy benchmark. One JSON line per
-- figure. Times are CPU time (os.clock), best of 5 rounds.
local mach6 = require ("mach6")
local profiler = mach6.profiler
local rt = jit and "luajit" or "lua5.4"
local cli = os.getenv ("MACH6_CLI")

local function emit (metric, value, unit)
  print (string.format ('{"bench": "lua", "metric": "%s.%s", "value": %.4g, "unit": "%s"}', rt, metric, value, unit))
end

local function best (fn, n)
  local b = math.huge
  for _ = 1, 5 do
    local t0 = os.clock ()
    fn (n)
    local dt = os.clock () - t0
    if dt < b then b = dt end
  end
  return b * 1e9 / n
end

local function empty () end
local function empty_pairs (n) for _ = 1, n do empty ("x") empty () end end
local mark, done = profiler.mark, profiler.done
local function mark_pairs (n) for _ = 1, n do mark ("x") done () end end

local N = 1000000
local base = best (empty_pairs, N)
emit ("empty_call_pair", base, "ns")
if jit then
  -- Compiled, an empty call is no call at all; the interpreter's is the
  -- figure to compare a C call with.
  jit.off () jit.flush ()
  local ibase = best (empty_pairs, N)
  local ipair = best (mark_pairs, N)
  emit ("empty_call_pair_interpreted", ibase, "ns")
  emit ("pair_unattached_interpreted", ipair, "ns")
  emit ("pair_unattached_interpreted_ratio", ipair / ibase, "x")
  jit.on ()
end
local unattached = best (mark_pairs, N)
emit ("pair_unattached", unattached, "ns")
emit ("pair_unattached_ratio", unattached / base, "x")

-- LuaJIT's ring-only mode (require "mach6.ring"): mark/done through the
-- FFI, the accounting left to the viewer.
local ring_pairs
if jit then
  local ring = require ("mach6.ring").profiler
  local rmark, rdone = ring.mark, ring.done
  ring_pairs = function (n) for _ = 1, n do rmark ("x") rdone () end end
  emit ("ring_pair_unattached", best (ring_pairs, N), "ns")
end

-- Attached: a real `mach6 record` of this process drains the ring.
if cli then
  local f = assert (io.open ("/proc/self/stat"))
  local pid = f:read ("*l"):match ("^(%d+)")
  f:close ()
  local out = os.tmpname ()
  mark ("start") done ()
  os.execute (string.format ("%q record %s --duration 30 -o %q.mach6 >/dev/null 2>&1 & echo $! > %q", cli, pid, out, out))
  f = io.open (out) local rec = f:read ("*l") f:close ()
  local t0 = os.time ()
  while not mach6.attached () and os.time () - t0 < 10 do mark ("wait") done () end
  mark ("warm") done ()
  -- Bursts that fit the ring (65536 events), a pause for the recorder to
  -- drain between them, so that every pair is written and none dropped.
  local burst, total, pairs = 20000, 0, 0
  for _ = 1, 25 do
    local t1 = os.clock ()
    mark_pairs (burst)
    total = total + (os.clock () - t1)
    pairs = pairs + burst
    os.execute ("sleep 0.02")
  end
  local attached = total * 1e9 / pairs
  local ring_attached
  if ring_pairs then
    total, pairs = 0, 0
    for _ = 1, 25 do
      local t1 = os.clock ()
      ring_pairs (burst)
      total = total + (os.clock () - t1)
      pairs = pairs + burst
      os.execute ("sleep 0.02")
    end
    ring_attached = total * 1e9 / pairs
  end
  os.execute ("kill -INT " .. rec .. "; sleep 0.5")
  local report = io.popen (string.format ("%q report %q.mach6 2>&1", cli, out)):read ("*a")
  os.remove (out) os.remove (out .. ".mach6")
  local drops = report:match ("(%d+) drops") or "?"
  emit ("pair_attached", attached, "ns")
  emit ("pair_attached_ratio", attached / base, "x")
  if ring_attached then emit ("ring_pair_attached", ring_attached, "ns") end
  print (string.format ("# %s attached: %s drops while recording", rt, drops))
end

-- convert() of a frame of 11 nodes, as the original pattern calls it
-- every frame; per node.
mark ("cframe")
for _, l in ipairs { "physics", "ai", "render", "audio", "ui" } do mark (l) mark ("sub") done () done () end
done ()
local cframe = profiler.root.children.cframe
emit ("convert_per_node", best (function (n) for _ = 1, n do profiler.convert (cframe) end end, 20000) / 11, "ns")

-- Auto-instrumentation on a call-heavy benchmark (fib(20): 21891 calls).
local function fib (n) if n < 2 then return n end return fib (n - 1) + fib (n - 2) end
local calls = 21891
local function run_fib (n) for _ = 1, n do fib (20) end end
local plain = best (run_fib, 20) / calls
emit ("fib_call_plain", plain, "ns")
if jit then
  jit.off () jit.flush ()
  emit ("fib_call_interpreted", best (run_fib, 20) / calls, "ns")
  jit.on ()
end
mach6.auto (true)
local auto_tree = best (run_fib, 5) / calls
mach6.auto (false)
emit ("fib_call_auto", auto_tree, "ns")
emit ("fib_call_auto_ratio", auto_tree / plain, "x")
-- Inside a frame the functions go to the ring too (unattached here).
profiler.mark ("frame")
mach6.auto (true)
local auto_ring = best (run_fib, 5) / calls
mach6.auto (false)
profiler.done ()
emit ("fib_call_auto_in_frame", auto_ring, "ns")

-- LuaJIT: a C function through the Lua C API (the module's way) against
-- the same function through the FFI, which an FFI module would use, plus
-- the heap reading an FFI module would have to take in Lua.
if jit then
  local ffi = require ("ffi")
  ffi.cdef ("int mach6_attached (void); void mach6_done_heap (int64_t heap);")
  local lib = ffi.load (os.getenv ("MACH6_LIB") or "mach6")
  local attached_c = mach6.attached
  local f_attached, f_done = lib.mach6_attached, lib.mach6_done_heap
  emit ("capi_call_pair", best (function (n) for _ = 1, n do attached_c () attached_c () end end, N), "ns")
  emit ("ffi_call_pair", best (function (n) for _ = 1, n do f_attached () f_attached () end end, N), "ns")
  -- done_heap with nothing open returns at once: the call and the reading.
  emit ("ffi_call_pair_with_heap", best (function (n)
    for _ = 1, n do f_done (collectgarbage ("count") * 1024) f_done (collectgarbage ("count") * 1024) end
  end, N), "ns")
end
