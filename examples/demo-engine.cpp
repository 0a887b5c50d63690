/* SPDX-License-Identifier: MIT */
// demo-engine.cpp — a C++ game loop instrumented with mach6.h, as an engine
// would do it: RAII scopes (MACH6_SCOPE), a heap callback that is a lambda
// over the engine's own allocator counter, named worker threads.
//
//   demo-engine [--frames N]      (0, the default: until Ctrl-C)
#include "mach6.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> quit{false};
std::atomic<int64_t> live_bytes{0};

// The engine's allocator: every allocation is counted for mach6.
struct Tracked
{
  explicit Tracked (std::size_t n) : data (new char[n]), size (n)
  {
    std::memset (data.get (), 1, n);
    live_bytes += static_cast<int64_t> (n);
  }
  ~Tracked () { live_bytes -= static_cast<int64_t> (size); }
  Tracked (const Tracked &) = delete;
  Tracked &operator= (const Tracked &) = delete;
  std::unique_ptr<char[]> data;
  std::size_t size;
};

class Entity
{
public:
  explicit Entity (std::string name) : name_ (std::move (name)) {}
  void update (int frame)
  {
    mach6_mark (name_.c_str ());   // any string: interned on first use
    scratch_.clear ();
    for (int i = 0; i < 4 + frame % 3; i++)
      scratch_.push_back (std::make_unique<Tracked> (256));
    mach6_done ();
  }
private:
  std::string name_;
  std::vector<std::unique_ptr<Tracked>> scratch_;
};

void physics (std::vector<Entity> &entities, int frame)
{
  MACH6_SCOPE ("physics");
  for (auto &e : entities)
    e.update (frame);
}

void render (int frame)
{
  MACH6_SCOPE ("render");
  Tracked target (4096 + 64 * (frame % 4));
  std::this_thread::sleep_for (std::chrono::microseconds (300));
}

void audio_thread ()
{
  mach6_thread_name ("audio");
  while (!quit)
    {
      MACH6_SCOPE ("mix");
      std::this_thread::sleep_for (std::chrono::milliseconds (5));
    }
}

} // namespace

int main (int argc, char **argv)
{
  long frames = 0;
  for (int i = 1; i < argc; i++)
    if (std::strcmp (argv[i], "--frames") == 0 && i + 1 < argc)
      frames = std::strtol (argv[++i], nullptr, 10);

  std::signal (SIGINT, [] (int) { quit = true; });
  std::signal (SIGTERM, [] (int) { quit = true; });

  // A captureless lambda converts to the C function pointer mach6 wants.
  mach6_set_heap_source ([] (void *) -> int64_t { return live_bytes.load (); }, nullptr);
  mach6_thread_name ("main");

  std::vector<Entity> entities;
  for (const char *name : { "player", "enemy", "projectile" })
    entities.emplace_back (name);
  std::thread audio (audio_thread);

  for (long f = 0; !quit && (frames == 0 || f < frames); f++)
    {
      MACH6_SCOPE ("frame");
      physics (entities, static_cast<int> (f));
      render (static_cast<int> (f));
      std::this_thread::sleep_for (std::chrono::milliseconds (2));
    }

  quit = true;
  audio.join ();
  return 0;
}
