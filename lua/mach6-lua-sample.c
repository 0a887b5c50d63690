/* SPDX-License-Identifier: MIT */
/* mach6-lua-sample.c — the sample module: values with count, quantiles
 * and a summary, as the original library's. */
#include "mach6-lua-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

/* Without a seed, every reservoir draws its own: a process-wide counter
 * mixed with the clock (m6_rng_seed runs it through splitmix64). */
static guint64
fresh_seed (void)
{
  static guint64 counter;
  guint64 n = __atomic_add_fetch (&counter, 1, __ATOMIC_RELAXED);
  return (guint64) m6_clock_monotonic_ns (NULL) ^ (n * G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
}

int
m6_lua_sample_new (lua_State *L)
{
  guint64 seed = lua_isnoneornil (L, 1) ? fresh_seed () : (guint64) luaL_checkinteger (L, 1);
  Sample *r = lua_newuserdata (L, sizeof (Sample));
  memset (r, 0, sizeof *r);
  m6_rng_seed (&r->rng, seed);
  luaL_getmetatable (L, SAMPLE_MT);
  lua_setmetatable (L, -2);
  return 1;
}

/* Algorithm R as docs/accounting.md#reservoirs and m6_reservoir_add(): the k-th value goes to
 * slot k-1 while k <= 128, then to a uniform j in [0, k-1] if j < 128. */
int
m6_lua_sample_add (lua_State *L)
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

int
m6_lua_sample_values (lua_State *L)
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

int
m6_lua_sample_count (lua_State *L)
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
int
m6_lua_sample_summarize (lua_State *L)
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

int
m6_lua_heap (lua_State *L)
{
  lua_pushnumber (L, (lua_Number) m6_lua_heap_count (L));
  return 1;
}
