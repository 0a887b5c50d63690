-- SPDX-License-Identifier: MIT
-- main.lua — a small LÖVE game instrumented with the mach6 Lua module:
-- balls move (physics), steer (ai), shed particles (particles) and are drawn
-- (render). `L` toggles a leak in particles, `H` a 30 ms hitch in ai. A
-- LÖVE thread, "loader", has a Lua state (and a profiler) of its own.
-- One frame is one love.update and the love.draw after it: a "frame" scope
-- opens at the start of love.update and closes at the end of love.draw, so
-- the viewer counts one frame per update and judges the budget against both
-- (docs/lua.md, "LÖVE: one frame per update and draw").
-- Arguments: --leak, --hitch, --auto (every function under the scopes),
-- --quit-after S, --screenshot FILE.png (after 2 s; an absolute path).
-- The module is found where meson installs it, or in the build tree next
-- to this folder (build/lua/5.1/mach6.so), or through MACH6_LUA_CPATH.
local source = love.filesystem.getSource ()
package.cpath = (os.getenv ("MACH6_LUA_CPATH") or "") .. ";" .. source .. "/../../build/lua/5.1/?.so;"
                .. package.cpath
local mach6 = require ("mach6")
local profiler = mach6.profiler

local balls, particles, leaked = {}, {}, {}
local leak, hitch, quit_after, screenshot = false, false, nil, nil
local elapsed, frames = 0, 0

local function busy (seconds)
  local t0 = love.timer.getTime ()
  while love.timer.getTime () - t0 < seconds do end
end

-- The worker thread: its own Lua state, so its own tree; the viewer shows
-- it as a second thread of the game.
local loader_code = [[
  local cpath = ...
  package.cpath = cpath
  require ("love.timer")
  local mach6 = require ("mach6")
  local profiler = mach6.profiler
  mach6.thread_name ("loader")
  local quit = love.thread.getChannel ("mach6-quit")
  local cache = {}
  while not quit:peek () do
    profiler.mark ("load")
    profiler.mark ("decode") local t = {} for i = 1, 500 do t[i] = i * i end profiler.done ()
    profiler.mark ("cache") cache[#cache % 64 + 1] = t profiler.done ()
    profiler.done ()
    love.timer.sleep (0.01)
  end
]]

function love.quit ()
  love.thread.getChannel ("mach6-quit"):push (true)
end

function love.load (args)
  for i, a in ipairs (args) do
    if a == "--leak" then leak = true end
    if a == "--hitch" then hitch = true end
    if a == "--auto" then mach6.auto (true, { exclude = { "^busy " } }) end
    if a == "--quit-after" then quit_after = tonumber (args[i + 1]) end
    if a == "--screenshot" then screenshot = args[i + 1] end
  end
  love.thread.newThread (loader_code):start (package.cpath)
  love.math.setRandomSeed (6)
  for i = 1, 200 do
    balls[i] = { x = love.math.random (20, 620), y = love.math.random (20, 380),
                 vx = love.math.random (-80, 80), vy = love.math.random (-80, 80) }
  end
end

local function physics (dt)
  for _, b in ipairs (balls) do
    b.x, b.y = b.x + b.vx * dt, b.y + b.vy * dt
    if b.x < 5 or b.x > 635 then b.vx = -b.vx end
    if b.y < 5 or b.y > 395 then b.vy = -b.vy end
  end
end

local function ai (dt)
  for i, b in ipairs (balls) do
    local o = balls[i % #balls + 1]
    b.vx = b.vx + (o.x - b.x) * 0.001
    b.vy = b.vy + (o.y - b.y) * 0.001
  end
  if hitch and frames % 60 == 0 then busy (0.03) end
end

local function update_particles (dt)
  for i = 1, 4 do
    local b = balls[love.math.random (#balls)]
    local p = { x = b.x, y = b.y, life = 0.5 }
    particles[#particles + 1] = p
    -- The leak: every particle is also kept in a list nobody reads.
    if leak then leaked[#leaked + 1] = { p, tostring (p) } end
  end
  local alive = {}
  for _, p in ipairs (particles) do
    p.life = p.life - dt
    if p.life > 0 then alive[#alive + 1] = p end
  end
  particles = alive
end

-- Whether the frame scope is open: LÖVE skips love.draw while its window is
-- not active, and the next update then closes the frame that update opened.
local frame_open = false

function love.update (dt)
  if frame_open then profiler.done () end
  profiler.mark ("frame")
  frame_open = true
  profiler.mark ("love.update")
  profiler.mark ("physics") physics (dt) profiler.done ()
  profiler.mark ("ai") ai (dt) profiler.done ()
  profiler.mark ("particles") update_particles (dt) profiler.done ()
  profiler.done ()
  frames = frames + 1
  elapsed = elapsed + dt
  if quit_after and elapsed > quit_after then love.event.quit () end
  if screenshot and elapsed > 2 then
    local path = screenshot
    screenshot = nil
    love.graphics.captureScreenshot (function (image)
      local f = io.open (path, "wb")
      if f then f:write (image:encode ("png"):getString ()) f:close () end
    end)
  end
end

function love.draw ()
  profiler.mark ("love.draw")
  profiler.mark ("balls")
  love.graphics.setColor (0.3, 0.7, 1)
  for _, b in ipairs (balls) do love.graphics.circle ("fill", b.x, b.y, 5) end
  profiler.done ()
  profiler.mark ("particles")
  love.graphics.setColor (1, 0.6, 0.2)
  love.graphics.setPointSize (3)
  for _, p in ipairs (particles) do love.graphics.points (p.x, p.y) end
  profiler.done ()
  profiler.mark ("hud")
  love.graphics.setColor (1, 1, 1)
  love.graphics.print (string.format ("mach6 LÖVE demo  %d fps  Lua heap %.0f KB  leak %s (L)  hitch %s (H)",
                                      love.timer.getFPS (), mach6.heap () / 1024,
                                      leak and "on" or "off", hitch and "on" or "off"), 8, 8)
  profiler.done ()
  profiler.done ()
  if frame_open then profiler.done () frame_open = false end    -- the frame: update and draw
end

function love.keypressed (key)
  if key == "l" then leak = not leak end
  if key == "h" then hitch = not hitch end
  if key == "escape" then love.event.quit () end
end
