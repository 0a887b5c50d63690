/* SPDX-License-Identifier: MIT */
/* mach6-lua-private.h — what the files of the Lua module share: the
 * per-state profiler (State) with its stacks of open scopes, the registry
 * keys and metatable names, and the functions luaopen_mach6() registers. */
#pragma once

#include "mach6.h"
#include "m6-payload.h"
#include "m6-profiler.h"
#include "m6-reservoir.h"
#include "m6-tree.h"

#include <lua.h>
#include <lauxlib.h>

#if LUA_VERSION_NUM < 502
# include <luajit.h>
# define lua_rawlen(L, i) lua_objlen ((L), (i))
#endif

G_BEGIN_DECLS

#define NODE_MT     "mach6.node"
#define CHILDREN_MT "mach6.children"
#define SAMPLE_MT   "mach6.sample"
#define STACK_MT    "mach6.stack"

/* Registry keys: light userdata at addresses unique in the process, the
 * same from every file of the module. */
typedef enum
{
  M6_LUA_KEY_STATE,
  M6_LUA_KEY_NODES,
  M6_LUA_KEY_CHILDREN,
  M6_LUA_KEY_THREADS,
  M6_LUA_KEY_CHAIN,
  M6_LUA_KEY_FILTER,
  M6_LUA_N_KEYS
} M6LuaKey;

void *m6_lua_key (M6LuaKey key);

/* One open scope of one Lua thread: a manual mark or a hooked call. */
enum {
  ENTRY_SILENT = 1 << 0,   /* a call filtered out: kept only to match its return */
  ENTRY_MANUAL = 1 << 1,   /* a profiler.mark() */
  ENTRY_LOCAL  = 1 << 2,   /* in the in-process tree only, not in the ring */
  ENTRY_FRAME  = 1 << 3,   /* a function auto(true, {frame = ...}) names a frame */
  ENTRY_CFUNC  = 1 << 4,   /* a C function */
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
  const char *source;      /* pointer from lua_Debug, the key with line, cfn and proto */
  int         line;
  lua_CFunction cfn;
  const void *proto;       /* the function's prototype, where it can be read (m6_lua_proto) */
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
  GHashTable *same_line;   /* "short_src:line" -> functions labelled there */
  lua_CFunction co_resume; /* coroutine.resume and wrap's function: */
  lua_CFunction co_wrap;   /* Lua 5.4 hooks a coroutine they run */
} State;

/* The payload's stats keys (core/accounting/m6-payload.c), read straight from the
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

typedef struct
{
  M6Rng   rng;
  guint64 seen;
  guint   n;
  double  values[M6_RESERVOIR_SLOTS];
} Sample;

/* mach6-lua-state.c */
gint64 m6_lua_heap_bytes (State *st, lua_State *L);
State *m6_lua_state_get (lua_State *L);
int m6_lua_state_gc (lua_State *L);
void m6_lua_label_ids (State *st, const char *s, size_t len, guint32 *tree_label, guint32 *ring_label);
int m6_lua_stack_gc (lua_State *L);
void m6_lua_stack_push (Stack *s, const Entry *e);
void m6_lua_stack_remove (Stack *s, guint i);
void m6_lua_stack_close_all (State *st, Stack *s, gint64 t, gint64 h);
void m6_lua_stack_reopen (State *st, Stack *s, guint from, gint64 t, gint64 h);
void m6_lua_stack_pop_to (State *st, Stack *s, guint keep, gint64 t, gint64 h);
gboolean m6_lua_chain_has_root_below (State *st, Stack *s);
void m6_lua_threads_forget (lua_State *L, State *st);
void m6_lua_auto_stop (lua_State *L, State *st);
guint32 m6_lua_frame_slot (const lua_Debug *ar);
guint32 m6_lua_caller_slot (lua_State *L);
gboolean m6_lua_pop_from_level (State *st, Stack *s, guint32 level, gboolean callee_c, gint64 t, gint64 h);
const char *m6_lua_check_label (lua_State *L, int arg, size_t *len);

/* mach6-lua-tree.c */
int m6_lua_mark (lua_State *L);
int m6_lua_done (lua_State *L);
int m6_lua_node_index (lua_State *L);
int m6_lua_node_tostring (lua_State *L);
int m6_lua_children_index (lua_State *L);
int m6_lua_children_len (lua_State *L);
int m6_lua_children_pairs (lua_State *L);
int m6_lua_children_next (lua_State *L);
int m6_lua_children_inext (lua_State *L);
int m6_lua_is_children (lua_State *L);
int m6_lua_convert (lua_State *L);
int m6_lua_json (lua_State *L);
int m6_lua_unbalanced (lua_State *L);
int m6_lua_depth (lua_State *L);
int m6_lua_profiler_index (lua_State *L);

/* mach6-lua-auto.c */
guint m6_lua_func_hash (gconstpointer p);
gboolean m6_lua_func_equal (gconstpointer a, gconstpointer b);
void m6_lua_hook (lua_State *L, lua_Debug *ar);
int m6_lua_auto (lua_State *L);

/* mach6-lua-sample.c */
int m6_lua_sample_new (lua_State *L);
int m6_lua_sample_add (lua_State *L);
int m6_lua_sample_values (lua_State *L);
int m6_lua_sample_count (lua_State *L);
int m6_lua_sample_summarize (lua_State *L);
int m6_lua_heap (lua_State *L);

/* The heap and scope helpers every mark, done and hook calls: inline. */
static inline gint64
m6_lua_heap_count (lua_State *L)
{
  /* collectgarbage("count"), exact: KB and the remainder in bytes. Inside
   * a finalizer Lua 5.4 refuses (-1): the caller keeps its last reading. */
  int kb = lua_gc (L, LUA_GCCOUNT, 0);
  int b = lua_gc (L, LUA_GCCOUNTB, 0);
  if (kb < 0 || b < 0)
    return -1;
  return (gint64) kb * 1024 + b;
}

/* Every scope opens and closes in both places: the in-process tree and the
 * ring (which writes nothing unless a viewer records). */
static inline void
m6_lua_scope_open (State *st, guint32 tree_label, guint32 ring_label, gint64 t, gint64 h, guint32 flags)
{
  m6_tree_mark (st->tree, tree_label, t, h);
  if (!(flags & ENTRY_LOCAL))
    {
      mach6_mark_id_heap (ring_label, h);
      st->ring_open++;
    }
}

static inline void
m6_lua_scope_close (State *st, gint64 t, gint64 h, guint32 flags)
{
  m6_tree_done (st->tree, t, h, NULL);
  if (!(flags & ENTRY_LOCAL))
    {
      mach6_done_heap (h);
      st->ring_open--;
    }
}

Stack *m6_lua_thread_switch (State *st, lua_State *L, gint64 t, gint64 h);

/* The stack of the running Lua thread; switching costs only on a change. */
static inline Stack *
m6_lua_thread_current (State *st, lua_State *L, gint64 t, gint64 h)
{
  if (G_LIKELY (L == st->cur_L))
    return st->cur;
  return m6_lua_thread_switch (st, L, t, h);
}

G_END_DECLS
