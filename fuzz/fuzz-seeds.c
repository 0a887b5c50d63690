/* SPDX-License-Identifier: MIT */
/* fuzz-seeds.c — writes the seed corpora of the fuzz harnesses from real
 * captures made by the capture writer: a two-thread game-like session, a
 * deep and a wide tree, one cut short, one with out-of-range readings; and
 * event streams for the ingest harness. Run by tools/fuzz.sh. */
#include <glib/gstdio.h>
#include <string.h>

#include "m6-capture.h"
#include "m6-capture-reader.h"
#include "m6-pack.h"
#include "m6-samples.h"
#include "m6-wire.h"
#include "../tests/big-trees.h"

/* A sample record as `mach6 serve --sample` sends it: a SAMPLES frame. */
static gboolean
samples_frame (guint32       type,
               const guint8 *payload,
               gsize         length,
               gpointer      user_data,
               GError      **error)
{
  GByteArray *s = user_data;
  g_autoptr (GByteArray) f = g_byte_array_new ();

  (void) error;
  m6_wire_begin (f, M6_MSG_SAMPLES);
  m6_wire_put_uint (f, type);
  g_byte_array_append (f, payload, (guint) length);
  m6_wire_end (f);
  g_byte_array_append (s, f->data, f->len);
  return TRUE;
}

/* Chunk @chunk (0 or 1) of samples of tid 77: a status, names, samples
 * with chains, an off-CPU span. */
static M6Samples *
sample_chunk (guint chunk)
{
  M6Samples *c = m6_samples_new ();
  c->hz = 4000;
  if (chunk == 0)
    c->status = g_strdup ("no blocking chains: kernel.perf_event_paranoid is 2");
  M6SampleThread *t = m6_samples_thread (c, 77);
  t->method = M6_UNWIND_FP;
  t->lost = chunk;
  const char *names[] = { "busy_seventy", "physics_step", "main" };
  for (guint k = 0; k < 3; k++)
    {
      guint32 id = m6_samples_intern (c, names[chunk == 1 && k == 0 ? 1 : k]);
      g_array_append_val (c->frames, id);
    }
  M6Sample sample = { 1200 + 1000 * chunk, 0, 3 };
  g_array_append_val (t->samples, sample);
  M6OffCpu off = { 2000 + 1000 * chunk, 2600 + 1000 * chunk, 1, 2 };
  g_array_append_val (t->off_cpu, off);
  return c;
}

/* Two chunks of samples, written by the real samples writer. */
static void
append_samples (GByteArray *s)
{
  g_autoptr (M6SamplesWriter) writer = m6_samples_writer_new ();

  for (guint chunk = 0; chunk < 2; chunk++)
    {
      g_autoptr (M6Samples) c = sample_chunk (chunk);
      m6_samples_writer_write_to (writer, c, samples_frame, s, NULL);
    }
}

/* A remote stream as a server sends it after ATTACHED (fuzz-remote.c,
 * target 0), a HELLO and an ATTACH (target 1) and an event block (2). */
static void
remote_seeds (const char *dir)
{
  g_autoptr (GByteArray) s = g_byte_array_new ();
  g_autoptr (GByteArray) f = g_byte_array_new ();
  M6Event ev[] = { { 1000, 4096, 1, 0 }, { 1500, 4096, 2, 1 }, { 2500, 4160, 0, 1 }, { 9000, 4200, 0, 0 } };
  g_mkdir_with_parents (dir, 0755);

  guint8 target = 0;
  g_byte_array_append (s, &target, 1);
  m6_wire_begin (f, M6_MSG_LABELS);
  m6_wire_put_uint (f, 1); m6_wire_put_uint (f, 2);
  m6_wire_put_bytes (f, "frame", -1); m6_wire_put_bytes (f, "physics", -1);
  m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
  m6_wire_begin (f, M6_MSG_THREAD);
  m6_wire_put_uint (f, 0); m6_wire_put_uint (f, 77); m6_wire_put_bytes (f, "main", -1);
  m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
  for (guint codec = 0; codec < 3; codec++)
    {
      m6_wire_begin (f, M6_MSG_EVENTS);
      m6_wire_put_uint (f, 0);
      m6_pack_encode ((M6PackCodec) codec, ev, G_N_ELEMENTS (ev), f);
      m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
    }
  m6_wire_begin (f, M6_MSG_COUNTS);
  for (guint k = 0; k < 7; k++)
    m6_wire_put_uint (f, k == 1 ? 0 : k);
  m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
  m6_wire_begin (f, M6_MSG_STATE);
  m6_wire_put_uint (f, 1); m6_wire_put_uint (f, 0); m6_wire_put_uint (f, 2);
  m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
  append_samples (s);
  m6_wire_begin (f, M6_MSG_END);
  m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
  g_autofree char *p0 = g_build_filename (dir, "stream", NULL);
  g_file_set_contents (p0, (const char *) s->data, s->len, NULL);

  g_byte_array_set_size (s, 0);
  target = 1;
  g_byte_array_append (s, &target, 1);
  m6_wire_begin (f, M6_MSG_HELLO);
  m6_wire_put_bytes (f, M6_WIRE_MAGIC, -1); m6_wire_put_uint (f, M6_WIRE_VERSION); m6_wire_put_bytes (f, "0123456789abcdef", -1);
  m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
  m6_wire_begin (f, M6_MSG_ATTACH);
  m6_wire_put_uint (f, 4242);
  m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
  m6_wire_begin (f, M6_MSG_PROCESSES);
  m6_wire_put_uint (f, 1); m6_wire_put_uint (f, 4242); m6_wire_put_bytes (f, "game", -1);
  m6_wire_put_uint (f, 2); m6_wire_put_uint (f, 0); m6_wire_put_uint (f, 1); m6_wire_put_uint (f, 0);
  m6_wire_put_bytes (f, "", -1);
  m6_wire_end (f); g_byte_array_append (s, f->data, f->len);
  g_autofree char *p1 = g_build_filename (dir, "requests", NULL);
  g_file_set_contents (p1, (const char *) s->data, s->len, NULL);

  g_byte_array_set_size (s, 0);
  target = 2;
  g_byte_array_append (s, &target, 1);
  m6_pack_encode (M6_PACK_CODEC_ZSTD, ev, G_N_ELEMENTS (ev), s);
  g_autofree char *p2 = g_build_filename (dir, "block", NULL);
  g_file_set_contents (p2, (const char *) s->data, s->len, NULL);
}

/* What a seed capture holds besides the game's frames. */
typedef struct
{
  guint    frames;          /* 12 unless more */
  gboolean garbage;         /* out-of-range readings */
  guint    checkpoint_every; /* frames between checkpoints (0: the writer's own only) */
  gboolean samples;         /* sample records (20-24) every 8 frames */
  guint64 *checkpoint_end;  /* where the file ended after the last checkpoint of the first half */
} GameSeed;

/* A session of process 77 named @process with the shim's heap, and its
 * capture writer to @path. */
static M6Session *
seed_session (const char       *process,
              const char       *path,
              M6CaptureWriter **writer)
{
  M6Session *session = m6_session_new ();
  g_autoptr (GError) error = NULL;

  m6_session_set_process (session, 77, process);
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_SHIM);
  *writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);
  return session;
}

static void
game_capture (const char     *path,
              const GameSeed *seed)
{
  g_autoptr (GError) error = NULL;
  M6CaptureWriter *writer;
  g_autoptr (M6Session) session = seed_session ("seed-game", path, &writer);
  g_autoptr (M6SamplesWriter) samples = m6_samples_writer_new ();
  guint n_frames = MAX (seed->frames, 12);
  gboolean garbage = seed->garbage;

  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 physics = m6_session_intern_label (session, "physics", -1);
  guint32 render = m6_session_intern_label (session, "render", -1);
  M6Thread *main_thread = m6_session_add_thread (session, 77, "main");
  M6Thread *worker = m6_session_add_thread (session, 78, "worker");

  for (guint f = 0; f < n_frames; f++)
    {
      /* A frame of 16 ms give or take, so that the events pack as a game's. */
      gint64 t = (gint64) f * 16000000 + (f * 7919) % 3000, h = 4096 + f * 100;
      M6Event events[] = {
        { t, h, frame, 0 },
        { t + 1000, h, physics, 1 },
        { t + 5000, h + 64, M6_EVENT_DONE, 1 },
        { t + 6000, h + 64, render, 1 },
        { t + 9000, garbage && f == 5 ? G_MAXINT64 : h + 128, M6_EVENT_DONE, 1 },
        { garbage && f == 7 ? G_MININT64 : t + 12000, h + 100, M6_EVENT_DONE, 0 },
      };
      m6_session_ingest (session, main_thread, events, G_N_ELEMENTS (events));
      M6Event job[] = { { t + 500, h, physics, 0 }, { t + 800, h - 32, M6_EVENT_DONE, 0 } };
      m6_session_ingest (session, worker, job, G_N_ELEMENTS (job));
      if (seed->samples && f % 8 == 0)
        {
          g_autoptr (M6Samples) chunk = sample_chunk ((f / 8) % 2);
          g_assert_true (m6_samples_writer_write (samples, chunk, writer, &error));
        }
      if (seed->checkpoint_every != 0 && f % seed->checkpoint_every == seed->checkpoint_every - 1)
        {
          g_assert_true (m6_capture_writer_checkpoint (writer, &error));
          if (seed->checkpoint_end != NULL && f < n_frames / 2)
            *seed->checkpoint_end = m6_capture_writer_get_size (writer);
        }
    }
  m6_session_set_thread_drops (session, worker, 3);
  m6_session_set_thread_state (session, worker, M6_THREAD_STATE_EXITED);
  m6_session_notify_changed (session);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  m6_capture_writer_free (writer);
}

/* Format 4: a capture with a checkpoint every 10 frames and its trailer,
 * the same cut short a little after a checkpoint (it opens from there),
 * and one with sample records. rolled_seed() makes the rolled one. */
static void
format4_seeds (const char *dir)
{
  g_autofree char *checkpoints = g_build_filename (dir, "checkpoints.mach6", NULL);
  g_autofree char *cut = g_build_filename (dir, "cut-after-checkpoint.mach6", NULL);
  g_autofree char *sampled = g_build_filename (dir, "samples.mach6", NULL);
  g_autofree char *text = NULL;
  guint64 checkpoint_end = 0;
  gsize length = 0;

  game_capture (checkpoints, &(GameSeed) { .frames = 60, .checkpoint_every = 10, .checkpoint_end = &checkpoint_end });
  g_assert_true (g_file_get_contents (checkpoints, &text, &length, NULL));
  g_assert_cmpuint (checkpoint_end + 40, <, length);
  g_assert_true (g_file_set_contents (cut, text, (gssize) checkpoint_end + 40, NULL));
  game_capture (sampled, &(GameSeed) { .frames = 40, .checkpoint_every = 16, .samples = TRUE });
}

/* A rolling capture (--max-size 4 MB, m6-capture-roll.c): frames of 258
 * events (few frames, so that a checkpoint's frame series stays small)
 * until the file rolled, then a few more rolls' worth, with a checkpoint
 * every 32 frames besides the writer's own. libFuzzer reads 256 KB of an
 * input (tools/fuzz.sh -max_len) and the file is megabytes: the seed is
 * its head, cut 40 bytes past the last CHECKPOINT that ends within 250 KB,
 * so that it begins as a rolled file does (the header, a ROLLED record,
 * the declarations of a roll point) and holds at least two checkpoints
 * after its ROLLED record. */
static void
rolled_seed (const char *dir)
{
  g_autofree char *whole = g_build_filename (dir, "rolled-whole.mach6.tmp", NULL);
  g_autofree char *path = g_build_filename (dir, "rolled.mach6", NULL);
  g_autoptr (GError) error = NULL;
  M6CaptureWriter *writer;
  g_autoptr (M6Session) session = seed_session ("seed-rolled", whole, &writer);
  g_assert_true (m6_capture_writer_set_max_size (writer, 4u << 20, &error));

  guint32 frame = m6_session_intern_label (session, "frame", -1);
  guint32 physics = m6_session_intern_label (session, "physics", -1);
  guint32 render = m6_session_intern_label (session, "render", -1);
  M6Thread *main_thread = m6_session_add_thread (session, 77, "main");
  M6Event batch[2 + 4 * 64];
  guint64 rolled_at = 0;

  for (guint f = 0; rolled_at == 0 || f < rolled_at + 4000; f++)
    {
      gint64 t = (gint64) f * 16000000 + (f * 7919) % 3000, h = 4096 + (f % 1000) * 100;
      guint n = 0;
      batch[n++] = (M6Event) { t, h, frame, 0 };
      for (guint i = 0; i < 64; i++, t += 20000)
        {
          batch[n++] = (M6Event) { t + 1000 + (f + i) % 97, h, physics, 1 };
          batch[n++] = (M6Event) { t + 5000, h + 64, M6_EVENT_DONE, 1 };
          batch[n++] = (M6Event) { t + 6000, h + 64, render, 1 };
          batch[n++] = (M6Event) { t + 9000 + (f + i) % 1009, h + 128, M6_EVENT_DONE, 1 };
        }
      batch[n++] = (M6Event) { t + 12000, h + 100, M6_EVENT_DONE, 0 };
      m6_session_ingest (session, main_thread, batch, n);
      if (f % 32 == 31)
        g_assert_true (m6_capture_writer_checkpoint (writer, &error));
      if (rolled_at == 0 && m6_capture_writer_get_n_rolls (writer, NULL) > 0)
        rolled_at = f;
    }
  m6_session_notify_changed (session);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  m6_capture_writer_free (writer);

  /* The head: ROLLED first, then the records up to a checkpoint. */
  M6CaptureReader *reader = m6_capture_reader_open (whole, &error);
  g_assert_no_error (error);
  M6CaptureRecord rec;
  guint64 cut = 0;
  guint checkpoints = 0;
  g_assert_true (m6_capture_reader_next (reader, &rec, &error));
  g_assert_cmpuint (rec.type, ==, M6_CAPTURE_RECORD_ROLLED);
  while (m6_capture_reader_next (reader, &rec, &error) && rec.type != 0
         && m6_capture_reader_tell (reader) + 40 <= 250 * 1024)
    if (rec.type == M6_CAPTURE_RECORD_CHECKPOINT)
      {
        cut = m6_capture_reader_tell (reader) + 40;
        checkpoints++;
      }
  g_assert_no_error (error);
  m6_capture_reader_free (reader);
  g_assert_cmpuint (checkpoints, >=, 2);
  g_autofree char *text = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (whole, &text, &length, NULL));
  g_assert_cmpuint (cut, <, length);
  g_assert_true (g_file_set_contents (path, text, (gssize) cut, NULL));
  g_unlink (whole);
}

static void
write_events (const char    *path,
              const M6Event *events,
              gsize          n)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();

  for (gsize i = 0; i < n; i++)
    {
      g_byte_array_append (out, (const guint8 *) &events[i].t_ns, 8);
      g_byte_array_append (out, (const guint8 *) &events[i].heap, 8);
      g_byte_array_append (out, (const guint8 *) &events[i].label, 4);
      g_byte_array_append (out, (const guint8 *) &events[i].depth, 4);
    }
  g_file_set_contents (path, (const char *) out->data, out->len, NULL);
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      g_printerr ("usage: fuzz-seeds CAPTURE-DIR INGEST-DIR [SEGMENT-DIR]\n");
      return 2;
    }
  g_mkdir_with_parents (argv[1], 0755);
  g_mkdir_with_parents (argv[2], 0755);

  g_autofree char *game = g_build_filename (argv[1], "game.mach6", NULL);
  g_autofree char *garbage = g_build_filename (argv[1], "garbage.mach6", NULL);
  g_autofree char *deep = g_build_filename (argv[1], "deep.mach6", NULL);
  g_autofree char *wide = g_build_filename (argv[1], "wide.mach6", NULL);
  g_autofree char *cut = g_build_filename (argv[1], "cut.mach6", NULL);
  game_capture (game, &(GameSeed) { 0 });
  game_capture (garbage, &(GameSeed) { .garbage = TRUE });
  format4_seeds (argv[1]);
  rolled_seed (argv[1]);
  big_tree_write_capture (deep, BIG_TREE_DEEP, 40);
  big_tree_write_capture (wide, BIG_TREE_WIDE, 60);

  /* Cut short inside a record: loads as unfinished. */
  g_autofree char *text = NULL;
  gsize length = 0;
  g_file_get_contents (game, &text, &length, NULL);
  g_file_set_contents (cut, text, (gssize) (length * 2 / 3), NULL);

  /* Event streams: a nested frame, recursion, extremes, a stray done. The
   * thread is in the label's top two bits (see fuzz-ingest.c). */
  M6Event nested[] = {
    { 0, 0, 1, 0 }, { 10, 100, 2, 1 }, { 20, 50, 0, 1 }, { 30, 60, 3, 1 }, { 40, 70, 0, 1 }, { 50, 80, 0, 0 },
    { 60, 80, 1u | (1u << 30), 0 }, { 70, 90, 0u | (1u << 30), 0 },
    { 80, 80, 1, 0 }, { 90, 90, 0, 0 },
  };
  M6Event extremes[] = {
    { 0, G_MAXINT64, 1, 0 }, { 1, G_MININT64, 0, 0 }, { 2, 0, 1, 0 }, { G_MAXINT64, 5, 0, 0 },
    { 3, 0, 1, 0 }, { 4, (gint64) 1 << 53, 2, 1 }, { 5, -((gint64) 1 << 53), 0, 1 }, { 6, 0, 0, 0 },
    { G_MININT64, 0, 0, 0 },
  };
  M6Event recursion[64];
  for (guint i = 0; i < 32; i++)
    {
      recursion[i] = (M6Event) { i, i * 8, 4, i };
      recursion[63 - i] = (M6Event) { 100 + i, 1000 - i, 0, i };
    }
  g_autofree char *p1 = g_build_filename (argv[2], "nested.events", NULL);
  g_autofree char *p2 = g_build_filename (argv[2], "extremes.events", NULL);
  g_autofree char *p3 = g_build_filename (argv[2], "recursion.events", NULL);
  write_events (p1, nested, G_N_ELEMENTS (nested));
  write_events (p2, extremes, G_N_ELEMENTS (extremes));
  write_events (p3, recursion, G_N_ELEMENTS (recursion));

  /* Segment ops (see fuzz-segment.c): drain 10 events, patch 8 bytes at
   * offset 64, drain all; and a patch of the control page's first bytes. */
  if (argc > 3)
    {
      static const guint8 drain_patch_drain[] = { 1, 10, 0, 0, 64, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 0 };
      static const guint8 patch_start[] = { 0, 0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff, 1, 0, 0 };
      static const guint8 drain_all[] = { 1, 0, 0 };
      g_mkdir_with_parents (argv[3], 0755);
      g_autofree char *s1 = g_build_filename (argv[3], "drain-patch-drain", NULL);
      g_autofree char *s2 = g_build_filename (argv[3], "patch-start", NULL);
      g_autofree char *s3 = g_build_filename (argv[3], "drain-all", NULL);
      g_file_set_contents (s1, (const char *) drain_patch_drain, sizeof drain_patch_drain, NULL);
      g_file_set_contents (s2, (const char *) patch_start, sizeof patch_start, NULL);
      g_file_set_contents (s3, (const char *) drain_all, sizeof drain_all, NULL);
    }
  if (argc > 4)
    remote_seeds (argv[4]);
  return 0;
}
