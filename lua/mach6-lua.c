/* SPDX-License-Identifier: MIT */
/* mach6-lua.c — the Lua module `mach6` (Lua 5.4 and LuaJIT 2.1 from one
 * source): the original library's API — profiler.mark/done/root/convert and
 * the sample module — in-process on libmach6-core, every mark and done also
 * written to the shared-memory ring so the viewer can attach. The heap
 * reading is the Lua state's own allocator, to the byte. mach6.auto() hooks
 * calls and returns so an unmodified program shows its call tree.
 */
#include "mach6-lua-private.h"

#include <math.h>
#include <stdio.h>
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

/* LuaJIT's pairs, ipairs and next take only tables, and it has no __pairs;
 * Lua 5.4's next takes only tables too: walking node.children (the
 * original's way to read the tree) needs them to know our proxies. Wrapped
 * in Lua, so a loop over a table still compiles with the builtin next; done
 * once per state (with its profiler). Lua 5.4 keeps its pairs and ipairs,
 * which read __pairs and __index. */
static const char iterators_source[] =
  "local is_children, cnext, cinext, rawpairs, rawipairs, rawnext, only_next = ...\n"
  "next = function (t, k)\n"
  "  if type (t) == 'userdata' and is_children (t) then return cnext (t, k) end\n"
  "  return rawnext (t, k)\n"
  "end\n"
  "if only_next then return end\n"
  "pairs = function (t, ...)\n"
  "  if type (t) == 'userdata' and is_children (t) then return cnext, t, nil end\n"
  "  return rawpairs (t, ...)\n"
  "end\n"
  "ipairs = function (t, ...)\n"
  "  if type (t) == 'userdata' and is_children (t) then return cinext, t, 0 end\n"
  "  return rawipairs (t, ...)\n"
  "end\n";

static void
wrap_iterators (lua_State *L)
{
  if (luaL_loadstring (L, iterators_source) != 0)
    {
      lua_pop (L, 1);
      return;
    }
  lua_pushcfunction (L, m6_lua_is_children);
  lua_pushcfunction (L, m6_lua_children_next);
  lua_pushcfunction (L, m6_lua_children_inext);
  lua_getglobal (L, "pairs");
  lua_getglobal (L, "ipairs");
  lua_getglobal (L, "next");
  lua_pushboolean (L, LUA_VERSION_NUM >= 502);
  if (lua_pcall (L, 7, 0, 0) != 0)
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
      st->same_line = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
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
      wrap_iterators (L);
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
  const char *frame = getenv ("MACH6_AUTO_FRAME");
  if (frame == NULL || *frame == '\0')
    /* Without a frame the ring never sees a top-level scope: say so once. */
    fprintf (stderr, "mach6.auto: MACH6_AUTO_FRAME is not set, so no function is a frame and the viewer "
                     "and `mach6 record` see nothing (the tree is in-process only); set it to a pattern "
                     "of the function that runs once a frame, e.g. MACH6_AUTO_FRAME='^tick '\n");
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

/* require "mach6.ring" (LuaJIT): mark and done straight into the ring
 * through the FFI, with no tree in the game — the viewer or `mach6 record`
 * does the accounting. A pair costs what an FFI call pair costs (a few ns
 * unattached), not the C module's Lua C API calls. profiler.root, convert
 * and json switch this state to the full module from then on (its tree
 * counts from that moment). The heap reading is the Lua state's, taken by
 * the producer through a heap source when it writes an event. */
#if LUA_VERSION_NUM < 502
#include <dlfcn.h>

static __thread lua_State *ring_state;

static int64_t
ring_heap (void *user_data)
{
  lua_State *L = ring_state;
  if (L == NULL)
    return 0;
  gint64 h = m6_lua_heap_count (L);
  return h < 0 ? 0 : h;
}

static const char ring_source[] =
  "local path, full_loader = ...\n"
  "local ffi = require 'ffi'\n"
  "pcall (ffi.cdef, [[uint32_t mach6_label_id (const char *label);\n"
  "  void mach6_mark_id (uint32_t label_id); void mach6_done (void); int mach6_attached (void);]])\n"
  "local lib = ffi.load (path)\n"
  "local ids, depth, full, before = {}, 0, nil, 0\n"
  "local ring, profiler = {}, {}\n"
  "local function intern (label)\n"
  "  if type (label) ~= 'string' then\n"
  "    error (string.format (\"bad argument #1 to 'mark' (string expected, got %s)\", type (label)), 3)\n"
  "  end\n"
  "  local id = lib.mach6_label_id (label) ids[label] = id return id\n"
  "end\n"
  "function profiler.mark (label)\n"
  "  lib.mach6_mark_id (ids[label] or intern (label)) depth = depth + 1\n"
  "end\n"
  "function profiler.done ()\n"
  "  if depth > 0 then depth = depth - 1 end lib.mach6_done ()\n"
  "end\n"
  "function profiler.depth () return depth end\n"
  "-- The full module, from the first question about the tree on.\n"
  "local function switch ()\n"
  "  if full then return full end\n"
  "  full = full_loader ().profiler\n"
  "  before = depth\n"
  "  local fmark, fdone, fdepth = full.mark, full.done, full.depth\n"
  "  profiler.mark = function (label) fmark (label) end\n"
  "  profiler.done = function ()\n"
  "    if fdepth () == 0 and before > 0 then before = before - 1 lib.mach6_done () else fdone () end\n"
  "  end\n"
  "  profiler.depth = function () return before + fdepth () end\n"
  "  profiler.unbalanced = full.unbalanced\n"
  "  return full\n"
  "end\n"
  "function profiler.convert (...) return switch ().convert (...) end\n"
  "function profiler.json (...) return switch ().json (...) end\n"
  "function profiler.unbalanced () return switch ().unbalanced () end\n"
  "setmetatable (profiler, { __index = function (_, k) if k == 'root' then return switch ().root end end })\n"
  "ring.profiler = profiler\n"
  "ring.attached = function () return lib.mach6_attached () ~= 0 end\n"
  "ring.full = function () return switch () ~= nil end\n"
  "return ring\n";

static int
ring_full_loader (lua_State *L)
{
  return luaopen_mach6 (L);
}
#endif

__attribute__((visibility ("default"))) int luaopen_mach6_ring (lua_State *L);

int
luaopen_mach6_ring (lua_State *L)
{
#if LUA_VERSION_NUM < 502
  Dl_info info;
  /* Any object of this module tells which file it is (ISO C has no cast
   * from a function to void *). */
  if (dladdr (ring_source, &info) == 0 || info.dli_fname == NULL)
    return luaL_error (L, "mach6.ring: cannot tell where mach6.so is");
  ring_state = L;
  mach6_set_heap_source (ring_heap, NULL);
  if (luaL_loadstring (L, ring_source) != 0)
    return lua_error (L);
  lua_pushstring (L, info.dli_fname);
  lua_pushcfunction (L, ring_full_loader);
  lua_call (L, 2, 1);
  return 1;
#else
  return luaL_error (L, "mach6.ring is LuaJIT's (it calls the producer through the FFI); "
                        "on Lua 5.4 use require \"mach6\"");
#endif
}
