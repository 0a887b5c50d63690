-- SPDX-License-Identifier: MIT
-- test-install.lua — `meson install` puts mach6.so where this interpreter
-- looks by default (its package.cpath without LUA_CPATH).
local t = require ("harness")

t.test ("/lua/install/on-default-cpath", function ()
  local dir = assert (os.getenv ("MACH6_LUA_INSTALL_DIR"))
  local p = assert (io.popen (string.format ("env -u LUA_CPATH -u LUA_CPATH_5_4 %q -e 'io.write (package.cpath)'", arg[-1])))
  local cpath = p:read ("*a")
  p:close ()
  print ("# install dir " .. dir)
  print ("# default cpath " .. cpath)
  local found = false
  for entry in cpath:gmatch ("[^;]+") do
    if entry == dir .. "/?.so" then found = true end
  end
  t.ok (found, dir .. "/?.so is not on the interpreter's default cpath")
end)

t.run ()
