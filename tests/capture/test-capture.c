/* SPDX-License-Identifier: MIT */
/* test-capture.c — capture files (core/capture/m6-capture*.c): a recorded session
 * written and loaded back equal; an aborted write leaving nothing; files
 * cut short, bit-flipped, of older versions, hostile packed records or not
 * captures at all, each giving a GError naming what is wrong or a correct
 * partial load, never a crash. Built twice, the second time under
 * AddressSanitizer and UBSan. */
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
#include "m6-payload.h"
#include "m6-session-private.h"

/* A session fed balanced random streams on three threads, recorded. */
static M6Session *
build_recorded_session (const char *path,
                        guint       frames,
                        guint32     seed)
{
  M6Session *session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  GRand *rand = g_rand_new_with_seed (seed);
  static const char *const names[] = { "frame", "physics", "render", "ai", "draw", "ünïcode" };

  m6_session_set_process (session, 4242, "recorded");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  g_autoptr (M6CaptureWriter) writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);

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
      g_autoptr (M6Session) loaded = m6_capture_load_full (path, &info, &error);
      g_assert_cmpint (pwrite (fd, &byte, 1, at), ==, 1);

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

static guint32
crc_bitwise (const guint8 *p,
             gsize         n)
{
  guint32 crc = ~0u;

  for (gsize i = 0; i < n; i++)
    {
      crc ^= p[i];
      for (int k = 0; k < 8; k++)
        crc = (crc & 1) ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
  return ~crc;
}

static void
put_le32 (guint8  *p,
          guint32  v)
{
  v = GUINT32_TO_LE (v);
  memcpy (p, &v, 4);
}

static guint32
get_le32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

/* @data (a version 3 file) as version @version wrote it: PACKED_EVENTS
 * records spelled out as EVENTS of 24-byte events (versions 1 and 2),
 * each after a PAD record that puts its events on an 8-byte boundary of
 * the file (version 2; version 1 had none), END's record count fixed. */
static GByteArray *
downgrade_capture (const guint8 *data,
                   gsize         length,
                   guint         version,
                   guint        *pads_out,
                   guint        *packed_out)
{
  GByteArray *out = g_byte_array_new ();
  gsize at = M6_CAPTURE_HEADER_SIZE;
  guint pads = 0, packed = 0;
  g_autofree M6Event *events = NULL;
  gsize events_alloc = 0;

  g_assert_cmpuint (get_le32 (data + 8), ==, 3);
  g_byte_array_append (out, data, M6_CAPTURE_HEADER_SIZE);
  while (at < length)
    {
      guint32 type = get_le32 (data + at);
      guint32 size = 12 + get_le32 (data + at + 4);
      gsize start = out->len;

      if (type == M6_CAPTURE_RECORD_PACKED_EVENTS)
        {
          g_autoptr (GError) error = NULL;
          guint32 thread, count;

          if (version == 2)
            {
              guint pad = (guint) ((8 - ((out->len + 12 + 20) & 7)) & 7);
              g_byte_array_set_size (out, (guint) (start + 12 + pad));
              guint8 *r = out->data + start;
              memset (r, 0, 12 + pad);
              put_le32 (r, M6_CAPTURE_RECORD_PAD);
              put_le32 (r + 4, pad);
              g_autofree guint8 *whole = g_malloc (8 + pad);
              memcpy (whole, r, 8);
              memset (whole + 8, 0, pad);
              put_le32 (r + 8, crc_bitwise (whole, 8 + pad));
              pads++;
              start = out->len;
            }

          g_assert_true (m6_capture_decode_events (type, data + at + 12, size - 12, &thread, &events,
                                                   &events_alloc, &count, &error));
          g_assert_no_error (error);
          packed++;
          g_byte_array_set_size (out, (guint) (start + 20 + 24 * (gsize) count));
          guint8 *r = out->data + start;
          put_le32 (r, M6_CAPTURE_RECORD_EVENTS);
          put_le32 (r + 4, 8 + 24 * count);
          put_le32 (r + 12, thread);
          put_le32 (r + 16, count);
          for (guint32 i = 0; i < count; i++)
            {
              guint8 *e = r + 20 + 24 * i;
              guint64 t = GUINT64_TO_LE ((guint64) events[i].t_ns), heap = GUINT64_TO_LE ((guint64) events[i].heap);
              memcpy (e, &t, 8);
              memcpy (e + 8, &heap, 8);
              put_le32 (e + 16, events[i].label);
              put_le32 (e + 20, events[i].depth);
            }
        }
      else
        g_byte_array_append (out, data + at, size);

      if (out->len > start && (type == M6_CAPTURE_RECORD_PACKED_EVENTS || type == M6_CAPTURE_RECORD_END))
        {
          guint8 *r = out->data + start;
          guint32 rlen = get_le32 (r + 4);
          /* END: u64 records before it, more by the PADs. */
          if (type == M6_CAPTURE_RECORD_END)
            put_le32 (r + 12, get_le32 (r + 12) + pads);
          g_autofree guint8 *whole = g_malloc (8 + rlen);
          memcpy (whole, r, 8);
          memcpy (whole + 8, r + 12, rlen);
          put_le32 (r + 8, crc_bitwise (whole, 8 + rlen));
        }
      at += size;
    }
  out->data[8] = (guint8) version;
  put_le32 (out->data + M6_CAPTURE_HEADER_SIZE - 4, crc_bitwise (out->data, M6_CAPTURE_HEADER_SIZE - 4));
  *pads_out = pads;
  *packed_out = packed;
  return out;
}

/* Version 1 (before PAD records) and version 2 (24-byte events, before
 * PACKED_EVENTS) files still load, to the same session: the recorded
 * file, spelled out as those versions wrote it. */
static void
test_capture_old_versions (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-capture-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "small.mach6", NULL);
  g_autofree guint8 *data = NULL;
  gsize length;

  g_autoptr (M6Session) recorded = build_recorded_session (path, 40, 11);
  g_assert_true (g_file_get_contents (path, (char **) &data, &length, NULL));
  for (guint version = 1; version <= 2; version++)
    {
      g_autoptr (GError) error = NULL;
      guint pads, packed;
      g_autoptr (GByteArray) old = downgrade_capture (data, length, version, &pads, &packed);

      g_test_message ("version %u: %u PAD records put in, %u PACKED_EVENTS spelled out", version, pads, packed);
      g_assert_cmpuint (packed, >, 0);
      g_assert_cmpuint (pads, ==, version == 2 ? packed : 0);
      g_assert_cmpuint (old->len, >, length);

      g_autofree char *p = write_temp (dir, old->data, old->len);
      g_autoptr (M6Session) loaded = m6_capture_load (p, &error);
      g_assert_no_error (error);
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
    g_assert_cmpuint (info.ignored_bytes, ==, 12 + 40 - 3);
    g_assert_cmpuint (info.n_events, ==, m6_session_get_n_events (recorded));
    assert_sessions_equal (recorded, loaded);
    g_unlink (p);
  }
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
  g_test_add_func ("/core/capture/bit-flips", test_capture_bit_flips);
  g_test_add_func ("/core/capture/bad-files", test_capture_bad_files);
  g_test_add_func ("/core/capture/old-versions", test_capture_old_versions);
  g_test_add_func ("/core/capture/packed-hostile", test_capture_packed_hostile);
  return g_test_run ();
}
