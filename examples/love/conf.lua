-- SPDX-License-Identifier: MIT
-- conf.lua — the mach6 LÖVE demo: no audio (it runs under Xvfb in tests).
function love.conf (t)
  t.identity = "mach6-demo"
  t.window.title = "mach6 LÖVE demo"
  t.window.width = 640
  t.window.height = 400
  t.window.vsync = 1
  t.modules.audio = false
  t.modules.sound = false
  t.modules.joystick = false
  t.modules.physics = false
end
