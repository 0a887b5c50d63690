/* SPDX-License-Identifier: MIT */
/* test-capture.c — capture files (core/capture/m6-capture*.c): a recorded session
 * written and loaded back equal; an aborted write leaving nothing; files
 * cut short, bit-flipped, of older versions, hostile packed records or not
 * captures at all, each giving a GError naming what is wrong or a correct
 * partial load, never a crash. Built twice, the second time under
 * AddressSanitizer and UBSan. Bytes rewritten by hand (older versions,
 * fixed CRCs) come from capture-test-util.c. */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mach6.h"
#include "mach6-abi.h"
#include "m6-capture.h"
#include "m6-capture-reader.h"
#include "m6-payload.h"
#include "m6-session-private.h"
#include "m6-session-state.h"
#include "m6-frame-index.h"
#include "m6-test-hooks.h"

#include "capture-test-util.h"

/* A session fed balanced random streams on three threads, recorded
 * (@max_size: a rolling capture, 0: none). */
static M6Session *
build_rolled_session (const char *path,
                      guint       frames,
                      guint32     seed,
                      guint64     max_size)
{
  M6Session *session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  GRand *rand = g_rand_new_with_seed (seed);
  static const char *const names[] = { "frame", "physics", "render", "ai", "draw", "ünïcode" };

  m6_session_set_process (session, 4242, "recorded");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  g_autoptr (M6CaptureWriter) writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);
  if (max_size != 0)
    g_assert_true (m6_capture_writer_set_max_size (writer, max_size, NULL));

  m6_session_add_thread (session, 100, "main");
  m6_session_add_thread (session, 101, "worker");
  gint64 t = 0, heap = 5000;
  for (guint f = 0; f < frames; f++)
    {
      if (f == frames / 2)
        {
          m6_session_add_thread (session, 102, "late");
          m6_session_set_thread_name (session, m6_session_get_thread (session, 1), "worker-renamed");
        }
      for (guint i = 0; i < m6_session_get_n_threads (session); i++)
        {
          M6Thread *thread = m6_session_get_thread (session, i);
          GArray *events = g_array_new (FALSE, FALSE, sizeof (M6Event));
          guint depth = 0;
          guint32 frame = m6_session_intern_label (session, names[0], -1);

          g_array_append_val (events, ((M6Event) { t += 10, heap, frame, 0 }));
          depth = 1;
          while (depth > 0)
            {
              if (depth < 5 && g_rand_boolean (rand))
                {
                  guint32 label = m6_session_intern_label (session, names[g_rand_int_range (rand, 1, 6)], -1);
                  heap += g_rand_int_range (rand, -64, 128);
                  g_array_append_val (events, ((M6Event) { t += g_rand_int_range (rand, 1, 1000), heap, label, depth }));
                  depth++;
                }
              else
                {
                  depth--;
                  g_array_append_val (events, ((M6Event) { t += g_rand_int_range (rand, 1, 1000), heap, M6_EVENT_DONE, depth }));
                }
            }
          m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
          g_array_unref (events);
        }
      m6_session_set_thread_drops (session, m6_session_get_thread (session, 0), f);
      m6_session_notify_changed (session);
    }
  m6_session_set_thread_state (session, m6_session_get_thread (session, 2), M6_THREAD_STATE_EXITED);
  m6_session_set_ended (session, TRUE);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  g_rand_free (rand);
  return session;
}

static M6Session *
build_recorded_session (const char *path,
                        guint       frames,
                        guint32     seed)
{
  return build_rolled_session (path, frames, seed, 0);
}

static void
assert_sessions_equal (M6Session *a,
                       M6Session *b)
{
  g_assert_cmpuint (m6_session_get_n_threads (a), ==, m6_session_get_n_threads (b));
  g_assert_cmpuint (m6_session_get_n_events (a), ==, m6_session_get_n_events (b));
  for (guint i = 0; i < m6_session_get_n_threads (a); i++)
    {
      M6Thread *x = m6_session_get_thread (a, i);
      M6Thread *y = m6_session_get_thread (b, i);
      g_autofree char *jx = m6_payload_to_string (x->tree, m6_tree_get_root (x->tree), FALSE);
      g_autofree char *jy = m6_payload_to_string (y->tree, m6_tree_get_root (y->tree), FALSE);

      g_assert_cmpstr (jx, ==, jy);
      g_assert_cmpstr (x->name, ==, y->name);
      g_assert_cmpuint (x->tid, ==, y->tid);
      g_assert_cmpint (x->state, ==, y->state);
      g_assert_cmpuint (x->drops, ==, y->drops);
    }
}

static void
test_capture_round_trip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "synthetic.mach6", NULL);
  guint32 seed = g_test_rand_int ();
  g_autoptr (GError) error = NULL;
  M6CaptureInfo info;

  g_test_message ("seed %u", seed);
  g_autoptr (M6Session) recorded = build_recorded_session (path, 400, seed);
  g_autoptr (M6Session) loaded = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  g_assert_true (m6_session_get_ended (loaded));
  g_assert_cmpstr (m6_session_get_process_name (loaded), ==, "recorded");
  g_assert_cmpint (m6_session_get_pid (loaded), ==, 4242);
  g_assert_cmpint (m6_session_get_heap_source (loaded), ==, M6_HEAP_SOURCE_HOOKS);
  assert_sessions_equal (recorded, loaded);

  /* Only the final file is left. */
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_cmpstr (g_dir_read_name (d), ==, "synthetic.mach6");
  g_assert_null (g_dir_read_name (d));
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_capture_abort_leaves_nothing (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "aborted.mach6", NULL);
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  M6CaptureWriter *writer = m6_capture_writer_new (path, session, &error);

  g_assert_no_error (error);
  m6_capture_writer_abort (writer);
  m6_capture_writer_free (writer);
  g_assert_cmpint (g_rmdir (dir), ==, 0);   /* empty */

  /* Unwritable place: a clear error. */
  writer = m6_capture_writer_new ("/nonexistent-dir/x.mach6", session, &error);
  g_assert_null (writer);
  g_assert_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "/nonexistent-dir/x.mach6"));
}

static char *
write_temp (const char   *dir,
            const guint8 *data,
            gsize         length)
{
  char *path = g_build_filename (dir, "damaged.mach6", NULL);
  g_autoptr (GError) error = NULL;

  /* No fsync: thousands of these are written. (GLib 2.74 does not
   * truncate an existing file in this mode: remove it first.) */
  g_unlink (path);
  g_file_set_contents_full (path, (const char *) data, (gssize) length,
                            G_FILE_SET_CONTENTS_NONE, 0644, &error);
  g_assert_no_error (error);
  return path;
}

/* Every prefix: shorter than the header is an error; longer loads what is
 * complete, unfinished, never more than the whole. The file is cut in
 * place, from the longest prefix down. */
static void
test_capture_truncated (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "small.mach6", NULL);
  struct stat st;
  guint64 next_events = G_MAXUINT64;

  g_autoptr (M6Session) recorded = build_recorded_session (path, 6, 7);
  int fd = open (path, O_RDWR | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_test_message ("%lld bytes", (long long) st.st_size);

  for (off_t cut = st.st_size - 1; cut >= 0; cut--)
    {
      g_autoptr (GError) error = NULL;
      M6CaptureInfo info;

      g_assert_cmpint (ftruncate (fd, cut), ==, 0);
      g_autoptr (M6Session) loaded = m6_capture_load_full (path, &info, &error);
      if (cut < M6_CAPTURE_HEADER_SIZE)
        {
          g_assert_null (loaded);
          g_assert_nonnull (error);
          continue;
        }
      g_assert_no_error (error);
      g_assert_false (info.finished);
      g_assert_cmpuint (info.n_events, <=, m6_session_get_n_events (recorded));
      g_assert_cmpuint (info.n_events, <=, next_events);   /* a prefix holds a prefix */
      g_assert_cmpuint (info.ignored_bytes, <, (guint64) cut);
      next_events = info.n_events;
    }
  close (fd);
  g_unlink (path);
  g_rmdir (dir);
}

/* Flipped bits: an error, or (a length that now runs past the end) a
 * partial load marked unfinished; the checksums catch the rest. The file
 * is damaged in place and repaired after each load. */
static void
test_capture_bit_flips (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "small.mach6", NULL);
  struct stat st;
  guint32 seed = g_test_rand_int ();
  GRand *rand = g_rand_new_with_seed (seed);
  guint errors = 0, partial = 0;

  g_test_message ("seed %u", seed);
  g_autoptr (M6Session) recorded = build_recorded_session (path, 6, 11);
  int fd = open (path, O_RDWR | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);

  for (int round = 0; round < 1500; round++)
    {
      off_t at = g_rand_int_range (rand, 0, (gint32) st.st_size);
      guint8 bit = (guint8) (1u << g_rand_int_range (rand, 0, 8));
      guint8 byte, flipped;
      g_autoptr (GError) error = NULL;
      M6CaptureInfo info;

      g_assert_cmpint (pread (fd, &byte, 1, at), ==, 1);
      flipped = byte ^ bit;
      g_assert_cmpint (pwrite (fd, &flipped, 1, at), ==, 1);
      /* A replay reads every byte: it finds every flip. */
      m6_capture_set_force_replay (TRUE);
      g_autoptr (M6Session) loaded = m6_capture_load_full (path, &info, &error);
      m6_capture_set_force_replay (FALSE);
      /* From the checkpoint, the events before it are not read: a flip
       * there goes unseen, and what loads is still the whole session. */
      g_autoptr (GError) fast_error = NULL;
      M6CaptureInfo fast_info;
      g_autoptr (M6Session) fast = m6_capture_load_full (path, &fast_info, &fast_error);
      g_assert_cmpint (pwrite (fd, &byte, 1, at), ==, 1);
      if (fast != NULL && fast_info.finished)
        assert_sessions_equal (recorded, fast);
      else if (fast != NULL)
        g_assert_cmpuint (fast_info.n_events, <=, m6_session_get_n_events (recorded));

      if (loaded == NULL)
        {
          g_assert_nonnull (error);
          errors++;
        }
      else
        {
          if (info.finished)
            g_error ("byte %lld bit 0x%02x: a damaged capture loaded as complete", (long long) at, bit);
          g_assert_cmpuint (info.n_events, <=, m6_session_get_n_events (recorded));
          partial++;
        }
    }
  g_test_message ("%u errors, %u partial loads", errors, partial);
  close (fd);
  g_rand_free (rand);
  g_unlink (path);
  g_rmdir (dir);
}

/* Version 1 (before PAD records), version 2 (24-byte events, before
 * PACKED_EVENTS) and version 3 (before checkpoints) files still load, by
 * replay, to the same session: the recorded file, spelled out as those
 * versions wrote it. */
static void
test_capture_old_versions (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "small.mach6", NULL);
  g_autofree guint8 *data = NULL;
  gsize length;

  g_autoptr (M6Session) recorded = build_recorded_session (path, 40, 11);
  g_assert_true (g_file_get_contents (path, (char **) &data, &length, NULL));
  for (guint version = 1; version <= 3; version++)
    {
      g_autoptr (GError) error = NULL;
      guint pads, packed;
      g_autoptr (GByteArray) old = downgrade_capture (data, length, version, &pads, &packed);
      M6CaptureInfo info;

      g_test_message ("version %u: %u PAD records put in, %u PACKED_EVENTS spelled out", version, pads, packed);
      /* Version 3 keeps PACKED_EVENTS as they are. */
      if (version < 3)
        g_assert_cmpuint (packed, >, 0);
      else
        g_assert_cmpuint (packed, ==, 0);
      g_assert_cmpuint (pads, ==, version == 2 ? packed : 0);
      if (version < 3)
        g_assert_cmpuint (old->len, >, length);

      g_autofree char *p = write_temp (dir, old->data, old->len);
      g_autoptr (M6Session) loaded = m6_capture_load_full (p, &info, &error);
      g_assert_no_error (error);
      g_assert_true (info.finished);
      g_assert_false (info.from_checkpoint);
      assert_sessions_equal (recorded, loaded);
      g_unlink (p);
    }
  g_unlink (path);
  g_rmdir (dir);
}

/* A PACKED_EVENTS record is refused in a version 2 file, and one whose
 * bytes do not decode as its count of events is refused with a sentence
 * naming the file and the record. */
static void
test_capture_packed_hostile (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "small.mach6", NULL);
  g_autofree guint8 *data = NULL;
  gsize length, at = M6_CAPTURE_HEADER_SIZE;

  g_autoptr (M6Session) recorded = build_recorded_session (path, 40, 11);
  g_assert_true (g_file_get_contents (path, (char **) &data, &length, NULL));
  /* The decoder's checks, on a replay that reads every record. */
  m6_capture_set_force_replay (TRUE);

  /* Version 2 in the header, PACKED_EVENTS in the records. */
  {
    g_autoptr (GError) error = NULL;
    g_autofree guint8 *v2 = g_memdup2 (data, length);
    v2[8] = 2;
    put_le32 (v2 + M6_CAPTURE_HEADER_SIZE - 4, crc_bitwise (v2, M6_CAPTURE_HEADER_SIZE - 4));
    g_autofree char *p = write_temp (dir, v2, length);
    g_autoptr (M6Session) loaded = m6_capture_load (p, &error);
    g_assert_null (loaded);
    g_assert_nonnull (error);
    g_test_message ("%s", error->message);
    g_assert_nonnull (strstr (error->message, "PACKED_EVENTS in a version 2 capture"));
    g_unlink (p);
  }

  /* The first PACKED_EVENTS record claiming one event fewer than it holds,
   * its CRC made good: the check is the decoder's, not the CRC's. */
  while (at < length && get_le32 (data + at) != M6_CAPTURE_RECORD_PACKED_EVENTS)
    at += 12 + get_le32 (data + at + 4);
  g_assert_cmpuint (at, <, length);
  {
    g_autoptr (GError) error = NULL;
    g_autofree guint8 *bad = g_memdup2 (data, length);
    guint8 *r = bad + at;
    guint32 rlen = get_le32 (r + 4);
    g_assert_cmpuint (get_le32 (r + 16), >, 0);
    put_le32 (r + 16, get_le32 (r + 16) - 1);
    g_autofree guint8 *whole = g_malloc (8 + rlen);
    memcpy (whole, r, 8);
    memcpy (whole + 8, r + 12, rlen);
    put_le32 (r + 8, crc_bitwise (whole, 8 + rlen));
    g_autofree char *p = write_temp (dir, bad, length);
    g_autoptr (M6Session) loaded = m6_capture_load (p, &error);
    g_assert_null (loaded);
    g_assert_nonnull (error);
    g_test_message ("%s", error->message);
    g_assert_nonnull (strstr (error->message, "does not decode"));
    g_assert_nonnull (strstr (error->message, "record"));
    g_unlink (p);
  }
  m6_capture_set_force_replay (FALSE);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_capture_bad_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "small.mach6", NULL);
  g_autofree guint8 *data = NULL;
  g_autoptr (GError) error = NULL;
  gsize length;

  g_autoptr (M6Session) recorded = build_recorded_session (path, 4, 3);
  g_assert_true (g_file_get_contents (path, (char **) &data, &length, NULL));
  /* The records' checks, on a replay that reads them all. */
  m6_capture_set_force_replay (TRUE);

  /* Not a capture. */
  {
    g_autofree char *p = write_temp (dir, (const guint8 *) "hello, world, this is text", 26);
    g_assert_null (m6_capture_load (p, &error));
    g_assert_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_NOT_CAPTURE);
    g_clear_error (&error);
  }
  /* Missing file, a folder. */
  g_assert_null (m6_capture_load ("/nonexistent.mach6", &error));
  g_assert_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO);
  g_clear_error (&error);
  g_assert_null (m6_capture_load (dir, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* The first record (right after the header) claims 9999999 bytes. */
  {
    g_autofree guint8 *copy = g_memdup2 (data, length);
    guint32 huge = GUINT32_TO_LE (9999999);
    memcpy (copy + M6_CAPTURE_HEADER_SIZE + 4, &huge, 4);
    g_autofree char *p = write_temp (dir, copy, length);
    g_assert_null (m6_capture_load (p, &error));
    g_assert_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT);
    g_test_message ("%s", error->message);
    g_assert_nonnull (strstr (error->message, "record 1 at offset 128"));
    g_assert_nonnull (strstr (error->message, "length 9999999 exceeds"));
    g_clear_error (&error);
  }
  /* A newer version. */
  {
    g_autofree guint8 *copy = g_memdup2 (data, length);
    copy[8] = M6_CAPTURE_VERSION + 1;
    g_autofree char *p = write_temp (dir, copy, length);
    g_assert_null (m6_capture_load (p, &error));
    g_assert_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_VERSION);
    g_clear_error (&error);
  }
  /* Bytes after END. */
  {
    g_autofree guint8 *copy = g_malloc (length + 5);
    memcpy (copy, data, length);
    memset (copy + length, 0, 5);
    g_autofree char *p = write_temp (dir, copy, length + 5);
    g_assert_null (m6_capture_load (p, &error));
    g_assert_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT);
    g_assert_nonnull (strstr (error->message, "5 bytes follow the END record"));
    g_clear_error (&error);
  }
  /* Cut inside the last record: loads, unfinished, with the ignored bytes. */
  {
    g_autofree char *p = write_temp (dir, data, length - 3);
    M6CaptureInfo info;
    g_autoptr (M6Session) loaded = m6_capture_load_full (p, &info, &error);
    g_assert_no_error (error);
    g_assert_false (info.finished);
    g_assert_cmpuint (info.ignored_bytes, ==, 12 + 56 - 3);
    g_assert_cmpuint (info.n_events, ==, m6_session_get_n_events (recorded));
    assert_sessions_equal (recorded, loaded);
    g_unlink (p);
  }
  m6_capture_set_force_replay (FALSE);
  g_unlink (path);
  g_rmdir (dir);
}

/* The whole accounting state of two sessions, byte for byte: trees,
 * reservoirs and their generators, counts, frame series, history. */
static void
assert_states_equal (M6Session *a,
                     M6Session *b)
{
  g_autoptr (GByteArray) x = g_byte_array_new ();
  g_autoptr (GByteArray) y = g_byte_array_new ();

  m6_session_state_write (a, x);
  m6_session_state_write (b, y);
  g_assert_cmpuint (x->len, ==, y->len);
  g_assert_cmpmem (x->data, x->len, y->data, y->len);
}

/* The frame index of @path from its frame tables and from a scan of every
 * event: the same frames, and the same events behind the slowest one. */
static void
assert_frame_indexes_equal (const char *path,
                            M6Session  *session,
                            gboolean    expect_frames)
{
  g_autoptr (GError) error = NULL;
  guint from_tables = m6_test_get_count (NULL, "frame-index-from-tables");
  g_autoptr (M6FrameIndex) fast = m6_frame_index_open_capture (path, session, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  if (expect_frames)
    g_assert_cmpuint (m6_test_get_count (NULL, "frame-index-from-tables"), ==, from_tables + 1);
  m6_capture_set_force_replay (TRUE);
  g_autoptr (M6FrameIndex) scan = m6_frame_index_open_capture (path, session, NULL, NULL, NULL, &error);
  m6_capture_set_force_replay (FALSE);
  g_assert_no_error (error);
  guint64 total = 0;
  for (guint t = 0; t < m6_session_get_n_threads (session); t++)
    {
      g_autoptr (GArray) a = m6_frame_index_get_series (fast, t, G_MININT64, G_MAXINT64);
      g_autoptr (GArray) b = m6_frame_index_get_series (scan, t, G_MININT64, G_MAXINT64);
      g_assert_cmpuint (a->len, ==, b->len);
      for (guint i = 0; i < a->len; i++)
        {
          const M6FrameInfo *x = &g_array_index (a, M6FrameInfo, i), *y = &g_array_index (b, M6FrameInfo, i);
          g_assert_cmpuint (x->number, ==, y->number);
          g_assert_cmpint (x->start_ns, ==, y->start_ns);
          g_assert_cmpint (x->duration_ns, ==, y->duration_ns);
          g_assert_cmpuint (x->label, ==, y->label);
          g_assert_cmpuint (x->event_pos, ==, y->event_pos);
        }
      total += a->len;
      if (a->len == 0)
        continue;
      const M6FrameInfo *last = &g_array_index (a, M6FrameInfo, a->len - 1);
      g_autoptr (GArray) sa = m6_frame_index_get_scopes (fast, t, last->start_ns, last->start_ns + last->duration_ns, &error);
      g_assert_no_error (error);
      g_autoptr (GArray) sb = m6_frame_index_get_scopes (scan, t, last->start_ns, last->start_ns + last->duration_ns, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (sa->len, ==, sb->len);
      for (guint i = 0; i < sa->len; i++)
        {
          const M6ScopeInstance *x = &g_array_index (sa, M6ScopeInstance, i), *y = &g_array_index (sb, M6ScopeInstance, i);
          g_assert_cmpint (x->start_ns, ==, y->start_ns);
          g_assert_cmpint (x->duration_ns, ==, y->duration_ns);
          g_assert_cmpint (x->mem_delta, ==, y->mem_delta);
          g_assert_cmpuint (x->node_id, ==, y->node_id);
          g_assert_cmpuint (x->parent, ==, y->parent);
        }
    }
  if (expect_frames)
    g_assert_cmpuint (total, >, 0);
}

/* A capture with checkpoints every 4 KB opens from its last one to the
 * state a replay of every event gives; cut at 10 random offsets, it opens
 * from its last whole checkpoint plus the events after it, to the state a
 * replay of the cut file gives, and says how much it replayed. */
static void
test_capture_checkpoints (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "checkpoints.mach6", NULL);
  g_autofree char *cut_path = g_build_filename (dir, "cut.mach6", NULL);
  g_autofree guint8 *data = NULL;
  guint32 seed = g_test_rand_int ();
  g_autoptr (GError) error = NULL;
  M6CaptureInfo info, replay_info;
  gsize length;

  g_test_message ("seed %u", seed);
  m6_test_hooks_enable ();
  g_setenv ("MACH6_TEST", "capture-checkpoint-bytes=4096", TRUE);
  g_autoptr (M6Session) recorded = build_recorded_session (path, 300, seed);
  g_unsetenv ("MACH6_TEST");
  g_assert_true (g_file_get_contents (path, (char **) &data, &length, NULL));

  g_autoptr (M6Session) loaded = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_assert_true (info.finished);
  g_assert_true (info.from_checkpoint);
  /* After the last checkpoint: the TRAILER and END only. */
  g_assert_cmpuint (info.replayed_events, ==, 0);
  g_assert_cmpuint (info.replayed_bytes, <, 1024);
  m6_capture_set_force_replay (TRUE);
  g_autoptr (M6Session) replayed = m6_capture_load_full (path, &replay_info, &error);
  m6_capture_set_force_replay (FALSE);
  g_assert_no_error (error);
  g_assert_false (replay_info.from_checkpoint);
  g_assert_cmpuint (replay_info.replayed_bytes, ==, length - M6_CAPTURE_HEADER_SIZE);
  assert_sessions_equal (recorded, loaded);
  assert_states_equal (replayed, loaded);
  assert_states_equal (recorded, loaded);
  g_assert_cmpuint (info.n_records, ==, replay_info.n_records);
  g_assert_cmpuint (info.n_events, ==, replay_info.n_events);
  assert_frame_indexes_equal (path, loaded, TRUE);

  GRand *rand = g_rand_new_with_seed (seed);
  guint from_checkpoint = 0;
  for (guint round = 0; round < 10; round++)
    {
      gsize cut = (gsize) g_rand_int_range (rand, M6_CAPTURE_HEADER_SIZE, (gint32) length);
      g_autoptr (GError) local = NULL;

      g_test_message ("cut at %zu of %zu", cut, length);
      g_assert_true (g_file_set_contents (cut_path, (const char *) data, (gssize) cut, NULL));
      g_autoptr (M6Session) fast = m6_capture_load_full (cut_path, &info, &local);
      g_assert_no_error (local);
      g_assert_false (info.finished);
      m6_capture_set_force_replay (TRUE);
      g_autoptr (M6Session) slow = m6_capture_load_full (cut_path, &replay_info, &local);
      m6_capture_set_force_replay (FALSE);
      g_assert_no_error (local);
      assert_states_equal (slow, fast);
      assert_frame_indexes_equal (cut_path, fast, FALSE);
      g_assert_cmpuint (info.n_events, ==, replay_info.n_events);
      g_assert_cmpuint (info.ignored_bytes, ==, replay_info.ignored_bytes);
      if (info.from_checkpoint)
        {
          from_checkpoint++;
          g_assert_cmpuint (info.checkpoint_offset, <, cut);
          /* What came after the checkpoint, the cut-off record included. */
          g_assert_cmpuint (info.replayed_bytes, ==,
                            cut - info.checkpoint_offset - 12 - 64);
          g_assert_cmpuint (info.replayed_events, <=, info.n_events);
        }
    }
  g_assert_cmpuint (from_checkpoint, >, 0);
  g_rand_free (rand);
  g_unlink (cut_path);
  g_unlink (path);
  g_rmdir (dir);
}

/* A rolling capture whose checkpoints span buffer flushes (each state is
 * hundreds of KB, a flush is 256 KB): every CHECKPOINT in the file reads,
 * whole parts in front of it, and the file opens from the last one to the
 * accounting of the whole recording. A roll point between a checkpoint's
 * parts and its record once wrote a checkpoint inside another, and the
 * file opened to its last part only. */
static void
test_capture_rolled_checkpoints (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "rolled.mach6", NULL);
  guint32 seed = g_test_rand_int ();
  g_autoptr (GError) error = NULL;
  M6CaptureInfo info;

  g_test_message ("seed %u", seed);
  g_autoptr (M6Session) recorded = build_rolled_session (path, 40000, seed, 4u << 20);

  g_autoptr (M6CaptureReader) reader = m6_capture_reader_open (path, &error);
  g_assert_no_error (error);
  g_auto (M6CaptureLayout) layout = { 0 };
  g_assert_true (m6_capture_reader_locate (reader, FALSE, &layout, &error));
  g_assert_true (m6_capture_reader_walk (reader, &layout, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (layout.checkpoints->len, >=, 2);
  g_autoptr (GByteArray) state = g_byte_array_new ();
  for (guint i = 0; i < layout.checkpoints->len; i++)
    {
      M6CaptureCheckpoint cp;
      guint64 offset = g_array_index (layout.checkpoints, guint64, i);
      g_assert_true (m6_capture_reader_read_checkpoint (reader, offset, &cp, state, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (state->len, >, 256 * 1024 / 2);
    }

  g_autoptr (M6Session) loaded = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  g_test_message ("%llu bytes, %llu rolls, %llu events dropped, %u checkpoints",
                  (unsigned long long) info.file_size, (unsigned long long) info.rolls,
                  (unsigned long long) info.dropped_events, layout.checkpoints->len);
  g_assert_cmpuint (info.rolls, >=, 2);
  g_assert_cmpuint (info.file_size, <=, 4u << 20);
  g_assert_true (info.from_checkpoint);
  g_assert_cmpuint (m6_session_get_n_events (loaded), ==, m6_session_get_n_events (recorded));
  assert_states_equal (recorded, loaded);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/core/capture/round-trip", test_capture_round_trip);
  g_test_add_func ("/core/capture/abort-leaves-nothing", test_capture_abort_leaves_nothing);
  g_test_add_func ("/core/capture/truncated", test_capture_truncated);
  g_test_add_func ("/core/capture/checkpoints", test_capture_checkpoints);
  g_test_add_func ("/core/capture/rolled-checkpoints", test_capture_rolled_checkpoints);
  g_test_add_func ("/core/capture/bit-flips", test_capture_bit_flips);
  g_test_add_func ("/core/capture/bad-files", test_capture_bad_files);
  g_test_add_func ("/core/capture/old-versions", test_capture_old_versions);
  g_test_add_func ("/core/capture/packed-hostile", test_capture_packed_hostile);
  return g_test_run ();
}
