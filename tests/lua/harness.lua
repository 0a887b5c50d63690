-- SPDX-License-Identifier: MIT
-- harness.lua — a small TAP runner for the Lua tests, so meson reads each
-- case like a GLib test: "ok N /lua/..." or "not ok N" with the reason.
local M = {}
local cases = {}

function M.test (name, fn) cases[#cases + 1] = { name = name, fn = fn } end

function M.eq (got, want, what)
  if got ~= want then
    error (string.format ("%s: expected %s, got %s", what or "value", tostring (want), tostring (got)), 2)
  end
end

function M.ok (cond, what)
  if not cond then error (what or "assertion failed", 2) end
end

-- A seeded PRNG (Park-Miller, exact in doubles and integers alike, so
-- LuaJIT and Lua 5.4 draw the same) so random tests replay; the seed is
-- printed.
function M.rng (seed)
  local s = seed
  print ("# seed " .. seed)
  return function (n)
    s = s * 16807 % 2147483647
    return s % n + 1
  end
end

function M.run ()
  print ("1.." .. #cases)
  local failed = 0
  for i, c in ipairs (cases) do
    local ok, err = xpcall (c.fn, debug.traceback)
    if ok then
      print ("ok " .. i .. " " .. c.name)
    else
      failed = failed + 1
      print ("not ok " .. i .. " " .. c.name)
      for line in tostring (err):gmatch ("[^\n]+") do print ("# " .. line) end
    end
  end
  os.exit (failed == 0 and 0 or 1)
end

return M
