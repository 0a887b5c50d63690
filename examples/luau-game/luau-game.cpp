/* SPDX-License-Identifier: MIT */
/* luau-game.cpp — a small host that embeds Luau the way an engine does and
 * runs a .luau game script with mach6 open in its state: the global `mach6`
 * and require("mach6"). `mach6 run -- luau-game script.luau` records it.
 *
 *   luau-game SCRIPT.luau [ARGS...]
 *
 * The script gets `arg` (its arguments), sleep(seconds), and require(NAME)
 * for "mach6" or a module file NAME.luau beside the script. */
#include "mach6-luau.h"

#include "lua.h"
#include "lualib.h"
#include "luacode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <time.h>

static std::string script_dir;

static bool
read_file (const std::string &path, std::string &out)
{
  FILE *f = fopen (path.c_str (), "rb");
  if (f == NULL)
    return false;
  char buf[65536];
  size_t n;
  while ((n = fread (buf, 1, sizeof buf, f)) > 0)
    out.append (buf, n);
  bool ok = !ferror (f);
  fclose (f);
  return ok;
}

/* Compile @source and push the chunk, or push the error message. */
static bool
load_chunk (lua_State *L, const std::string &name, const std::string &source)
{
  size_t size = 0;
  char *bytecode = luau_compile (source.data (), source.size (), NULL, &size);
  int status = luau_load (L, ("@" + name).c_str (), bytecode, size, 0);
  free (bytecode);
  return status == 0;
}

static int
l_sleep (lua_State *L)
{
  double s = luaL_checknumber (L, 1);
  if (s > 0)
    {
      struct timespec ts = { (time_t) s, (long) ((s - (double) (time_t) s) * 1e9) };
      nanosleep (&ts, NULL);
    }
  return 0;
}

/* require("mach6") or a module beside the script, loaded once. */
static int
l_require (lua_State *L)
{
  const char *name = luaL_checkstring (L, 1);
  if (strcmp (name, "mach6") == 0)
    return mach6_luau_open (L, 0);

  lua_getfield (L, LUA_REGISTRYINDEX, "luau-game.modules");
  lua_getfield (L, -1, name);
  if (!lua_isnil (L, -1))
    return 1;
  lua_pop (L, 1);

  std::string path = script_dir + "/" + name + ".luau", source;
  if (!read_file (path, source))
    luaL_error (L, "module '%s' not found: no file %s", name, path.c_str ());
  if (!load_chunk (L, path, source))
    lua_error (L);
  lua_call (L, 0, 1);
  lua_pushvalue (L, -1);
  lua_setfield (L, -3, name);
  return 1;
}

int
main (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "--help") == 0)
    {
      fprintf (argc < 2 ? stderr : stdout, "usage: luau-game SCRIPT.luau [ARGS...]\n");
      return argc < 2 ? 2 : 0;
    }
  std::string path = argv[1], source;
  if (!read_file (path, source))
    {
      fprintf (stderr, "luau-game: cannot read %s\n", path.c_str ());
      return 1;
    }
  size_t slash = path.rfind ('/');
  script_dir = slash == std::string::npos ? "." : path.substr (0, slash);

  lua_State *L = luaL_newstate ();
  luaL_openlibs (L);
  mach6_luau_open (L, 0);
  lua_setglobal (L, "mach6");
  lua_newtable (L);
  lua_setfield (L, LUA_REGISTRYINDEX, "luau-game.modules");
  lua_pushcfunction (L, l_require, "require");
  lua_setglobal (L, "require");
  lua_pushcfunction (L, l_sleep, "sleep");
  lua_setglobal (L, "sleep");
  lua_createtable (L, argc - 2, 0);
  for (int i = 2; i < argc; i++)
    {
      lua_pushstring (L, argv[i]);
      lua_rawseti (L, -2, i - 1);
    }
  lua_setglobal (L, "arg");

  /* As engines (and Roblox) run scripts: the libraries read-only, which
   * lets Luau call builtins such as os.clock and gcinfo directly, and the
   * script in a thread of its own whose globals are its own. */
  luaL_sandbox (L);
  lua_State *T = lua_newthread (L);
  luaL_sandboxthread (T);
  if (!load_chunk (T, path, source))
    {
      fprintf (stderr, "luau-game: %s\n", lua_tostring (T, -1));
      lua_close (L);
      return 1;
    }
  int status = lua_resume (T, NULL, 0);
  int code = 0;
  if (status != LUA_OK && status != LUA_YIELD)
    {
      fprintf (stderr, "luau-game: %s\n", lua_tostring (T, -1));
      code = 1;
    }
  lua_close (L);
  return code;
}
