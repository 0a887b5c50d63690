/* mach6-lua.c — the Lua module `mach6` (Lua 5.4 and LuaJIT 2.1 from one
 * source): the original library's API — profiler.mark/done/root/convert and
 * the sample module — in-process on libmach6-core, every mark and done also
 * written to the shared-memory ring so the viewer can attach. The heap
 * reading is the Lua state's own allocator, to the byte. mach6.auto() hooks
 * calls and returns so an unmodified program shows its call tree.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "mach6.h"
#include "m6-payload.h"
#include "m6-profiler.h"
#include "m6-reservoir.h"
#include "m6-tree.h"

#if LUA_VERSION_NUM < 502
# include <luajit.h>
# define lua_rawlen(L, i) lua_objlen ((L), (i))
#endif

#define NODE_MT     "mach6.node"
#define CHILDREN_MT "mach6.children"
#define SAMPLE_MT   "mach6.sample"
#define STACK_MT    "mach6.stack"

/* Registry keys: the addresses of these are unique. */
static char key_state;
static char key_nodes;
static char key_children;
static char key_threads;
static char key_chain;
static char key_filter;

/* ---------------------------------------------------------------------------
 * Per-state profiler
 * ------------------------------------------------------------------------- */

/* One open scope of one Lua thread: a manual mark or a hooked call. */
enum {
  ENTRY_SILENT = 1 << 0,   /* a call filtered out: kept only to match its return */
  ENTRY_MANUAL = 1 << 1,   /* a profiler.mark() */
  ENTRY_LOCAL  = 1 << 2,   /* in the in-process tree only, not in the ring */
  ENTRY_FRAME  = 1 << 3,   /* a function auto(true, {frame = ...}) names a frame */
};
#define ENTRY_RING_ROOT (ENTRY_MANUAL | ENTRY_FRAME)

typedef struct
{
  const void *fn;          /* the closure, to match its return; NULL for manual */
  guint32     tree_label;
  guint32     ring_label;
  guint32     flags;
  guint32     level;       /* LuaJIT: stack slot of its function's frame */
} Entry;

/* The open scopes of one Lua thread (coroutine). Parked: its scopes are
 * closed in the tree because it yielded; they are reopened when it is
 * resumed. */
typedef struct
{
  lua_State *L;
  Entry   *entries;
  guint    n_entries;
  guint    n_alloc;
  guint    n_roots;        /* entries with ENTRY_RING_ROOT */
  gboolean parked;
} Stack;

/* What a function looks like in the tree, looked up by where it is defined. */
typedef struct
{
  const char *source;      /* pointer from lua_Debug, the key with line and cfn */
  int         line;
  lua_CFunction cfn;
  char        short_src[LUA_IDSIZE];
  guint32     tree_label;
  guint32     ring_label;
  gboolean    silent;
  gboolean    frame;       /* matches auto's frame patterns */
} FuncInfo;

typedef struct
{
  M6Tree     *tree;
  guint64     unbalanced;  /* dones with nothing to close */
  guint64     ring_open;   /* scopes open in the ring */

  /* label cache: Lua string pointer -> ids, checked against the text */
  struct { const char *s; guint32 tree_label; guint32 ring_label; } labels[256];

  /* heap readings */
  gboolean    collect;     /* full collection before every reading */
  gboolean    collecting;  /* inside it (a finalizer may call us) */
  gint64      last_heap;   /* the latest reading Lua gave */

  /* coroutines: the stacks open in the tree */
  lua_State  *cur_L;       /* the thread the last event came from */
  Stack      *cur;
  GPtrArray  *chain;       /* Stacks open in the tree, outermost first */

  /* auto-instrumentation */
  gboolean    auto_on;
  gboolean    auto_c;      /* show C functions too */
  gboolean    have_filter;
  GHashTable *funcs;       /* FuncInfo by (source, line, cfn) */
  guint64     auto_events;
  lua_CFunction co_resume; /* coroutine.resume and wrap's function: */
  lua_CFunction co_wrap;   /* Lua 5.4 hooks a coroutine they run */
} State;

static inline gint64
heap_count (lua_State *L)
{
  /* collectgarbage("count"), exact: KB and the remainder in bytes. Inside
   * a finalizer Lua 5.4 refuses (-1): the caller keeps its last reading. */
  int kb = lua_gc (L, LUA_GCCOUNT, 0);
  int b = lua_gc (L, LUA_GCCOUNTB, 0);
  if (kb < 0 || b < 0)
    return -1;
  return (gint64) kb * 1024 + b;
}

/* The reading every mark and done takes. In collect mode, garbage goes
 * first: a scope's delta is then what it retains, not what it allocated
 * (in a collected heap, the frees of a collection land in whichever scope
 * happens to trigger it, so a scope that only makes garbage looks as if it
 * grew). Exact, and as slow as a full collection per event. */
static gint64
heap_bytes (State *st, lua_State *L)
{
  if (G_UNLIKELY (st->collect) && !st->collecting)
    {
      st->collecting = TRUE;
      lua_gc (L, LUA_GCCOLLECT, 0);
      st->collecting = FALSE;
    }
  gint64 h = heap_count (L);
  if (G_UNLIKELY (h < 0))
    return st->last_heap;
  st->last_heap = h;
  return h;
}

static State *
state_get (lua_State *L)
{
  lua_pushlightuserdata (L, &key_state);
  lua_rawget (L, LUA_REGISTRYINDEX);
  State *st = lua_touserdata (L, -1);
  lua_pop (L, 1);
  return st;
}

static void stack_close_all (State *st, Stack *s, gint64 t, gint64 h);

static int
state_gc (lua_State *L)
{
  State *st = lua_touserdata (L, 1);
  /* The state closes (a reload, a LÖVE restart) with scopes open: close
   * them in the ring, which outlives it, or the next state's marks would
   * nest in them and the ring never see a top level again. */
  for (; st->ring_open > 0; st->ring_open--)
    mach6_done_heap (st->last_heap);
  g_clear_pointer (&st->tree, m6_tree_free);
  g_clear_pointer (&st->funcs, g_hash_table_unref);
  g_clear_pointer (&st->chain, g_ptr_array_unref);
  return 0;
}

/* The ids of a label string, cached by the string's address: Lua interns
 * short strings, so a repeated literal is the same pointer. */
static void
label_ids (State *st, const char *s, size_t len, guint32 *tree_label, guint32 *ring_label)
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
scope_open (State *st, guint32 tree_label, guint32 ring_label, gint64 t, gint64 h, guint32 flags)
{
  m6_tree_mark (st->tree, tree_label, t, h);
  if (!(flags & ENTRY_LOCAL))
    {
      mach6_mark_id_heap (ring_label, h);
      st->ring_open++;
    }
}

static inline void
scope_close (State *st, gint64 t, gint64 h, guint32 flags)
{
  m6_tree_done (st->tree, t, h, NULL);
  if (!(flags & ENTRY_LOCAL))
    {
      mach6_done_heap (h);
      st->ring_open--;
    }
}

/* ---------------------------------------------------------------------------
 * Per-thread stacks (coroutines)
 * ------------------------------------------------------------------------- */

static int
stack_gc (lua_State *L)
{
  Stack *s = lua_touserdata (L, 1);
  g_clear_pointer (&s->entries, g_free);
  return 0;
}

static void
stack_push (Stack *s, const Entry *e)
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
static void
stack_remove (Stack *s, guint i)
{
  if (s->entries[i].flags & ENTRY_RING_ROOT)
    s->n_roots--;
  memmove (&s->entries[i], &s->entries[i + 1], (s->n_entries - i - 1) * sizeof (Entry));
  s->n_entries--;
}

/* Close the scopes of @s in the tree, innermost first, keeping the entries. */
static void
stack_close_all (State *st, Stack *s, gint64 t, gint64 h)
{
  for (guint i = s->n_entries; i-- > 0;)
    if (!(s->entries[i].flags & ENTRY_SILENT))
      scope_close (st, t, h, s->entries[i].flags);
}

static gboolean chain_has_root_below (State *st, Stack *s);

/* Reopen entries [from, n) of @s, outermost first. Whether a function
 * scope goes to the ring depends on the manual scopes below it, which may
 * have changed. */
static void
stack_reopen (State *st, Stack *s, guint from, gint64 t, gint64 h)
{
  gboolean manual_below = chain_has_root_below (st, s);
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
        scope_open (st, e->tree_label, e->ring_label, t, h, e->flags);
    }
}

/* Pop entries down to @keep (closing the open ones). */
static void
stack_pop_to (State *st, Stack *s, guint keep, gint64 t, gint64 h)
{
  while (s->n_entries > keep)
    {
      Entry *e = &s->entries[--s->n_entries];
      if (e->flags & ENTRY_RING_ROOT)
        s->n_roots--;
      if (!(e->flags & ENTRY_SILENT))
        scope_close (st, t, h, e->flags);
    }
}

/* The Stack of @L, created on first use. Kept in a weak-keyed table so a
 * collected coroutine takes its stack with it. */
static Stack *
stack_lookup (lua_State *L)
{
  lua_pushlightuserdata (L, &key_threads);
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
static gboolean
chain_has_root_below (State *st, Stack *s)
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
  lua_pushlightuserdata (L, &key_chain);
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
static Stack *
thread_switch (State *st, lua_State *L, gint64 t, gint64 h)
{
  Stack *s = stack_lookup (L);

  s->L = L;
  while (st->chain->len > 0)
    {
      Stack *top = g_ptr_array_index (st->chain, st->chain->len - 1);
      if (top == s || thread_is_active (top->L))
        break;
      stack_close_all (st, top, t, h);
      top->parked = TRUE;
      chain_ref (L, st->chain->len - 1, FALSE);
      g_ptr_array_set_size (st->chain, st->chain->len - 1);
    }
  if (st->chain->len == 0 || g_ptr_array_index (st->chain, st->chain->len - 1) != s)
    {
      chain_ref (L, st->chain->len, TRUE);
      g_ptr_array_add (st->chain, s);
      if (s->parked)
        stack_reopen (st, s, 0, t, h);
      s->parked = FALSE;
    }
  st->cur_L = L;
  st->cur = s;
  return s;
}

static inline Stack *
thread_current (State *st, lua_State *L, gint64 t, gint64 h)
{
  if (G_LIKELY (L == st->cur_L))
    return st->cur;
  return thread_switch (st, L, t, h);
}

static void
threads_forget (lua_State *L, State *st)
{
  g_ptr_array_set_size (st->chain, 0);
  st->cur_L = NULL;
  st->cur = NULL;
  lua_pushlightuserdata (L, &key_threads);
  lua_newtable (L);
  lua_newtable (L);
  lua_pushliteral (L, "k");
  lua_setfield (L, -2, "__mode");
  lua_setmetatable (L, -2);
  lua_rawset (L, LUA_REGISTRYINDEX);
  lua_pushlightuserdata (L, &key_chain);
  lua_newtable (L);
  lua_rawset (L, LUA_REGISTRYINDEX);
}

/* Auto mode ends: close every function scope, in every thread. Manual
 * scopes below the lowest of them stay open for their done(); those above
 * it must close with it (the tree is one stack). */
static void
auto_stop (lua_State *L, State *st)
{
  gint64 h = heap_bytes (st, L);
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
    stack_pop_to (st, g_ptr_array_index (st->chain, i), i == thread ? entry : 0, t, h);
}

#if LUA_VERSION_NUM < 502
/* LuaJIT reports a tail call as a plain call and unwinds errors without
 * returns, so its entries are matched by where their frame sits on the Lua
 * stack: at a call whose frame is at slot d, any entry at d or above is gone
 * (d itself: a tail call replaced that frame). LuaJIT's lua_Debug carries
 * the slot (its private i_ci: the slot in a hook, the slot in the low 16
 * bits from lua_getstack; stacks are under 65536 slots), so this costs no
 * walk of the stack. */
static guint32
frame_slot (const lua_Debug *ar)
{
  return ((guint32) ar->i_ci & 0xffff) + 1;
}

/* The slot of the function that called the running C function. */
static guint32
caller_slot (lua_State *L)
{
  lua_Debug ar;
  return lua_getstack (L, 1, &ar) ? frame_slot (&ar) : 0;
}

/* Returns whether a function entry of exactly @level was left: at a call,
 * that frame was replaced, so this is a tail call. */
static gboolean
pop_from_level (State *st, Stack *s, guint32 level, gint64 t, gint64 h)
{
  gboolean replaced = FALSE;
  guint keep = s->n_entries;
  while (keep > 0 && s->entries[keep - 1].level >= level)
    {
      keep--;
      /* Not a silent entry: LuaJIT has no return hook for fast functions
       * (os.clock), whose entries stay until the next call at their level. */
      if (s->entries[keep].level == level
          && !(s->entries[keep].flags & (ENTRY_MANUAL | ENTRY_SILENT)))
        replaced = TRUE;
    }
  stack_pop_to (st, s, keep, t, h);
  return replaced;
}
#endif

/* ---------------------------------------------------------------------------
 * profiler.mark / profiler.done
 * ------------------------------------------------------------------------- */

/* Errors name the function themselves: through pcall, Lua cannot. */
static const char *
check_label (lua_State *L, int arg, size_t *len)
{
  if (lua_type (L, arg) != LUA_TSTRING)
    luaL_error (L, "bad argument #%d to 'mark' (string expected, got %s)", arg, luaL_typename (L, arg));
  return lua_tolstring (L, arg, len);
}

/* Scopes are kept per coroutine (a Stack per Lua thread): a yield closes
 * the yielding coroutine's scopes in the tree and the next resume reopens
 * them, so coroutines never nest in each other's scopes. */
static int
l_mark (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  size_t len;
  const char *label = check_label (L, 1, &len);
  guint32 tree_label, ring_label;

  label_ids (st, label, len, &tree_label, &ring_label);
  /* Heap before clock: the reading's own cost stays out of the scope. */
  gint64 h = heap_bytes (st, L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  Stack *s = thread_current (st, L, t, h);
  Entry e = { NULL, tree_label, ring_label, ENTRY_MANUAL, 0 };
#if LUA_VERSION_NUM < 502
  if (st->auto_on)
    e.level = caller_slot (L);   /* the function that called mark owns it */
#endif
  stack_push (s, &e);
  scope_open (st, tree_label, ring_label, t, h, 0);
  return 0;
}

/* Close the innermost manual scope of this coroutine, or else of the
 * nearest one that resumed it. Whatever was opened inside that scope
 * (function scopes, a resumed coroutine's scopes) closes with it and
 * reopens at once one level up, so the frame-spanning pattern (done; mark)
 * keeps the stream balanced. */
static int
l_done (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  gint64 h = heap_bytes (st, L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  Stack *s = thread_current (st, L, t, h);

  /* The common case: this thread's innermost entry is the manual scope. */
  if (G_LIKELY (s->n_entries > 0 && (s->entries[s->n_entries - 1].flags & ENTRY_MANUAL)))
    {
      s->n_roots--;
      scope_close (st, t, h, s->entries[--s->n_entries].flags);
      return 0;
    }

  guint ci = st->chain->len, i = 0;
  while (ci-- > 0)
    {
      Stack *c = g_ptr_array_index (st->chain, ci);
      for (i = c->n_entries; i > 0 && !(c->entries[i - 1].flags & ENTRY_MANUAL); i--)
        ;
      if (i > 0)
        break;
    }
  if (ci == G_MAXUINT)
    {
      st->unbalanced++;   /* nothing open: ignored and counted (DESIGN §2) */
      return 0;
    }
  i--;

  Stack *c = g_ptr_array_index (st->chain, ci);
  for (guint k = st->chain->len; k-- > ci + 1;)
    stack_close_all (st, g_ptr_array_index (st->chain, k), t, h);
  for (guint j = c->n_entries; j-- > i;)
    if (!(c->entries[j].flags & ENTRY_SILENT))
      scope_close (st, t, h, c->entries[j].flags);
  stack_remove (c, i);
  stack_reopen (st, c, i, t, h);
  for (guint k = ci + 1; k < st->chain->len; k++)
    stack_reopen (st, g_ptr_array_index (st->chain, k), 0, t, h);
  return 0;
}

/* ---------------------------------------------------------------------------
 * profiler.root: nodes and their children as read-only proxies
 * ------------------------------------------------------------------------- */

/* The one proxy of @node (of kind @mt), so that proxies compare equal. */
static void
push_proxy (lua_State *L, M6Node *node, void *cache_key, const char *mt)
{
  lua_pushlightuserdata (L, cache_key);
  lua_rawget (L, LUA_REGISTRYINDEX);
  lua_pushlightuserdata (L, node);
  lua_rawget (L, -2);
  if (lua_isnil (L, -1))
    {
      lua_pop (L, 1);
      M6Node **p = lua_newuserdata (L, sizeof (M6Node *));
      *p = node;
      luaL_getmetatable (L, mt);
      lua_setmetatable (L, -2);
      lua_pushlightuserdata (L, node);
      lua_pushvalue (L, -2);
      lua_rawset (L, -4);
    }
  lua_remove (L, -2);
}

static void
push_label (lua_State *L, State *st, const M6Node *node)
{
  M6Labels *labels = m6_tree_get_labels (st->tree);
  if (node->parent == NULL)
    lua_pushliteral (L, "root");
  else
    lua_pushlstring (L, m6_labels_get (labels, node->label), m6_labels_get_len (labels, node->label));
}

static int
node_index (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, NODE_MT);
  State *st = state_get (L);
  const char *key = luaL_checkstring (L, 2);

  if (strcmp (key, "children") == 0)
    push_proxy (L, node, &key_children, CHILDREN_MT);
  else if (strcmp (key, "label") == 0)
    push_label (L, st, node);
  else if (strcmp (key, "parent") == 0 && node->parent != NULL)
    push_proxy (L, node->parent, &key_nodes, NODE_MT);
  else if (strcmp (key, "count") == 0)
    lua_pushinteger (L, (lua_Integer) node->count);
  else
    lua_pushnil (L);
  return 1;
}

static int
node_tostring (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, NODE_MT);
  lua_pushliteral (L, "mach6 node ");
  push_label (L, state_get (L), node);
  lua_concat (L, 2);
  return 1;
}

static M6Node *
child_by_label (State *st, M6Node *node, const char *s, size_t len)
{
  M6Labels *labels = m6_tree_get_labels (st->tree);
  for (M6Node *c = node->first_child; c != NULL; c = c->next_sibling)
    if (m6_labels_get_len (labels, c->label) == len
        && memcmp (m6_labels_get (labels, c->label), s, len) == 0)
      return c;
  return NULL;
}

static int
children_index (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, CHILDREN_MT);
  size_t len;
  const char *s = lua_tolstring (L, 2, &len);
  M6Node *c = s != NULL && lua_type (L, 2) == LUA_TSTRING
    ? child_by_label (state_get (L), node, s, len) : NULL;

  if (c != NULL)
    push_proxy (L, c, &key_nodes, NODE_MT);
  else
    lua_pushnil (L);
  return 1;
}

static int
children_len (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, CHILDREN_MT);
  lua_pushinteger (L, node->n_children);
  return 1;
}

/* next() over children in first-seen order: the key is the label. */
static int
children_next (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, CHILDREN_MT);
  State *st = state_get (L);
  M6Node *c;

  if (lua_isnil (L, 2))
    c = node->first_child;
  else
    {
      size_t len;
      const char *s = luaL_checklstring (L, 2, &len);
      c = child_by_label (st, node, s, len);
      c = c != NULL ? c->next_sibling : NULL;
    }
  if (c == NULL)
    return 0;
  push_label (L, st, c);
  push_proxy (L, c, &key_nodes, NODE_MT);
  return 2;
}

static int
children_pairs (lua_State *L)
{
  luaL_checkudata (L, 1, CHILDREN_MT);
  lua_pushcfunction (L, children_next);
  lua_pushvalue (L, 1);
  lua_pushnil (L);
  return 3;
}

/* ---------------------------------------------------------------------------
 * profiler.convert: the payload of DESIGN §2 as Lua tables
 * ------------------------------------------------------------------------- */

/* The payload's stats keys (core/m6-payload.c), read straight from the
 * computed stats: formatting the numbers as JSON text and reading them back
 * costs twenty times as much. /lua/convert-matches-json checks that the
 * two lists agree. */
typedef struct
{
  const char *key;
  gsize       offset;
  gboolean    is_count;
} StatsKey;

#define DKEY(k, field) { k, G_STRUCT_OFFSET (M6NodeStats, field), FALSE }
#define CKEY(k, field) { k, G_STRUCT_OFFSET (M6NodeStats, field), TRUE }

static const StatsKey stats_keys[] = {
  DKEY ("time.avg", time_avg), DKEY ("time.p50", time_p50), DKEY ("time.p90", time_p90),
  DKEY ("time.max", time_max), DKEY ("mem_delta.avg", mem_delta_avg), DKEY ("mem.net", mem_net),
  CKEY ("count", count),
  DKEY ("time.min", time_min), DKEY ("time.p10", time_p10), DKEY ("time.total", time_total),
  DKEY ("mem_delta.min", mem_delta_min), DKEY ("mem_delta.max", mem_delta_max),
  DKEY ("mem_delta.p10", mem_delta_p10), DKEY ("mem_delta.p50", mem_delta_p50),
  DKEY ("mem_delta.p90", mem_delta_p90), DKEY ("mem_delta.total", mem_delta_total),
  DKEY ("inverse_mem.total", inverse_mem_total), DKEY ("inverse_mem.avg", inverse_mem_avg),
  CKEY ("inverse_mem.count", inverse_count), DKEY ("mem.rate", mem_rate),
  DKEY ("mem.first", mem_first), DKEY ("mem.last", mem_last),
  DKEY ("mem_delta.rate", mem_delta_rate), DKEY ("mem_self.rate", mem_self_rate),
  DKEY ("mem_self.total", mem_self_total),
};

static void
push_stats (lua_State *L, M6Tree *tree, const M6Node *node)
{
  M6NodeStats stats;

  m6_node_stats_compute (tree, node, &stats);
  lua_createtable (L, 0, G_N_ELEMENTS (stats_keys));
  for (guint i = 0; i < G_N_ELEMENTS (stats_keys); i++)
    {
      const StatsKey *k = &stats_keys[i];
      const char *field = (const char *) &stats + k->offset;
      if (k->is_count)
        lua_pushinteger (L, (lua_Integer) *(const guint64 *) field);
      else
        {
          double v = *(const double *) field;
          lua_pushnumber (L, isfinite (v) ? v : 0.0);   /* as the payload writes it */
        }
      lua_setfield (L, -2, k->key);
    }
}

/* Leaves { label, stats, children = <array, still on the stack above> }. */
static void
payload_enter (lua_State *L, M6Tree *tree, const M6Node *node)
{
  luaL_checkstack (L, 4, "payload too deep");
  lua_createtable (L, 0, 3);
  g_autofree char *label = m6_payload_label (tree, node);
  lua_pushstring (L, label);
  lua_setfield (L, -2, "label");
  push_stats (L, tree, node);
  lua_setfield (L, -2, "stats");
  lua_createtable (L, (int) node->n_children, 0);
}

/* The payload of @top, walked without recursion (a recursive chain can be
 * deeper than the C stack): each open node keeps its table and its
 * children array on the Lua stack. */
static void
push_payload (lua_State *L, M6Tree *tree, const M6Node *top)
{
  g_autoptr (GArray) index = g_array_new (FALSE, FALSE, sizeof (int));  /* next slot per level */
  const M6Node *node = top;

  payload_enter (L, tree, node);
  g_array_append_val (index, (int) { 1 });
  for (;;)
    {
      const M6Node *next = NULL;
      if (node->first_child != NULL)
        next = node->first_child;
      else
        {
          /* Close nodes until one has a next sibling. */
          for (;;)
            {
              lua_setfield (L, -2, "children");
              g_array_set_size (index, index->len - 1);
              if (node == top)
                return;
              int *slot = &g_array_index (index, int, index->len - 1);
              lua_rawseti (L, -2, (*slot)++);
              if (node->next_sibling != NULL)
                {
                  next = node->next_sibling;
                  break;
                }
              node = node->parent;
            }
        }
      node = next;
      payload_enter (L, tree, node);
      g_array_append_val (index, (int) { 1 });
    }
}

static int
l_convert (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  M6Node *node = m6_tree_get_root (st->tree);

  if (!lua_isnoneornil (L, 1))
    {
      M6Node **p = luaL_testudata (L, 1, NODE_MT);
      if (p == NULL)
        return luaL_error (L, "bad argument #1 to 'convert' (mach6 node expected, got %s)",
                           luaL_typename (L, 1));
      node = *p;
    }
  push_payload (L, st->tree, node);
  return 1;
}

/* profiler.json(node): the payload as JSON text, as mach6 report --json. */
static int
l_json (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  M6Node *node = m6_tree_get_root (st->tree);
  if (!lua_isnoneornil (L, 1))
    node = *(M6Node **) luaL_checkudata (L, 1, NODE_MT);
  g_autofree char *text = m6_payload_to_string (st->tree, node, lua_toboolean (L, 2));
  lua_pushstring (L, text);
  return 1;
}

static int
l_unbalanced (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  lua_pushinteger (L, (lua_Integer) (m6_tree_get_unbalanced (st->tree) + st->unbalanced));
  return 1;
}

static int
l_depth (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  lua_pushinteger (L, m6_tree_get_depth (st->tree));
  return 1;
}

/* profiler.root is a field, as in the original: the table's __index. */
static int
profiler_index (lua_State *L)
{
  const char *key = lua_tostring (L, 2);
  if (key != NULL && strcmp (key, "root") == 0)
    {
      State *st = lua_touserdata (L, lua_upvalueindex (1));
      push_proxy (L, m6_tree_get_root (st->tree), &key_nodes, NODE_MT);
      return 1;
    }
  return 0;
}

/* ---------------------------------------------------------------------------
 * Auto-instrumentation: a call/return hook
 * ------------------------------------------------------------------------- */

static int l_auto (lua_State *L);

/* mark, done and auto manage the stacks themselves: the hook skips them.
 * A constant list, since several Lua states (LÖVE threads) may load the
 * module at once. */
static gboolean
is_own_function (lua_CFunction f)
{
  return f == l_mark || f == l_done || f == l_auto;
}

static guint
func_hash (gconstpointer p)
{
  const FuncInfo *f = p;
  return g_direct_hash (f->source) ^ (guint) f->line * 2654435761u ^ (guint) (guintptr) f->cfn;   /* a function pointer is no gpointer in ISO C */
}

static gboolean
func_equal (gconstpointer a, gconstpointer b)
{
  const FuncInfo *x = a, *y = b;
  return x->source == y->source && x->line == y->line && x->cfn == y->cfn
         && strcmp (x->short_src, y->short_src) == 0;
}

/* The filter, run once per function: is it shown, and is it a frame? */
static gboolean
func_filter_keeps (lua_State *L, const char *label, const char *short_src, gboolean *frame)
{
  *frame = FALSE;
  lua_pushlightuserdata (L, &key_filter);
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
func_info (lua_State *L, State *st, lua_Debug *ar, lua_CFunction cfn, gboolean tail)
{
  FuncInfo key = { .source = ar->source, .line = ar->linedefined, .cfn = cfn };
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
    label = g_strdup_printf ("%s (%s:%d)", name ? name : "function", ar->short_src, ar->linedefined);
  gboolean frame = FALSE;
  gboolean keep = !st->have_filter || func_filter_keeps (L, label, ar->short_src, &frame);
  f->frame = keep && frame;
  f->silent = !keep || (!f->frame && ar->what != NULL && strcmp (ar->what, "C") == 0 && !st->auto_c);
  f->tree_label = m6_labels_intern (m6_tree_get_labels (st->tree), label, -1);
  f->ring_label = mach6_label_id (label);
  g_hash_table_add (st->funcs, f);
  return f;
}


static void hook (lua_State *L, lua_Debug *ar);

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
  if (co != NULL && lua_gethook (co) != hook)
    lua_sethook (co, hook, LUA_MASKCALL | LUA_MASKRET, 0);
}
#endif

static void
hook (lua_State *L, lua_Debug *ar)
{
  State *st = state_get (L);
  if (st == NULL || !st->auto_on)
    {
      lua_sethook (L, NULL, 0, 0);
      return;
    }

  lua_getinfo (L, "Sf", ar);
  lua_CFunction cfn = lua_iscfunction (L, -1) ? lua_tocfunction (L, -1) : NULL;
  const void *fn = lua_topointer (L, -1);
#if LUA_VERSION_NUM >= 502
  if (cfn != NULL && ar->event == LUA_HOOKCALL && (cfn == st->co_resume || cfn == st->co_wrap))
    hook_coroutine (L, ar, cfn == st->co_wrap);
#endif
  lua_pop (L, 1);
  if (cfn != NULL && is_own_function (cfn))
    return;   /* mark/done manage the stack themselves */

  gint64 h = heap_bytes (st, L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  Stack *s = thread_current (st, L, t, h);
  st->auto_events++;

#if LUA_VERSION_NUM < 502
  guint32 level = frame_slot (ar);
  gboolean tail = pop_from_level (st, s, level, t, h);
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
            stack_pop_to (st, s, i, t, h);
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
        stack_pop_to (st, s, i - 1, t, h);
    }
#endif
#endif

  FuncInfo *f = func_info (L, st, ar, cfn, tail);
  /* A function goes to the ring only inside a manual scope (a frame):
   * the ring records from a top-level mark on, and the outermost function
   * of a program (its main loop) never returns. */
  guint32 flags = f->silent ? ENTRY_SILENT : 0;
  if (f->frame)
    flags |= ENTRY_FRAME;
  else if (!chain_has_root_below (st, NULL))
    flags |= ENTRY_LOCAL;
  Entry e = { fn, f->tree_label, f->ring_label, flags, 0 };
#if LUA_VERSION_NUM < 502
  e.level = level;
#endif
  stack_push (s, &e);
  if (!f->silent)
    scope_open (st, f->tree_label, f->ring_label, t, h, flags);
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

static int
l_auto (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  luaL_checktype (L, 1, LUA_TBOOLEAN);
  gboolean on = lua_toboolean (L, 1);

  if (st->auto_on)
    {
      auto_stop (L, st);
      st->auto_on = FALSE;
    }
  g_hash_table_remove_all (st->funcs);
  st->have_filter = FALSE;
  st->auto_c = FALSE;
  lua_pushlightuserdata (L, &key_filter);
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
          lua_pushlightuserdata (L, &key_filter);
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
      lua_pushcfunction (L, l_depth);
      if (lua_pcall (L, 1, 1, 0) == 0)
        st->co_wrap = lua_tocfunction (L, -1);
      lua_pop (L, 2);
    }
  lua_pop (L, 1);
#endif
  lua_sethook (L, hook, LUA_MASKCALL | LUA_MASKRET, 0);
#if LUA_VERSION_NUM < 502
  /* LuaJIT never calls hooks from compiled code: a hot loop would vanish
   * from the tree. The interpreter it is, while auto is on (and the
   * compiled traces are flushed). */
  luaJIT_setmode (L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_FLUSH);
  luaJIT_setmode (L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
#endif
  return 0;
}

/* ---------------------------------------------------------------------------
 * sample: a reservoir of 128 and summarize()
 * ------------------------------------------------------------------------- */

typedef struct
{
  M6Rng   rng;
  guint64 seen;
  guint   n;
  double  values[M6_RESERVOIR_SLOTS];
} Sample;

static int
sample_new (lua_State *L)
{
  lua_Integer seed = luaL_optinteger (L, 1, 0x6d616368);
  Sample *r = lua_newuserdata (L, sizeof (Sample));
  memset (r, 0, sizeof *r);
  m6_rng_seed (&r->rng, (guint64) seed);
  luaL_getmetatable (L, SAMPLE_MT);
  lua_setmetatable (L, -2);
  return 1;
}

/* Algorithm R as DESIGN §2 and m6_reservoir_add(): the k-th value goes to
 * slot k-1 while k <= 128, then to a uniform j in [0, k-1] if j < 128. */
static int
sample_add (lua_State *L)
{
  Sample *r = luaL_checkudata (L, 1, SAMPLE_MT);
  double v = luaL_checknumber (L, 2);
  guint64 k = ++r->seen;
  if (k <= M6_RESERVOIR_SLOTS)
    r->values[r->n++] = v;
  else
    {
      guint64 j = m6_rng_below (&r->rng, k);
      if (j < M6_RESERVOIR_SLOTS)
        r->values[j] = v;
    }
  return 0;
}

static int
sample_values (lua_State *L)
{
  Sample *r = luaL_checkudata (L, 1, SAMPLE_MT);
  lua_createtable (L, (int) r->n, 0);
  for (guint i = 0; i < r->n; i++)
    {
      lua_pushnumber (L, r->values[i]);
      lua_rawseti (L, -2, (int) i + 1);
    }
  return 1;
}

static int
sample_count (lua_State *L)
{
  Sample *r = luaL_checkudata (L, 1, SAMPLE_MT);
  lua_pushinteger (L, (lua_Integer) r->seen);
  return 1;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
quantile (const double *sorted, size_t n, double p)
{
  /* Linear interpolation at the 1-based rank p*(n-1)+1 (numpy "linear"). */
  double pos = p * (double) (n - 1);
  size_t lo = (size_t) pos;
  if (lo + 1 >= n)
    return sorted[n - 1];
  return sorted[lo] + (pos - (double) lo) * (sorted[lo + 1] - sorted[lo]);
}

static void
push_summary (lua_State *L, double *v, size_t n)
{
  double min = 0, max = 0, avg = 0, p10 = 0, p50 = 0, p90 = 0;
  if (n > 0)
    {
      qsort (v, n, sizeof *v, compare_double);
      double sum = 0;
      for (size_t i = 0; i < n; i++)
        sum += v[i];
      min = v[0];
      max = v[n - 1];
      avg = sum / (double) n;
      p10 = quantile (v, n, 0.10);
      p50 = quantile (v, n, 0.50);
      p90 = quantile (v, n, 0.90);
    }
  lua_createtable (L, 0, 7);
  lua_pushinteger (L, (lua_Integer) n); lua_setfield (L, -2, "n");
  lua_pushnumber (L, min); lua_setfield (L, -2, "min");
  lua_pushnumber (L, max); lua_setfield (L, -2, "max");
  lua_pushnumber (L, avg); lua_setfield (L, -2, "avg");
  lua_pushnumber (L, p10); lua_setfield (L, -2, "p10");
  lua_pushnumber (L, p50); lua_setfield (L, -2, "p50");
  lua_pushnumber (L, p90); lua_setfield (L, -2, "p90");
}

/* sample.summarize(values): values is an array of numbers or a reservoir. */
static int
sample_summarize (lua_State *L)
{
  Sample *r = luaL_testudata (L, 1, SAMPLE_MT);
  if (r != NULL)
    {
      double v[M6_RESERVOIR_SLOTS];
      memcpy (v, r->values, r->n * sizeof (double));
      push_summary (L, v, r->n);
      return 1;
    }
  luaL_checktype (L, 1, LUA_TTABLE);
  size_t n = lua_rawlen (L, 1);
  double *v = lua_newuserdata (L, (n ? n : 1) * sizeof (double));
  for (size_t i = 0; i < n; i++)
    {
      lua_rawgeti (L, 1, (int) i + 1);
      if (lua_type (L, -1) != LUA_TNUMBER)
        return luaL_error (L, "bad argument #1 to 'summarize' (value %d is %s, not a number)",
                           (int) i + 1, luaL_typename (L, -1));
      v[i] = lua_tonumber (L, -1);
      lua_pop (L, 1);
    }
  push_summary (L, v, n);
  return 1;
}

/* ---------------------------------------------------------------------------
 * Module
 * ------------------------------------------------------------------------- */

static int
l_heap (lua_State *L)
{
  lua_pushnumber (L, (lua_Number) heap_count (L));
  return 1;
}

/* mach6.collect(on): collect mode (see heap_bytes). */
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
  State *st = state_get (L);
  if (st == NULL)
    {
      st = lua_newuserdata (L, sizeof (State));
      memset (st, 0, sizeof *st);
      st->tree = m6_tree_new (NULL);
      st->funcs = g_hash_table_new_full (func_hash, func_equal, NULL, g_free);
      st->chain = g_ptr_array_new ();
      lua_newtable (L);
      lua_pushcfunction (L, state_gc);
      lua_setfield (L, -2, "__gc");
      lua_setmetatable (L, -2);
      lua_pushlightuserdata (L, &key_state);
      lua_insert (L, -2);
      lua_rawset (L, LUA_REGISTRYINDEX);

      /* Proxy caches: weak values, so unused proxies go. */
      void *caches[] = { &key_nodes, &key_children };
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
        { "__index", node_index }, { "__tostring", node_tostring }, { NULL, NULL } };
      static const luaL_Reg children_fns[] = {
        { "__index", children_index }, { "__len", children_len },
        { "__pairs", children_pairs }, { NULL, NULL } };
      static const luaL_Reg stack_fns[] = { { "__gc", stack_gc }, { NULL, NULL } };
      static const luaL_Reg sample_methods[] = {
        { "add", sample_add }, { "values", sample_values }, { "count", sample_count },
        { "summarize", sample_summarize }, { NULL, NULL } };
      new_metatable (L, NODE_MT, node_fns);
      new_metatable (L, CHILDREN_MT, children_fns);
      new_metatable (L, STACK_MT, stack_fns);
      luaL_newmetatable (L, SAMPLE_MT);
      luaL_newlib (L, sample_methods);
      lua_setfield (L, -2, "__index");
      lua_pop (L, 1);
      threads_forget (L, st);
    }

  static const luaL_Reg profiler_fns[] = {
    { "mark", l_mark }, { "done", l_done }, { "convert", l_convert }, { "json", l_json },
    { "unbalanced", l_unbalanced }, { "depth", l_depth }, { NULL, NULL } };
  static const luaL_Reg module_fns[] = {
    { "auto", l_auto }, { "auto_events", l_auto_events }, { "collect", l_collect },
    { NULL, NULL } };

  lua_newtable (L);                           /* mach6 */
  lua_newtable (L);                           /* mach6.profiler */
  lua_pushlightuserdata (L, st);
  luaL_setfuncs (L, profiler_fns, 1);
  lua_newtable (L);
  lua_pushlightuserdata (L, st);
  lua_pushcclosure (L, profiler_index, 1);
  lua_setfield (L, -2, "__index");
  lua_setmetatable (L, -2);
  lua_setfield (L, -2, "profiler");

  lua_pushlightuserdata (L, st);
  luaL_setfuncs (L, module_fns, 1);
  lua_pushcfunction (L, l_heap);
  lua_setfield (L, -2, "heap");
  lua_pushcfunction (L, l_attached);
  lua_setfield (L, -2, "attached");
  lua_pushcfunction (L, l_thread_name);
  lua_setfield (L, -2, "thread_name");

  static const luaL_Reg sample_fns[] = {
    { "new", sample_new }, { "add", sample_add }, { "values", sample_values },
    { "summarize", sample_summarize }, { NULL, NULL } };
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
