/* SPDX-License-Identifier: MIT */
/* test-counting.c — every recording reports exactly what it lost, and no
 * neighbour, dead viewer or reused pid can get in the way (docs/accounting.md#counting-rules):
 * real producer processes, real recorders, real segments in /dev/shm.
 */
#include <pwd.h>
#include <sys/stat.h>

#include "m6-capture.h"
#include "mach6.h"
#include "mach6-abi.h"
#include "reader-test-util.h"
#include "m6-session-private.h"
#include "../test-strict.h"

/* The producer's segment, mapped read-write as a reader does. */
typedef struct
{
  Mach6Control *c;
  gsize         size;
} Mapped;

static void
map_segment (gint    pid,
             Mapped *m)
{
  m->c = NULL;
  for (int i = 0; i < 1000 && m->c == NULL; i++, g_usleep (m->c == NULL ? 5000 : 0))
    {
      g_autofree char *shm = m6_reader_shm_name (pid);
      struct stat st;
      int fd = shm != NULL ? shm_open (shm, O_RDWR, 0) : -1;
      if (fd < 0)
        continue;
      if (fstat (fd, &st) == 0 && st.st_size >= MACH6_CONTROL_SIZE)
        {
          void *p = mmap (NULL, (gsize) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
          if (p != MAP_FAILED && __atomic_load_n (&((Mach6Control *) p)->magic, __ATOMIC_ACQUIRE) == MACH6_MAGIC)
            {
              m->c = p;
              m->size = (gsize) st.st_size;
            }
          else if (p != MAP_FAILED)
            munmap (p, (gsize) st.st_size);
        }
      close (fd);
    }
  g_assert_nonnull (m->c);
}

static Mach6ThreadHeader *
mapped_thread (Mapped *m,
               guint   i)
{
  return (Mach6ThreadHeader *) ((char *) m->c + m->c->threads_offset + (guint64) i * m->c->thread_stride);
}

static guint64
proc_start (gint pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  const char *p = strrchr (text, ')') + 2;
  for (int field = 3; field < 22; field++)
    p = strchr (p, ' ') + 1;
  return g_ascii_strtoull (p, NULL, 10);
}

static void
drain_for (M6Reader *reader,
           int       ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < end)
    {
      g_autoptr (GError) error = NULL;
      g_assert_true (m6_reader_drain (reader, 0, NULL, &error));
      g_assert_no_error (error);
      g_usleep (1000);
    }
}

/* --- 1. drops belong to the recording they happen in --------------------- */

static gboolean
cond_recorder_attached (gpointer data)
{
  gint *pids = data;
  g_autoptr (GPtrArray) list = m6_reader_list (NULL);

  for (guint i = 0; list != NULL && i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->pid == pids[0] && info->attached_pid == pids[1])
        return TRUE;
    }
  return FALSE;
}

static void
test_drops_dead_recorder (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "flood", "--frames", "100000000", "--sleep-us", "2000", NULL };
  /* 4096 events: full within ~0.13 s while nobody reads, never while we do. */
  const char *envp[] = { "MACH6_RING_EVENTS=4096", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, envp);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *out = g_build_filename (dir, "dead.mach6", NULL);
  g_autofree char *pid_text = g_strdup_printf ("%d", producer->pid);
  const char *rec_argv[] = { test_cli_path (), "record", pid_text, "--duration", "60", "-o", out, NULL };
  g_autoptr (GError) error = NULL;
  GPid recorder;
  Mapped m;

  map_segment (producer->pid, &m);
  g_spawn_async (NULL, (char **) rec_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL
                 | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &recorder, &error);
  g_assert_no_error (error);

  gint pids[2] = { producer->pid, recorder };
  for (int i = 0; i < 1000 && !cond_recorder_attached (pids); i++)
    g_usleep (5000);
  g_assert_true (cond_recorder_attached (pids));
  g_usleep (200000);

  /* A recorder that stops draining, then dies without detaching. */
  kill (recorder, SIGSTOP);
  g_usleep (800000);
  kill (recorder, SIGKILL);
  waitpid (recorder, NULL, 0);

  /* The producer ends that recording by itself, within the heartbeat
   * timeout (3 s) plus a check interval and a frame. */
  gint64 deadline = g_get_monotonic_time () + 6 * G_USEC_PER_SEC;
  while (__atomic_load_n (&m.c->attach_generation, __ATOMIC_ACQUIRE) != MACH6_GENERATION_STALLED
         && g_get_monotonic_time () < deadline)
    g_usleep (10000);
  g_assert_cmpuint (__atomic_load_n (&m.c->attach_generation, __ATOMIC_ACQUIRE), ==, MACH6_GENERATION_STALLED);
  guint64 old_drops = __atomic_load_n (&mapped_thread (&m, 0)->drops, __ATOMIC_RELAXED);
  g_test_message ("drops while the recorder was stopped: %llu", (unsigned long long) old_drops);
  g_assert_cmpuint (old_drops, >, 0);

  /* Nobody records now: the ring counter stands still, and the frames that
   * go by are counted as stalled (for a holder that comes back). */
  guint64 stalled = __atomic_load_n (&mapped_thread (&m, 0)->stalled, __ATOMIC_RELAXED);
  g_usleep (100000);
  g_assert_cmpuint (__atomic_load_n (&mapped_thread (&m, 0)->drops, __ATOMIC_RELAXED), ==, old_drops);
  g_assert_cmpuint (__atomic_load_n (&mapped_thread (&m, 0)->stalled, __ATOMIC_RELAXED), >, stalled);

  /* A new, healthy recording (taking over from the dead holder) is
   * charged none of them. */
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  drain_for (reader, 400);
  M6Session *session = m6_reader_get_session (reader);
  g_assert_cmpuint (m6_session_get_n_events (session), >, 0);
  g_assert_cmpuint (m6_session_get_drops (session), ==, 0);

  munmap (m.c, m.size);
  test_rm_dir (dir);
}

/* A recorder that is only paused (SIGSTOP, then SIGCONT after the
 * timeout) records again: the reader publishes a new generation, and the
 * frames the producer let go by in between are its drops, exactly. */
static void
test_drops_paused_reader_resumes (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "spin", "--sleep-us", "1000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  Mapped m;

  g_assert_no_error (error);
  map_segment (producer->pid, &m);
  drain_for (reader, 100);
  /* As if we had stopped for longer than the timeout. */
  __atomic_store_n (&m.c->heartbeat_ns, (guint64) 1, __ATOMIC_RELEASE);
  gint64 deadline = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
  while (__atomic_load_n (&m.c->attach_generation, __ATOMIC_ACQUIRE) != MACH6_GENERATION_STALLED
         && g_get_monotonic_time () < deadline)
    g_usleep (2000);
  g_assert_cmpuint (__atomic_load_n (&m.c->attach_generation, __ATOMIC_ACQUIRE), ==, MACH6_GENERATION_STALLED);
  /* Frames go by unrecorded (about 1 a millisecond). */
  g_usleep (100000);

  M6Session *session = m6_reader_get_session (reader);
  guint64 before = m6_session_get_n_events (session);
  g_assert_cmpuint (m6_session_get_drops (session), ==, 0);
  drain_for (reader, 300);
  guint32 generation = __atomic_load_n (&m.c->attach_generation, __ATOMIC_ACQUIRE);
  g_assert_cmpuint (generation, !=, 0);
  g_assert_cmpuint (generation, !=, MACH6_GENERATION_STALLED);
  g_assert_cmpuint (m6_session_get_n_events (session), >, before);
  /* Recording again, so the count stands: the session has all of it. */
  guint64 stalled = __atomic_load_n (&mapped_thread (&m, 0)->stalled, __ATOMIC_RELAXED);
  g_test_message ("frames let go by while the reader was silent: %llu", (unsigned long long) stalled);
  g_assert_cmpuint (stalled, >=, 50);
  g_assert_cmpuint (m6_session_get_drops (session), ==, stalled);
  munmap (m.c, m.size);
}

/* Run the mach6 CLI; its stdout. */
static char *
run_cli (int         *status,
         const char  *first,
         ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  char *out = NULL;
  va_list args;

  g_ptr_array_add (argv, (gpointer) test_cli_path ());
  va_start (args, first);
  for (const char *a = first; a != NULL; a = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (args);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                &out, NULL, status, &error);
  g_assert_no_error (error);
  g_test_message ("%s", out);
  return out;
}

/* --- 2. thread slots ------------------------------------------------------ */

static void
test_threads_beyond_slots (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "workers", "--threads", "70", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  M6Session *session;

  g_assert_no_error (error);
  session = m6_reader_get_session (reader);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "unslotted.mach6", NULL);
  g_autoptr (M6CaptureWriter) writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while ((m6_session_get_n_threads (session) < 64 || m6_session_get_threads_unslotted (session) < 6)
         && g_get_monotonic_time () < deadline)
    drain_for (reader, 20);
  drain_for (reader, 100);
  g_assert_cmpuint (m6_session_get_n_threads (session), ==, 64);
  g_assert_cmpuint (m6_session_get_threads_unslotted (session), ==, 6);

  /* Kept in a capture. */
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (m6_session_get_threads_unslotted (loaded), ==, 6);
  test_rm_dir (dir);

  /* Listed too. */
  g_autoptr (GPtrArray) list = m6_reader_list (&error);
  g_assert_no_error (error);
  gboolean found = FALSE;
  for (guint i = 0; i < list->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (list, i);
      if (info->pid == producer->pid)
        {
          g_assert_cmpuint (info->threads_unslotted, ==, 6);
          found = TRUE;
        }
    }
  g_assert_true (found);

  /* And shown by the CLI: list, report and its JSON. */
  g_clear_pointer (&reader, m6_reader_free);
  g_autofree char *pid = g_strdup_printf ("%d", producer->pid);
  int status;
  g_autofree char *listed = run_cli (&status, "list", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (listed, "NO SLOT"));
  /* THREADS counts the live ones, slot or not: 64 with a ring + 6 without. */
  g_autofree char *row = g_strdup_printf ("\n%-8d m6-counting           70       6", producer->pid);
  g_assert_nonnull (strstr (listed, row));
  g_autofree char *table = run_cli (&status, "report", pid, "--duration", "0.5", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (table, "6 threads without a slot"));
  g_autofree char *json = run_cli (&status, "report", pid, "--duration", "0.5", "--json", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (json, "\"threads_unslotted\": 6"));
}

static void
test_threads_slots_reused (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "churn", "--threads", "96", "--frames", "3", "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);

  g_assert_no_error (error);
  test_drain_until (reader, test_cond_ended, NULL, TRUE, 20000);

  M6Session *session = m6_reader_get_session (reader);
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      g_hash_table_add (names, thread->name);
      if (g_str_has_prefix (thread->name, "churn-"))
        {
          g_assert_cmpint (thread->state, ==, M6_THREAD_STATE_EXITED);
          g_assert_cmpuint (thread->tree ? m6_tree_find_path (thread->tree, "frame")->count : 0, ==, 3);
        }
    }
  for (guint i = 0; i < 96; i++)
    {
      g_autofree char *name = g_strdup_printf ("churn-%u", i);
      if (!g_hash_table_contains (names, name))
        g_error ("thread %s is missing (%u threads in the session)", name, m6_session_get_n_threads (session));
    }
  g_assert_cmpuint (m6_session_get_threads_unslotted (session), ==, 0);
}

/* --- 3. stray dones and the depth limit ------------------------------------ */

static void
test_refusals_counted (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "refusals", "--frames", "5", "--depth", "5000", "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  g_autofree char *dir = test_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "refusals.mach6", NULL);

  g_assert_no_error (error);
  g_autoptr (M6CaptureWriter) writer = m6_capture_writer_new (path, m6_reader_get_session (reader), &error);
  g_assert_no_error (error);
  test_drain_until (reader, test_cond_ended, NULL, TRUE, 20000);

  M6Session *session = m6_reader_get_session (reader);
  M6Thread *thread = m6_session_get_thread (session, 0);
  /* The recursion is recorded to the limit the reader accepts (depth
   * 4095 under the frame), and the first mark beyond it is refused, with
   * everything inside it: one refusal per frame, nothing rejected. */
  g_assert_cmpuint (thread->depth_refused, ==, 5);
  g_assert_cmpuint (thread->rejected, ==, 0);
  g_assert_cmpuint (thread->drops, ==, 0);
  g_assert_cmpuint (thread->stray_dones, ==, 10);
  g_assert_cmpuint (m6_session_get_unbalanced (session), ==, 10);
  M6Node *frame = m6_tree_find_path (thread->tree, "frame");
  g_assert_cmpuint (frame->count, ==, 5);

  /* Carried into the capture. */
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  g_autoptr (M6Session) loaded = m6_capture_load (path, &error);
  g_assert_no_error (error);
  M6Thread *lt = m6_session_get_thread (loaded, 0);
  g_assert_cmpuint (lt->stray_dones, ==, 10);
  g_assert_cmpuint (lt->depth_refused, ==, 5);
  g_assert_cmpuint (m6_session_get_unbalanced (loaded), ==, 10);
  test_rm_dir (dir);
}

/* --- 4. a full label table is its own reason ------------------------------- */

static void
test_label_table_full (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "labels", "--frames", "60000", "--wait-attach", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);

  g_assert_no_error (error);
  test_drain_until (reader, test_cond_ended, NULL, TRUE, 30000);

  M6Session *session = m6_reader_get_session (reader);
  M6Thread *thread = m6_session_get_thread (session, 0);
  /* "label-0000000": 4 + 13 + 1 bytes, padded to 20; the table is 1 MiB. */
  guint64 fit = (1u << 20) / 20;
  g_assert_cmpuint (thread->drops, ==, 0);
  g_assert_cmpuint (thread->label_full, ==, 60000 - fit);
  g_assert_cmpuint (m6_session_get_label_full (session), ==, 60000 - fit);
  g_assert_cmpuint (m6_tree_get_n_nodes (thread->tree) - 1, ==, fit);
}

/* --- 8. a dead viewer's pid, reused ---------------------------------------- */

static void
test_claim_pid_reused (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "spin", "--sleep-us", "1000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  Mapped m;

  map_segment (producer->pid, &m);
  g_assert_cmpuint (m.c->producer_start, ==, proc_start (producer->pid));

  /* A live holder, with its own start time: busy. */
  gint holder = producer->pid;   /* any live process */
  m.c->attached_pid = holder;
  m.c->holder_start = proc_start (holder);
  M6Reader *busy = m6_reader_attach (producer->pid, &error);
  g_assert_null (busy);
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_BUSY);
  g_clear_error (&error);

  /* The holder died and its pid now names another process (another start
   * time): taken over. */
  m.c->holder_start = proc_start (holder) + 12345;
  g_autoptr (M6Reader) reader = m6_reader_attach (producer->pid, &error);
  g_assert_no_error (error);
  g_assert_cmpint (m.c->attached_pid, ==, getpid ());
  g_assert_cmpuint (m.c->holder_start, ==, proc_start (getpid ()));
  drain_for (reader, 50);
  m6_reader_detach (reader);
  g_assert_cmpint (m.c->attached_pid, ==, 0);
  g_assert_cmpuint (m.c->holder_start, ==, 0);
  munmap (m.c, m.size);
}

/* --- 9. post-mortem reads do not change the segment ------------------------ */

static void
test_post_mortem_repeatable (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "spin", "--sleep-us", "500", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  gint pid = producer->pid;
  guint64 first = 0;

  {
    /* Watched but not drained: the rings keep the frames. */
    g_autoptr (M6Reader) watcher = test_attach (pid, &error);
    g_assert_no_error (error);
    g_usleep (200000);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    producer->pid = 0;
  }

  for (int round = 0; round < 2; round++)
    {
      g_autoptr (M6Reader) reader = m6_reader_attach (pid, &error);
      g_assert_no_error (error);
      test_drain_until (reader, test_cond_ended, NULL, TRUE, 5000);
      guint64 n = m6_session_get_n_events (m6_reader_get_session (reader));
      g_test_message ("post-mortem read %d: %llu events", round + 1, (unsigned long long) n);
      if (round == 0)
        {
          g_assert_cmpuint (n, >, 0);
          first = n;
        }
      else
        g_assert_cmpuint (n, ==, first);
    }

  g_autofree char *shm = m6_reader_shm_name (pid);
  if (shm != NULL)
    shm_unlink (shm);
}

/* --- 12. a segment that shrinks -------------------------------------------- */

static void
test_truncated_segment (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "spin", "--sleep-us", "1000", NULL };
  g_autoptr (TestProducer) producer = test_producer_start (args, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);

  g_assert_no_error (error);
  drain_for (reader, 50);

  /* Truncated under the reader: nothing may touch the lost pages. */
  g_autofree char *shm = m6_reader_shm_name (producer->pid);
  g_assert_nonnull (shm);
  int fd = shm_open (shm, O_RDWR, 0);
  g_assert_cmpint (fd, >=, 0);
  g_assert_no_errno (ftruncate (fd, 0));
  close (fd);

  g_assert_cmpuint (m6_reader_get_pending (reader), ==, 0);
  (void) m6_reader_is_alive (reader);
  g_assert_false (m6_reader_drain (reader, 0, NULL, &error));
  g_assert_error (error, M6_READER_ERROR, M6_READER_ERROR_CORRUPT);
  m6_reader_detach (reader);
}

/* --- 7, 10, 11. neighbours, leftovers and root ----------------------------- */

static uid_t
nobody_uid (void)
{
  struct passwd *pw = getpwnam ("nobody");
  return pw != NULL ? pw->pw_uid : 65534;
}

/* Files a neighbour plants under our names are neither listed nor a
 * reason for `clean` to stop; the victim here is "nobody", the neighbour
 * root (who can chown). */
static void
test_neighbour_cannot_clutter (void)
{
  if (getuid () != 0)
    {
      g_test_skip ("needs root to act as two users");
      return;
    }
  uid_t victim = nobody_uid ();
  g_autofree char *planted = g_strdup_printf ("/mach6-%u-%d-0123456789abcdef", (unsigned) victim, 999999);
  g_autofree char *legacy = g_strdup_printf ("/mach6-%u-%d", (unsigned) victim, 999998);
  int fd = shm_open (planted, O_CREAT | O_RDWR, 0644);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  fd = shm_open (legacy, O_CREAT | O_RDWR, 0644);
  g_assert_cmpint (fd, >=, 0);
  close (fd);

  pid_t child = fork ();
  if (child == 0)
    {
      if (setuid (victim) != 0)
        _exit (10);
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) list = m6_reader_list (&error);
      if (list == NULL)
        _exit (11);
      for (guint i = 0; i < list->len; i++)
        if (((M6ProcessInfo *) g_ptr_array_index (list, i))->pid >= 999998)
          _exit (12);
      if (m6_reader_clean (&error) < 0)
        _exit (13);
      _exit (0);
    }
  int status;
  waitpid (child, &status, 0);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  /* Still there: not ours to remove. */
  g_autofree char *path = g_strconcat ("/dev/shm", planted, NULL);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  shm_unlink (planted);
  shm_unlink (legacy);
}

/* Root may read another user's game (found by its pid). */
static void
test_root_reads_other_user (void)
{
  if (getuid () != 0)
    {
      g_test_skip ("needs root");
      return;
    }
  uid_t other = nobody_uid ();
  int in[2];
  g_assert_no_errno (pipe (in));
  pid_t child = fork ();
  if (child == 0)
    {
      dup2 (in[0], 0);
      close (in[1]);
      if (setgid (other) != 0 || setuid (other) != 0)
        _exit (10);
      execl (test_producer_path (), test_producer_path (), "--comm", "m6-counting", "--mode", "spin", "--sleep-us", "1000", NULL);
      _exit (11);
    }
  close (in[0]);

  g_autoptr (GError) error = NULL;
  g_autoptr (M6Reader) reader = test_attach (child, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (m6_reader_get_shm_name (reader),
                                   g_strdup_printf ("/mach6-%u-%d-", (unsigned) other, child)));
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (m6_session_get_n_events (m6_reader_get_session (reader)) == 0 && g_get_monotonic_time () < deadline)
    drain_for (reader, 10);
  g_assert_cmpuint (m6_session_get_n_events (m6_reader_get_session (reader)), >, 0);
  g_clear_pointer (&reader, m6_reader_free);

  close (in[1]);
  waitpid (child, NULL, 0);
}

/* A crash leaves its segment; only the newest MACH6_KEEP_DEAD (4) of them
 * are kept, the next producer removes the older ones. */
static void
test_dead_segments_bounded (void)
{
  const char *args[] = { "--comm", "m6-counting", "--mode", "spin", "--sleep-us", "1000", NULL };
  g_autofree char *shms[7] = { NULL };
  gint pids[7];

  for (int i = 0; i < 6; i++)
    {
      g_autoptr (TestProducer) p = test_producer_start (args, NULL);
      Mapped m;
      map_segment (p->pid, &m);
      munmap (m.c, m.size);
      shms[i] = m6_reader_shm_name (p->pid);
      g_assert_nonnull (shms[i]);
      pids[i] = p->pid;
      kill (p->pid, SIGKILL);
      waitpid (p->pid, NULL, 0);
      p->pid = 0;
      g_usleep (20000);   /* distinct modification times */
    }

  g_autoptr (TestProducer) last = test_producer_start (args, NULL);
  Mapped m;
  map_segment (last->pid, &m);
  munmap (m.c, m.size);

  /* The prune runs on a thread of the new producer's, beside its first
   * mark: wait (up to 10 s) until it has removed the two oldest. */
  for (int tries = 0; tries < 1000; tries++)
    {
      g_autofree char *first = g_strconcat ("/dev/shm", shms[0], NULL);
      g_autofree char *second = g_strconcat ("/dev/shm", shms[1], NULL);
      if (!g_file_test (first, G_FILE_TEST_EXISTS) && !g_file_test (second, G_FILE_TEST_EXISTS))
        break;
      g_usleep (10000);
    }
  for (int i = 0; i < 6; i++)
    {
      g_autofree char *path = g_strconcat ("/dev/shm", shms[i], NULL);
      gboolean exists = g_file_test (path, G_FILE_TEST_EXISTS);
      g_test_message ("dead segment %d (pid %d): %s", i, pids[i], exists ? "kept" : "removed");
      /* Other suites running side by side may crash producers too (newer
       * dead segments): so only the two oldest must be gone and the
       * newest kept. */
      if (i < 2)
        g_assert_false (exists);
      else if (i == 5)
        g_assert_true (exists);
      shm_unlink (shms[i]);
    }
}

/* A segment left empty by a process that ended (killed between
 * shm_open and ftruncate) is listed as such, with what removes it, not
 * as one a live producer "may still be creating". */
static void
test_dead_unfinished_segment (void)
{
  g_autoptr (GError) error = NULL;
  pid_t child = fork ();

  if (child == 0)
    _exit (0);
  waitpid (child, NULL, 0);
  g_autofree char *shm = g_strdup_printf ("%s%u-%d-0000000000000001", MACH6_SHM_PREFIX, (unsigned) getuid (), (int) child);
  int fd = shm_open (shm, O_CREAT | O_EXCL | O_RDWR, 0600);
  g_assert_cmpint (fd, >=, 0);
  close (fd);

  g_autoptr (GPtrArray) list = m6_reader_list (&error);
  g_assert_no_error (error);
  const M6ProcessInfo *found = NULL;
  for (guint i = 0; i < list->len; i++)
    if (((M6ProcessInfo *) g_ptr_array_index (list, i))->pid == child)
      found = g_ptr_array_index (list, i);
  g_assert_nonnull (found);
  g_assert_false (found->alive);
  g_assert_nonnull (found->error);
  g_test_message ("%s", found->error);
  g_assert_nonnull (strstr (found->error, "has ended"));
  g_assert_nonnull (strstr (found->error, "mach6 clean"));
  g_assert_null (strstr (found->error, "still be creating"));

  g_assert_true (m6_reader_clean_pid (child, &error));
  g_assert_no_error (error);
  g_autofree char *path = g_strconcat ("/dev/shm", shm, NULL);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* --- C++ ------------------------------------------------------------------- */

/* A C++17 program instrumented with mach6.h (RAII scopes, a lambda heap
 * source, labels from std::string) is recorded like a C one. */
static void
test_cxx_program_recorded (void)
{
#ifdef CXX_PRODUCER
  const char *argv[] = { CXX_PRODUCER, "--frames", "10", NULL };
  g_autoptr (GError) error = NULL;
  TestProducer *producer = g_new0 (TestProducer, 1);
  g_autoptr (TestProducer) owner = producer;

  producer->stdin_fd = -1;
  g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &producer->pid, &error);
  g_assert_no_error (error);
  g_autoptr (M6Reader) reader = test_attach (producer->pid, &error);
  g_assert_no_error (error);
  test_drain_until (reader, test_cond_ended, NULL, TRUE, 10000);

  M6Session *session = m6_reader_get_session (reader);
  g_assert_cmpuint (m6_session_get_n_threads (session), ==, 1);
  M6Thread *thread = m6_session_get_thread (session, 0);
  g_assert_cmpstr (thread->name, ==, "cxx-main");
  M6Node *frame = m6_tree_find_path (thread->tree, "frame");
  M6Node *player = m6_tree_find_path (thread->tree, "frame/update/player");
  M6Node *render = m6_tree_find_path (thread->tree, "frame/render");
  g_assert_nonnull (frame);
  g_assert_nonnull (player);
  g_assert_nonnull (render);
  g_assert_cmpuint (frame->count, ==, 10);
  g_assert_cmpuint (player->count, ==, 10);
  /* Each frame: +100 after its mark, +8 per entity: ΣD = 10 × 116. */
  g_assert_cmpint (frame->mem_sum, ==, 10 * 116);
  g_assert_cmpint (player->mem_sum, ==, 10 * 8);
  g_assert_cmpuint (m6_session_get_unbalanced (session), ==, 0);
  g_assert_cmpuint (thread->rejected, ==, 0);
#else
  /* make deps installs g++. */
  test_skip_unless_strict ("no C++ compiler at build time (g++)");
#endif
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/counting/drops-dead-recorder", test_drops_dead_recorder);
  g_test_add_func ("/reader/counting/paused-reader-resumes", test_drops_paused_reader_resumes);
  g_test_add_func ("/reader/counting/threads-beyond-slots", test_threads_beyond_slots);
  g_test_add_func ("/reader/counting/thread-slots-reused", test_threads_slots_reused);
  g_test_add_func ("/reader/counting/refusals", test_refusals_counted);
  g_test_add_func ("/reader/counting/label-table-full", test_label_table_full);
  g_test_add_func ("/reader/claim/pid-reused", test_claim_pid_reused);
  g_test_add_func ("/reader/post-mortem/repeatable", test_post_mortem_repeatable);
  g_test_add_func ("/reader/hostile/truncated-live", test_truncated_segment);
  g_test_add_func ("/reader/neighbours/cannot-clutter", test_neighbour_cannot_clutter);
  g_test_add_func ("/reader/neighbours/root-reads-other-user", test_root_reads_other_user);
  g_test_add_func ("/reader/leftovers/dead-segments-bounded", test_dead_segments_bounded);
  g_test_add_func ("/reader/leftovers/dead-unfinished-segment", test_dead_unfinished_segment);
  g_test_add_func ("/reader/cxx/program-recorded", test_cxx_program_recorded);

  return g_test_run ();
}
