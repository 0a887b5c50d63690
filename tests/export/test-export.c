/* SPDX-License-Identifier: MIT */
/* test-export.c — every export format, read back by a parser; atomic
 * writes that leave nothing behind when they fail. */
#include <glib.h>
#include <math.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "m6-capture.h"
#include "m6-export.h"
#include "m6-json.h"
#include "m6-payload.h"
#include "m6-session-private.h"

typedef struct
{
  M6Session  *session;
  M6EventLog *log;
  char       *dir;
} Fixture;

/* Two threads: main runs frame { physics { solve } render } with a leak;
 * worker runs job { decode } — 16 ms frames over ~3.2 s. */
static void
fixture_set_up (Fixture       *fx,
                gconstpointer  data)
{
  fx->session = m6_session_new ();
  fx->log = m6_event_log_new ();
  fx->dir = g_dir_make_tmp ("mach6-export-XXXXXX", NULL);
  m6_session_set_process (fx->session, 4242, "export-test");
  m6_session_set_heap_source (fx->session, M6_HEAP_SOURCE_HOOKS);
  m6_session_set_recorder (fx->session, m6_event_log_record, fx->log);

  guint32 frame = m6_session_intern_label (fx->session, "frame", -1);
  guint32 physics = m6_session_intern_label (fx->session, "physics", -1);
  guint32 solve = m6_session_intern_label (fx->session, "solve;step", -1);
  guint32 render = m6_session_intern_label (fx->session, "render, \"quoted\"", -1);
  guint32 job = m6_session_intern_label (fx->session, "job", -1);
  guint32 decode = m6_session_intern_label (fx->session, "decode", -1);
  M6Thread *main_thread = m6_session_add_thread (fx->session, 100, "main");
  M6Thread *worker = m6_session_add_thread (fx->session, 101, "worker-1");

  for (guint f = 0; f < 200; f++)
    {
      gint64 t = (gint64) f * 16000000;
      gint64 h = 1 << 20;
      h += (gint64) f * 1024;
      M6Event events[] = {
        { t, h, frame, 0 },
        { t + 100000, h, physics, 1 },
        { t + 200000, h + 64, solve, 2 },
        { t + 900000, h + 64, M6_EVENT_DONE, 2 },
        { t + 1500000 + f * 1000, h + 128, M6_EVENT_DONE, 1 },
        { t + 2000000, h + 128, render, 1 },
        { t + 6000000, h + 1024, M6_EVENT_DONE, 1 },
        { t + 8000000, h + 1024, M6_EVENT_DONE, 0 },
      };
      m6_session_ingest (fx->session, main_thread, events, G_N_ELEMENTS (events));

      M6Event jobs[] = {
        { t + 500000, h, job, 0 },
        { t + 600000, h, decode, 1 },
        { t + 3000000, h, M6_EVENT_DONE, 1 },
        { t + 3500000, h, M6_EVENT_DONE, 0 },
      };
      m6_session_ingest (fx->session, worker, jobs, G_N_ELEMENTS (jobs));
    }
}

static void
fixture_tear_down (Fixture       *fx,
                   gconstpointer  data)
{
  g_autoptr (GDir) dir = g_dir_open (fx->dir, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_build_filename (fx->dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (fx->dir);
  g_free (fx->dir);
  m6_event_log_free (fx->log);
  g_clear_object (&fx->session);
}

static char *
export (Fixture        *fx,
        M6ExportFormat  format,
        double          interval)
{
  g_autoptr (GError) error = NULL;
  M6ExportOptions options = { interval };
  char *path = g_build_filename (fx->dir, m6_export_format_name (format), NULL);

  if (!m6_export_session (fx->session, fx->log, format, &options, path, &error))
    g_error ("export %s failed: %s", m6_export_format_name (format), error->message);
  return path;
}

static JsonNode *
parse_file (const char *path)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  if (!json_parser_load_from_file (parser, path, &error))
    g_error ("%s does not parse: %s", path, error->message);
  return json_node_copy (json_parser_get_root (parser));
}

static void
test_json (Fixture       *fx,
           gconstpointer  data)
{
  g_autofree char *path = export (fx, M6_EXPORT_JSON, 0);
  g_autoptr (JsonNode) root = parse_file (path);
  JsonObject *obj = json_node_get_object (root);

  g_assert_cmpstr (json_object_get_string_member (obj, "process"), ==, "export-test");
  g_assert_cmpint (json_object_get_int_member (obj, "pid"), ==, 4242);
  g_assert_true (json_object_has_member (obj, "start_time"));
  g_assert_true (json_object_has_member (obj, "duration"));
  g_assert_true (json_object_has_member (obj, "drops"));
  JsonArray *threads = json_object_get_array_member (obj, "threads");
  g_assert_cmpuint (json_array_get_length (threads), ==, 2);
  JsonObject *payload = json_object_get_object_member (json_array_get_object_element (threads, 0), "payload");
  JsonObject *frame = json_array_get_object_element (json_object_get_array_member (payload, "children"), 0);
  g_assert_cmpstr (json_object_get_string_member (frame, "label"), ==, "frame");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (frame, "stats"), "count"), ==, 200);
}

static void
test_ndjson (Fixture       *fx,
             gconstpointer  data)
{
  g_autofree char *path = export (fx, M6_EXPORT_NDJSON, 0.5);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  gint64 frames = 0, jobs = 0;
  guint n_lines = 0;

  for (guint i = 0; lines[i] && lines[i][0]; i++, n_lines++)
    {
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_autoptr (GError) error = NULL;
      if (!json_parser_load_from_data (parser, lines[i], -1, &error))
        g_error ("ndjson line %u does not parse: %s", i, error->message);
      JsonObject *obj = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpint (json_object_get_int_member (obj, "window"), ==, i);
      JsonArray *threads = json_object_get_array_member (obj, "threads");
      for (guint t = 0; t < json_array_get_length (threads); t++)
        {
          JsonObject *th = json_array_get_object_element (threads, t);
          JsonObject *payload = json_object_get_object_member (th, "payload");
          JsonObject *top = json_array_get_object_element (json_object_get_array_member (payload, "children"), 0);
          gint64 count = json_object_get_int_member (json_object_get_object_member (top, "stats"), "count");
          if (g_strcmp0 (json_object_get_string_member (th, "name"), "main") == 0)
            frames += count;
          else
            jobs += count;
        }
    }
  /* 200 frames of 16 ms = 3.2 s: windows 0..6 of 0.5 s, every frame counted once. */
  g_assert_cmpuint (n_lines, ==, 7);
  g_assert_cmpint (frames, ==, 200);
  g_assert_cmpint (jobs, ==, 200);
}

static void
test_csv (Fixture       *fx,
          gconstpointer  data)
{
  g_autofree char *path = export (fx, M6_EXPORT_CSV, 0);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  g_assert_true (g_str_has_prefix (lines[0], "thread,tid,path,label,depth,count,time_avg_ms"));
  /* main: frame, physics, solve;step, render; worker: job, decode. */
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 6 + 1);
  g_assert_cmpstr (lines[7], ==, "");
  g_assert_true (g_str_has_prefix (lines[1], "main,100,frame,frame,1,200,"));
  /* A label with a comma and quotes is quoted, quotes doubled. */
  g_assert_nonnull (strstr (text, "\"frame/render, \"\"quoted\"\"\",\"render, \"\"quoted\"\"\",2,200,"));
}

static void
test_folded_sums (Fixture       *fx,
                  gconstpointer  data)
{
  g_autofree char *path = export (fx, M6_EXPORT_FOLDED, 0);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  M6Thread *main_thread = m6_session_get_thread (fx->session, 0);
  struct { const char *prefix; const char *path; } checks[] = {
    { "main;frame", "frame" },
    { "main;frame;physics", "frame/physics" },
    { "main;frame;physics;solve:step", "frame/physics/solve;step" },
  };

  for (guint c = 0; c < G_N_ELEMENTS (checks); c++)
    {
      gint64 sum = 0;
      gsize plen = strlen (checks[c].prefix);
      for (guint i = 0; lines[i] && lines[i][0]; i++)
        {
          const char *space = strrchr (lines[i], ' ');
          g_assert_nonnull (space);
          if (strncmp (lines[i], checks[c].prefix, plen) == 0
              && (lines[i][plen] == ' ' || lines[i][plen] == ';'))
            sum += g_ascii_strtoll (space + 1, NULL, 10);
        }
      M6Node *node = m6_tree_get_root (main_thread->tree)->first_child;
      if (c >= 1)
        node = node->first_child;
      if (c == 2)
        node = node->first_child;
      g_assert_cmpint (sum, ==, node->time_sum);
    }
}

static void
test_chrome_trace (Fixture       *fx,
                   gconstpointer  data)
{
  g_autofree char *path = export (fx, M6_EXPORT_CHROME, 0);
  g_autoptr (JsonNode) root = parse_file (path);
  JsonArray *events = json_object_get_array_member (json_node_get_object (root), "traceEvents");
  guint n_complete = 0, n_counter = 0, n_thread_names = 0;
  double frame_end = -1;

  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *ev = json_array_get_object_element (events, i);
      const char *ph = json_object_get_string_member (ev, "ph");

      g_assert_true (json_object_has_member (ev, "pid"));
      g_assert_true (json_object_has_member (ev, "tid"));
      if (g_strcmp0 (ph, "M") == 0)
        n_thread_names += g_strcmp0 (json_object_get_string_member (ev, "name"), "thread_name") == 0;
      else if (g_strcmp0 (ph, "C") == 0)
        {
          n_counter++;
          g_assert_true (json_object_has_member (ev, "ts"));
        }
      else
        {
          g_assert_cmpstr (ph, ==, "X");
          g_assert_true (json_object_has_member (ev, "ts"));
          g_assert_true (json_object_has_member (ev, "dur"));
          n_complete++;
        }
    }
  /* 200 x (4 scopes on main + 2 on the worker). */
  g_assert_cmpuint (n_complete, ==, 1200);
  g_assert_cmpuint (n_counter, ==, 800);  /* top-level mark and done, both threads */
  g_assert_cmpuint (n_thread_names, ==, 2);

  /* Children nest inside parents: each frame's physics lies within it. */
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *ev = json_array_get_object_element (events, i);
      if (g_strcmp0 (json_object_get_string_member (ev, "ph"), "X") != 0
          || json_object_get_int_member (ev, "tid") != 100)
        continue;
      double ts = json_object_get_double_member (ev, "ts");
      double dur = json_object_get_double_member (ev, "dur");
      const char *name = json_object_get_string_member (ev, "name");
      /* Dones come innermost first: a frame follows its children. */
      if (g_strcmp0 (name, "frame") == 0)
        frame_end = ts + dur;
      else
        {
          double frame_start = floor (ts / 16000.0) * 16000.0;
          g_assert_cmpfloat (ts, >=, frame_start);
          g_assert_cmpfloat (ts + dur, <=, frame_start + 8000.0);
        }
    }
  g_assert_cmpfloat (frame_end, >, 0);
}

/* MACH6_HEAP=thread: each thread's readings are its own bytes, so each
 * gets its own counter track, named by the thread; process-wide readings
 * stay on one "heap" track. */
static void
test_chrome_heap_per_thread (Fixture       *fx,
                             gconstpointer  data)
{
  for (guint mode = 0; mode < 2; mode++)
    {
      m6_session_set_heap_source (fx->session, mode == 0 ? M6_HEAP_SOURCE_HOOKS : M6_HEAP_SOURCE_SHIM_THREAD);
      g_autofree char *path = export (fx, M6_EXPORT_CHROME, 0);
      g_autoptr (JsonNode) root = parse_file (path);
      JsonArray *events = json_object_get_array_member (json_node_get_object (root), "traceEvents");
      g_autoptr (GHashTable) tracks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

      for (guint i = 0; i < json_array_get_length (events); i++)
        {
          JsonObject *ev = json_array_get_object_element (events, i);
          if (g_strcmp0 (json_object_get_string_member (ev, "ph"), "C") == 0)
            {
              const char *name = json_object_get_string_member (ev, "name");
              g_hash_table_insert (tracks, g_strdup (name),
                                   GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (tracks, name)) + 1));
            }
        }
      if (mode == 0)
        {
          g_assert_cmpuint (g_hash_table_size (tracks), ==, 1);
          g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (tracks, "heap")), ==, 800);
        }
      else
        {
          g_assert_cmpuint (g_hash_table_size (tracks), ==, 2);
          g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (tracks, "heap · main (tid 100)")), ==, 400);
          g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (tracks, "heap · worker-1 (tid 101)")), ==, 400);
        }
      g_unlink (path);
    }
}

static void
test_missing_dir (Fixture       *fx,
                  gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (fx->dir, "no-such-dir", "out.json", NULL);

  g_assert_false (m6_export_session (fx->session, fx->log, M6_EXPORT_JSON, NULL, path, &error));
  g_assert_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_WRITE);
  g_assert_nonnull (strstr (error->message, "no-such-dir"));
}

static void
test_needs_events (Fixture       *fx,
                   gconstpointer  data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (fx->dir, "x.trace.json", NULL);

  g_assert_false (m6_export_session (fx->session, NULL, M6_EXPORT_CHROME, NULL, path, &error));
  g_assert_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_FORMAT);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* A full disk, simulated with a file size limit in a child process: the
 * export fails, says why, and leaves no file and no temporary behind. */
static void
test_full_disk (Fixture       *fx,
                gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fx->dir, "big.trace.json", NULL);
  pid_t pid = fork ();

  if (pid == 0)
    {
      struct rlimit limit = { 4096, 4096 };
      g_autoptr (GError) error = NULL;

      signal (SIGXFSZ, SIG_IGN);
      setrlimit (RLIMIT_FSIZE, &limit);
      gboolean ok = m6_export_session (fx->session, fx->log, M6_EXPORT_CHROME, NULL, path, &error);
      _exit (!ok && error && strstr (error->message, "big.trace.json") ? 0 : 1);
    }

  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);

  g_autoptr (GDir) dir = g_dir_open (fx->dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)))
    g_error ("a failed export left %s behind", name);
}


/* A capture whose clock jumps decades ahead (a buggy game): ndjson writes
 * one line per window that holds scopes, not one per empty interval
 * between (1.15 billion here); times beyond the limit are rejected and
 * counted when the capture is loaded. */
static void
test_ndjson_far_times (Fixture       *fx,
                       gconstpointer  data)
{
  g_autofree char *capture = g_build_filename (fx->dir, "far.mach6", NULL);
  g_autofree char *path = g_build_filename (fx->dir, "far.ndjson", NULL);
  g_autoptr (GError) error = NULL;

  {
    g_autoptr (M6Session) session = m6_session_new ();
    M6CaptureWriter *writer = m6_capture_writer_new (capture, session, &error);
    g_assert_no_error (error);
    guint32 frame = m6_session_intern_label (session, "frame", -1);
    M6Thread *thread = m6_session_add_thread (session, 1, "main");
    gint64 far = G_GINT64_CONSTANT (1) << 60;
    M6Event events[] = {
      { 0, 0, frame, 0 }, { 10, 0, M6_EVENT_DONE, 0 },
      { far, 0, frame, 0 }, { far + 10, 0, M6_EVENT_DONE, 0 },
      { G_GINT64_CONSTANT (1) << 62, 0, frame, 0 }, { G_MAXINT64, 0, M6_EVENT_DONE, 0 },
    };
    m6_session_ingest (session, thread, events, G_N_ELEMENTS (events));
    g_assert_true (m6_capture_writer_finish (writer, &error));
    m6_capture_writer_free (writer);
  }

  g_autoptr (M6Session) loaded = m6_session_new ();
  g_autoptr (M6EventLog) log = m6_event_log_new ();
  m6_session_set_recorder (loaded, m6_event_log_record, log);
  g_assert_true (m6_capture_load_into (capture, loaded, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (m6_session_get_thread (loaded, 0)->rejected, ==, 2);
  g_assert_cmpuint (m6_session_get_thread (loaded, 0)->frames->len, ==, 2);

  g_assert_true (m6_export_session (loaded, log, M6_EXPORT_NDJSON, NULL, path, &error));
  g_assert_no_error (error);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (g_strchomp (text), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 2);
  g_assert_true (g_str_has_prefix (lines[0], "{\"window\":0,"));
  g_assert_true (g_str_has_prefix (lines[1], "{\"window\":1152921504,"));
}

/* The streamed json export is, byte for byte, the document built in memory
 * (m6_export_session_json) as m6_json_append() writes it, with a recursion
 * 40 deep to cross the indentation limit. */
static void
test_json_stream_equals_built (Fixture       *fx,
                               gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fx->dir, "stream.json", NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *streamed = NULL;
  M6Thread *extra = m6_session_add_thread (fx->session, 102, "deep");
  guint32 walk = m6_session_intern_label (fx->session, "walk", -1);
  M6Event events[80];

  for (guint d = 0; d < 40; d++)
    {
      events[d] = (M6Event) { 1000 + d, d * 8, walk, d };
      events[79 - d] = (M6Event) { 2000 + d, 640 - d, M6_EVENT_DONE, d };
    }
  m6_session_ingest (fx->session, extra, events, G_N_ELEMENTS (events));

  g_assert_true (m6_export_session (fx->session, fx->log, M6_EXPORT_JSON, NULL, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &streamed, NULL, NULL));

  g_autoptr (JsonNode) root = m6_export_session_json (fx->session);
  g_autoptr (GString) built = g_string_new (NULL);
  m6_json_append (built, root, TRUE);
  g_string_append_c (built, '\n');
  g_assert_cmpstr (streamed, ==, built->str);
}

/* --- temporary files of killed writers ------------------------------------ */

static gboolean
write_then_hang (GOutputStream  *out,
                 gpointer        data,
                 GError        **error)
{
  int ready = GPOINTER_TO_INT (data);

  g_output_stream_write_all (out, "partial", 7, NULL, NULL, NULL);
  g_output_stream_flush (out, NULL, NULL);
  if (write (ready, "x", 1) != 1)
    _exit (2);
  for (;;)
    pause ();
  return TRUE;
}

/* Fork a writer (an export, or a capture recording when @capture) of
 * @path that stops, mid-write, until it is killed. */
static pid_t
fork_hanging_writer (const char *path,
                     gboolean    capture)
{
  int fds[2];
  char byte;
  pid_t pid;

  g_assert_cmpint (pipe (fds), ==, 0);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      /* A failing test must not leave its writers hanging. */
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      close (fds[0]);
      if (capture)
        {
          M6Session *session = m6_session_new ();
          M6CaptureWriter *writer = m6_capture_writer_new (path, session, NULL);
          if (writer == NULL || write (fds[1], "x", 1) != 1)
            _exit (2);
          for (;;)
            pause ();
        }
      m6_write_atomically (path, write_then_hang, GINT_TO_POINTER (fds[1]), NULL);
      _exit (2);
    }
  close (fds[1]);
  g_assert_cmpint (read (fds[0], &byte, 1), ==, 1);
  close (fds[0]);
  return pid;
}

static guint
count_temp_files (const char *dir,
                  pid_t       pid)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autofree char *mark = g_strdup_printf (".tmp-%d-", (int) pid);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (d)) != NULL)
    n += strstr (name, mark) != NULL;
  return n;
}

static void
kill_and_reap (pid_t pid)
{
  int status;

  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status));
}

/* A killed `mach6 export` or `mach6 record` leaves its temporary file; the
 * next writer in that folder removes it, and leaves a live writer's. */
static void
test_killed_writer_temp_removed (Fixture       *fx,
                                 gconstpointer  data)
{
  g_autofree char *dead_export = g_build_filename (fx->dir, "dead.json", NULL);
  g_autofree char *dead_record = g_build_filename (fx->dir, "dead.mach6", NULL);
  g_autofree char *live_export = g_build_filename (fx->dir, "live.json", NULL);
  g_autofree char *next = g_build_filename (fx->dir, "next.csv", NULL);
  g_autofree char *next_capture = g_build_filename (fx->dir, "next.mach6", NULL);
  g_autoptr (GError) error = NULL;

  pid_t exporter = fork_hanging_writer (dead_export, FALSE);
  pid_t recorder = fork_hanging_writer (dead_record, TRUE);
  pid_t live = fork_hanging_writer (live_export, FALSE);
  g_assert_cmpuint (count_temp_files (fx->dir, exporter), ==, 1);
  g_assert_cmpuint (count_temp_files (fx->dir, recorder), ==, 1);
  kill_and_reap (exporter);
  kill_and_reap (recorder);
  g_assert_cmpuint (count_temp_files (fx->dir, exporter), ==, 1);   /* left behind */

  g_assert_true (m6_export_session (fx->session, fx->log, M6_EXPORT_CSV, NULL, next, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_temp_files (fx->dir, exporter), ==, 0);
  g_assert_cmpuint (count_temp_files (fx->dir, recorder), ==, 0);
  g_assert_cmpuint (count_temp_files (fx->dir, live), ==, 1);       /* still writing */

  /* The capture writer cleans up the same way. */
  kill_and_reap (live);
  g_autoptr (M6Session) session = m6_session_new ();
  M6CaptureWriter *writer = m6_capture_writer_new (next_capture, session, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count_temp_files (fx->dir, live), ==, 0);
  m6_capture_writer_abort (writer);
  m6_capture_writer_free (writer);
  g_unlink (next);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("/core/export/json", test_json);
  ADD ("/core/export/ndjson", test_ndjson);
  ADD ("/core/export/csv", test_csv);
  ADD ("/core/export/folded-sums", test_folded_sums);
  ADD ("/core/export/chrome-trace", test_chrome_trace);
  ADD ("/core/export/chrome-heap-per-thread", test_chrome_heap_per_thread);
  ADD ("/core/export/missing-dir", test_missing_dir);
  ADD ("/core/export/needs-events", test_needs_events);
  ADD ("/core/export/full-disk", test_full_disk);
  ADD ("/core/export/killed-writer-temp-removed", test_killed_writer_temp_removed);
  ADD ("/core/export/ndjson-far-times", test_ndjson_far_times);
  ADD ("/core/export/json-stream-equals-built", test_json_stream_equals_built);
#undef ADD

  return g_test_run ();
}
