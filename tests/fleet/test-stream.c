/* SPDX-License-Identifier: MIT */
/* test-stream.c — `mach6 stream` on a real demo game: lines of the ndjson
 * schema while the game runs, one per interval, the end when the game
 * ends; a reader that goes away (SIGPIPE) and Ctrl-C end it cleanly and
 * leave the game free for the next one. */
#include "fleet-test-util.h"

static char *
link_game (char      **dir,
           const char *tag)
{
  g_autoptr (GError) error = NULL;

  *dir = g_dir_make_tmp ("mach6-stream-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *name = g_strdup_printf ("%s%d", tag, (int) getpid () % 100000);
  return game_link (*dir, name);
}

static Proc *
stream_start (const char *target,
              const char *interval)
{
  const char *argv[] = { MACH6_CLI, "stream", target, "--interval", interval, NULL };
  return proc_start (argv, TRUE);
}

/* The frames of the thread's top-level "frame" scope in a line. */
static gint64
check_line (JsonObject *line,
            double      interval)
{
  gint64 window = json_object_get_int_member (line, "window");
  double t_start = json_object_get_double_member (line, "t_start");
  double t_end = json_object_get_double_member (line, "t_end");
  JsonArray *threads = json_object_get_array_member (line, "threads");
  gint64 frames = 0;

  g_assert_cmpfloat_with_epsilon (t_start, window * interval, 1e-9);
  g_assert_cmpfloat_with_epsilon (t_end, (window + 1) * interval, 1e-9);
  g_assert_cmpuint (json_array_get_length (threads), >=, 1);
  for (guint i = 0; i < json_array_get_length (threads); i++)
    {
      JsonObject *thread = json_array_get_object_element (threads, i);
      JsonObject *payload = json_object_get_object_member (thread, "payload");

      g_assert_true (json_object_has_member (thread, "index"));
      g_assert_true (json_object_has_member (thread, "tid"));
      g_assert_cmpstr (json_object_get_string_member (thread, "name"), ==, "main");
      g_assert_cmpstr (json_object_get_string_member (payload, "label"), ==, "root");
      JsonArray *children = json_object_get_array_member (payload, "children");
      JsonObject *frame = json_array_get_object_element (children, 0);
      JsonObject *stats = json_object_get_object_member (frame, "stats");
      g_assert_cmpstr (json_object_get_string_member (frame, "label"), ==, "frame");
      /* The payload's seven original keys are there. */
      const char *keys[] = { "time.avg", "time.p50", "time.p90", "time.max", "mem_delta.avg", "mem.net", "count" };
      for (guint k = 0; k < G_N_ELEMENTS (keys); k++)
        g_assert_true (json_object_has_member (stats, keys[k]));
      frames += json_object_get_int_member (stats, "count");
    }
  return frames;
}

static void
test_live_lines (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *game = link_game (&dir, "stream");
  const char *game_argv[] = { game, "--frames", "240", NULL };
  g_autoptr (Proc) g = proc_start (game_argv, FALSE);
  g_autofree char *pid = g_strdup_printf ("%d", g->pid);
  g_autoptr (Proc) stream = NULL;

  /* Until the game's segment is there. */
  for (int waited = 0; waited < WAIT_MS; waited += 50)
    {
      stream = stream_start (pid, "0.5");
      g_usleep (50000);
      if (!proc_poll_exit (stream) || WEXITSTATUS (stream->status) == 0)
        break;
      g_clear_pointer (&stream, proc_free);
    }
  g_assert_nonnull (stream);

  /* Live: the first line comes while the game still runs. */
  g_autofree char *first = proc_wait_output (stream, "{\"window\":", WAIT_MS);
  g_assert_false (proc_poll_exit (g));

  /* It ends by itself when the game ends. */
  g_assert_true (proc_wait_exit (g, WAIT_MS));
  g_assert_true (proc_wait_exit (stream, WAIT_MS));
  g_assert_true (WIFEXITED (stream->status));
  g_assert_cmpint (WEXITSTATUS (stream->status), ==, 0);

  g_auto (GStrv) lines = g_strsplit (stream->out->str, "\n", -1);
  guint n_lines = g_strv_length (lines) - 1;
  g_assert_cmpstr (lines[n_lines], ==, "");   /* every line ends */
  g_assert_cmpuint (n_lines, >=, 3);

  gint64 previous = -1, first_window = -1, frames = 0;
  for (guint i = 0; i < n_lines; i++)
    {
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_autoptr (GError) error = NULL;

      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      JsonObject *line = json_node_get_object (json_parser_get_root (parser));
      gint64 window = json_object_get_int_member (line, "window");
      g_assert_cmpint (window, >, previous);
      if (first_window < 0)
        first_window = window;
      previous = window;
      frames += check_line (line, 0.5);
    }
  /* One line per interval that had frames: at 60 frames a second each has
   * some, so the windows are (nearly all) consecutive. */
  g_assert_cmpint (n_lines, >=, (previous - first_window + 1) * 3 / 4);
  g_assert_cmpint (frames, <=, 240);
  g_assert_cmpint (frames, >=, 60);
  g_test_message ("%u lines, windows %" G_GINT64_FORMAT "…%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " frames",
                  n_lines, first_window, previous, frames);
  g_unlink (game);
  g_rmdir (dir);
}

/* `mach6 stream … | head -1`, then Ctrl-C on a second stream. */
static void
test_reader_gone_and_interrupt (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *game = link_game (&dir, "piped");
  const char *game_argv[] = { game, NULL };
  g_autoptr (Proc) g = proc_start (game_argv, FALSE);
  g_autofree char *name = g_path_get_basename (game);
  g_autoptr (Proc) stream = NULL;

  for (int waited = 0; waited < WAIT_MS; waited += 50)
    {
      stream = stream_start (name, "0.2");
      g_usleep (50000);
      if (!proc_poll_exit (stream) || WEXITSTATUS (stream->status) == 0)
        break;
      g_clear_pointer (&stream, proc_free);
    }
  g_assert_nonnull (stream);
  g_autofree char *line = proc_wait_output (stream, "{\"window\":", WAIT_MS);
  close (stream->out_fd);
  stream->out_fd = -1;
  g_assert_true (proc_wait_exit (stream, WAIT_MS));
  g_assert_true (WIFEXITED (stream->status));   /* not killed by SIGPIPE */
  g_assert_cmpint (WEXITSTATUS (stream->status), ==, 0);

  /* The game was let go: a second stream attaches, and Ctrl-C ends it. */
  g_autoptr (Proc) second = stream_start (name, "0.2");
  g_autofree char *again = proc_wait_output (second, "{\"window\":", WAIT_MS);
  kill (second->pid, SIGINT);
  g_assert_true (proc_wait_exit (second, WAIT_MS));
  g_assert_true (WIFEXITED (second->status));
  g_assert_cmpint (WEXITSTATUS (second->status), ==, 0);
  g_assert_false (proc_poll_exit (g));

  g_unlink (game);
  g_rmdir (dir);
}

static void
test_arguments (void)
{
  struct { const char *args[6]; int status; const char *needle; } cases[] = {
    { { "stream", NULL }, 2, "PID" },
    { { "stream", "1", "--interval", "0", NULL }, 2, "--interval" },
    { { "stream", "1", "--interval", "soon", NULL }, 2, "soon" },
    { { "stream", "no-such-game-here", NULL }, 1, "no-such-game-here" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *out = NULL, *err = NULL;
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) argv = g_ptr_array_new ();
      int status;

      g_ptr_array_add (argv, (gpointer) MACH6_CLI);
      for (guint k = 0; cases[i].args[k]; k++)
        g_ptr_array_add (argv, (gpointer) cases[i].args[k]);
      g_ptr_array_add (argv, NULL);
      g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDIN_FROM_DEV_NULL, NULL, NULL,
                    &out, &err, &status, &error);
      g_assert_no_error (error);
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, cases[i].status);
      if (strstr (err, cases[i].needle) == NULL)
        g_error ("case %u: stderr “%s” does not name “%s”", i, err, cases[i].needle);
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/fleet/stream/arguments", test_arguments);
  g_test_add_func ("/fleet/stream/live-lines", test_live_lines);
  g_test_add_func ("/fleet/stream/reader-gone-and-interrupt", test_reader_gone_and_interrupt);
  return g_test_run ();
}
