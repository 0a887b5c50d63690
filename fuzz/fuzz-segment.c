/* SPDX-License-Identifier: MIT */
/* fuzz-segment.c — libFuzzer harness for the segment reader. A real
 * producer (tests/live/reader-producer, path in $M6_FUZZ_PRODUCER)
 * records a few frames on two threads into its segment and exits; that
 * segment, unread, is the template. Each input rewrites the segment from
 * the template, attaches to it (post-mortem) and then alternates byte
 * patches of the segment with drains: the segment changes under the
 * reader between drains, as a buggy or hostile producer would change it.
 * Nothing may crash, hang or overflow; a bad segment is a GError.
 *
 * Input: a sequence of ops. 0: patch — u32 offset (modulo the segment
 * size), u8 length (modulo 17), the bytes; 1: drain — u16 event budget.
 * Kept small on purpose: it knows nothing of the segment's layout, so it
 * follows ABI changes by itself. (Shrinking the segment is not fuzzed.) */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "m6-reader.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

static gint producer_pid;
static guint8 *template;
static gsize template_size;
static guint8 *segment;     /* our writable mapping of the segment */
static char *segment_name;

/* The segment is ours (recreated from the template): leave nothing. */
static void
remove_segment (void)
{
  if (segment_name != NULL)
    shm_unlink (segment_name);
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  const char *producer = g_getenv ("M6_FUZZ_PRODUCER");
  const char *args[] = { producer, "--mode", "stream", "--frames", "30", "--threads", "2",
                         "--wait-attach", "--linger", NULL };
  g_autoptr (GError) error = NULL;
  M6Reader *reader = NULL;
  GPid pid;
  int in_fd;

  if (producer == NULL)
    g_error ("fuzz-segment: set M6_FUZZ_PRODUCER to the built tests/live/reader-producer");
  /* Small rings and few slots: the segment is rewritten for every input. */
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "MACH6_RING_EVENTS", "1024", TRUE);
  env = g_environ_setenv (env, "MACH6_MAX_THREADS", "4", TRUE);
  if (!g_spawn_async_with_pipes (NULL, (char **) args, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                 &pid, &in_fd, NULL, NULL, &error))
    g_error ("fuzz-segment: %s", error->message);
  producer_pid = pid;

  /* Attach once its segment is there; it records, we read nothing. */
  for (int i = 0; i < 500 && reader == NULL; i++)
    {
      g_clear_error (&error);
      if ((reader = m6_reader_attach (producer_pid, &error)) == NULL)
        g_usleep (10000);
    }
  if (reader == NULL)
    g_error ("fuzz-segment: cannot attach to the producer: %s", error->message);
  g_usleep (500000);

  /* Copy it while the producer lingers, then let it end; a producer that
   * ends cleanly removes its segment, so it is put back from the copy. */
  g_autofree char *name = g_strdup (m6_reader_get_shm_name (reader));
  int fd = shm_open (name, O_RDONLY | O_CLOEXEC, 0);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) != 0 || st.st_size <= 0)
    g_error ("fuzz-segment: cannot open %s", name);
  template_size = (gsize) st.st_size;
  void *view = mmap (NULL, template_size, PROT_READ, MAP_SHARED, fd, 0);
  close (fd);
  if (view == MAP_FAILED)
    g_error ("fuzz-segment: cannot map %s", name);
  m6_reader_free (reader);
  template = g_memdup2 (view, template_size);
  munmap (view, template_size);
  close (in_fd);
  waitpid (pid, NULL, 0);

  fd = shm_open (name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  segment_name = g_strdup (name);
  atexit (remove_segment);
  g_printerr ("fuzz-segment: segment %s\n", name);
  if (fd < 0 || ftruncate (fd, (off_t) template_size) != 0)
    g_error ("fuzz-segment: cannot recreate %s", name);
  segment = mmap (NULL, template_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close (fd);
  if (segment == MAP_FAILED)
    g_error ("fuzz-segment: cannot map %s", name);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr (GError) error = NULL;
  M6Reader *reader;

  memcpy (segment, template, template_size);
  reader = m6_reader_attach (producer_pid, &error);
  if (reader == NULL)
    return 0;

  for (size_t i = 0; i < size;)
    {
      guint8 op = data[i++] % 2;

      if (op == 0 && i + 5 <= size)
        {
          guint32 offset;
          memcpy (&offset, data + i, 4);
          gsize length = MIN ((gsize) data[i + 4] % 17, size - (i + 5));
          offset %= (guint32) template_size;
          length = MIN (length, template_size - offset);
          memcpy (segment + offset, data + i + 5, length);
          i += 5 + length;
        }
      else if (op == 1 && i + 2 <= size)
        {
          guint16 budget;
          gsize n = 0;
          g_autoptr (GError) drain_error = NULL;
          memcpy (&budget, data + i, 2);
          i += 2;
          if (!m6_reader_drain (reader, budget, &n, &drain_error) && drain_error == NULL)
            abort ();   /* a failure always says why */
        }
      else
        break;
    }
  gsize n = 0;
  m6_reader_drain (reader, 0, &n, NULL);
  m6_reader_free (reader);
  return 0;
}
