/* SPDX-License-Identifier: MIT */
/* test-embed.c — the Lua module in a program that embeds Lua 5.4, as
 * engines do: a state closed with scopes open (a reload) must leave the
 * thread's ring stream at top level for the next state. */
#include <glib.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "mach6.h"

static lua_State *
state_new (void)
{
  lua_State *L = luaL_newstate ();
  luaL_openlibs (L);
  g_autofree char *code = g_strdup_printf ("package.cpath = '%s'", LUA_MODULE_CPATH);
  g_assert_cmpint (luaL_dostring (L, code), ==, 0);
  return L;
}

static void
run (lua_State *L,
     const char *code)
{
  if (luaL_dostring (L, code) != 0)
    g_error ("Lua: %s", lua_tostring (L, -1));
}

static void
test_close_with_open_scopes (void)
{
  lua_State *L = state_new ();
  run (L, "p = require ('mach6').profiler p.mark ('frame') p.mark ('update')");
  g_assert_cmpuint (mach6__fast.depth, ==, 2);
  lua_close (L);
  g_assert_cmpuint (mach6__fast.depth, ==, 0);

  /* A scope left open in a suspended coroutine counts too (reopened), and
   * one in an abandoned coroutine does not (closed at the switch). */
  L = state_new ();
  run (L, "p = require ('mach6').profiler p.mark ('frame')\n"
          "co = coroutine.wrap (function () p.mark ('task') coroutine.yield () end) co ()\n"
          "co2 = coroutine.wrap (function () p.mark ('other') coroutine.yield () end) co2 ()\n"
          "p.mark ('draw')");
  g_assert_cmpuint (mach6__fast.depth, ==, 2);
  lua_close (L);
  g_assert_cmpuint (mach6__fast.depth, ==, 0);

  L = state_new ();
  run (L, "p = require ('mach6').profiler p.mark ('frame') p.done ()");
  g_assert_cmpuint (mach6__fast.depth, ==, 0);
  lua_close (L);
}

static void
test_close_under_auto (void)
{
  lua_State *L = state_new ();
  run (L, "m = require ('mach6') p = m.profiler\n"
          "p.mark ('frame') m.auto (true)\n"
          "local function f () local function g () error ('x') end pcall (g) return 1 end\n"
          "f () f ()");
  lua_close (L);
  g_assert_cmpuint (mach6__fast.depth, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/lua/embed/close-with-open-scopes", test_close_with_open_scopes);
  g_test_add_func ("/lua/embed/close-under-auto", test_close_under_auto);
  return g_test_run ();
}
