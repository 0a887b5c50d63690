/* SPDX-License-Identifier: MIT */
/* mach6-lua-auto.c — mach6.auto(): call and return hooks that turn an
 * unmodified program's calls into scopes, with filters and frame names. */
#include "mach6-lua-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

/* mark, done and auto manage the stacks themselves: the m6_lua_hook skips them.
 * A constant list, since several Lua states (LÖVE threads) may load the
 * module at once. */
static gboolean
is_own_function (lua_CFunction f)
{
  return f == m6_lua_mark || f == m6_lua_done || f == m6_lua_auto;
}

guint
m6_lua_func_hash (gconstpointer p)
{
  const FuncInfo *f = p;
  return g_direct_hash (f->source) ^ (guint) f->line * 2654435761u ^ (guint) (guintptr) f->cfn   /* a function pointer is no gpointer in ISO C */
         ^ g_direct_hash (f->proto);
}

gboolean
m6_lua_func_equal (gconstpointer a, gconstpointer b)
{
  const FuncInfo *x = a, *y = b;
  return x->source == y->source && x->line == y->line && x->cfn == y->cfn && x->proto == y->proto
         && strcmp (x->short_src, y->short_src) == 0;
}

/* Two functions defined on one line share source and line; only their
 * prototypes tell them apart, and neither runtime's API hands those out.
 * The word of a Lua closure that holds it (Lua 5.4: LClosure.p; LuaJIT:
 * GCfuncL.pc, into the prototype) is found once, by looking at closures
 * of one prototype and of two, and used only if exactly one word tells
 * them apart as a prototype would: else functions are told apart by
 * source and line, as before. */
static int proto_word = -2;   /* -2: not looked for yet; -1: none */

static void
find_proto_word (lua_State *L)
{
  static const char probe[] =
    "local function make () return function () return 1 end end\n"
    "return make (), make (), function () return 2 end\n";
  proto_word = -1;
  if (luaL_loadstring (L, probe) != 0 || lua_pcall (L, 0, 3, 0) != 0)
    {
      lua_pop (L, 1);
      return;
    }
  const void *const *a = lua_topointer (L, -3), *const *b = lua_topointer (L, -2), *const *c = lua_topointer (L, -1);
  int found = -1, n = 0;
  for (int w = 1; w < 6; w++)
    if (a[w] != NULL && a[w] == b[w] && a[w] != c[w] && a[w] != (const void *) a && a[w] != (const void *) b)
      {
        found = w;
        n++;
      }
  lua_pop (L, 3);
  if (n == 1)
    proto_word = found;
}

/* The prototype of the Lua function @fn points to, or NULL. */
static const void *
func_proto (const void *fn, gboolean is_c)
{
  if (is_c || fn == NULL || proto_word < 0)
    return NULL;
  return ((const void *const *) fn)[proto_word];
}

/* The filter, run once per function: is it shown, and is it a frame? */
static gboolean
func_filter_keeps (lua_State *L, const char *label, const char *short_src, gboolean *frame)
{
  *frame = FALSE;
  lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_FILTER));
  lua_rawget (L, LUA_REGISTRYINDEX);
  if (!lua_isfunction (L, -1))
    {
      lua_pop (L, 1);
      return TRUE;
    }
  lua_pushstring (L, label);
  lua_pushstring (L, short_src);
  if (lua_pcall (L, 2, 2, 0) != 0)
    {
      lua_pop (L, 1);
      return TRUE;
    }
  gboolean keep = lua_toboolean (L, -2);
  *frame = lua_toboolean (L, -1);
  lua_pop (L, 2);
  return keep;
}

static FuncInfo *
func_info (lua_State *L, State *st, lua_Debug *ar, lua_CFunction cfn, const void *proto, gboolean tail)
{
  FuncInfo key = { .source = ar->source, .line = ar->linedefined, .cfn = cfn, .proto = proto };
  g_strlcpy (key.short_src, ar->short_src, sizeof key.short_src);
  FuncInfo *f = g_hash_table_lookup (st->funcs, &key);
  if (f != NULL)
    return f;

  f = g_new (FuncInfo, 1);
  *f = key;
  /* "n" only now: the name as the first call site sees it. A tail call
   * has no call site (LuaJIT would name the replaced caller's). */
  const char *name = NULL;
  if (!tail)
    {
      lua_getinfo (L, "n", ar);
      name = ar->name;
    }
  g_autofree char *label = NULL;
  if (cfn != NULL || ar->what == NULL || strcmp (ar->what, "C") == 0)
    label = g_strdup_printf ("%s [C]", name ? name : "?");
  else if (strcmp (ar->what, "main") == 0)
    label = g_strdup_printf ("main chunk (%s)", ar->short_src);
  else
    {
      /* The second function labelled at one line gets " #2", and so on:
       * the same label would nest one in the other like recursion. */
      g_autofree char *where = g_strdup_printf ("%s:%d %s", ar->short_src, ar->linedefined, name ? name : "function");
      guint seen = GPOINTER_TO_UINT (g_hash_table_lookup (st->same_line, where)) + 1;
      g_hash_table_insert (st->same_line, g_strdup (where), GUINT_TO_POINTER (seen));
      if (seen == 1)
        label = g_strdup_printf ("%s (%s:%d)", name ? name : "function", ar->short_src, ar->linedefined);
      else
        label = g_strdup_printf ("%s (%s:%d #%u)", name ? name : "function", ar->short_src, ar->linedefined, seen);
    }
  gboolean frame = FALSE;
  gboolean keep = !st->have_filter || func_filter_keeps (L, label, ar->short_src, &frame);
  f->frame = keep && frame;
  f->silent = !keep || (!f->frame && ar->what != NULL && strcmp (ar->what, "C") == 0 && !st->auto_c);
  f->tree_label = m6_labels_intern (m6_tree_get_labels (st->tree), label, -1);
  f->ring_label = mach6_label_id (label);
  g_hash_table_add (st->funcs, f);
  return f;
}

#if LUA_VERSION_NUM >= 502
/* Lua 5.4 hooks are per thread, and a coroutine inherits its creator's
 * only when it is created: one created before auto(true) is hooked here,
 * when it is resumed (the coroutine is resume's first argument, or wrap's
 * function's upvalue; the function is on top of the stack). */
static void
hook_coroutine (lua_State *L, lua_Debug *ar, gboolean wrapped)
{
  lua_State *co = NULL;
  if (wrapped)
    {
      if (lua_getupvalue (L, -1, 1) != NULL)
        {
          co = lua_tothread (L, -1);
          lua_pop (L, 1);
        }
    }
  else if (lua_getlocal (L, ar, 1) != NULL)
    {
      co = lua_tothread (L, -1);
      lua_pop (L, 1);
    }
  if (co != NULL && lua_gethook (co) != m6_lua_hook)
    lua_sethook (co, m6_lua_hook, LUA_MASKCALL | LUA_MASKRET, 0);
}
#endif

void
m6_lua_hook (lua_State *L, lua_Debug *ar)
{
  State *st = m6_lua_state_get (L);
  if (st == NULL || !st->auto_on)
    {
      lua_sethook (L, NULL, 0, 0);
      return;
    }

  lua_getinfo (L, "Sf", ar);
  lua_CFunction cfn = lua_iscfunction (L, -1) ? lua_tocfunction (L, -1) : NULL;
  const void *fn = lua_topointer (L, -1);
  gboolean is_c = cfn != NULL || (ar->what != NULL && strcmp (ar->what, "C") == 0);
  const void *proto = func_proto (fn, is_c);
#if LUA_VERSION_NUM >= 502
  if (cfn != NULL && ar->event == LUA_HOOKCALL && (cfn == st->co_resume || cfn == st->co_wrap))
    hook_coroutine (L, ar, cfn == st->co_wrap);
#endif
  lua_pop (L, 1);
  if (cfn != NULL && is_own_function (cfn))
    return;   /* mark/done manage the stack themselves */

  gint64 h = m6_lua_heap_bytes (st, L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  Stack *s = m6_lua_thread_current (st, L, t, h);
  st->auto_events++;

#if LUA_VERSION_NUM < 502
  guint32 level = m6_lua_frame_slot (ar);
  /* A Lua function that tail-called a C function is kept open, with the C
   * function on top at its level, as long as what runs is called from
   * that C function; once the caller's caller runs again (its frame is
   * below them), both are done, whatever slot the next call takes. */
  guint above = s->n_entries;
  while (above > 0 && s->entries[above - 1].level > level)
    above--;
  m6_lua_stack_pop_to (st, s, above, t, h);
  if (s->n_entries >= 2)
    {
      Entry *top = &s->entries[s->n_entries - 1], *below = &s->entries[s->n_entries - 2];
      if ((top->flags & ENTRY_CFUNC) && !(below->flags & (ENTRY_MANUAL | ENTRY_CFUNC))
          && top->level == below->level && level > top->level)
        {
          lua_Debug up;
          if (!lua_getstack (L, 1, &up) || m6_lua_frame_slot (&up) < top->level)
            m6_lua_pop_from_level (st, s, top->level, FALSE, t, h);
        }
    }
  gboolean tail = m6_lua_pop_from_level (st, s, level, ar->event == LUA_HOOKCALL && is_c, t, h);
  if (ar->event != LUA_HOOKCALL)
    return;
#else
  if (ar->event == LUA_HOOKRET)
    {
      /* Pop down to this function's entry: anything above it was unwound
       * by an error without a return of its own. */
      for (guint i = s->n_entries; i-- > 0;)
        if (s->entries[i].fn == fn)
          {
            m6_lua_stack_pop_to (st, s, i, t, h);
            break;
          }
      return;
    }

#ifdef LUA_HOOKTAILCALL
  gboolean tail = ar->event == LUA_HOOKTAILCALL;
  if (tail)
    {
      /* The caller's frame is replaced: its scope ends here and the callee
       * appears beside it (as LuaJIT sees it too). */
      guint i = s->n_entries;
      while (i > 0 && (s->entries[i - 1].flags & ENTRY_MANUAL))
        i--;
      if (i > 0)
        m6_lua_stack_pop_to (st, s, i - 1, t, h);
    }
#endif
#endif

  FuncInfo *f = func_info (L, st, ar, cfn, proto, tail);
  /* A function goes to the ring only inside a manual scope (a frame):
   * the ring records from a top-level mark on, and the outermost function
   * of a program (its main loop) never returns. */
  guint32 flags = (f->silent ? ENTRY_SILENT : 0) | (is_c ? ENTRY_CFUNC : 0);
  if (f->frame)
    flags |= ENTRY_FRAME;
  else if (!m6_lua_chain_has_root_below (st, NULL))
    flags |= ENTRY_LOCAL;
  Entry e = { fn, f->tree_label, f->ring_label, flags, 0 };
#if LUA_VERSION_NUM < 502
  e.level = level;
#endif
  m6_lua_stack_push (s, &e);
  if (!f->silent)
    m6_lua_scope_open (st, f->tree_label, f->ring_label, t, h, flags);
}

/* mach6.auto(on [, {include = {patterns}, exclude = {patterns},
 *                   frame = {patterns}, c = bool}]): run once per function. */
static const char filter_source[] =
  "local include, exclude, frame = ...\n"
  "for _, list in pairs { include, exclude, frame } do\n"
  "  for _, p in ipairs (list) do string.find ('', p) end   -- a bad pattern fails here\n"
  "end\n"
  "local function any (list, label, src)\n"
  "  for _, p in ipairs (list or {}) do\n"
  "    if string.find (label, p) or string.find (src, p) then return true end\n"
  "  end\n"
  "  return false\n"
  "end\n"
  "return function (label, src)\n"
  "  local is_frame = any (frame, label, src)\n"
  "  if include and not is_frame and not any (include, label, src) then return false end\n"
  "  if any (exclude, label, src) then return false end\n"
  "  return true, is_frame\n"
  "end\n";

int
m6_lua_auto (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  luaL_checktype (L, 1, LUA_TBOOLEAN);
  gboolean on = lua_toboolean (L, 1);

  if (st->auto_on)
    {
      m6_lua_auto_stop (L, st);
      st->auto_on = FALSE;
    }
  g_hash_table_remove_all (st->funcs);
  g_hash_table_remove_all (st->same_line);
  if (proto_word == -2)
    find_proto_word (L);
  st->have_filter = FALSE;
  st->auto_c = FALSE;
  lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_FILTER));
  lua_pushnil (L);
  lua_rawset (L, LUA_REGISTRYINDEX);

  if (!on)
    {
      lua_sethook (L, NULL, 0, 0);
#if LUA_VERSION_NUM < 502
      luaJIT_setmode (L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_ON);
#endif
      return 0;
    }

  if (!lua_isnoneornil (L, 2))
    {
      luaL_checktype (L, 2, LUA_TTABLE);
      lua_getfield (L, 2, "c");
      st->auto_c = lua_toboolean (L, -1);
      lua_pop (L, 1);
      if (luaL_loadstring (L, filter_source) != 0)
        return lua_error (L);
      lua_getfield (L, 2, "include");
      lua_getfield (L, 2, "exclude");
      lua_getfield (L, 2, "frame");
      gboolean any = FALSE;
      for (int i = -3; i <= -1; i++)
        {
          if (lua_type (L, i) == LUA_TSTRING)
            {
              /* One pattern for a list of one. */
              lua_createtable (L, 1, 0);
              lua_pushvalue (L, i - 1);
              lua_rawseti (L, -2, 1);
              lua_replace (L, i - 1);
            }
          if (!lua_isnil (L, i) && !lua_istable (L, i))
            return luaL_error (L, "bad argument #2 to 'auto' (include, exclude and frame must be "
                                  "patterns or lists of patterns)");
          any = any || !lua_isnil (L, i);
        }
      lua_call (L, 3, 1);
      if (any)
        {
          lua_pushlightuserdata (L, m6_lua_key (M6_LUA_KEY_FILTER));
          lua_insert (L, -2);
          lua_rawset (L, LUA_REGISTRYINDEX);
          st->have_filter = TRUE;
        }
      else
        lua_pop (L, 1);
    }
  st->auto_on = TRUE;
#if LUA_VERSION_NUM >= 502
  lua_getglobal (L, "coroutine");
  if (lua_istable (L, -1))
    {
      lua_getfield (L, -1, "resume");
      st->co_resume = lua_tocfunction (L, -1);
      lua_getfield (L, -2, "wrap");
      lua_pushcfunction (L, m6_lua_depth);
      if (lua_pcall (L, 1, 1, 0) == 0)
        st->co_wrap = lua_tocfunction (L, -1);
      lua_pop (L, 2);
    }
  lua_pop (L, 1);
#endif
  lua_sethook (L, m6_lua_hook, LUA_MASKCALL | LUA_MASKRET, 0);
#if LUA_VERSION_NUM < 502
  /* LuaJIT never calls hooks from compiled code: a hot loop would vanish
   * from the tree. The interpreter it is, while auto is on (and the
   * compiled traces are flushed). */
  luaJIT_setmode (L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_FLUSH);
  luaJIT_setmode (L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
#endif
  return 0;
}
