/* SPDX-License-Identifier: MIT */
/* mach6-env.c — what the producer reads around it: the environment
 * variables that size the segment or pick the heap source, and small files
 * under /proc. A bad value falls back to the default, never to an error.
 */
#include "mach6-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING_EVENTS_DEFAULT  524288u   /* 12 MB: docs/live-pipeline.md, "Rings" */
#define RING_EVENTS_MIN      64u
#define RING_EVENTS_MAX      (1u << 24)
#define MAX_THREADS_DEFAULT  64u
#define MAX_THREADS_MAX      1024u

static uint32_t
env_u32 (const char *name, uint32_t fallback, uint32_t min, uint32_t max)
{
  const char *s = getenv (name);
  if (s == NULL || *s == '\0')
    return fallback;
  char *end;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-')
    return fallback;
  if (v < min)
    return min;
  if (v > max)
    return max;
  return (uint32_t) v;
}

static uint32_t
round_up_pow2 (uint32_t v)
{
  uint32_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

void
mach6__env_segment_config (SegmentConfig *config)
{
  config->ring_capacity = round_up_pow2 (env_u32 ("MACH6_RING_EVENTS", RING_EVENTS_DEFAULT,
                                                  RING_EVENTS_MIN, RING_EVENTS_MAX));
  config->max_threads = env_u32 ("MACH6_MAX_THREADS", MAX_THREADS_DEFAULT, 1, MAX_THREADS_MAX);
}

int
mach6__env_heap_per_thread (void)
{
  const char *heap_mode = getenv ("MACH6_HEAP");
  return heap_mode != NULL && strcmp (heap_mode, "thread") == 0;
}

ssize_t
mach6__read_small_file (const char *path, char *buf, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t len = 0;
  while (len + 1 < size)
    {
      ssize_t n = read (fd, buf + len, size - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  close (fd);
  buf[len] = '\0';
  return (ssize_t) len;
}

/* Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot.
 * With the pid it names one process (a pid is reused, the pair is not). */
uint64_t
mach6__proc_starttime (pid_t pid)
{
  char path[64];
  char buf[2048];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (mach6__read_small_file (path, buf, sizeof buf) <= 0)
    return 0;
  /* The command name may hold spaces and parentheses: skip to the last ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ')
    return 0;
  p += 2;                                  /* field 3, the state */
  for (int field = 3; field < 22 && p != NULL; field++)
    {
      p = strchr (p, ' ');
      if (p != NULL)
        p++;
    }
  return p != NULL ? strtoull (p, NULL, 10) : 0;
}

