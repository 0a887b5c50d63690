-- SPDX-License-Identifier: MIT
-- unmodified.lua — a Lua program that knows nothing of mach6, for
-- `lua -l mach6.auto`: tick() is its frame. Runs for arg[1] seconds of CPU.
local function fib (n) if n < 2 then return n end return fib (n - 1) + fib (n - 2) end
local function update () fib (8) end
local function draw () local t = {} for i = 1, 10 do t[i] = { i } end return t end
local function tick () update () draw () end
local stop = os.clock () + tonumber (arg[1] or 1)
while os.clock () < stop do tick () end
