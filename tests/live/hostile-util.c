/* SPDX-License-Identifier: MIT */
/* hostile-util.c — the hand-built segment of hostile-util.h. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hostile-util.h"

static guint64
mono_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * 1000000000u + (guint64) ts.tv_nsec;
}

Mach6ThreadHeader *
seg_thread (Segment *seg,
            guint    i)
{
  return (Mach6ThreadHeader *) (seg->base + seg->c->threads_offset + i * STRIDE);
}

void
seg_add_label (Segment    *seg,
               const char *label)
{
  guint32 len = (guint32) strlen (label);
  guint32 entry = (4 + len + 1 + 3) & ~3u;
  guint8 *p = seg->base + MACH6_CONTROL_SIZE + seg->label_used;

  memcpy (p, &len, 4);
  memcpy (p + 4, label, len);
  memset (p + 4 + len, 0, entry - 4 - len);
  seg->label_used += entry;
  seg->c->label_used = seg->label_used;
  seg->c->label_count++;
}

/* A valid segment for our own pid: labels "frame" and "physics", thread 0
 * live, a monotonic clock. */
void
seg_build (Segment *seg)
{
  seg->shm = g_strdup_printf ("%s%u-%d-00000000000000ee", MACH6_SHM_PREFIX, (unsigned) getuid (), (int) getpid ());
  shm_unlink (seg->shm);
  int fd = shm_open (seg->shm, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, SEG_SIZE), ==, 0);
  seg->size = SEG_SIZE;
  seg->base = mmap (NULL, SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  g_assert_true (seg->base != MAP_FAILED);
  close (fd);

  Mach6Control *c = seg->c = (Mach6Control *) seg->base;
  c->magic = MACH6_MAGIC;
  c->abi_version = MACH6_ABI_VERSION;
  c->control_size = MACH6_CONTROL_SIZE;
  c->segment_size = SEG_SIZE;
  c->pid = getpid ();
  c->state = MACH6_PROCESS_ALIVE;
  strcpy (c->process_name, "hostile");
  c->start_ns = mono_ns ();
  c->clock.kind = MACH6_CLOCK_MONOTONIC;
  c->clock.tick0 = 0;
  c->clock.ns0 = 0;
  c->clock.tick1 = 1;
  c->clock.ns1 = 1;
  c->heap_source = MACH6_HEAP_CALLBACK;
  c->label_offset = MACH6_CONTROL_SIZE;
  c->label_capacity = LABEL_CAP;
  c->threads_offset = MACH6_CONTROL_SIZE + LABEL_CAP;
  c->max_threads = THREADS;
  c->thread_stride = STRIDE;
  c->ring_capacity = RING;
  c->event_size = sizeof (Mach6Event);
  seg->label_used = 0;
  seg_add_label (seg, "frame");
  seg_add_label (seg, "physics");

  Mach6ThreadHeader *h = seg_thread (seg, 0);
  h->tid = (guint64) gettid ();
  h->state = MACH6_THREAD_LIVE;
  strcpy (h->name, "main");
  c->thread_count = 1;
}

void
seg_destroy (Segment *seg)
{
  if (seg->base != NULL)
    munmap (seg->base, seg->size);
  if (seg->shm != NULL)
    shm_unlink (seg->shm);
  g_free (seg->shm);
  memset (seg, 0, sizeof *seg);
}

void
seg_write (Segment *seg,
           guint    i,
           guint32  label,
           guint32  depth,
           gint64   heap)
{
  Mach6ThreadHeader *h = seg_thread (seg, i);
  Mach6Event *ring = (Mach6Event *) (h + 1);
  guint64 wp = h->write_pos;

  ring[wp & (RING - 1)] = (Mach6Event) { mono_ns (), heap, label, depth };
  __atomic_store_n (&h->write_pos, wp + 1, __ATOMIC_RELEASE);
}

void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  seg_build (&f->seg);
}

void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  seg_destroy (&f->seg);
}

M6Reader *
attach_ok (void)
{
  g_autoptr (GError) error = NULL;
  M6Reader *reader = m6_reader_attach (getpid (), &error);

  g_assert_no_error (error);
  return reader;
}
