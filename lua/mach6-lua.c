/* mach6-lua.c — the Lua module `mach6` (Lua 5.4 and LuaJIT 2.1 from one
 * source): the original library's API — profiler.mark/done/root/convert and
 * the sample module — in-process on libmach6-core, every mark and done also
 * written to the shared-memory ring so the viewer can attach. The heap
 * reading is the Lua state's own allocator, to the byte. mach6.auto() hooks
 * calls and returns so an unmodified program shows its call tree.
 */
#include "mach6-lua-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>



/* mach6.collect(on): collect mode (see m6_lua_heap_bytes). */
static int
l_collect (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  luaL_checktype (L, 1, LUA_TBOOLEAN);
  st->collect = lua_toboolean (L, 1);
  return 0;
}

static int
l_attached (lua_State *L)
{
  lua_pushboolean (L, mach6_attached ());
  return 1;
}

static int
l_thread_name (lua_State *L)
{
  mach6_thread_name (luaL_checkstring (L, 1));
  return 0;
}

static int
l_auto_events (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  lua_pushnumber (L, (lua_Number) st->auto_events);
  return 1;
}

static void
new_metatable (lua_State *L, const char *name, const luaL_Reg *fns)
{
  luaL_newmetatable (L, name);
  luaL_setfuncs (L, fns, 0);
  lua_pushliteral (L, "mach6");
  lua_setfield (L, -2, "__metatable");
  lua_pop (L, 1);
}

__attribute__((visibility ("default"))) int luaopen_mach6 (lua_State *L);

int
luaopen_mach6 (lua_State *L)
{
  /* One profiler per Lua state: require() twice gives the same one. */
  State *st = m6_lua_state_get (L);
  if (st == NULL)
    {
      st = lua_newuserdata (L, sizeof (State));
      memset (st, 0, sizeof *st);
      st->tree = m6_tree_new (NULL);
      st->funcs = g_hash_table_new_full (m6_lua_func_hash, m6_lua_func_equal, NULL, g_free);
      st->chain = g_ptr_array_new ();
      lua_newtable (L);
      lua_pushcfunction (L, m6_lua_state_gc);
      lua_setfield (L, -2, "__gc");
      lua_setmetatable (L, -2);
      lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_STATE));
      lua_insert (L, -2);
      lua_rawset (L, LUA_REGISTRYINDEX);

      /* Proxy caches: weak values, so unused proxies go. */
      void *caches[] = { m6_lua_key (M6_LUA_KEY_NODES), m6_lua_key (M6_LUA_KEY_CHILDREN) };
      for (guint i = 0; i < G_N_ELEMENTS (caches); i++)
        {
          lua_pushlightuserdata (L, caches[i]);
          lua_newtable (L);
          lua_newtable (L);
          lua_pushliteral (L, "v");
          lua_setfield (L, -2, "__mode");
          lua_setmetatable (L, -2);
          lua_rawset (L, LUA_REGISTRYINDEX);
        }

      static const luaL_Reg node_fns[] = {
        { "__index", m6_lua_node_index }, { "__tostring", m6_lua_node_tostring }, { NULL, NULL } };
      static const luaL_Reg children_fns[] = {
        { "__index", m6_lua_children_index }, { "__len", m6_lua_children_len },
        { "__pairs", m6_lua_children_pairs }, { NULL, NULL } };
      static const luaL_Reg stack_fns[] = { { "__gc", m6_lua_stack_gc }, { NULL, NULL } };
      static const luaL_Reg sample_methods[] = {
        { "add", m6_lua_sample_add }, { "values", m6_lua_sample_values }, { "count", m6_lua_sample_count },
        { "summarize", m6_lua_sample_summarize }, { NULL, NULL } };
      new_metatable (L, NODE_MT, node_fns);
      new_metatable (L, CHILDREN_MT, children_fns);
      new_metatable (L, STACK_MT, stack_fns);
      luaL_newmetatable (L, SAMPLE_MT);
      luaL_newlib (L, sample_methods);
      lua_setfield (L, -2, "__index");
      lua_pop (L, 1);
      m6_lua_threads_forget (L, st);
    }

  static const luaL_Reg profiler_fns[] = {
    { "mark", m6_lua_mark }, { "done", m6_lua_done }, { "convert", m6_lua_convert }, { "json", m6_lua_json },
    { "unbalanced", m6_lua_unbalanced }, { "depth", m6_lua_depth }, { NULL, NULL } };
  static const luaL_Reg module_fns[] = {
    { "auto", m6_lua_auto }, { "auto_events", l_auto_events }, { "collect", l_collect },
    { NULL, NULL } };

  lua_newtable (L);                           /* mach6 */
  lua_newtable (L);                           /* mach6.profiler */
  lua_pushlightuserdata (L, st);
  luaL_setfuncs (L, profiler_fns, 1);
  lua_newtable (L);
  lua_pushlightuserdata (L, st);
  lua_pushcclosure (L, m6_lua_profiler_index, 1);
  lua_setfield (L, -2, "__index");
  lua_setmetatable (L, -2);
  lua_setfield (L, -2, "profiler");

  lua_pushlightuserdata (L, st);
  luaL_setfuncs (L, module_fns, 1);
  lua_pushcfunction (L, m6_lua_heap);
  lua_setfield (L, -2, "heap");
  lua_pushcfunction (L, l_attached);
  lua_setfield (L, -2, "attached");
  lua_pushcfunction (L, l_thread_name);
  lua_setfield (L, -2, "thread_name");

  static const luaL_Reg sample_fns[] = {
    { "new", m6_lua_sample_new }, { "add", m6_lua_sample_add }, { "values", m6_lua_sample_values },
    { "summarize", m6_lua_sample_summarize }, { NULL, NULL } };
  luaL_newlib (L, sample_fns);
  lua_setfield (L, -2, "sample");
  return 1;
}

/* Push a list of the comma-separated patterns in $@name, or nothing. */
static gboolean
push_env_patterns (lua_State *L, const char *name)
{
  const char *value = getenv (name);
  if (value == NULL || *value == '\0')
    return FALSE;
  g_auto (GStrv) parts = g_strsplit (value, ",", -1);
  lua_newtable (L);
  for (int i = 0; parts[i] != NULL; i++)
    {
      lua_pushstring (L, parts[i]);
      lua_rawseti (L, -2, i + 1);
    }
  return TRUE;
}

/* require "mach6.auto" (lua -l mach6.auto prog.lua): the module with
 * auto-instrumentation on from here, configured from the environment:
 * MACH6_AUTO_FRAME, MACH6_AUTO_INCLUDE, MACH6_AUTO_EXCLUDE (comma-separated
 * patterns) and MACH6_AUTO_C=1. */
__attribute__((visibility ("default"))) int luaopen_mach6_auto (lua_State *L);

int
luaopen_mach6_auto (lua_State *L)
{
  static const struct { const char *env; const char *key; } options[] = {
    { "MACH6_AUTO_FRAME", "frame" }, { "MACH6_AUTO_INCLUDE", "include" },
    { "MACH6_AUTO_EXCLUDE", "exclude" },
  };

  luaopen_mach6 (L);
  lua_getfield (L, -1, "auto");
  lua_pushboolean (L, 1);
  lua_newtable (L);
  for (guint i = 0; i < G_N_ELEMENTS (options); i++)
    if (push_env_patterns (L, options[i].env))
      lua_setfield (L, -2, options[i].key);
  const char *c = getenv ("MACH6_AUTO_C");
  lua_pushboolean (L, c != NULL && strcmp (c, "1") == 0);
  lua_setfield (L, -2, "c");
  lua_call (L, 2, 0);
  return 1;
}
