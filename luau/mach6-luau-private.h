/* SPDX-License-Identifier: MIT */
/* mach6-luau-private.h — what the binding's files share: the profiler of a
 * Luau state (State), each thread's stack of open scopes (Stack), and the
 * functions the mach6 table holds. C++, against Luau's C++-linked API. */
#pragma once

#include "mach6.h"
#include "mach6-luau.h"
#include "m6-payload.h"
#include "m6-profiler.h"
#include "m6-reservoir.h"
#include "m6-tree.h"

#include "lua.h"
#include "lualib.h"

#define M6L_NODE_MT   "mach6.node"
#define M6L_SAMPLE_MT "mach6.sample"

/* One open scope of one Luau thread. */
struct M6LuauEntry
{
  guint32 tree_label;
  guint32 ring_label;
};

/* The open scopes of one Luau thread (coroutine). Parked: it yielded, so
 * its scopes are closed in the tree and the ring until it is resumed. */
struct M6LuauStack
{
  lua_State   *L;
  M6LuauEntry *entries;
  guint        n_entries;
  guint        n_alloc;
  gboolean     parked;
  gboolean     in_chain;
};

struct M6LuauState
{
  lua_State  *main;
  M6Tree     *tree;
  guint64     unbalanced;      /* dones with nothing open anywhere */
  guint64     ring_open;       /* scopes open in the ring */
  gint64      last_heap;

  /* label cache: Luau string pointer -> ids, checked against the text */
  struct { const char *s; guint32 tree_label; guint32 ring_label; } labels[256];

  /* threads: a stack per lua_State; the chain holds the threads being
   * resumed, outermost first; events outside any resume go to base. */
  GHashTable  *stacks;         /* lua_State * -> M6LuauStack * */
  GPtrArray   *chain;
  M6LuauStack *base;
  lua_State   *cur_L;          /* the thread the last event came from */
  M6LuauStack *cur;

  /* the callbacks that were set before ours, called on */
  void (*prev_preresume) (lua_State *L);
  void (*prev_postresume) (lua_State *L);
  void (*prev_userthread) (lua_State *LP, lua_State *L);

  int         table_ref;       /* the mach6 table, pushed by every open */
};

/* Registry fields (strings: Luau's registry takes any key). */
#define M6L_REG_STATE    "mach6.state"
#define M6L_REG_NODES    "mach6.nodes"
#define M6L_REG_CHILDREN "mach6.children"
#define M6L_REG_COUNTS   "mach6.children_counts"

/* mach6-luau.cpp */
M6LuauState *m6_luau_state (lua_State *L);
M6LuauStack *m6_luau_stack_for (M6LuauState *st, lua_State *L);

/* mach6-luau-tree.cpp */
int  m6_luau_profiler_index (lua_State *L);
int  m6_luau_convert (lua_State *L);
int  m6_luau_json (lua_State *L);
void m6_luau_tree_register (lua_State *L);
void m6_luau_sample_register (lua_State *L, int module);

/* The reading every mark and done takes: every byte the state's allocator
 * holds for Luau (objects, strings, stacks, the state itself), exact. */
static inline gint64
m6_luau_heap (lua_State *L)
{
  return (gint64) lua_totalbytes (L, -1);
}
