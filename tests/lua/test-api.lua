-- SPDX-License-Identifier: MIT
-- test-api.lua — the module on a real interpreter (Lua 5.4 or LuaJIT, the
-- same file): the original usage pattern verbatim, the tree and payload,
-- the telescoping identity on the Lua heap, the sample module, bad input.
local t = require ("harness")
local mach6 = require ("mach6")
local profiler = mach6.profiler

local seed = tonumber (os.getenv ("MACH6_TEST_SEED") or "") or os.time () % 100000 + 1

-- The original's stand-in for Roblox's RunService: Connect stores the
-- handler; the test fires it like a game loop would.
local RunService = { Heartbeat = { handlers = {} } }
function RunService.Heartbeat:Connect (fn) self.handlers[#self.handlers + 1] = fn end
local function heartbeat () for _, fn in ipairs (RunService.Heartbeat.handlers) do fn (1 / 60) end end

local payloads = {}
local function runPhysics () local t = {} for i = 1, 64 do t[i] = { i } end return t end

t.test ("/lua/original-pattern", function ()
  -- Verbatim from the original's README, apart from RunService.
  local profiler = require("mach6").profiler
  profiler.mark("frame")
  RunService.Heartbeat:Connect(function()
      profiler.done()                                  -- close previous frame
      local payload = profiler.convert(profiler.root.children.frame)
      profiler.mark("frame")                           -- open next frame
      profiler.mark("physics"); runPhysics(); profiler.done()
      payloads[#payloads + 1] = payload
  end)

  for _ = 1, 300 do heartbeat () end
  t.eq (#payloads, 300, "payloads")
  for i, p in ipairs (payloads) do
    t.eq (p.label, "frame", "label")
    t.eq (p.stats.count, i, "frame count in payload " .. i)
  end
  local p = payloads[300]
  for _, key in ipairs { "time.avg", "time.p50", "time.p90", "time.max", "mem_delta.avg", "mem.net", "count" } do
    t.eq (type (p.stats[key]), "number", "type of stats['" .. key .. "']")
  end
  t.ok (p.stats["time.max"] >= p.stats["time.p90"] and p.stats["time.p90"] >= p.stats["time.p50"], "time.max >= p90 >= p50")
  t.ok (p.stats["time.avg"] > 0 and p.stats["time.avg"] < 1, "time.avg in seconds")
  t.eq (#p.children, 1, "children of frame")
  t.eq (p.children[1].label, "physics", "child label")
  t.eq (p.children[1].stats.count, 299, "physics count (the 300th frame closes next beat)")
  t.eq (#p.children[1].children, 0, "children of physics")
  t.ok (p.children[1].stats["mem_delta.avg"] > 0, "physics allocates")
  -- root.children is keyed by label; the same node gives the same proxy.
  t.eq (profiler.root.children.frame, profiler.root.children.frame, "proxy identity")
  t.eq (profiler.root.children.frame.children.physics.label, "physics", "node label")
  t.eq (profiler.root.children.nothing, nil, "missing child")
  t.eq (#profiler.root.children, 1, "#root.children")
  t.eq (profiler.root.label, "root", "root label")
  t.eq (profiler.root.children.frame.parent, profiler.root, "parent")
  profiler.done ()
  t.eq (profiler.depth (), 0, "depth after the loop")
  -- convert() of the root (and of nothing) is the whole tree.
  local whole = profiler.convert ()
  t.eq (whole.label, "root", "convert() label")
  t.eq (whole.children[1].label, "frame", "convert() first child")
end)

-- convert() reads the stats without going through JSON; they must be the
-- payload's all the same: every key of profiler.json(), the same numbers.
t.test ("/lua/convert-matches-json", function ()
  local node = profiler.root.children.frame
  local json = profiler.json (node)
  local stats = profiler.convert (node).stats
  local n = 0
  for key, text in json:match ('"stats":(%b{})'):gmatch ('"([^"]+)":([^,}]+)') do
    n = n + 1
    t.ok (stats[key] ~= nil, "convert() has " .. key)
    t.eq (stats[key], tonumber (text), key)
  end
  local m = 0
  for _ in pairs (stats) do m = m + 1 end
  t.eq (m, n, "no key that the payload does not have")
  t.ok (n >= 22, "the payload's keys: " .. n)
end)

t.test ("/lua/pairs-first-seen-order", function ()
  profiler.mark ("order")
  for _, l in ipairs { "c", "a", "b", "a" } do profiler.mark (l) profiler.done () end
  profiler.done ()
  local seen = {}
  for label, node in pairs (profiler.root.children.order.children) do
    seen[#seen + 1] = label
    t.eq (node.label, label, "node for " .. label)
  end
  t.eq (table.concat (seen, ","), "c,a,b", "order")
end)

-- mem.net == heap_last - heap_first exactly, the readings being the Lua
-- state's bytes in use (collectgarbage("count") * 1024) at each mark/done.
t.test ("/lua/identity-on-lua-heap", function ()
  local rand = t.rng (seed)
  local labels = { "a", "b", "c", "d" }
  local keep = {}
  collectgarbage ("collect")
  t.eq (mach6.heap (), collectgarbage ("count") * 1024, "mach6.heap() is the Lua heap, in bytes")
  -- With the collector stopped, nothing frees between a reading here and
  -- the mark's own, so they must be equal to the byte.
  collectgarbage ("stop")
  profiler.mark ("warm") profiler.done ()
  local h0 = mach6.heap ()
  profiler.mark ("identity")
  local depth = 1
  for _ = 1, 2000 do
    local r = rand (10)
    if r <= 4 and depth < 8 then
      profiler.mark (labels[rand (#labels)]) depth = depth + 1
    elseif r <= 8 and depth > 1 then
      profiler.done () depth = depth - 1
    elseif r == 9 then
      keep[#keep + 1] = { rand (100) }             -- grows
    else
      keep[rand (#keep + 1)] = nil                 -- shrinks (after a collect)
    end
    if rand (50) == 1 then collectgarbage ("collect") collectgarbage ("stop") end
  end
  while depth > 1 do profiler.done () depth = depth - 1 end
  local h1 = mach6.heap ()
  profiler.done ()
  collectgarbage ("restart")

  local node = profiler.convert (profiler.root.children.identity)
  t.eq (node.stats["mem.first"] * 1024, h0, "heap at the first mark")
  t.eq (node.stats["mem.net"] * 1024, h1 - h0, "mem.net of the top-level scope")
  local function check (n, path)
    t.eq (n.stats["mem.net"], n.stats["mem.last"] - n.stats["mem.first"], "identity at " .. path)
    t.eq (n.stats["mem.net"], n.stats["mem_delta.total"] + n.stats["inverse_mem.total"], "sum at " .. path)
    for _, c in ipairs (n.children) do check (c, path .. "/" .. c.label) end
  end
  check (node, "identity")
end)

-- In collect mode every reading follows a full collection, so a scope's
-- delta is what it retains: the leak lands in its scope to the byte, and a
-- scope that only makes garbage shows none.
t.test ("/lua/leak-found-in-scope", function ()
  local leak = {}
  local function make_garbage () local g = {} for i = 1, 50 do g[i] = { i } end end
  -- LuaJIT's compiled traces are objects of its heap too: with the JIT on,
  -- the scope whose loop got compiled retains them (a few KB, once).
  if jit then jit.off () end
  mach6.collect (true)
  for _ = 1, 100 do
    profiler.mark ("game")
    profiler.mark ("physics") make_garbage () profiler.done ()
    profiler.mark ("inventory") for i = 1, 32 do leak[#leak + 1] = { i } end profiler.done ()
    profiler.mark ("render") local s = 0 for i = 1, 100 do s = s + i end profiler.done ()
    profiler.done ()
  end
  mach6.collect (false)
  if jit then jit.on () end
  local game = profiler.convert (profiler.root.children.game)
  t.ok (game.stats["mem.net"] > 0, "the frame drifts up")
  local best, best_total = nil, -math.huge
  for _, c in ipairs (game.children) do
    print ("# " .. c.label .. " mem_delta.total " .. c.stats["mem_delta.total"] .. " KB")
    if c.stats["mem_delta.total"] > best_total then best, best_total = c.label, c.stats["mem_delta.total"] end
  end
  t.eq (best, "inventory", "the scope that carries the growth")
  -- A collection may shrink the interpreter's own stacks wherever it runs:
  -- tens of bytes, against the leak's hundreds of KB.
  t.ok (math.abs (game.children[1].stats["mem_delta.total"]) < 1, "physics retains nothing")
  t.ok (math.abs (game.children[3].stats["mem_delta.total"]) < 1, "render retains nothing")
  t.ok (math.abs (game.children[2].stats["mem_delta.total"] - game.stats["mem_delta.total"]) < 1, "frame = inventory")
end)

t.test ("/lua/bad-input", function ()
  local function fails (fn, pattern, ...)
    local ok, err = pcall (fn, ...)
    t.ok (not ok, "expected an error matching " .. pattern)
    t.ok (tostring (err):find (pattern, 1, true), "error '" .. tostring (err) .. "' should mention " .. pattern)
  end
  fails (profiler.mark, "bad argument #1 to 'mark' (string expected, got nil)", nil)
  fails (profiler.mark, "bad argument #1 to 'mark' (string expected, got no value)")
  fails (profiler.mark, "bad argument #1 to 'mark' (string expected, got number)", 3)
  fails (profiler.mark, "bad argument #1 to 'mark' (string expected, got table)", {})
  fails (profiler.convert, "bad argument #1 to 'convert' (mach6 node expected, got string)", "frame")
  fails (profiler.convert, "mach6 node expected, got table", {})
  fails (mach6.auto, "boolean expected", "yes")
  fails (mach6.auto, "malformed pattern", true, { include = { "[" } })
  fails (mach6.auto, "patterns or lists of patterns", true, { exclude = 5 })
  fails (profiler.convert, "mach6 node expected, got userdata", profiler.root.children)
  fails (mach6.sample.new, "number expected", "x")
  fails (mach6.thread_name, "string expected", nil)
  t.eq (profiler.root.children[100000], nil, "children[i] beyond the last child")
  t.eq (profiler.root.children[1.5], nil, "children[1.5]")
  fails (mach6.sample.summarize, "value 2 is string, not a number", { 1, "x" })
  fails (mach6.sample.summarize, "table expected", 5)
  fails (mach6.sample.new ().add, "number expected", mach6.sample.new (), "x")
  -- done() with nothing open: ignored and counted, never an error.
  t.eq (profiler.depth (), 0, "nothing open")
  local before = profiler.unbalanced ()
  profiler.done ()
  profiler.done ()
  t.eq (profiler.unbalanced (), before + 2, "unbalanced dones counted")
  t.eq (profiler.depth (), 0, "still nothing open")
  -- Marks from a finalizer (where Lua 5.4 will not count its heap) and a
  -- label that is not valid UTF-8 are fine too.
  local before_gc = profiler.unbalanced ()
  local function finalizer () profiler.mark ("finalizer") profiler.done () end
  if newproxy then   -- Lua 5.1: only userdata have finalizers
    getmetatable (newproxy (true)).__gc = finalizer
  else
    setmetatable ({}, { __gc = finalizer })
  end
  collectgarbage ("collect")
  t.ok (profiler.root.children.finalizer ~= nil, "marked from a finalizer")
  local fin = profiler.convert (profiler.root.children.finalizer)
  t.ok (fin.stats["mem.first"] > 0, "a heap reading, not an error code")
  t.eq (profiler.unbalanced (), before_gc, "balanced")
  profiler.mark ("\255\254") profiler.done ()
  t.ok (profiler.convert ().children ~= nil, "converts with invalid UTF-8")
  -- A long label is a label like any other.
  profiler.mark (string.rep ("x", 5000)) profiler.done ()
  t.ok (profiler.root.children[string.rep ("x", 5000)] ~= nil, "long label")
end)

-- Manual scopes belong to the coroutine that opened them: a yield closes
-- them, the next resume reopens them under the resumer's current scope.
t.test ("/lua/coroutines-keep-their-scopes", function ()
  local function worker (name)
    return coroutine.wrap (function ()
      profiler.mark (name)
      for i = 1, 3 do
        profiler.mark ("step") coroutine.yield (i) profiler.done ()
      end
      profiler.done ()
    end)
  end
  profiler.mark ("scheduler")
  local a, b = worker ("a"), worker ("b")
  for _ = 1, 4 do a () b () end
  profiler.done ()
  t.eq (profiler.depth (), 0, "balanced")
  local p = profiler.convert (profiler.root.children.scheduler)
  t.eq (#p.children, 2, "a and b side by side under the scheduler")
  for _, c in ipairs (p.children) do
    t.eq (c.stats.count, 4, c.label .. ": one scope per resume")
    t.eq (#c.children, 1, c.label .. ": only its own step inside")
    t.eq (c.children[1].label, "step", c.label .. ": step")
    t.eq (c.children[1].stats.count, 3 + 3, c.label .. ": each step closed at the yield and again at its done")
  end
  -- done() in a coroutine with nothing of its own open closes the
  -- resumer's scope (the original's frame pattern driven from a coroutine).
  profiler.mark ("outer")
  coroutine.wrap (function () profiler.done () end) ()
  t.eq (profiler.depth (), 0, "outer closed from the coroutine")
  t.eq (profiler.convert (profiler.root.children.outer).stats.count, 1, "outer count")
end)

t.test ("/lua/sample", function ()
  local s = mach6.sample
  local function near (a, b, what) t.ok (math.abs (a - b) < 1e-9, what .. ": " .. a .. " vs " .. b) end
  local z = s.summarize ({})
  t.eq (z.n, 0, "empty n") t.eq (z.p50, 0, "empty p50") t.eq (z.max, 0, "empty max")
  local one = s.summarize ({ 7 })
  t.eq (one.p10, 7, "one p10") t.eq (one.p90, 7, "one p90") t.eq (one.avg, 7, "one avg")
  -- numpy.quantile([10, 1, 9, 2, ... ], p, method="linear")
  local v = s.summarize ({ 10, 1, 9, 2, 8, 3, 7, 4, 6, 5 })
  near (v.p10, 1.9, "p10") near (v.p50, 5.5, "p50") near (v.p90, 9.1, "p90")
  t.eq (v.min, 1, "min") t.eq (v.max, 10, "max") near (v.avg, 5.5, "avg")
  local w = s.summarize ({ 0.5, 0.25 })
  near (w.p10, 0.275, "p10 of two") near (w.p90, 0.475, "p90 of two")

  -- Algorithm R: 128 slots, every value from the stream, k-th kept with
  -- probability 128/k; the same seed gives the same sample.
  local a, b = s.new (seed), s.new (seed)
  for i = 1, 10000 do a:add (i) b:add (i) end
  t.eq (a:count (), 10000, "count")
  local va, vb = a:values (), b:values ()
  t.eq (#va, 128, "slots")
  local late = 0
  for i = 1, 128 do
    t.eq (va[i], vb[i], "same seed, same slot " .. i)
    t.ok (va[i] >= 1 and va[i] <= 10000 and va[i] % 1 == 0, "value from the stream")
    if va[i] > 5000 then late = late + 1 end
  end
  -- Half the stream is after 5000: about 64 of 128 slots, surely 30..98.
  t.ok (late > 30 and late < 98, "uniform over the stream (" .. late .. " late)")
  local small = s.new ()
  for i = 1, 5 do small:add (i * 2) end
  t.eq (#small:values (), 5, "fewer than 128")
  near (small:summarize ().p50, 6, "summarize of a reservoir")
  near (s.summarize (small).avg, 6, "sample.summarize(reservoir)")
end)

-- The original reads the tree by walking .children: pairs, next and
-- ipairs work on both runtimes (LuaJIT's take only tables; the module
-- wraps them), ipairs and children[i] in first-seen order.
t.test ("/lua/children-walk", function ()
  profiler.mark ("walk")
  for _, l in ipairs { "b", "a", "c" } do profiler.mark (l) profiler.done () end
  profiler.done ()
  local children = profiler.root.children.walk.children
  local seen = {}
  for label, node in pairs (children) do seen[#seen + 1] = label t.eq (node.label, label, "pairs") end
  t.eq (table.concat (seen, ","), "b,a,c", "pairs in first-seen order")
  local k, v = next (children)
  t.eq (k, "b", "next") t.eq (v, children.b, "next's node")
  t.eq (next (children, "c"), nil, "next after the last")
  seen = {}
  for i, node in ipairs (children) do seen[i] = node.label end
  t.eq (table.concat (seen, ","), "b,a,c", "ipairs")
  t.eq (children[2], children.a, "children[i]")
  t.eq (#children, 3, "#children")
  -- Tables are untouched by the wrappers.
  local n = 0
  for _ in pairs { x = 1, y = 2 } do n = n + 1 end
  t.eq (n, 2, "pairs of a table")
  t.eq (next ({}), nil, "next of a table")
end)

-- LuaJIT's ring-only mode: the FFI straight to the ring; the tree only
-- once asked for, from then on. Lua 5.4 says to use the module.
t.test ("/lua/ring-only", function ()
  if not jit then
    local ok, err = pcall (require, "mach6.ring")
    t.ok (not ok and err:find ("LuaJIT's", 1, true) ~= nil, "5.4 refuses: " .. tostring (err))
    return
  end
  local ring = require ("mach6.ring").profiler
  for _ = 1, 3 do ring.mark ("rframe") ring.mark ("rx") ring.done () ring.done () end
  t.eq (ring.depth (), 0, "balanced")
  local ok, err = pcall (ring.mark, 5)
  t.ok (not ok and err:find ("string expected", 1, true) ~= nil, "a number is no label: " .. tostring (err))
  ring.mark ("rspan")                      -- open across the switch
  local root = ring.root                   -- the full module from here on
  ring.mark ("rframe") ring.done ()
  ring.done ()                             -- closes rspan, in the ring
  t.eq (ring.depth (), 0, "balanced after the switch")
  t.eq (root.children.rframe.count, 1, "the tree counts from the switch")
end)

-- Unseeded reservoirs draw independently; seeded ones repeat.
t.test ("/lua/sample/independent", function ()
  local a, b = mach6.sample.new (), mach6.sample.new ()
  for i = 1, 10000 do a:add (i) b:add (i) end
  local va, vb, same = a:values (), b:values (), 0
  for i = 1, 128 do if va[i] == vb[i] then same = same + 1 end end
  t.ok (same < 20, "two unseeded reservoirs kept " .. same .. " of 128 slots alike")
end)

t.run ()
