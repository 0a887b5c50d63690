/* SPDX-License-Identifier: MIT */
/* mach6-luau.cpp — the binding's core: the profiler of a Luau state, the
 * open scopes of each of its threads, profiler.mark/done, coroutines kept
 * balanced through Luau's preresume/postresume callbacks, errors closing
 * the scopes they unwind, and mach6_luau_open(). */
#include "mach6-luau-private.h"

#include "luacode.h"

#include <string.h>

/* Luau states by main thread: the callbacks get a thread and need its
 * profiler. A state is used by one OS thread at a time; the last one seen
 * is cached per OS thread. */
static GMutex states_lock;
static GHashTable *states;
static thread_local lua_State *cached_main;
static thread_local M6LuauState *cached_state;

M6LuauState *
m6_luau_state (lua_State *L)
{
  lua_State *main = lua_mainthread (L);
  if (G_LIKELY (main == cached_main))
    return cached_state;
  g_mutex_lock (&states_lock);
  M6LuauState *st = states ? (M6LuauState *) g_hash_table_lookup (states, main) : NULL;
  g_mutex_unlock (&states_lock);
  cached_main = main;
  cached_state = st;
  return st;
}

/* ---------------------------------------------------------------------------
 * Labels, scopes
 * ------------------------------------------------------------------------- */

static void
label_ids (M6LuauState *st, const char *s, size_t len, guint32 *tree_label, guint32 *ring_label)
{
  guint slot = (guint) (((guintptr) s >> 4) & 255);
  M6Labels *labels = m6_tree_get_labels (st->tree);

  if (st->labels[slot].s == s)
    {
      guint32 id = st->labels[slot].tree_label;
      if (m6_labels_get_len (labels, id) == len && memcmp (m6_labels_get (labels, id), s, len) == 0)
        {
          *tree_label = id;
          *ring_label = st->labels[slot].ring_label;
          return;
        }
    }
  *tree_label = m6_labels_intern (labels, s, (gssize) len);
  *ring_label = mach6_label_id (m6_labels_get (labels, *tree_label));
  st->labels[slot].s = s;
  st->labels[slot].tree_label = *tree_label;
  st->labels[slot].ring_label = *ring_label;
}

/* Every scope opens and closes in both places: the in-process tree and the
 * ring (which writes nothing unless a viewer records). */
static inline void
scope_open (M6LuauState *st, const M6LuauEntry *e, gint64 t, gint64 h)
{
  m6_tree_mark (st->tree, e->tree_label, t, h);
  mach6_mark_id_heap (e->ring_label, h);
  st->ring_open++;
}

static inline void
scope_close (M6LuauState *st, gint64 t, gint64 h)
{
  m6_tree_done (st->tree, t, h, NULL);
  mach6_done_heap (h);
  st->ring_open--;
}

static void
stack_push (M6LuauStack *s, const M6LuauEntry *e)
{
  if (s->n_entries == s->n_alloc)
    {
      s->n_alloc = s->n_alloc ? s->n_alloc * 2 : 16;
      s->entries = g_renew (M6LuauEntry, s->entries, s->n_alloc);
    }
  s->entries[s->n_entries++] = *e;
}

/* Close @s's scopes above @keep, innermost first; keep the entries if
 * @park (they reopen at the next resume). */
static void
stack_close_from (M6LuauState *st, M6LuauStack *s, guint keep, gboolean park, gint64 t, gint64 h)
{
  for (guint i = s->n_entries; i-- > keep;)
    scope_close (st, t, h);
  if (!park)
    s->n_entries = keep;
}

static void
stack_free (gpointer data)
{
  M6LuauStack *s = (M6LuauStack *) data;
  g_free (s->entries);
  g_free (s);
}

M6LuauStack *
m6_luau_stack_for (M6LuauState *st, lua_State *L)
{
  if (G_LIKELY (L == st->cur_L))
    return st->cur;
  M6LuauStack *s = (M6LuauStack *) g_hash_table_lookup (st->stacks, L);
  if (s == NULL)
    {
      s = g_new0 (M6LuauStack, 1);
      s->L = L;
      g_hash_table_insert (st->stacks, L, s);
    }
  st->cur_L = L;
  st->cur = s;
  return s;
}

/* The stack an event of @L goes to: its own while it is being resumed,
 * else the base (code the host runs outside any resume). */
static M6LuauStack *
current_stack (M6LuauState *st, lua_State *L)
{
  if (G_LIKELY (L == st->cur_L))
    return st->cur;
  M6LuauStack *s = (M6LuauStack *) g_hash_table_lookup (st->stacks, L);
  if (s == NULL || !s->in_chain)
    s = st->base;
  st->cur_L = L;
  st->cur = s;
  return s;
}

/* ---------------------------------------------------------------------------
 * profiler.mark / profiler.done
 * ------------------------------------------------------------------------- */

static int
l_mark (lua_State *L)
{
  M6LuauState *st = (M6LuauState *) lua_tolightuserdata (L, lua_upvalueindex (1));
  size_t len;
  const char *label = lua_tolstring (L, 1, &len);
  if (lua_type (L, 1) != LUA_TSTRING)
    luaL_error (L, "bad argument #1 to 'mark' (string expected, got %s)", luaL_typename (L, 1));

  M6LuauEntry e;
  label_ids (st, label, len, &e.tree_label, &e.ring_label);
  /* Heap before clock: the reading's own cost stays out of the scope. */
  gint64 h = m6_luau_heap (L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  M6LuauStack *s = current_stack (st, L);
  stack_push (s, &e);
  scope_open (st, &e, t, h);
  st->last_heap = h;
  return 0;
}

/* Close the innermost scope of this thread, or else of the nearest one
 * that resumed it (or the base): the frame pattern (done; mark) works when
 * each frame's callback runs in a thread of its own. Everything above the
 * scope closed is empty, so nothing has to close and reopen around it. */
static int
l_done (lua_State *L)
{
  M6LuauState *st = (M6LuauState *) lua_tolightuserdata (L, lua_upvalueindex (1));
  gint64 h = m6_luau_heap (L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  M6LuauStack *s = current_stack (st, L);
  st->last_heap = h;

  if (G_LIKELY (s->n_entries > 0))
    {
      s->n_entries--;
      scope_close (st, t, h);
      return 0;
    }
  for (guint i = st->chain->len; i-- > 0;)
    {
      M6LuauStack *c = (M6LuauStack *) g_ptr_array_index (st->chain, i);
      if (c != s && c->n_entries > 0)
        {
          c->n_entries--;
          scope_close (st, t, h);
          return 0;
        }
    }
  if (s != st->base && st->base->n_entries > 0)
    {
      st->base->n_entries--;
      scope_close (st, t, h);
      return 0;
    }
  st->unbalanced++;   /* nothing open: ignored and counted (docs/accounting.md) */
  return 0;
}

static int
l_unbalanced (lua_State *L)
{
  M6LuauState *st = (M6LuauState *) lua_tolightuserdata (L, lua_upvalueindex (1));
  lua_pushnumber (L, (double) (m6_tree_get_unbalanced (st->tree) + st->unbalanced));
  return 1;
}

static int
l_depth (lua_State *L)
{
  M6LuauState *st = (M6LuauState *) lua_tolightuserdata (L, lua_upvalueindex (1));
  lua_pushinteger (L, (int) m6_tree_get_depth (st->tree));
  return 1;
}

/* ---------------------------------------------------------------------------
 * Coroutines and errors
 * ------------------------------------------------------------------------- */

/* A thread is about to run: its parked scopes reopen on top of whatever is
 * open in the one that resumes it. */
static void
on_preresume (lua_State *L)
{
  M6LuauState *st = m6_luau_state (L);
  if (st != NULL)
    {
      M6LuauStack *s = m6_luau_stack_for (st, L);
      if (!s->in_chain)
        {
          s->in_chain = TRUE;
          g_ptr_array_add (st->chain, s);
        }
      if (s->parked && s->n_entries > 0)
        {
          gint64 h = m6_luau_heap (L);
          gint64 t = m6_clock_monotonic_ns (NULL);
          for (guint i = 0; i < s->n_entries; i++)
            scope_open (st, &s->entries[i], t, h);
        }
      s->parked = FALSE;
      st->cur_L = L;
      st->cur = s;
      if (st->prev_preresume)
        st->prev_preresume (L);
    }
}

/* The thread stopped running. Yielded: its scopes close until it is
 * resumed. Failed: the error unwound them, so they close for good.
 * Returned: what it left open stays open and belongs to the thread below
 * (the frame pattern: a frame callback marks the next frame and ends). */
static void
on_postresume (lua_State *L)
{
  M6LuauState *st = m6_luau_state (L);
  if (st == NULL)
    return;
  M6LuauStack *s = (M6LuauStack *) g_hash_table_lookup (st->stacks, L);
  if (s != NULL && s->in_chain)
    {
      int status = lua_status (L);
      gint64 h = m6_luau_heap (L);
      gint64 t = m6_clock_monotonic_ns (NULL);
      g_ptr_array_remove (st->chain, s);
      s->in_chain = FALSE;
      M6LuauStack *below = st->chain->len > 0
        ? (M6LuauStack *) g_ptr_array_index (st->chain, st->chain->len - 1) : st->base;
      if (status == LUA_YIELD || status == LUA_BREAK)
        {
          stack_close_from (st, s, 0, TRUE, t, h);
          s->parked = s->n_entries > 0;
        }
      else if (status != LUA_OK)
        stack_close_from (st, s, 0, FALSE, t, h);
      else if (below != s)
        {
          for (guint i = 0; i < s->n_entries; i++)
            stack_push (below, &s->entries[i]);
          s->n_entries = 0;
        }
      st->cur_L = NULL;
      st->cur = NULL;
    }
  if (st->prev_postresume)
    st->prev_postresume (L);
}

/* A thread is created (@LP its parent) or destroyed (@LP NULL). */
static void
on_userthread (lua_State *LP, lua_State *L)
{
  M6LuauState *st = m6_luau_state (L);
  if (st != NULL && LP == NULL)
    {
      M6LuauStack *s = (M6LuauStack *) g_hash_table_lookup (st->stacks, L);
      if (s != NULL)
        {
          /* Parked scopes of a thread never resumed again were closed when
           * it yielded; the entries just go. */
          if (s->in_chain)
            g_ptr_array_remove (st->chain, s);
          if (st->cur == s)
            {
              st->cur = NULL;
              st->cur_L = NULL;
            }
          g_hash_table_remove (st->stacks, L);
        }
    }
  if (st != NULL && st->prev_userthread)
    st->prev_userthread (LP, L);
}

extern "C" int
mach6_luau_depth (lua_State *L)
{
  M6LuauState *st = m6_luau_state (L);
  if (st == NULL)
    return 0;
  return (int) current_stack (st, L)->n_entries;
}

extern "C" void
mach6_luau_unwind (lua_State *L, int depth)
{
  M6LuauState *st = m6_luau_state (L);
  if (st == NULL)
    return;
  M6LuauStack *s = current_stack (st, L);
  if (depth < 0)
    depth = 0;
  if ((guint) depth < s->n_entries)
    stack_close_from (st, s, (guint) depth, FALSE, m6_clock_monotonic_ns (NULL), m6_luau_heap (L));
}

static int
l_thread_depth (lua_State *L)
{
  lua_pushinteger (L, mach6_luau_depth (L));
  return 1;
}

static int
l_unwind (lua_State *L)
{
  mach6_luau_unwind (L, luaL_checkinteger (L, 1));
  return 0;
}

/* pcall and xpcall, wrapped in Luau itself so they still yield: an error
 * closes the scopes opened inside the call. */
static const char pcall_source[] =
  "local depth, unwind, rawpcall, rawxpcall = ...\n"
  "local function settle(d, ok, ...)\n"
  "  if not ok then unwind(d) end\n"
  "  return ok, ...\n"
  "end\n"
  "return function(f, ...) return settle(depth(), rawpcall(f, ...)) end,\n"
  "       function(f, h, ...) return settle(depth(), rawxpcall(f, h, ...)) end\n";

static void
wrap_pcall (lua_State *L)
{
  size_t size;
  char *bytecode = luau_compile (pcall_source, sizeof pcall_source - 1, NULL, &size);
  int failed = luau_load (L, "=mach6.pcall", bytecode, size, 0);
  free (bytecode);
  if (failed)
    {
      lua_pop (L, 1);
      return;
    }
  lua_pushcfunction (L, l_thread_depth, "depth");
  lua_pushcfunction (L, l_unwind, "unwind");
  lua_getglobal (L, "pcall");
  lua_getglobal (L, "xpcall");
  if (lua_pcall (L, 4, 2, 0) != 0)
    {
      lua_pop (L, 1);
      return;
    }
  lua_setglobal (L, "xpcall");
  lua_setglobal (L, "pcall");
}

/* ---------------------------------------------------------------------------
 * The module
 * ------------------------------------------------------------------------- */

static void
state_destroy (void *data)
{
  M6LuauState *st = *(M6LuauState **) data;
  if (st == NULL)
    return;
  /* The state closes with scopes open: close them in the ring, which
   * outlives it, or the next state's marks would nest in them. */
  for (; st->ring_open > 0; st->ring_open--)
    mach6_done_heap (st->last_heap);
  g_mutex_lock (&states_lock);
  g_hash_table_remove (states, st->main);
  g_mutex_unlock (&states_lock);
  cached_main = NULL;
  cached_state = NULL;
  m6_tree_free (st->tree);
  g_hash_table_unref (st->stacks);
  g_ptr_array_unref (st->chain);
  stack_free (st->base);
  g_free (st);
}

static int
l_heap (lua_State *L)
{
  lua_pushnumber (L, (double) m6_luau_heap (L));
  return 1;
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

static M6LuauState *
state_new (lua_State *L)
{
  M6LuauState *st = g_new0 (M6LuauState, 1);
  st->main = lua_mainthread (L);
  st->tree = m6_tree_new (NULL);
  st->stacks = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, stack_free);
  st->chain = g_ptr_array_new ();
  st->base = g_new0 (M6LuauStack, 1);
  st->table_ref = LUA_NOREF;

  /* Freed with the state: a userdata in the registry whose destructor
   * runs at lua_close. */
  M6LuauState **holder = (M6LuauState **) lua_newuserdatadtor (L, sizeof (M6LuauState *), state_destroy);
  *holder = st;
  lua_setfield (L, LUA_REGISTRYINDEX, M6L_REG_STATE);

  lua_Callbacks *cb = lua_callbacks (L);
  st->prev_preresume = cb->preresume;
  st->prev_postresume = cb->postresume;
  st->prev_userthread = cb->userthread;
  cb->preresume = on_preresume;
  cb->postresume = on_postresume;
  cb->userthread = on_userthread;

  g_mutex_lock (&states_lock);
  if (states == NULL)
    states = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_hash_table_insert (states, st->main, st);
  g_mutex_unlock (&states_lock);
  cached_main = NULL;
  return st;
}

extern "C" int
mach6_luau_open (lua_State *L, unsigned flags)
{
  M6LuauState *st = m6_luau_state (L);
  if (st != NULL && st->table_ref != LUA_NOREF)
    {
      lua_getref (L, st->table_ref);
      return 1;
    }
  st = state_new (L);
  m6_luau_tree_register (L);

  lua_newtable (L);                           /* mach6 */
  lua_newtable (L);                           /* mach6.profiler */
  static const luaL_Reg profiler_fns[] = {
    { "mark", l_mark }, { "done", l_done }, { "convert", m6_luau_convert }, { "json", m6_luau_json },
    { "unbalanced", l_unbalanced }, { "depth", l_depth }, { NULL, NULL } };
  for (const luaL_Reg *r = profiler_fns; r->name != NULL; r++)
    {
      lua_pushlightuserdata (L, st);
      lua_pushcclosure (L, r->func, r->name, 1);
      lua_setfield (L, -2, r->name);
    }
  lua_newtable (L);
  lua_pushlightuserdata (L, st);
  lua_pushcclosure (L, m6_luau_profiler_index, "profiler.__index", 1);
  lua_setfield (L, -2, "__index");
  lua_setmetatable (L, -2);
  lua_setfield (L, -2, "profiler");

  lua_pushcfunction (L, l_heap, "heap");
  lua_setfield (L, -2, "heap");
  lua_pushcfunction (L, l_attached, "attached");
  lua_setfield (L, -2, "attached");
  lua_pushcfunction (L, l_thread_name, "thread_name");
  lua_setfield (L, -2, "thread_name");
  lua_pushcfunction (L, l_thread_depth, "depth");
  lua_setfield (L, -2, "depth");
  m6_luau_sample_register (L, lua_gettop (L));

  lua_pushvalue (L, -1);
  st->table_ref = lua_ref (L, -1);
  lua_pop (L, 1);

  if (!(flags & MACH6_LUAU_KEEP_PCALL))
    wrap_pcall (L);
  return 1;
}
