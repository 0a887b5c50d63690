/* SPDX-License-Identifier: MIT */
/* mach6-lua-tree.c — profiler.mark/done and the tree as Lua sees it: node
 * proxies, children, stats, the payload table (profiler.convert) and JSON. */
#include "mach6-lua-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

/* Scopes are kept per coroutine (a Stack per Lua thread): a yield closes
 * the yielding coroutine's scopes in the tree and the next resume reopens
 * them, so coroutines never nest in each other's scopes. */
int
m6_lua_mark (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  size_t len;
  const char *label = m6_lua_check_label (L, 1, &len);
  guint32 tree_label, ring_label;

  m6_lua_label_ids (st, label, len, &tree_label, &ring_label);
  /* Heap before clock: the reading's own cost stays out of the scope. */
  gint64 h = m6_lua_heap_bytes (st, L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  Stack *s = m6_lua_thread_current (st, L, t, h);
  Entry e = { NULL, tree_label, ring_label, ENTRY_MANUAL, 0 };
#if LUA_VERSION_NUM < 502
  if (st->auto_on)
    e.level = m6_lua_caller_slot (L);   /* the function that called mark owns it */
#endif
  m6_lua_stack_push (s, &e);
  m6_lua_scope_open (st, tree_label, ring_label, t, h, 0);
  return 0;
}

/* Close the innermost manual scope of this coroutine, or else of the
 * nearest one that resumed it. Whatever was opened inside that scope
 * (function scopes, a resumed coroutine's scopes) closes with it and
 * reopens at once one level up, so the frame-spanning pattern (done; mark)
 * keeps the stream balanced. */
int
m6_lua_done (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  gint64 h = m6_lua_heap_bytes (st, L);
  gint64 t = m6_clock_monotonic_ns (NULL);
  Stack *s = m6_lua_thread_current (st, L, t, h);

  /* The common case: this thread's innermost entry is the manual scope. */
  if (G_LIKELY (s->n_entries > 0 && (s->entries[s->n_entries - 1].flags & ENTRY_MANUAL)))
    {
      s->n_roots--;
      m6_lua_scope_close (st, t, h, s->entries[--s->n_entries].flags);
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
      st->unbalanced++;   /* nothing open: ignored and counted (docs/accounting.md#unbalanced-dones) */
      return 0;
    }
  i--;

  Stack *c = g_ptr_array_index (st->chain, ci);
  for (guint k = st->chain->len; k-- > ci + 1;)
    m6_lua_stack_close_all (st, g_ptr_array_index (st->chain, k), t, h);
  for (guint j = c->n_entries; j-- > i;)
    if (!(c->entries[j].flags & ENTRY_SILENT))
      m6_lua_scope_close (st, t, h, c->entries[j].flags);
  m6_lua_stack_remove (c, i);
  m6_lua_stack_reopen (st, c, i, t, h);
  for (guint k = ci + 1; k < st->chain->len; k++)
    m6_lua_stack_reopen (st, g_ptr_array_index (st->chain, k), 0, t, h);
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

int
m6_lua_node_index (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, NODE_MT);
  State *st = m6_lua_state_get (L);
  const char *key = luaL_checkstring (L, 2);

  if (strcmp (key, "children") == 0)
    push_proxy (L, node, m6_lua_key (M6_LUA_KEY_CHILDREN), CHILDREN_MT);
  else if (strcmp (key, "label") == 0)
    push_label (L, st, node);
  else if (strcmp (key, "parent") == 0 && node->parent != NULL)
    push_proxy (L, node->parent, m6_lua_key (M6_LUA_KEY_NODES), NODE_MT);
  else if (strcmp (key, "count") == 0)
    lua_pushinteger (L, (lua_Integer) node->count);
  else
    lua_pushnil (L);
  return 1;
}

int
m6_lua_node_tostring (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, NODE_MT);
  lua_pushliteral (L, "mach6 node ");
  push_label (L, m6_lua_state_get (L), node);
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

/* The @i-th child (1-based) in first-seen order, as in convert()'s array. */
static M6Node *
child_by_index (M6Node *node, lua_Number i)
{
  if (i < 1 || i > node->n_children || i != (lua_Number) (guint) i)
    return NULL;
  M6Node *c = node->first_child;
  for (guint k = 1; c != NULL && k < (guint) i; k++)
    c = c->next_sibling;
  return c;
}

/* children[label] is the child so labelled; children[i] the i-th one, so
 * ipairs walks them in first-seen order (a label is always a string). */
int
m6_lua_children_index (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, CHILDREN_MT);
  size_t len;
  M6Node *c = NULL;
  if (lua_type (L, 2) == LUA_TSTRING)
    {
      const char *s = lua_tolstring (L, 2, &len);
      c = child_by_label (m6_lua_state_get (L), node, s, len);
    }
  else if (lua_type (L, 2) == LUA_TNUMBER)
    c = child_by_index (node, lua_tonumber (L, 2));

  if (c != NULL)
    push_proxy (L, c, m6_lua_key (M6_LUA_KEY_NODES), NODE_MT);
  else
    lua_pushnil (L);
  return 1;
}

int
m6_lua_children_len (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, CHILDREN_MT);
  lua_pushinteger (L, node->n_children);
  return 1;
}

/* next() over children in first-seen order: the key is the label. */
int
m6_lua_children_next (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, CHILDREN_MT);
  State *st = m6_lua_state_get (L);
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
  push_proxy (L, c, m6_lua_key (M6_LUA_KEY_NODES), NODE_MT);
  return 2;
}

int
m6_lua_children_pairs (lua_State *L)
{
  luaL_checkudata (L, 1, CHILDREN_MT);
  lua_pushcfunction (L, m6_lua_children_next);
  lua_pushvalue (L, 1);
  lua_pushnil (L);
  return 3;
}

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

int
m6_lua_convert (lua_State *L)
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
int
m6_lua_json (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  M6Node *node = m6_tree_get_root (st->tree);
  if (!lua_isnoneornil (L, 1))
    node = *(M6Node **) luaL_checkudata (L, 1, NODE_MT);
  g_autofree char *text = m6_payload_to_string (st->tree, node, lua_toboolean (L, 2));
  lua_pushstring (L, text);
  return 1;
}

int
m6_lua_unbalanced (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  lua_pushinteger (L, (lua_Integer) (m6_tree_get_unbalanced (st->tree) + st->unbalanced));
  return 1;
}

int
m6_lua_depth (lua_State *L)
{
  State *st = lua_touserdata (L, lua_upvalueindex (1));
  lua_pushinteger (L, m6_tree_get_depth (st->tree));
  return 1;
}

/* profiler.root is a field, as in the original: the table's __index. */
int
m6_lua_profiler_index (lua_State *L)
{
  const char *key = lua_tostring (L, 2);
  if (key != NULL && strcmp (key, "root") == 0)
    {
      State *st = lua_touserdata (L, lua_upvalueindex (1));
      push_proxy (L, m6_tree_get_root (st->tree), m6_lua_key (M6_LUA_KEY_NODES), NODE_MT);
      return 1;
    }
  return 0;
}

/* ipairs() over children on LuaJIT (Lua 5.4's ipairs reads __index). */
int
m6_lua_children_inext (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, CHILDREN_MT);
  lua_Number i = luaL_checknumber (L, 2) + 1;
  M6Node *c = child_by_index (node, i);
  if (c == NULL)
    return 0;
  lua_pushnumber (L, i);
  push_proxy (L, c, m6_lua_key (M6_LUA_KEY_NODES), NODE_MT);
  return 2;
}

/* Is argument 1 a children proxy? For the LuaJIT wrappers of pairs,
 * ipairs and next (mach6-lua.c). */
int
m6_lua_is_children (lua_State *L)
{
  lua_pushboolean (L, luaL_testudata (L, 1, CHILDREN_MT) != NULL);
  return 1;
}
