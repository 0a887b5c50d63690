/* SPDX-License-Identifier: MIT */
/* producer-test-util.h — a minimal hand-rolled reader for the producer tests:
 * map a process's mach6 segment, attach by the protocol in mach6.h, drain a
 * thread's ring and check that a recorded stream is balanced.
 */
#pragma once

#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mach6.h"
#include "mach6-abi.h"

typedef struct
{
  Mach6Control *control;
  size_t        size;
} TestSegment;

/* "/mach6-<uid>-<pid>-<hex>": the random part is found in /dev/shm (the
 * legacy "/mach6-<uid>-<pid>" if there is none). */
static inline char *
test_segment_name (pid_t pid)
{
  g_autofree char *prefix = g_strdup_printf ("%s%u-%d-", MACH6_SHM_PREFIX + 1, (unsigned) getuid (), (int) pid);
  g_autoptr (GDir) dir = g_dir_open ("/dev/shm", 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, prefix))
      return g_strconcat ("/", name, NULL);
  return g_strdup_printf ("%s%u-%d", MACH6_SHM_PREFIX, (unsigned) getuid (), (int) pid);
}

static inline char *
test_segment_path (pid_t pid)
{
  g_autofree char *name = test_segment_name (pid);
  return g_strdup_printf ("/dev/shm%s", name);
}

/* Map the segment of @pid read-write (as a reader does to move read_pos). */
static inline gboolean
test_segment_map (pid_t pid, TestSegment *seg)
{
  g_autofree char *name = test_segment_name (pid);
  int fd = shm_open (name, O_RDWR, 0);
  if (fd < 0)
    return FALSE;
  struct stat st;
  if (fstat (fd, &st) != 0 || (size_t) st.st_size < MACH6_CONTROL_SIZE)
    {
      close (fd);
      return FALSE;
    }
  void *p = mmap (NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close (fd);
  if (p == MAP_FAILED)
    return FALSE;
  seg->control = p;
  seg->size = (size_t) st.st_size;
  return TRUE;
}

static inline void
test_segment_unmap (TestSegment *seg)
{
  if (seg->control != NULL)
    munmap (seg->control, seg->size);
  seg->control = NULL;
}

static inline Mach6ThreadHeader *
test_segment_thread (const TestSegment *seg, guint i)
{
  const Mach6Control *c = seg->control;
  return (Mach6ThreadHeader *) ((char *) c + c->threads_offset + (guint64) i * c->thread_stride);
}

static inline Mach6Event *
test_segment_ring (const TestSegment *seg, guint i)
{
  return (Mach6Event *) (test_segment_thread (seg, i) + 1);
}

/* The reader's attach protocol: claim, move every ring's read_pos up to its
 * write_pos, then publish the generation. */
static inline void
test_segment_attach (const TestSegment *seg, guint32 generation)
{
  Mach6Control *c = seg->control;
  int32_t expected = 0;
  g_assert_true (__atomic_compare_exchange_n (&c->attached_pid, &expected, (int32_t) getpid (),
                                              FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  guint32 n = __atomic_load_n (&c->thread_count, __ATOMIC_ACQUIRE);
  for (guint i = 0; i < n && i < c->max_threads; i++)
    {
      Mach6ThreadHeader *h = test_segment_thread (seg, i);
      __atomic_store_n (&h->read_pos, __atomic_load_n (&h->write_pos, __ATOMIC_ACQUIRE),
                        __ATOMIC_RELEASE);
    }
  __atomic_store_n (&c->attach_generation, generation, __ATOMIC_RELEASE);
}

static inline void
test_segment_detach (const TestSegment *seg)
{
  __atomic_store_n (&seg->control->attach_generation, 0, __ATOMIC_RELEASE);
  __atomic_store_n (&seg->control->attached_pid, 0, __ATOMIC_RELEASE);
}

/* Copy out every unread event of thread @i and release them. */
static inline GArray *
test_segment_drain (const TestSegment *seg, guint i)
{
  GArray *events = g_array_new (FALSE, FALSE, sizeof (Mach6Event));
  if (i >= __atomic_load_n (&seg->control->thread_count, __ATOMIC_ACQUIRE))
    return events;
  Mach6ThreadHeader *h = test_segment_thread (seg, i);
  Mach6Event *ring = test_segment_ring (seg, i);
  guint64 mask = seg->control->ring_capacity - 1;
  guint64 rp = h->read_pos;
  guint64 wp = __atomic_load_n (&h->write_pos, __ATOMIC_ACQUIRE);
  for (; rp < wp; rp++)
    g_array_append_val (events, ring[rp & mask]);
  __atomic_store_n (&h->read_pos, wp, __ATOMIC_RELEASE);
  return events;
}

/* The label text for @id (1-based) in the shared table, or NULL. */
static inline char *
test_segment_label (const TestSegment *seg, guint32 id)
{
  const Mach6Control *c = seg->control;
  const char *table = (const char *) c + c->label_offset;
  guint64 off = 0;
  for (guint32 i = 1; i <= c->label_count && off + 4 <= c->label_used; i++)
    {
      guint32 len;
      memcpy (&len, table + off, 4);
      if (i == id)
        return g_strndup (table + off + 4, len);
      off += (4 + len + 1 + 3) & ~3u;
    }
  return NULL;
}

/* NULL if @events is a balanced stream with the right depths, else why not. */
static inline char *
test_stream_check (const GArray *events)
{
  guint32 open = 0;
  for (guint i = 0; i < events->len; i++)
    {
      const Mach6Event *e = &g_array_index (events, Mach6Event, i);
      if (e->label != 0)
        {
          if (e->depth != open)
            return g_strdup_printf ("event %u: mark at depth %u, expected %u", i, e->depth, open);
          open++;
        }
      else
        {
          if (open == 0)
            return g_strdup_printf ("event %u: done with nothing open", i);
          open--;
          if (e->depth != open)
            return g_strdup_printf ("event %u: done at depth %u, expected %u", i, e->depth, open);
        }
      if (i > 0 && e->tick < g_array_index (events, Mach6Event, i - 1).tick)
        return g_strdup_printf ("event %u: tick went backwards", i);
    }
  if (open != 0)
    return g_strdup_printf ("stream ends with %u scopes open", open);
  return NULL;
}

/* Run the calling test's body in a fresh process (fresh library state, its
 * own segment, its own environment) and require that it passes. */
#define TEST_IN_SUBPROCESS()                                                  \
  G_STMT_START {                                                              \
    if (!g_test_subprocess ())                                                \
      {                                                                       \
        g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);   \
        g_test_trap_assert_passed ();                                         \
        return;                                                               \
      }                                                                       \
  } G_STMT_END
