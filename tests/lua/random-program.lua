-- SPDX-License-Identifier: MIT
-- random-program.lua — a seeded random Lua program for the auto tests:
-- nested calls, tail calls, errors caught at random depths, coroutines
-- resumed and abandoned, manual scopes opened anywhere and closed (by the
-- activation that opened them) or left to close when their function ends.
return function (profiler, rand)
  local act
  local function leaf () return rand (3) end
  local function thrower () error ("random") end
  local function tail_to (n) return act (n) end
  act = function (n)
    if n <= 0 then return leaf () end
    local manual = 0
    local r = rand (9)
    if r == 1 then return tail_to (n - 1)
    elseif r == 2 then pcall (act, n - 1) thrower ()
    elseif r == 3 then pcall (act, n - 1)
    elseif r == 4 then
      local co = coroutine.wrap (function () act (n - 1) coroutine.yield () act (n - 1) end)
      co () if rand (2) == 1 then co () end        -- sometimes never finished
    elseif r == 5 then coroutine.yield ()           -- only inside a coroutine; else an error
    elseif r == 6 then profiler.mark ("m" .. rand (3)) manual = manual + 1 act (n - 1)
    elseif r == 7 then
      profiler.mark ("m" .. rand (3)) act (n - 1)
      if rand (2) == 1 then profiler.done () end
    else act (n - 1) act (n - 1) end
    return leaf ()
  end
  -- One round: the program in a coroutine, then directly under pcall.
  return function ()
    local co = coroutine.create (act)
    while coroutine.status (co) == "suspended" do coroutine.resume (co, 5) end
    pcall (act, 4)
  end
end
