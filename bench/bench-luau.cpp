/* SPDX-License-Identifier: MIT */
/* bench-luau.cpp — what mach6 costs a Luau game, measured in real Luau: the
 * binding's mark/done pair unattached and with `mach6 record` attached, the
 * Roblox Studio module's pair (with its accounting, amortized, and without),
 * beside an empty Luau call pair and the module's clock and gcinfo() reads
 * in the same run, and the floor of any buffered pair with table stores
 * and with a Luau buffer. One JSON line per figure; thread CPU time, best of 5.
 *
 *   bench-luau [BASELINE.luau]
 *
 * With BASELINE (another version of Mach6.luau, e.g. `git show
 * HEAD~1:luau/roblox/Mach6.luau`), its hot pair is measured too, in
 * alternation with this one's, as module_pair_hot_ns_baseline. */
#include "mach6.h"
#include "mach6-luau.h"

#include "lua.h"
#include "lualib.h"
#include "luacode.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char bench_source[] = R"LUAU(
local Mach6, binding, Base = ...
local mark, done = binding.profiler.mark, binding.profiler.done
local mmark, mdone = Mach6.profiler.mark, Mach6.profiler.done
local function e() end
local b = {}
function b.empty(n) for _ = 1, n do e("x") e() end end
function b.reads(n) for _ = 1, n do local t1 = os.clock() local h1 = gcinfo() local t2 = os.clock() local h2 = gcinfo() end end
function b.binding(n) for _ = 1, n do mark("x") done() end end
function b.module(n) for _ = 1, n do mmark("x") mdone() end local _ = Mach6.profiler.root end
function b.module_hot(n) for _ = 1, n do mmark("x") mdone() end end
function b.module_account(n) local _ = Mach6.profiler.root end
-- The floor of any buffered pair: the calls, the four reads and each
-- event's two stores, nothing checked or looked up.
local fev, fn = table.create(4 * 60000), 0
local function fmark(label) local i = fn fev[i + 1] = os.clock() fev[i + 2] = gcinfo() * 65536 + 1 fn = i + 2 end
local function fdone() local i = fn fev[i + 1] = os.clock() fev[i + 2] = gcinfo() * 65536 fn = i + 2 end
function b.floor(n) fn = 0 for _ = 1, n do fmark("x") fdone() end end
-- The same floor with a Luau buffer for the events (two buffer.writef64 an
-- event, fastcall builtins) instead of table stores: the A/B of the store.
local fbuf, fo, wf64 = buffer.create(32 * 60000), 0, buffer.writef64
local function bmark(label) local i = fo wf64(fbuf, i, os.clock()) wf64(fbuf, i + 8, gcinfo() * 65536 + 1) fo = i + 16 end
local function bdone() local i = fo wf64(fbuf, i, os.clock()) wf64(fbuf, i + 8, gcinfo() * 65536) fo = i + 16 end
function b.floor_buffer(n) fo = 0 for _ = 1, n do bmark("x") bdone() end end
-- The reads apart: two clocks, two heap readings.
function b.clocks(n) for _ = 1, n do local t1 = os.clock() local t2 = os.clock() end end
function b.gcinfos(n) for _ = 1, n do local h1 = gcinfo() local h2 = gcinfo() end end
function b.base_hot(n) local m, d = Base.profiler.mark, Base.profiler.done for _ = 1, n do m("x") d() end end
function b.hot_again(n) for _ = 1, n do mmark("x") mdone() end end
function b.reset(n) local _ = Mach6.profiler.root if Base then local _ = Base.profiler.root end end
return b
)LUAU";

static double
cpu_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static lua_State *L;
static int bench_ref;

/* Best of 5 of b[name](n), per iteration. */
static double
best (const char *name, int n)
{
  double b = 1e300;
  for (int r = 0; r < 5; r++)
    {
      lua_getref (L, bench_ref);
      lua_getfield (L, -1, name);
      lua_pushinteger (L, n);
      double t0 = cpu_ns ();
      if (lua_pcall (L, 1, 0, 0) != 0)
        {
          fprintf (stderr, "bench-luau: %s\n", lua_tostring (L, -1));
          exit (1);
        }
      double dt = cpu_ns () - t0;
      lua_pop (L, 1);
      if (dt < b)
        b = dt;
    }
  return b / n;
}

static void
emit (const char *metric, double value, const char *unit)
{
  printf ("{\"bench\": \"luau\", \"metric\": \"%s\", \"value\": %.4g, \"unit\": \"%s\"}\n", metric, value, unit);
  fflush (stdout);
}

static bool
load (lua_State *S, const char *name, const std::string &source)
{
  size_t size = 0;
  char *bc = luau_compile (source.data (), source.size (), NULL, &size);
  int st = luau_load (S, name, bc, size, 0);
  free (bc);
  return st == 0;
}

/* Load the module file @path and leave what it returns on the stack. */
static void
load_module (const char *path, const char *chunk)
{
  std::string module;
  FILE *f = fopen (path, "rb");
  char buf[65536];
  size_t n;
  while (f != NULL && (n = fread (buf, 1, sizeof buf, f)) > 0)
    module.append (buf, n);
  if (f != NULL)
    fclose (f);
  if (f == NULL || !load (L, chunk, module) || lua_pcall (L, 0, 1, 0) != 0)
    {
      fprintf (stderr, "bench-luau: %s: %s\n", path, f == NULL ? "cannot read" : lua_tostring (L, -1));
      exit (1);
    }
}

int
main (int argc, char **argv)
{
  L = luaL_newstate ();
  luaL_openlibs (L);
  mach6_luau_open (L, 0);
  lua_setglobal (L, "mach6");
  luaL_sandbox (L);

  const char *baseline = argc > 1 ? argv[1] : NULL;
  load_module (ROBLOX_MODULE, "@Mach6");
  lua_getglobal (L, "mach6");
  if (baseline != NULL)
    load_module (baseline, "@Mach6-baseline");
  else
    lua_pushnil (L);
  if (!load (L, "=bench", bench_source))
    return 1;
  lua_insert (L, -4);
  if (lua_pcall (L, 3, 1, 0) != 0)
    {
      fprintf (stderr, "bench-luau: %s\n", lua_tostring (L, -1));
      return 1;
    }
  bench_ref = lua_ref (L, -1);
  lua_pop (L, 1);

  const int N = 1000000;
  double empty = best ("empty", N);
  double reads = best ("reads", N);
  emit ("empty_call_pair_ns", empty, "ns");
  emit ("reads_ns", reads, "ns");
  emit ("clock_reads_ns", best ("clocks", N), "ns");
  emit ("gcinfo_reads_ns", best ("gcinfos", N), "ns");
  double unattached = best ("binding", N);
  emit ("pair_ns_unattached", unattached, "ns");

  /* The module: hot path alone (its buffer holds 60,000 events), the
   * accounting it defers to reads and batches, and the two together. */
  double hot = best ("module_hot", 60000);
  double acc = 1e300;
  for (int r = 0; r < 5; r++)
    {
      best ("module_hot", 12000);   /* 5 x 12,000 pairs waiting */
      lua_getref (L, bench_ref);
      lua_getfield (L, -1, "module_account");
      lua_pushinteger (L, 1);
      double t0 = cpu_ns ();
      lua_pcall (L, 1, 0, 0);
      double dt = (cpu_ns () - t0) / 60000;
      lua_pop (L, 1);
      if (dt < acc)
        acc = dt;
    }
  double together = best ("module", N);
  emit ("module_pair_hot_ns", hot, "ns");
  emit ("module_account_per_pair_ns", acc, "ns");
  emit ("module_pair_ns", together, "ns");
  emit ("module_pair_target_ns", 3 * empty + reads, "ns");
  /* Table stores against buffer writes, alternately, best of each. */
  double floor_table = 1e300, floor_buffer = 1e300;
  for (int r = 0; r < 5; r++)
    {
      double x = best ("floor", 60000), y = best ("floor_buffer", 60000);
      floor_table = x < floor_table ? x : floor_table;
      floor_buffer = y < floor_buffer ? y : floor_buffer;
    }
  emit ("module_pair_floor_ns", floor_table, "ns");
  emit ("module_pair_floor_buffer_ns", floor_buffer, "ns");

  /* A/B: this module's hot pair and the baseline's, alternately, each
   * from an accounted (empty) buffer, 10 rounds, best of each. */
  if (baseline != NULL)
    {
      double a = 1e300, b = 1e300;
      for (int r = 0; r < 10; r++)
        {
          best ("reset", 1);
          double x = best ("hot_again", 15000);
          best ("reset", 1);
          double y = best ("base_hot", 15000);
          a = x < a ? x : a;
          b = y < b ? y : b;
        }
      emit ("module_pair_hot_ns_ab", a, "ns");
      emit ("module_pair_hot_ns_baseline", b, "ns");
    }

  /* Attached: a real `mach6 record` of this process drains the ring. */
  const char *cli = getenv ("MACH6_CLI");
  if (cli != NULL)
    {
      char out[] = "/tmp/bench-luau-XXXXXX";
      int fd = mkstemp (out);
      close (fd);
      std::string capture = std::string (out) + ".mach6";
      char pid[32];
      snprintf (pid, sizeof pid, "%d", (int) getpid ());
      pid_t rec = fork ();
      if (rec == 0)
        {
          freopen ("/dev/null", "w", stdout);
          freopen ("/dev/null", "w", stderr);
          execl (cli, cli, "record", pid, "--duration", "120", "-o", capture.c_str (), (char *) NULL);
          _exit (127);
        }
      for (int i = 0; i < 1000 && !mach6_attached (); i++)
        {
          mach6_mark ("wait");
          mach6_done ();
          usleep (10000);
        }
      if (mach6_attached ())
        emit ("pair_ns_attached", best ("binding", N), "ns");
      kill (rec, SIGINT);
      waitpid (rec, NULL, 0);
      unlink (capture.c_str ());
      unlink (out);
    }
  lua_close (L);
  return 0;
}
