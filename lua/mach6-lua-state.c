/* SPDX-License-Identifier: MIT */
/* mach6-lua-state.c — the profiler of one Lua state: its tree, the open
 * scopes of each Lua thread (coroutine) and switching between them, the
 * heap reading from the state's own allocator, and the ring it writes. */
#include "mach6-lua-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

void *
m6_lua_key (M6LuaKey key)
{
  static char keys[M6_LUA_N_KEYS];

  return &keys[key];
}



/* The reading every mark and done takes. In collect mode, garbage goes
 * first: a scope's delta is then what it retains, not what it allocated
 * (in a collected heap, the frees of a collection land in whichever scope
 * happens to trigger it, so a scope that only makes garbage looks as if it
 * grew). Exact, and as slow as a full collection per event. */
gint64
m6_lua_heap_bytes (State *st, lua_State *L)
{
  if (G_UNLIKELY (st->collect) && !st->collecting)
    {
      st->collecting = TRUE;
      lua_gc (L, LUA_GCCOLLECT, 0);
      st->collecting = FALSE;
    }
  gint64 h = m6_lua_heap_count (L);
  if (G_UNLIKELY (h < 0))
    return st->last_heap;
  st->last_heap = h;
  return h;
}

State *
m6_lua_state_get (lua_State *L)
{
  lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_STATE));
  lua_rawget (L, LUA_REGISTRYINDEX);
  State *st = lua_touserdata (L, -1);
  lua_pop (L, 1);
  return st;
}

int
m6_lua_state_gc (lua_State *L)
{
  State *st = lua_touserdata (L, 1);
  /* The state closes (a reload, a LÖVE restart) with scopes open: close
   * them in the ring, which outlives it, or the next state's marks would
   * nest in them and the ring never see a top level again. */
  for (; st->ring_open > 0; st->ring_open--)
    mach6_done_heap (st->last_heap);
  g_clear_pointer (&st->tree, m6_tree_free);
  g_clear_pointer (&st->funcs, g_hash_table_unref);
  g_clear_pointer (&st->same_line, g_hash_table_unref);
  g_clear_pointer (&st->chain, g_ptr_array_unref);
  return 0;
}

/* The ids of a label string, cached by the string's address: Lua interns
 * short strings, so a repeated literal is the same pointer. */
void
m6_lua_label_ids (State *st, const char *s, size_t len, guint32 *tree_label, guint32 *ring_label)
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



/* ---------------------------------------------------------------------------
 * Per-thread stacks (coroutines)
 * ------------------------------------------------------------------------- */

int
m6_lua_stack_gc (lua_State *L)
{
  Stack *s = lua_touserdata (L, 1);
  g_clear_pointer (&s->entries, g_free);
  return 0;
}

void
m6_lua_stack_push (Stack *s, const Entry *e)
{
  if (s->n_entries == s->n_alloc)
    {
      s->n_alloc = s->n_alloc ? s->n_alloc * 2 : 16;
      s->entries = g_renew (Entry, s->entries, s->n_alloc);
    }
  s->entries[s->n_entries++] = *e;
  if (e->flags & ENTRY_RING_ROOT)
    s->n_roots++;
}

/* Take entry @i out of @s (its scope is closed already). */
void
m6_lua_stack_remove (Stack *s, guint i)
{
  if (s->entries[i].flags & ENTRY_RING_ROOT)
    s->n_roots--;
  memmove (&s->entries[i], &s->entries[i + 1], (s->n_entries - i - 1) * sizeof (Entry));
  s->n_entries--;
}

/* Close the scopes of @s in the tree, innermost first, keeping the entries. */
void
m6_lua_stack_close_all (State *st, Stack *s, gint64 t, gint64 h)
{
  for (guint i = s->n_entries; i-- > 0;)
    if (!(s->entries[i].flags & ENTRY_SILENT))
      m6_lua_scope_close (st, t, h, s->entries[i].flags);
}

/* Reopen entries [from, n) of @s, outermost first. Whether a function
 * scope goes to the ring depends on the manual scopes below it, which may
 * have changed. */
void
m6_lua_stack_reopen (State *st, Stack *s, guint from, gint64 t, gint64 h)
{
  gboolean manual_below = m6_lua_chain_has_root_below (st, s);
  for (guint i = 0; i < from && !manual_below; i++)
    manual_below = (s->entries[i].flags & ENTRY_RING_ROOT) != 0;
  for (guint i = from; i < s->n_entries; i++)
    {
      Entry *e = &s->entries[i];
      if (e->flags & ENTRY_RING_ROOT)
        manual_below = TRUE;
      else if (manual_below)
        e->flags &= ~ENTRY_LOCAL;
      else
        e->flags |= ENTRY_LOCAL;
      if (!(e->flags & ENTRY_SILENT))
        m6_lua_scope_open (st, e->tree_label, e->ring_label, t, h, e->flags);
    }
}

/* Pop entries down to @keep (closing the open ones). */
void
m6_lua_stack_pop_to (State *st, Stack *s, guint keep, gint64 t, gint64 h)
{
  while (s->n_entries > keep)
    {
      Entry *e = &s->entries[--s->n_entries];
      if (e->flags & ENTRY_RING_ROOT)
        s->n_roots--;
      if (!(e->flags & ENTRY_SILENT))
        m6_lua_scope_close (st, t, h, e->flags);
    }
}

/* The Stack of @L, created on first use. Kept in a weak-keyed table so a
 * collected coroutine takes its stack with it. */
static Stack *
stack_lookup (lua_State *L)
{
  lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_THREADS));
  lua_rawget (L, LUA_REGISTRYINDEX);
  lua_pushthread (L);
  lua_rawget (L, -2);
  Stack *s = lua_touserdata (L, -1);
  lua_pop (L, 1);
  if (s == NULL)
    {
      lua_pushthread (L);
      s = lua_newuserdata (L, sizeof (Stack));
      memset (s, 0, sizeof *s);
      luaL_getmetatable (L, STACK_MT);
      lua_setmetatable (L, -2);
      lua_rawset (L, -3);
    }
  lua_pop (L, 1);
  return s;
}

/* Is a manual (or frame) scope open in the threads below @s in the chain,
 * the ones that resumed it? With @s NULL: in any thread of the chain. */
gboolean
m6_lua_chain_has_root_below (State *st, Stack *s)
{
  for (guint i = 0; i < st->chain->len; i++)
    {
      Stack *c = g_ptr_array_index (st->chain, i);
      if (c == s)
        break;
      if (c->n_roots > 0)
        return TRUE;
    }
  return FALSE;
}

/* Keep the chain's stacks alive by reference while they are in it. */
static void
chain_ref (lua_State *L, guint index, gboolean keep)
{
  /* The chain holds its threads (not just their stacks): a thread in it is
   * asked for its status later, so it must not be collected meanwhile. */
  lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_CHAIN));
  lua_rawget (L, LUA_REGISTRYINDEX);
  if (keep)
    lua_pushthread (L);
  else
    lua_pushnil (L);
  lua_rawseti (L, -2, (int) index + 1);
  lua_pop (L, 1);
}

/* Running, or waiting in a resume of its own ("normal")? A suspended
 * coroutine has yielded; a dead one has no frames or ended in an error. */
static gboolean
thread_is_active (lua_State *T)
{
  lua_Debug ar;
  return lua_status (T) == 0 && lua_getstack (T, 0, &ar);
}

/* Make @L the current thread. Lua sees no yields, only the next event of
 * another thread; coroutines nest, though, so every thread on top of the
 * chain that is no longer active yielded (or ended) since: its scopes
 * close. If @L is then on top, we came back to it; otherwise it is being
 * resumed by the top of the chain, and its parked scopes reopen under
 * whatever is open there. */
Stack *
m6_lua_thread_switch (State *st, lua_State *L, gint64 t, gint64 h)
{
  Stack *s = stack_lookup (L);

  s->L = L;
  while (st->chain->len > 0)
    {
      Stack *top = g_ptr_array_index (st->chain, st->chain->len - 1);
      if (top == s || thread_is_active (top->L))
        break;
      m6_lua_stack_close_all (st, top, t, h);
      top->parked = TRUE;
      chain_ref (L, st->chain->len - 1, FALSE);
      g_ptr_array_set_size (st->chain, st->chain->len - 1);
    }
  if (st->chain->len == 0 || g_ptr_array_index (st->chain, st->chain->len - 1) != s)
    {
      chain_ref (L, st->chain->len, TRUE);
      g_ptr_array_add (st->chain, s);
      if (s->parked)
        m6_lua_stack_reopen (st, s, 0, t, h);
      s->parked = FALSE;
    }
  st->cur_L = L;
  st->cur = s;
  return s;
}


void
m6_lua_threads_forget (lua_State *L, State *st)
{
  g_ptr_array_set_size (st->chain, 0);
  st->cur_L = NULL;
  st->cur = NULL;
  lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_THREADS));
  lua_newtable (L);
  lua_newtable (L);
  lua_pushliteral (L, "k");
  lua_setfield (L, -2, "__mode");
  lua_setmetatable (L, -2);
  lua_rawset (L, LUA_REGISTRYINDEX);
  lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_CHAIN));
  lua_newtable (L);
  lua_rawset (L, LUA_REGISTRYINDEX);
}

/* Auto mode ends: close every function scope, in every thread. Manual
 * scopes below the lowest of them stay open for their done(); those above
 * it must close with it (the tree is one stack). */
void
m6_lua_auto_stop (lua_State *L, State *st)
{
  gint64 h = m6_lua_heap_bytes (st, L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  guint thread = st->chain->len, entry = 0;

  for (guint i = 0; i < st->chain->len && thread == st->chain->len; i++)
    {
      Stack *c = g_ptr_array_index (st->chain, i);
      for (guint j = 0; j < c->n_entries; j++)
        if (!(c->entries[j].flags & ENTRY_MANUAL))
          {
            thread = i;
            entry = j;
            break;
          }
    }
  for (guint i = st->chain->len; i-- > thread;)
    m6_lua_stack_pop_to (st, g_ptr_array_index (st->chain, i), i == thread ? entry : 0, t, h);
}

#if LUA_VERSION_NUM < 502
/* LuaJIT reports a tail call as a plain call and unwinds errors without
 * returns, so its entries are matched by where their frame sits on the Lua
 * stack: at a call whose frame is at slot d, any entry at d or above is gone
 * (d itself: a tail call replaced that frame). LuaJIT's lua_Debug carries
 * the slot (its private i_ci: the slot in a m6_lua_hook, the slot in the low 16
 * bits from lua_getstack; stacks are under 65536 slots), so this costs no
 * walk of the stack. */
guint32
m6_lua_frame_slot (const lua_Debug *ar)
{
  return ((guint32) ar->i_ci & 0xffff) + 1;
}

/* The slot of the function that called the running C function. */
guint32
m6_lua_caller_slot (lua_State *L)
{
  lua_Debug ar;
  return lua_getstack (L, 1, &ar) ? m6_lua_frame_slot (&ar) : 0;
}

/* Returns whether a function entry of exactly @level was left: at a call,
 * that frame was replaced, so this is a tail call. A C function that a Lua
 * function tail-calls runs inside it instead (@callee_c): Lua 5.4 keeps the
 * caller's frame for it and reports a plain call, so both runtimes build
 * one tree (caller > C function), and the caller ends with it. */
gboolean
m6_lua_pop_from_level (State *st, Stack *s, guint32 level, gboolean callee_c, gint64 t, gint64 h)
{
  gboolean replaced = FALSE;
  guint keep = s->n_entries;
  while (keep > 0 && s->entries[keep - 1].level > level)
    keep--;
  if (callee_c && keep > 0 && s->entries[keep - 1].level == level
      && !(s->entries[keep - 1].flags & (ENTRY_MANUAL | ENTRY_CFUNC)))
    {
      m6_lua_stack_pop_to (st, s, keep, t, h);
      return FALSE;
    }
  while (keep > 0 && s->entries[keep - 1].level >= level)
    {
      keep--;
      /* Not a silent entry: LuaJIT has no return m6_lua_hook for fast functions
       * (os.clock), whose entries stay until the next call at their level. */
      if (s->entries[keep].level == level
          && !(s->entries[keep].flags & (ENTRY_MANUAL | ENTRY_SILENT)))
        replaced = TRUE;
    }
  m6_lua_stack_pop_to (st, s, keep, t, h);
  return replaced;
}
#endif

/* ---------------------------------------------------------------------------
 * profiler.mark / profiler.done
 * ------------------------------------------------------------------------- */

/* Errors name the function themselves: through pcall, Lua cannot. */
const char *
m6_lua_check_label (lua_State *L, int arg, size_t *len)
{
  if (lua_type (L, arg) != LUA_TSTRING)
    luaL_error (L, "bad argument #%d to 'mark' (string expected, got %s)", arg, luaL_typename (L, arg));
  return lua_tolstring (L, arg, len);
}
