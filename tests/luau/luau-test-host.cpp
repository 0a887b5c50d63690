/* SPDX-License-Identifier: MIT */
/* luau-test-host.cpp — the test host for the Luau binding and the Roblox
 * Studio module: real Luau, the binding when asked for (--binding), and the
 * Roblox services the module needs from roblox-standin.luau, whose HTTP
 * requests this host makes for real on threads of its own.
 *
 *   luau-test-host [--binding] [--collect] [--frames N] [--fps F] SCRIPT.luau [ARGS...]
 *
 * The script runs first (in a thread, sandboxed, as Roblox runs scripts),
 * then N frames of RunService.Heartbeat at F frames a second (0: flat out),
 * with a full collection before each with --collect.
 * require(game.ServerScriptService.Mach6) loads luau/roblox/Mach6.luau;
 * require("mach6") is the binding; require("name") a file beside the
 * script. Exits 1 if the script or a thread it started failed. */
#include "mach6-luau.h"

#include "lua.h"
#include "lualib.h"
#include "luacode.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <netdb.h>
#include <random>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <time.h>
#include <unistd.h>

static std::string script_dir;
static bool failed;
static bool use_binding;
static bool collect;
static bool stop_asked;

/* stopHost(): the test host's own (Roblox has none): no frames after this one. */
static int
l_stop_host (lua_State *)
{
  stop_asked = true;
  return 0;
}

static bool
read_file (const std::string &path, std::string &out)
{
  FILE *f = fopen (path.c_str (), "rb");
  if (f == NULL)
    return false;
  char buf[65536];
  size_t n;
  while ((n = fread (buf, 1, sizeof buf, f)) > 0)
    out.append (buf, n);
  fclose (f);
  return true;
}

static bool
load_file (lua_State *L, const std::string &path)
{
  std::string source;
  if (!read_file (path, source))
    {
      lua_pushfstring (L, "cannot read %s", path.c_str ());
      return false;
    }
  size_t size = 0;
  char *bytecode = luau_compile (source.data (), source.size (), NULL, &size);
  int status = luau_load (L, ("@" + path).c_str (), bytecode, size, 0);
  free (bytecode);
  return status == 0;
}

static void
sleep_s (double s)
{
  if (s <= 0)
    return;
  struct timespec ts = { (time_t) s, (long) ((s - (double) (time_t) s) * 1e9) };
  nanosleep (&ts, NULL);
}

/* --- HTTP, one request per thread ---------------------------------------- */

struct Request
{
  std::atomic<bool> done { false };
  bool ok = false;
  int status = 0;
  std::string message, body;
};
static std::mutex requests_lock;
static std::map<int, std::shared_ptr<Request>> requests;
static int next_request;

static void
http_run (std::shared_ptr<Request> r, std::string method, std::string url,
          std::string headers, std::string body)
{
  std::string hostport, path = "/";
  if (url.compare (0, 7, "http://") != 0)
    {
      r->message = "InvalidUrl";
      r->done = true;
      return;
    }
  size_t slash = url.find ('/', 7);
  hostport = url.substr (7, slash == std::string::npos ? std::string::npos : slash - 7);
  if (slash != std::string::npos)
    path = url.substr (slash);
  size_t colon = hostport.rfind (':');
  std::string host = hostport.substr (0, colon), port = colon == std::string::npos ? "80" : hostport.substr (colon + 1);

  struct addrinfo hints = {}, *ai = NULL;
  hints.ai_socktype = SOCK_STREAM;
  int fd = -1;
  if (getaddrinfo (host.c_str (), port.c_str (), &hints, &ai) == 0)
    {
      for (struct addrinfo *a = ai; a != NULL && fd < 0; a = a->ai_next)
        {
          fd = socket (a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
          if (fd >= 0 && connect (fd, a->ai_addr, a->ai_addrlen) != 0)
            {
              close (fd);
              fd = -1;
            }
        }
      freeaddrinfo (ai);
    }
  if (fd < 0)
    {
      r->message = "ConnectFail";
      r->done = true;
      return;
    }
  struct timeval tv = { 10, 0 };
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + hostport + "\r\nConnection: close\r\n"
                    + headers + "Content-Length: " + std::to_string (body.size ()) + "\r\n\r\n" + body;
  size_t off = 0;
  while (off < req.size ())
    {
      ssize_t n = send (fd, req.data () + off, req.size () - off, MSG_NOSIGNAL);
      if (n <= 0)
        break;
      off += (size_t) n;
    }
  std::string resp;
  char buf[16384];
  ssize_t n;
  while ((n = recv (fd, buf, sizeof buf, 0)) > 0)
    resp.append (buf, (size_t) n);
  close (fd);

  int status = 0;
  char text[64] = "";
  size_t end = resp.find ("\r\n\r\n");
  if (end == std::string::npos || sscanf (resp.c_str (), "HTTP/1.%*d %d %63[^\r]", &status, text) < 1)
    {
      r->message = off < req.size () ? "ConnectionReset" : "InvalidResponse";
      r->done = true;
      return;
    }
  r->ok = true;
  r->status = status;
  r->message = text;
  r->body = resp.substr (end + 4);
  r->done = true;
}

static int
l_http_begin (lua_State *L)
{
  std::string method = luaL_checkstring (L, 1), url = luaL_checkstring (L, 2), headers;
  luaL_checktype (L, 3, LUA_TTABLE);
  lua_pushnil (L);
  while (lua_next (L, 3))
    {
      headers += std::string (lua_tostring (L, -2)) + ": " + lua_tostring (L, -1) + "\r\n";
      lua_pop (L, 1);
    }
  size_t len;
  const char *b = luaL_checklstring (L, 4, &len);
  auto r = std::make_shared<Request> ();
  int id;
  {
    std::lock_guard<std::mutex> g (requests_lock);
    id = ++next_request;
    requests[id] = r;
  }
  std::thread (http_run, r, method, url, headers, std::string (b, len)).detach ();
  lua_pushinteger (L, id);
  return 1;
}

static std::shared_ptr<Request>
find_request (int id)
{
  std::lock_guard<std::mutex> g (requests_lock);
  auto it = requests.find (id);
  return it == requests.end () ? nullptr : it->second;
}

static int
l_http_done (lua_State *L)
{
  auto r = find_request (luaL_checkinteger (L, 1));
  lua_pushboolean (L, r == nullptr || r->done);
  return 1;
}

static int
l_http_wait (lua_State *L)
{
  int id = luaL_checkinteger (L, 1);
  auto r = find_request (id);
  if (r == nullptr)
    luaL_error (L, "no request %d", id);
  while (!r->done)
    sleep_s (0.001);
  {
    std::lock_guard<std::mutex> g (requests_lock);
    requests.erase (id);
  }
  lua_pushboolean (L, r->ok);
  if (r->ok)
    lua_pushinteger (L, r->status);
  else
    lua_pushstring (L, r->message.c_str ());
  lua_pushstring (L, r->message.c_str ());
  lua_pushlstring (L, r->body.data (), r->body.size ());
  return 4;
}

/* --- the rest of the host ----------------------------------------------- */

static int
l_host_error (lua_State *L)
{
  fprintf (stderr, "luau-test-host: %s\n", luaL_checkstring (L, 1));
  failed = true;
  return 0;
}

static int
l_host_warn (lua_State *L)
{
  fprintf (stderr, "warn: %s\n", luaL_checkstring (L, 1));
  return 0;
}

static int
l_sleep (lua_State *L)
{
  sleep_s (luaL_checknumber (L, 1));
  return 0;
}

static int
l_guid (lua_State *L)
{
  static std::mt19937_64 rng (std::random_device {} ());
  unsigned long long a = rng (), b = rng ();
  char s[40];
  snprintf (s, sizeof s, "%08llX-%04llX-%04llX-%04llX-%012llX", a >> 32, (a >> 16) & 0xffff,
            a & 0xffff, b >> 48, b & 0xffffffffffffULL);
  lua_pushstring (L, s);
  return 1;
}

static int
l_require (lua_State *L)
{
  std::string path;
  if (lua_type (L, 1) == LUA_TSTRING && strcmp (lua_tostring (L, 1), "mach6") == 0 && use_binding)
    return mach6_luau_open (L, 0);
  if (lua_type (L, 1) == LUA_TTABLE)
    {
      lua_getfield (L, 1, "Name");
      const char *name = lua_tostring (L, -1);
      if (name == NULL || strcmp (name, "Mach6") != 0)
        luaL_error (L, "no ModuleScript %s in the test host", name ? name : "?");
      path = ROBLOX_MODULE;
    }
  else
    path = script_dir + "/" + luaL_checkstring (L, 1) + ".luau";

  lua_getfield (L, LUA_REGISTRYINDEX, "host.modules");
  lua_getfield (L, -1, path.c_str ());
  if (!lua_isnil (L, -1))
    return 1;
  lua_pop (L, 1);
  if (!load_file (L, path))
    lua_error (L);
  lua_call (L, 0, 1);
  lua_pushvalue (L, -1);
  lua_setfield (L, -3, path.c_str ());
  return 1;
}

int
main (int argc, char **argv)
{
  int frames = 0;
  double fps = 60;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++)
    {
      if (strcmp (argv[i], "--binding") == 0)
        use_binding = true;
      else if (strcmp (argv[i], "--collect") == 0)
        collect = true;
      else if (strcmp (argv[i], "--frames") == 0 && i + 1 < argc)
        frames = atoi (argv[++i]);
      else if (strcmp (argv[i], "--fps") == 0 && i + 1 < argc)
        fps = atof (argv[++i]);
      else
        {
          fprintf (stderr, "usage: luau-test-host [--binding] [--frames N] [--fps F] SCRIPT [ARGS]\n");
          return 2;
        }
    }
  if (i >= argc)
    {
      fprintf (stderr, "luau-test-host: no script\n");
      return 2;
    }
  std::string path = argv[i];
  size_t slash = path.rfind ('/');
  script_dir = slash == std::string::npos ? "." : path.substr (0, slash);

  lua_State *L = luaL_newstate ();
  luaL_openlibs (L);
  if (use_binding)
    {
      mach6_luau_open (L, 0);
      lua_setglobal (L, "mach6");
    }
  lua_newtable (L);
  lua_setfield (L, LUA_REGISTRYINDEX, "host.modules");
  lua_pushcfunction (L, l_require, "require");
  lua_setglobal (L, "require");
  lua_pushcfunction (L, l_sleep, "sleep");
  lua_setglobal (L, "sleep");
  lua_pushcfunction (L, l_stop_host, "stopHost");
  lua_setglobal (L, "stopHost");
  lua_createtable (L, argc - i - 1, 0);
  for (int k = i + 1; k < argc; k++)
    {
      lua_pushstring (L, argv[k]);
      lua_rawseti (L, -2, k - i);
    }
  lua_setglobal (L, "arg");

  /* The stand-in, with the host's primitives; it returns step, finish. */
  if (!load_file (L, STANDIN))
    {
      fprintf (stderr, "luau-test-host: %s\n", lua_tostring (L, -1));
      return 1;
    }
  static const luaL_Reg host_fns[] = {
    { "error", l_host_error }, { "warn", l_host_warn }, { "sleep", l_sleep }, { "guid", l_guid },
    { "http_begin", l_http_begin }, { "http_done", l_http_done }, { "http_wait", l_http_wait },
    { NULL, NULL } };
  lua_newtable (L);
  for (const luaL_Reg *r = host_fns; r->name; r++)
    {
      lua_pushcfunction (L, r->func, r->name);
      lua_setfield (L, -2, r->name);
    }
  if (lua_pcall (L, 1, 2, 0) != 0)
    {
      fprintf (stderr, "luau-test-host: %s\n", lua_tostring (L, -1));
      return 1;
    }
  int finish_ref = lua_ref (L, -1);
  int step_ref = lua_ref (L, -2);
  lua_pop (L, 2);

  luaL_sandbox (L);
  lua_State *T = lua_newthread (L);
  luaL_sandboxthread (T);
  if (!load_file (T, path))
    {
      fprintf (stderr, "luau-test-host: %s\n", lua_tostring (T, -1));
      return 1;
    }
  int status = lua_resume (T, NULL, 0);
  if (status != LUA_OK && status != LUA_YIELD)
    {
      fprintf (stderr, "luau-test-host: %s\n", lua_tostring (T, -1));
      failed = true;
    }

  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (int f = 0; f < frames && !failed && !stop_asked; f++)
    {
      if (collect)
        lua_gc (L, LUA_GCCOLLECT, 0);   /* Luau scripts cannot ask for one */
      lua_getref (L, step_ref);
      lua_pushboolean (L, 1);
      if (lua_pcall (L, 1, 0, 0) != 0)
        {
          fprintf (stderr, "luau-test-host: %s\n", lua_tostring (L, -1));
          failed = true;
        }
      if (fps > 0)
        {
          /* Frames on a fixed schedule, as a game's loop keeps them. */
          struct timespec now;
          clock_gettime (CLOCK_MONOTONIC, &now);
          double due = (f + 1) / fps;
          double at = (double) (now.tv_sec - start.tv_sec) + (double) (now.tv_nsec - start.tv_nsec) * 1e-9;
          sleep_s (due - at);
        }
    }
  lua_getref (L, finish_ref);
  if (lua_pcall (L, 0, 0, 0) != 0)
    {
      fprintf (stderr, "luau-test-host: %s\n", lua_tostring (L, -1));
      failed = true;
    }
  lua_close (L);
  return failed ? 1 : 0;
}
