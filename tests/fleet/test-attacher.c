/* SPDX-License-Identifier: MIT */
/* test-attacher.c — M6Attacher on real demo games: by name it takes the
 * game of that name and no other, each through a running M6Recording whose
 * session fills; the recording is found by pid; a game that ends is
 * released (signal, set, lookup); stop lets the others go, so a second
 * recorder can attach. */
#include "fleet-test-util.h"

#include "m6-attacher.h"
#include "m6-reader.h"

typedef struct
{
  guint n_attached;
  guint n_released;
  gint  released_pid;
} Seen;

static void
on_attached (M6Attacher  *attacher,
             M6Recording *recording,
             Seen        *seen)
{
  g_assert_true (m6_recording_get_running (recording));
  seen->n_attached++;
}

static void
on_released (M6Attacher  *attacher,
             M6Recording *recording,
             Seen        *seen)
{
  seen->n_released++;
  seen->released_pid = m6_recording_get_pid (recording);
}

/* Run the main loop until @done holds (bounded). */
static void
spin_until (gboolean   (*done) (gpointer),
            gpointer     data,
            const char  *what)
{
  for (int waited = 0; waited < WAIT_MS; waited += 10)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      if (done (data))
        return;
      g_usleep (10000);
    }
  g_error ("never saw %s", what);
}

typedef struct
{
  M6Attacher *attacher;
  gint        pid;
  Seen       *seen;
} Probe;

static gboolean
has_frames (gpointer data)
{
  Probe *probe = data;
  g_autoptr (M6Recording) recording = m6_attacher_dup_recording (probe->attacher, probe->pid);
  guint64 frames = 0;

  if (recording == NULL)
    return FALSE;
  m6_recording_lock (recording);
  M6Session *session = m6_recording_get_session (recording);
  if (m6_session_get_n_threads (session) > 0)
    frames = m6_thread_get_n_frames (m6_session_get_thread (session, 0));
  m6_recording_unlock (recording);
  return frames >= 10;
}

static gboolean
was_released (gpointer data)
{
  Probe *probe = data;
  return probe->seen->released_pid == probe->pid;
}

static void
test_by_name (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("mach6-attacher-XXXXXX", &error);
  g_autofree char *name = g_strdup_printf ("attach%d", (int) getpid () % 100000);
  g_autofree char *other_name = g_strdup_printf ("other%d", (int) getpid () % 100000);
  g_autofree char *link = game_link (dir, name);
  g_autofree char *other_link = game_link (dir, other_name);
  const char *a_argv[] = { link, NULL };
  const char *b_argv[] = { link, "--frames", "120", NULL };
  const char *o_argv[] = { other_link, NULL };
  g_autoptr (Proc) a = proc_start (a_argv, FALSE);
  g_autoptr (Proc) b = proc_start (b_argv, FALSE);
  g_autoptr (Proc) other = proc_start (o_argv, FALSE);
  const char *names[] = { name, NULL };
  g_autoptr (M6Attacher) attacher = m6_attacher_new (FALSE, names);
  Seen seen = { 0 };

  g_signal_connect (attacher, "attached", G_CALLBACK (on_attached), &seen);
  g_signal_connect (attacher, "released", G_CALLBACK (on_released), &seen);
  m6_attacher_set_scan_interval (attacher, 100);
  m6_attacher_start (attacher);

  Probe pa = { attacher, a->pid, &seen }, pb = { attacher, b->pid, &seen };
  spin_until (has_frames, &pa, "frames of the first game");
  spin_until (has_frames, &pb, "frames of the second game");
  g_assert_null (m6_attacher_dup_recording (attacher, other->pid));

  /* The one with --frames 120 ends: released, the other stays. */
  spin_until (was_released, &pb, "the ended game released");
  g_assert_cmpuint (seen.n_released, ==, 1);
  g_assert_null (m6_attacher_dup_recording (attacher, b->pid));
  g_assert_cmpuint (m6_attacher_get_n_attached (attacher), ==, 1);
  g_assert_cmpuint (seen.n_attached, ==, 2);

  /* Stopped: the game is free for another recorder. */
  m6_attacher_stop (attacher);
  g_assert_cmpuint (m6_attacher_get_n_attached (attacher), ==, 0);
  g_autoptr (M6Reader) reader = m6_reader_attach (a->pid, &error);
  g_assert_no_error (error);
  g_assert_nonnull (reader);

  g_unlink (link);
  g_unlink (other_link);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/fleet/attacher/by-name", test_by_name);
  return g_test_run ();
}
