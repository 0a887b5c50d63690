-- SPDX-License-Identifier: MIT
-- test-auto.lua — mach6.auto() on a real interpreter: recursion, tail
-- calls, a pcall'd error and interleaved coroutines leave the stream
-- balanced and the tree in the shape docs/lua.md describes.
local t = require ("harness")
local mach6 = require ("mach6")
local profiler = mach6.profiler
local JIT = jit ~= nil

-- A function's scope is labelled "name (source:line)"; the name is the
-- first call site's (a tail call has none in Lua 5.4), so match the line.
local function is (label, fn)
  local line = type (fn) == "string" and fn or ":" .. debug.getinfo (fn, "S").linedefined .. ")"
  return label:sub (-#line) == line
end

local function find (node, fn)
  for _, c in ipairs (node.children) do
    if is (c.label, fn) then return c end
  end
end

local function total (node, fn)
  local n = is (node.label, fn) and node.stats.count or 0
  for _, c in ipairs (node.children) do n = n + total (c, fn) end
  return n
end

-- Run @fn under auto inside a manual top-level scope; return that scope's
-- payload, checking that everything closed.
local function auto_run (name, fn, opts)
  profiler.mark (name)
  mach6.auto (true, opts)
  fn ()
  mach6.auto (false)
  t.eq (profiler.depth (), 1, name .. ": only the manual scope is open")
  profiler.done ()
  t.eq (profiler.depth (), 0, name .. ": balanced")
  -- fn itself is the one scope under the manual one.
  local p = profiler.convert (profiler.root.children[name])
  t.eq (#p.children, 1, name .. ": one call of fn")
  t.ok (p.children[1].label:find ("^fn %("), name .. ": fn first: " .. p.children[1].label)
  return p.children[1]
end

local function fib (n) if n < 2 then return n end return fib (n - 1) + fib (n - 2) end

t.test ("/lua/auto/recursion", function ()
  local p = auto_run ("recursion", function () fib (10) end)
  local top = find (p, fib)
  t.ok (top ~= nil, "fib at the top")
  t.ok (top.label:find ("test%-auto%.lua:%d+%)$") ~= nil, "label has source:line: " .. top.label)
  t.eq (top.stats.count, 1, "one outer call")
  t.eq (total (p, fib), 177, "every call of fib(10), as a chain")
  local depth, n = 0, top
  while n do depth = depth + 1 n = find (n, fib) end
  t.eq (depth, 10, "recursion depth")
end)

local function down (n) if n == 0 then return 0 end local r = down (n - 1) return r + 1 end

t.test ("/lua/auto/deep-recursion", function ()
  local p = auto_run ("deep", function () down (3000) end)
  t.eq (total (p, down), 3001, "every level")
  local label = find (p, down).label
  local node, depth = profiler.root.children.deep.children[p.label].children[label], 0
  while node do
    depth = depth + 1
    t.ok (#node.children <= 1, "a chain")
    node = node.children[label]
  end
  t.eq (depth, 3001, "a chain of 3001 downs")
end)

local function countdown (n) if n == 0 then return "done" end return countdown (n - 1) end
local function tail_caller () return countdown (5) end

t.test ("/lua/auto/tail-calls", function ()
  local p = auto_run ("tail", function () for _ = 1, 3 do tail_caller () end end)
  t.eq (total (p, countdown), 18, "every countdown call")
  -- A tail call ends its caller's scope: the callee appears beside it, and
  -- one level of scopes, not a chain, holds the whole loop.
  local c = find (p, countdown)
  t.ok (c ~= nil, "countdown beside its caller")
  t.eq (#c.children, 0, "no chain of tail calls")
  t.eq (find (p, tail_caller).stats.count, 3, "tail_caller closed at its tail call")
end)

-- Two functions on one line are two scopes, not one nested in itself.
local inner, outer_fn = function () return 1 end, nil
outer_fn = function () return inner () + 1 end

t.test ("/lua/auto/same-line", function ()
  local p = auto_run ("sameline", function () outer_fn () outer_fn () end)
  local labels = {}
  local function walk (n, depth)
    for _, c in ipairs (n.children) do
      labels[#labels + 1] = string.rep (" ", depth) .. c.label
      t.ok (c.label ~= n.label, "no scope nested in one of its own label: " .. c.label)
      walk (c, depth + 1)
    end
  end
  walk (p, 0)
  t.eq (#labels, 2, "two functions, one inside the other: " .. table.concat (labels, " | "))
  t.ok (labels[1] ~= labels[2]:sub (2), "labelled apart: " .. table.concat (labels, " | "))
end)

-- A tail call into C runs inside its caller on both runtimes.
local function clock_tail () return os.clock () end

t.test ("/lua/auto/tail-call-into-c", function ()
  local p = auto_run ("tailc", function () clock_tail () clock_tail () end, { c = true })
  local c = find (p, clock_tail)
  t.ok (c ~= nil, "clock_tail under fn")
  t.eq (c.stats.count, 2, "clock_tail twice")
  t.eq (#c.children, 1, "os.clock inside clock_tail")
  t.ok (c.children[1].label:find ("%[C%]$") ~= nil, "a C function: " .. tostring (c.children[1] and c.children[1].label))
  for _, x in ipairs (p.children) do
    t.ok (not x.label:find ("%[C%]$"), "no C function beside clock_tail: " .. x.label)
  end
end)

-- lua -l mach6.auto without a frame pattern says why nothing is recorded.
t.test ("/lua/auto/launcher-without-frame", function ()
  local interp = arg and arg[-1]
  if not interp then print ("# no interpreter path") return end
  local f = io.popen ("MACH6_AUTO_FRAME= " .. interp .. " -l mach6.auto -e 'local x = 1' 2>&1")
  local out = f:read ("*a")
  f:close ()
  t.ok (out:find ("MACH6_AUTO_FRAME is not set", 1, true) ~= nil, "said: " .. out)
end)

local function boom () error ("boom") end
local function deep (n) if n == 0 then boom () end deep (n - 1) end
local function guarded () return pcall (deep, 4) end
local function after () return 1 end

t.test ("/lua/auto/pcall-error", function ()
  local p = auto_run ("errors", function ()
    for _ = 1, 2 do
      local ok = guarded ()
      t.eq (ok, false, "the error reached pcall")
      after ()
    end
  end)
  local g = find (p, guarded)
  t.ok (g ~= nil, "guarded in the tree")
  t.eq (g.stats.count, 2, "guarded closed twice")
  t.eq (total (p, boom), 2, "boom closed by the unwinding")
  -- after() runs after the unwinding: beside guarded, not inside deep.
  t.eq (find (p, after).stats.count, 2, "after at the top")
  t.eq (total (g, after), 0, "after never inside the unwound scopes")
end)

local function step (name, n)
  for i = 1, n do coroutine.yield (name .. i) end
  return name
end
local function body_a () local r = step ("a", 3) return r end
local function body_b () local r = step ("b", 2) return r end

t.test ("/lua/auto/coroutines", function ()
  local p = auto_run ("coroutines", function ()
    local a = coroutine.create (body_a)
    local b = coroutine.wrap (body_b)
    local got = {}
    for _ = 1, 3 do
      local _, v = coroutine.resume (a) got[#got + 1] = v
      if #got < 5 then got[#got + 1] = b () end
    end
    coroutine.resume (a)
    got[#got + 1] = b ()
    t.eq (table.concat (got, " "), "a1 b1 a2 b2 a3 b", "the coroutines ran")
  end)
  -- Each resume runs the coroutine's scopes under the resumer's; a yield
  -- closes them. a: 4 resumes, b: 3.
  local ba, bb = find (p, body_a), find (p, body_b)
  t.ok (ba and bb, "both bodies at the resumer's level")
  t.eq (ba.stats.count, 4, "body_a: one scope per resume")
  t.eq (bb.stats.count, 3, "body_b: one scope per resume")
  t.eq (find (ba, step).stats.count, 4, "step inside body_a")
  t.eq (find (bb, step).stats.count, 3, "step inside body_b")
  t.eq (find (ba, body_b), nil, "b never inside a")
  t.eq (find (find (ba, step), body_b), nil, "b never inside a's step")
end)

t.test ("/lua/auto/coroutine-created-before", function ()
  local early = coroutine.create (body_a)
  local early_wrap = coroutine.wrap (body_b)
  local p = auto_run ("early", function ()
    for _ = 1, 4 do coroutine.resume (early) end
    for _ = 1, 3 do early_wrap () end
  end)
  t.eq (find (p, body_a).stats.count, 4, "body_a seen though created before auto")
  t.eq (find (p, body_b).stats.count, 3, "body_b seen though created before auto")
end)

t.test ("/lua/auto/manual-inside", function ()
  -- A manual scope closed from a callee: the function scopes opened inside
  -- it close with it and go on one level up.
  local function closer () profiler.done () fib (2) end
  local p = auto_run ("manual", function ()
    for _ = 1, 5 do profiler.mark ("frame") fib (3) closer () end
  end)
  local frame = p.children[1]
  t.eq (frame.label, "frame", "the manual scope inside fn")
  t.eq (frame.stats.count, 5, "every frame closed")
  t.eq (total (frame, fib), 5 * 5, "fib(3) inside each frame")
  t.eq (find (frame, closer).stats.count, 5, "closer inside frame until the done")
  t.eq (find (p, closer).stats.count, 5, "then beside it")
  -- A scope opened before auto(true) is closed by its done() under auto.
  profiler.mark ("before")
  mach6.auto (true)
  fib (2)
  profiler.done ()
  mach6.auto (false)
  t.eq (profiler.depth (), 0, "balanced")
  t.eq (profiler.convert (profiler.root.children.before).stats.count, 1, "before closed")
end)

local function keep_me () local n = fib (2) return n end

t.test ("/lua/auto/filter", function ()
  -- include: only functions whose label or source matches are scopes.
  profiler.mark ("filter")
  mach6.auto (true, { include = { "^keep_me" } })
  keep_me () pcall (after) fib (3)
  mach6.auto (false)
  profiler.done ()
  local p = profiler.convert (profiler.root.children.filter)
  local names = {}
  for _, c in ipairs (p.children) do names[#names + 1] = c.label end
  t.eq (#p.children, 1, "only keep_me: " .. table.concat (names, ", "))
  t.ok (is (p.children[1].label, keep_me), "keep_me")
  t.eq (#p.children[1].children, 0, "fib filtered out")

  -- c = true shows C functions; exclude hides what matches.
  profiler.mark ("filter-c")
  mach6.auto (true, { c = true, exclude = { "test%-auto%.lua:" .. debug.getinfo (after, "S").linedefined } })
  pcall (after)
  mach6.auto (false)
  profiler.done ()
  local q = profiler.convert (profiler.root.children["filter-c"])
  names = {}
  for _, c in ipairs (q.children) do names[#names + 1] = c.label end
  t.ok (table.concat (names, ","):find ("pcall [C]", 1, true), "pcall shown with c = true: " .. table.concat (names, ","))
  t.eq (total (q, after), 0, "after excluded")
end)

-- A seeded random program of nested calls, tail calls, errors caught at
-- random depths, coroutines resumed and abandoned, manual scopes opened
-- and closed anywhere: whatever happens, everything closes and every node
-- keeps the identity.
t.test ("/lua/auto/random-programs", function ()
  local seed = tonumber (os.getenv ("MACH6_TEST_SEED") or "") or os.time () % 100000 + 1
  local round = require ("random-program") (profiler, t.rng (seed))
  profiler.mark ("random")
  mach6.auto (true)
  for _ = 1, 200 do round () end
  mach6.auto (false)
  t.eq (profiler.depth (), 1, "only the manual scope of the test open")
  profiler.done ()
  local function check (n, path)
    t.eq (n.stats["mem.net"], n.stats["mem.last"] - n.stats["mem.first"], "identity at " .. path)
    for _, c in ipairs (n.children) do check (c, path .. "/" .. c.label) end
  end
  check (profiler.convert (profiler.root.children.random), "random")
end)

t.test ("/lua/auto/cost-counted", function ()
  local before = mach6.auto_events ()
  auto_run ("count", function () fib (5) end)
  t.ok (mach6.auto_events () - before >= 2 * 15, "every call and return seen")
end)

t.run ()
