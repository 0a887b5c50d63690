/* SPDX-License-Identifier: MIT */
/* reader-producer.c — a real libmach6 producer for the reader tests.
 *
 * stream: a deterministic stream (known labels, a heap callback whose
 *   readings the program sets itself) on the main thread or on N worker
 *   threads, fed to an in-process M6Tree at the same time; the expected
 *   payload of each thread is written to --expect as {"<thread name>": payload}.
 * spin:   frames with a long sleep inside, until stdin reaches EOF, so an
 *   attach lands mid-frame.
 * flood:  nested scopes as fast as possible, to overfill a small ring.
 * workers: N threads running frames together until stdin closes.
 * churn:  N short-lived threads one after another, a few frames each.
 * refusals: frames with a recursion deeper than the depth limit and
 *   stray done() calls after each frame.
 * labels: one frame per distinct label, more labels than the table holds.
 *
 * Every mode ends on its own after at most MAX_SECONDS, so a crashed test
 * never leaves it behind.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "mach6.h"
#include "m6-json.h"
#include "m6-payload.h"
#include "m6-tree.h"

#define MAX_SECONDS 30

static __thread gint64 heap_now;

static int64_t
read_heap (void *user_data)
{
  return heap_now;
}

static gint64
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static gint64 started_ns;

static gboolean
out_of_time (void)
{
  return now_ns () - started_ns > (gint64) MAX_SECONDS * 1000000000;
}

/* TRUE once stdin is at EOF (the test closed its end of the pipe). */
static gboolean
stdin_closed (int timeout_ms)
{
  struct pollfd p = { .fd = 0, .events = POLLIN };
  char buf[64];

  if (poll (&p, 1, timeout_ms) <= 0)
    return FALSE;
  return read (0, buf, sizeof buf) <= 0;
}

/* --- stream ------------------------------------------------------------- */

typedef struct
{
  guint      index;
  guint      frames;
  char       name[32];
  M6Tree    *tree;
  pthread_t  thread;
} Stream;

/* Both sinks see the same label and the same heap reading. */
static void
stream_mark (Stream *s, const char *label)
{
  mach6_mark (label);
  m6_tree_mark_label (s->tree, label, now_ns (), heap_now);
}

static void
stream_done (Stream *s)
{
  mach6_done ();
  m6_tree_done (s->tree, now_ns (), heap_now, NULL);
}

static void
stream_run (Stream *s)
{
  guint k = s->index;

  heap_now = 1000000 * (gint64) (k + 1);
  for (guint f = 0; f < s->frames; f++)
    {
      heap_now += 100 + k;
      stream_mark (s, "frame");
        heap_now += 64;
        stream_mark (s, "physics");
          heap_now += 256 + (f % 3) * 8;
        stream_done (s);
        heap_now -= 128;
        stream_mark (s, "render");
          for (guint d = 0; d < 2; d++)
            {
              stream_mark (s, "draw");
              heap_now += 16;
              stream_done (s);
            }
          heap_now -= 32;
        stream_done (s);
        stream_mark (s, "ai");
          if (f % 10 == k % 10)
            heap_now += 4096;   /* the leak */
        stream_done (s);
        if (k % 2 == 1)
          {
            stream_mark (s, "audio");
            heap_now += 8;
            stream_done (s);
          }
      heap_now -= 100;
      stream_done (s);
    }
}

static void *
stream_thread (void *data)
{
  Stream *s = data;

  mach6_thread_name (s->name);
  stream_run (s);
  return NULL;
}

static gboolean
write_expected (const char *path,
                Stream     *streams,
                guint       n)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_begin_object (builder);
  for (guint i = 0; i < n; i++)
    {
      json_builder_set_member_name (builder, streams[i].name);
      json_builder_add_value (builder, m6_payload_build (streams[i].tree, m6_tree_get_root (streams[i].tree)));
    }
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  text = m6_json_to_string (root, FALSE);

  /* Atomically: the test waits for the file to appear. */
  return g_file_set_contents (path, text, -1, NULL);
}

static int
run_stream (guint frames, guint threads, const char *expect)
{
  guint n = MAX (threads, 1);
  Stream *streams = g_new0 (Stream, n);

  for (guint i = 0; i < n; i++)
    {
      streams[i].index = i;
      streams[i].frames = frames;
      streams[i].tree = m6_tree_new (NULL);
      g_snprintf (streams[i].name, sizeof streams[i].name, "stream-%u", i);
    }

  if (threads == 0)
    {
      mach6_thread_name (streams[0].name);
      stream_run (&streams[0]);
    }
  else
    {
      for (guint i = 0; i < n; i++)
        pthread_create (&streams[i].thread, NULL, stream_thread, &streams[i]);
      for (guint i = 0; i < n; i++)
        pthread_join (streams[i].thread, NULL);
    }

  if (expect != NULL && !write_expected (expect, streams, n))
    return 1;
  for (guint i = 0; i < n; i++)
    m6_tree_free (streams[i].tree);
  g_free (streams);
  return 0;
}

/* --- spin and flood ----------------------------------------------------- */

static int
run_spin (guint sleep_us)
{
  guint f = 0;

  mach6_thread_name ("spinner");
  while (!out_of_time ())
    {
      heap_now += 10;
      MACH6_BEGIN ("frame");
        MACH6_BEGIN ("physics");
          heap_now += 5;
          g_usleep (sleep_us);
        MACH6_END ();
        MACH6_BEGIN ("render");
          heap_now -= 5;
        MACH6_END ();
      MACH6_END ();
      if (++f % 4 == 0 && stdin_closed (0))
        break;
      g_usleep (500);
    }
  return 0;
}

static void
flood_scope (guint depth, guint f)
{
  static const char *const labels[] = { "a", "b", "c", "d" };

  for (guint i = 0; i < 2; i++)
    {
      mach6_mark (labels[(depth + i) % 4]);
      heap_now += (gint64) ((f + i + depth) % 7) * 16 - 40;
      if (depth < 3)
        flood_scope (depth + 1, f);
      mach6_done ();
    }
}

static int
run_flood (guint frames,
           guint gap_us)
{
  mach6_thread_name ("flood");
  for (guint f = 0; f < frames && !out_of_time (); f++)
    {
      if (f % 64 == 63 && stdin_closed (0))
        break;
      heap_now += 64;
      mach6_mark ("frame");
      flood_scope (0, f);
      heap_now -= 32;
      mach6_done ();
      if (gap_us > 0)
        g_usleep (gap_us);
    }
  return 0;
}

/* --- threads, refusals and labels ------------------------------------- */

static volatile gboolean workers_stop;

static void *
worker_thread (void *data)
{
  char name[32];

  g_snprintf (name, sizeof name, "worker-%u", GPOINTER_TO_UINT (data));
  mach6_thread_name (name);
  while (!workers_stop && !out_of_time ())
    {
      MACH6_BEGIN ("frame");
        MACH6_BEGIN ("work");
        MACH6_END ();
      MACH6_END ();
      g_usleep (1000);
    }
  return NULL;
}

static int
run_workers (guint n)
{
  pthread_t *threads = g_new0 (pthread_t, n);

  for (guint i = 0; i < n; i++)
    pthread_create (&threads[i], NULL, worker_thread, GUINT_TO_POINTER (i));
  while (!stdin_closed (20) && !out_of_time ())
    ;
  workers_stop = TRUE;
  for (guint i = 0; i < n; i++)
    pthread_join (threads[i], NULL);
  g_free (threads);
  return 0;
}

static guint churn_frames;

static void *
churn_thread (void *data)
{
  char name[32];

  g_snprintf (name, sizeof name, "churn-%u", GPOINTER_TO_UINT (data));
  mach6_thread_name (name);
  for (guint f = 0; f < churn_frames; f++)
    {
      MACH6_BEGIN ("frame");
      MACH6_END ();
      g_usleep (500);
    }
  return NULL;
}

/* One after another: a slot is free again once the reader has drained it. */
static int
run_churn (guint n, guint frames)
{
  churn_frames = frames;
  for (guint i = 0; i < n && !out_of_time (); i++)
    {
      pthread_t thread;
      pthread_create (&thread, NULL, churn_thread, GUINT_TO_POINTER (i));
      pthread_join (thread, NULL);
      g_usleep (3000);
    }
  return 0;
}

static void
recurse (guint depth)
{
  if (depth == 0)
    return;
  MACH6_BEGIN ("r");
  recurse (depth - 1);
  MACH6_END ();
}

/* Per frame: a recursion @depth deep under "frame", then two stray dones. */
static int
run_refusals (guint frames, guint depth)
{
  mach6_thread_name ("refusals");
  for (guint f = 0; f < frames && !out_of_time (); f++)
    {
      MACH6_BEGIN ("frame");
      recurse (depth);
      MACH6_END ();
      mach6_done ();
      mach6_done ();
      g_usleep (2000);
    }
  return 0;
}

/* One frame per label "label-<i>", paced so that the ring never fills. */
static int
run_labels (guint n)
{
  mach6_thread_name ("labels");
  for (guint i = 0; i < n && !out_of_time (); i++)
    {
      char label[32];
      g_snprintf (label, sizeof label, "label-%07u", i);
      mach6_mark (label);
      mach6_done ();
      if (i % 256 == 255)
        g_usleep (1000);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  g_autofree char *mode = NULL;
  g_autofree char *expect = NULL;
  g_autofree char *comm = NULL;
  g_autofree char *name = NULL;
  int frames = 60;
  int threads = 0;
  int sleep_us = 20000;
  int depth = 5000;
  gboolean wait_attach = FALSE;
  gboolean linger = FALSE;
  const GOptionEntry entries[] = {
    { "mode", 0, 0, G_OPTION_ARG_STRING, &mode, "stream, spin, flood, workers, churn, refusals or labels", "MODE" },
    { "depth", 0, 0, G_OPTION_ARG_INT, &depth, "refusals: recursion depth", "N" },
    { "comm", 0, 0, G_OPTION_ARG_STRING, &comm, "process name (so that tests running side by side do not find each other by name)", "NAME" },
    { "name", 0, 0, G_OPTION_ARG_STRING, &name, "the name the game gives itself with mach6_process_name() (up to 63 bytes)", "NAME" },
    { "frames", 0, 0, G_OPTION_ARG_INT, &frames, "frames to run", "N" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &threads, "stream: worker threads (0: the main thread)", "N" },
    { "expect", 0, 0, G_OPTION_ARG_FILENAME, &expect, "stream: write the expected payloads here", "FILE" },
    { "sleep-us", 0, 0, G_OPTION_ARG_INT, &sleep_us, "spin: sleep inside each frame; flood: between frames", "US" },
    { "wait-attach", 0, 0, G_OPTION_ARG_NONE, &wait_attach, "wait for a viewer before starting", NULL },
    { "linger", 0, 0, G_OPTION_ARG_NONE, &linger, "when done, wait for stdin to close", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;
  int status;

  started_ns = now_ns ();
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("reader-producer: %s\n", error->message);
      return 2;
    }

  if (comm != NULL)
    prctl (PR_SET_NAME, comm);
  if (name != NULL)
    mach6_process_name (name);

  /* Creates the segment, and makes every heap reading ours. */
  mach6_set_heap_source (read_heap, NULL);

  if (wait_attach)
    {
      while (!mach6_attached ())
        {
          if (out_of_time ())
            return 3;
          g_usleep (1000);
        }
    }

  if (mode == NULL || g_str_equal (mode, "stream"))
    status = run_stream ((guint) frames, (guint) threads, expect);
  else if (g_str_equal (mode, "spin"))
    status = run_spin ((guint) sleep_us);
  else if (g_str_equal (mode, "flood"))
    status = run_flood ((guint) frames, (guint) sleep_us);
  else if (g_str_equal (mode, "workers"))
    status = run_workers ((guint) threads);
  else if (g_str_equal (mode, "churn"))
    status = run_churn ((guint) threads, (guint) frames);
  else if (g_str_equal (mode, "refusals"))
    status = run_refusals ((guint) frames, (guint) depth);
  else if (g_str_equal (mode, "labels"))
    status = run_labels ((guint) frames);
  else
    {
      g_printerr ("reader-producer: unknown mode %s\n", mode);
      return 2;
    }

  if (linger)
    while (!stdin_closed (100) && !out_of_time ())
      ;
  return status;
}
