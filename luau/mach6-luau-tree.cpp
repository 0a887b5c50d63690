/* SPDX-License-Identifier: MIT */
/* mach6-luau-tree.cpp — the tree as Luau sees it: profiler.root, node
 * proxies and their children (a plain table keyed by label, so pairs, next
 * and generalized iteration walk it), profiler.convert's payload tables,
 * profiler.json, and the sample module. */
#include "mach6-luau-private.h"

#include <cmath>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Nodes
 * ------------------------------------------------------------------------- */

/* The one proxy of @node, so that proxies compare equal. */
static void
push_node (lua_State *L, M6Node *node)
{
  lua_getfield (L, LUA_REGISTRYINDEX, M6L_REG_NODES);
  lua_pushlightuserdata (L, node);
  lua_rawget (L, -2);
  if (lua_isnil (L, -1))
    {
      lua_pop (L, 1);
      M6Node **p = (M6Node **) lua_newuserdata (L, sizeof (M6Node *));
      *p = node;
      luaL_getmetatable (L, M6L_NODE_MT);
      lua_setmetatable (L, -2);
      lua_pushlightuserdata (L, node);
      lua_pushvalue (L, -2);
      lua_rawset (L, -4);
    }
  lua_remove (L, -2);
}

static void
push_label (lua_State *L, M6Tree *tree, const M6Node *node)
{
  M6Labels *labels = m6_tree_get_labels (tree);
  if (node->parent == NULL)
    lua_pushliteral (L, "root");
  else
    lua_pushlstring (L, m6_labels_get (labels, node->label), m6_labels_get_len (labels, node->label));
}

/* node.children: a table label -> node, kept per node and topped up with
 * the children that appeared since it was last handed out. */
static void
push_children (lua_State *L, M6Tree *tree, M6Node *node)
{
  lua_getfield (L, LUA_REGISTRYINDEX, M6L_REG_CHILDREN);
  lua_pushlightuserdata (L, node);
  lua_rawget (L, -2);
  if (lua_isnil (L, -1))
    {
      lua_pop (L, 1);
      lua_createtable (L, 0, (int) node->n_children);
      lua_pushlightuserdata (L, node);
      lua_pushvalue (L, -2);
      lua_rawset (L, -4);
    }
  lua_remove (L, -2);                                   /* children */

  lua_getfield (L, LUA_REGISTRYINDEX, M6L_REG_COUNTS);
  lua_pushvalue (L, -2);
  lua_rawget (L, -2);
  guint have = lua_isnil (L, -1) ? 0 : (guint) lua_tointeger (L, -1);
  lua_pop (L, 1);
  if (have != node->n_children)
    {
      guint i = 0;
      for (M6Node *c = node->first_child; c != NULL; c = c->next_sibling, i++)
        if (i >= have)
          {
            push_label (L, tree, c);
            push_node (L, c);
            lua_rawset (L, -4);
          }
      lua_pushvalue (L, -2);
      lua_pushinteger (L, (int) node->n_children);
      lua_rawset (L, -3);
    }
  lua_pop (L, 1);
}

static int
node_index (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, M6L_NODE_MT);
  M6LuauState *st = m6_luau_state (L);
  const char *key = luaL_checkstring (L, 2);

  if (strcmp (key, "children") == 0)
    push_children (L, st->tree, node);
  else if (strcmp (key, "label") == 0)
    push_label (L, st->tree, node);
  else if (strcmp (key, "parent") == 0 && node->parent != NULL)
    push_node (L, node->parent);
  else if (strcmp (key, "count") == 0)
    lua_pushnumber (L, (double) node->count);
  else
    lua_pushnil (L);
  return 1;
}

static int
node_tostring (lua_State *L)
{
  M6Node *node = *(M6Node **) luaL_checkudata (L, 1, M6L_NODE_MT);
  lua_pushliteral (L, "mach6 node ");
  push_label (L, m6_luau_state (L)->tree, node);
  lua_concat (L, 2);
  return 1;
}

/* profiler.root is a field, as in the original: the table's __index. */
int
m6_luau_profiler_index (lua_State *L)
{
  const char *key = lua_tostring (L, 2);
  if (key != NULL && strcmp (key, "root") == 0)
    {
      M6LuauState *st = (M6LuauState *) lua_tolightuserdata (L, lua_upvalueindex (1));
      push_node (L, m6_tree_get_root (st->tree));
      return 1;
    }
  return 0;
}

/* ---------------------------------------------------------------------------
 * profiler.convert: the payload as tables
 * ------------------------------------------------------------------------- */

typedef struct
{
  const char *key;
  gsize       offset;
  gboolean    is_count;
} StatsKey;

#define DKEY(k, field) { k, G_STRUCT_OFFSET (M6NodeStats, field), FALSE }
#define CKEY(k, field) { k, G_STRUCT_OFFSET (M6NodeStats, field), TRUE }

/* The payload's keys (core/m6-payload.c, the Lua module's list): the
 * original's seven first, then the namespaced extras. */
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
      double v = k->is_count ? (double) *(const guint64 *) field : *(const double *) field;
      lua_pushnumber (L, std::isfinite (v) ? v : 0.0);   /* as the payload writes it */
      lua_setfield (L, -2, k->key);
    }
}

/* Leaves { label, stats } and, above it, its children array. */
static void
payload_enter (lua_State *L, M6Tree *tree, const M6Node *node)
{
  luaL_checkstack (L, 4, "payload too deep");
  lua_createtable (L, 0, 3);
  char *label = m6_payload_label (tree, node);
  lua_pushstring (L, label);
  g_free (label);
  lua_setfield (L, -2, "label");
  push_stats (L, tree, node);
  lua_setfield (L, -2, "stats");
  lua_createtable (L, (int) node->n_children, 0);
}

/* The payload of @top, walked without recursion: each open node keeps its
 * table and its children array on the Luau stack. */
static void
push_payload (lua_State *L, M6Tree *tree, const M6Node *top)
{
  GArray *index = g_array_new (FALSE, FALSE, sizeof (int));   /* next slot per level */
  const M6Node *node = top;
  int one = 1;

  payload_enter (L, tree, node);
  g_array_append_val (index, one);
  for (;;)
    {
      const M6Node *next = NULL;
      if (node->first_child != NULL)
        next = node->first_child;
      else
        for (;;)
          {
            lua_setfield (L, -2, "children");
            g_array_set_size (index, index->len - 1);
            if (node == top)
              {
                g_array_unref (index);
                return;
              }
            int *slot = &g_array_index (index, int, index->len - 1);
            lua_rawseti (L, -2, (*slot)++);
            if (node->next_sibling != NULL)
              {
                next = node->next_sibling;
                break;
              }
            node = node->parent;
          }
      node = next;
      payload_enter (L, tree, node);
      g_array_append_val (index, one);
    }
}

static M6Node *
opt_node (lua_State *L, M6LuauState *st, const char *fn)
{
  if (lua_isnoneornil (L, 1))
    return m6_tree_get_root (st->tree);
  M6Node **p = (M6Node **) lua_touserdata (L, 1);
  if (p == NULL || !lua_getmetatable (L, 1))
    luaL_error (L, "bad argument #1 to '%s' (mach6 node expected, got %s)", fn, luaL_typename (L, 1));
  luaL_getmetatable (L, M6L_NODE_MT);
  gboolean ok = lua_rawequal (L, -1, -2);
  lua_pop (L, 2);
  if (!ok)
    luaL_error (L, "bad argument #1 to '%s' (mach6 node expected, got %s)", fn, luaL_typename (L, 1));
  return *p;
}

int
m6_luau_convert (lua_State *L)
{
  M6LuauState *st = (M6LuauState *) lua_tolightuserdata (L, lua_upvalueindex (1));
  push_payload (L, st->tree, opt_node (L, st, "convert"));
  return 1;
}

/* profiler.json(node [, pretty]): the payload as JSON text. */
int
m6_luau_json (lua_State *L)
{
  M6LuauState *st = (M6LuauState *) lua_tolightuserdata (L, lua_upvalueindex (1));
  M6Node *node = opt_node (L, st, "json");
  char *text = m6_payload_to_string (st->tree, node, lua_toboolean (L, 2));
  lua_pushstring (L, text);
  g_free (text);
  return 1;
}

void
m6_luau_tree_register (lua_State *L)
{
  static const char *const caches[] = { M6L_REG_NODES, M6L_REG_CHILDREN };
  for (guint i = 0; i < G_N_ELEMENTS (caches); i++)
    {
      /* Weak values: a proxy nobody holds goes. */
      lua_newtable (L);
      lua_newtable (L);
      lua_pushliteral (L, "v");
      lua_setfield (L, -2, "__mode");
      lua_setmetatable (L, -2);
      lua_setfield (L, LUA_REGISTRYINDEX, caches[i]);
    }
  /* children table -> how many children it holds; weak keys. */
  lua_newtable (L);
  lua_newtable (L);
  lua_pushliteral (L, "k");
  lua_setfield (L, -2, "__mode");
  lua_setmetatable (L, -2);
  lua_setfield (L, LUA_REGISTRYINDEX, M6L_REG_COUNTS);

  luaL_newmetatable (L, M6L_NODE_MT);
  lua_pushcfunction (L, node_index, "node.__index");
  lua_setfield (L, -2, "__index");
  lua_pushcfunction (L, node_tostring, "node.__tostring");
  lua_setfield (L, -2, "__tostring");
  lua_pushliteral (L, "mach6");
  lua_setfield (L, -2, "__metatable");
  lua_pop (L, 1);
}

/* ---------------------------------------------------------------------------
 * sample: Algorithm R reservoirs and summarize
 * ------------------------------------------------------------------------- */

typedef struct
{
  M6Rng   rng;
  guint64 seen;
  guint   n;
  double  values[M6_RESERVOIR_SLOTS];
} Sample;

static Sample *
check_sample (lua_State *L, int i)
{
  return (Sample *) luaL_checkudata (L, i, M6L_SAMPLE_MT);
}

/* Without a seed, every reservoir draws its own: a process-wide counter
 * mixed with the clock (m6_rng_seed runs it through splitmix64). */
static guint64
fresh_seed (void)
{
  static guint64 counter;
  guint64 n = __atomic_add_fetch (&counter, 1, __ATOMIC_RELAXED);
  return (guint64) m6_clock_monotonic_ns (NULL) ^ (n * G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
}

static int
sample_new (lua_State *L)
{
  guint64 seed = lua_isnoneornil (L, 1) ? fresh_seed () : (guint64) luaL_checknumber (L, 1);
  Sample *r = (Sample *) lua_newuserdata (L, sizeof (Sample));
  memset (r, 0, sizeof *r);
  m6_rng_seed (&r->rng, seed);
  luaL_getmetatable (L, M6L_SAMPLE_MT);
  lua_setmetatable (L, -2);
  return 1;
}

/* Algorithm R as docs/accounting.md: the k-th value goes to slot k-1 while
 * k <= 128, then to a uniform j in [0, k-1] if j < 128. */
static int
sample_add (lua_State *L)
{
  Sample *r = check_sample (L, 1);
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
  Sample *r = check_sample (L, 1);
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
  lua_pushnumber (L, (double) check_sample (L, 1)->seen);
  return 1;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Linear interpolation at the 1-based rank p*(n-1)+1 (numpy "linear"). */
static double
quantile (const double *sorted, size_t n, double p)
{
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
  const struct { const char *k; double v; } fields[] = {
    { "n", (double) n }, { "min", min }, { "max", max }, { "avg", avg },
    { "p10", p10 }, { "p50", p50 }, { "p90", p90 } };
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      lua_pushnumber (L, fields[i].v);
      lua_setfield (L, -2, fields[i].k);
    }
}

/* sample.summarize(values): an array of numbers or a reservoir. */
static int
sample_summarize (lua_State *L)
{
  if (lua_type (L, 1) == LUA_TUSERDATA)
    {
      Sample *r = check_sample (L, 1);
      double v[M6_RESERVOIR_SLOTS];
      memcpy (v, r->values, r->n * sizeof (double));
      push_summary (L, v, r->n);
      return 1;
    }
  luaL_checktype (L, 1, LUA_TTABLE);
  size_t n = (size_t) lua_objlen (L, 1);
  double *v = (double *) lua_newuserdata (L, (n ? n : 1) * sizeof (double));
  for (size_t i = 0; i < n; i++)
    {
      lua_rawgeti (L, 1, (int) i + 1);
      if (lua_type (L, -1) != LUA_TNUMBER)
        luaL_error (L, "bad argument #1 to 'summarize' (value %d is %s, not a number)",
                    (int) i + 1, luaL_typename (L, -1));
      v[i] = lua_tonumber (L, -1);
      lua_pop (L, 1);
    }
  push_summary (L, v, n);
  return 1;
}

void
m6_luau_sample_register (lua_State *L, int module)
{
  static const luaL_Reg methods[] = {
    { "add", sample_add }, { "values", sample_values }, { "count", sample_count },
    { "summarize", sample_summarize }, { NULL, NULL } };
  luaL_newmetatable (L, M6L_SAMPLE_MT);
  lua_newtable (L);
  for (const luaL_Reg *r = methods; r->name != NULL; r++)
    {
      lua_pushcfunction (L, r->func, r->name);
      lua_setfield (L, -2, r->name);
    }
  lua_setfield (L, -2, "__index");
  lua_pop (L, 1);

  static const luaL_Reg fns[] = {
    { "new", sample_new }, { "add", sample_add }, { "values", sample_values },
    { "summarize", sample_summarize }, { NULL, NULL } };
  lua_newtable (L);
  for (const luaL_Reg *r = fns; r->name != NULL; r++)
    {
      lua_pushcfunction (L, r->func, r->name);
      lua_setfield (L, -2, r->name);
    }
  lua_setfield (L, module, "sample");
}
