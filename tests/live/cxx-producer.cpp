/* SPDX-License-Identifier: MIT */
// cxx-producer.cpp — a C++17 program that instruments itself with mach6.h
// (built with -Wall -Wextra -pedantic -Werror, so the header stays
// C++-clean) and is recorded by the reader test test-counting.c.
//
// Waits for a viewer, then runs --frames N frames: frame { update { entity
// names from std::string } render }, with a heap callback (a lambda) whose
// readings the program sets itself: every frame grows the heap by 100
// bytes, every entity update by 8.
#include "mach6.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int64_t heap_now = 1000;

struct Entity
{
  std::string name;
  void update ()
  {
    mach6_mark (name.c_str ());
    heap_now += 8;
    mach6_done ();
  }
};

template <typename T>
void each (std::vector<T> &items)
{
  MACH6_SCOPE ("update");
  for (auto &item : items)
    item.update ();
}

} // namespace

int main (int argc, char **argv)
{
  long frames = 10;
  for (int i = 1; i < argc; i++)
    if (std::strcmp (argv[i], "--frames") == 0 && i + 1 < argc)
      frames = std::strtol (argv[++i], nullptr, 10);

  mach6_set_heap_source ([] (void *) -> int64_t { return heap_now; }, nullptr);
  mach6_thread_name ("cxx-main");
  for (int i = 0; i < 3000 && !mach6_attached (); i++)
    std::this_thread::sleep_for (std::chrono::milliseconds (1));

  std::vector<Entity> entities{ { "player" }, { "enemy" } };
  for (long f = 0; f < frames; f++)
    {
      {
        MACH6_SCOPE ("frame");
        heap_now += 100;
        each (entities);
        MACH6_BEGIN ("render");
        MACH6_END ();
      }
      std::this_thread::sleep_for (std::chrono::milliseconds (1));
    }
  return 0;
}
