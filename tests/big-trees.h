/* SPDX-License-Identifier: MIT */
/* big-trees.h — the two tree shapes every CLI and export path must handle
 * in linear time (issue 8): a recursion 4,000 deep and a frame with
 * 100,000 distinct children. Shared by the core, CLI and UI tests and the
 * benchmarks; header-only, on the core API. */
#pragma once

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "m6-capture.h"
#include "m6-session.h"

#define BIG_TREE_DEPTH  4000u
#define BIG_TREE_WIDTH  100000u
#define BIG_TREE_FRAMES 2u

typedef enum
{
  BIG_TREE_DEEP,   /* frame → r → r → … (@n levels in all) */
  BIG_TREE_WIDE,   /* frame → c0 … c(@n-1) */
} BigTreeShape;

/* Scope nodes (without the root) of the tree big_tree_feed() builds. */
static inline guint
big_tree_n_nodes (BigTreeShape shape,
                  guint        n)
{
  return shape == BIG_TREE_DEEP ? n : n + 1;
}

/* The node budget the consumers of these trees are given (`--max-nodes`,
 * the viewer's preference): room for both shapes whole. */
#define BIG_TREE_MAX_NODES 200000

/* Feed BIG_TREE_FRAMES frames of @shape into a new thread of @session,
 * 1 µs and 16 bytes apart per event, with room for every node. */
static inline void
big_tree_feed (M6Session    *session,
               BigTreeShape  shape,
               guint         n)
{
  m6_session_set_max_nodes (session, BIG_TREE_MAX_NODES);
  M6Thread *thread = m6_session_add_thread (session, (guint64) m6_session_get_pid (session), "main");
  guint32 frame = m6_session_intern_label (session, shape == BIG_TREE_DEEP ? "r" : "frame", -1);
  g_autofree guint32 *labels = NULL;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  gint64 t = 0, heap = 1 << 20;

  if (shape == BIG_TREE_WIDE)
    {
      labels = g_new (guint32, n);
      for (guint i = 0; i < n; i++)
        {
          char label[16];
          g_snprintf (label, sizeof label, "c%u", i);
          labels[i] = m6_session_intern_label (session, label, -1);
        }
    }

  for (guint f = 0; f < BIG_TREE_FRAMES; f++)
    {
      g_array_set_size (events, 0);
      if (shape == BIG_TREE_DEEP)
        {
          for (guint d = 0; d < n; d++)
            {
              M6Event ev = { t += 1000, heap += 16, frame, d };
              g_array_append_val (events, ev);
            }
          for (guint d = n; d-- > 0;)
            {
              M6Event ev = { t += 1000, heap += 16, M6_EVENT_DONE, d };
              g_array_append_val (events, ev);
            }
        }
      else
        {
          M6Event open = { t += 1000, heap, frame, 0 };
          g_array_append_val (events, open);
          for (guint i = 0; i < n; i++)
            {
              M6Event mark = { t += 1000, heap, labels[i], 1 };
              M6Event done = { t += 1000, heap += 16, M6_EVENT_DONE, 1 };
              g_array_append_val (events, mark);
              g_array_append_val (events, done);
            }
          M6Event close = { t += 1000, heap, M6_EVENT_DONE, 0 };
          g_array_append_val (events, close);
        }
      m6_session_ingest (session, thread, (const M6Event *) events->data, events->len);
    }
}

/* Write a finished capture of @shape to @path. */
static inline void
big_tree_write_capture (const char   *path,
                        BigTreeShape  shape,
                        guint         n)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  M6CaptureWriter *writer;

  m6_session_set_process (session, 4000, shape == BIG_TREE_DEEP ? "deep-tree" : "wide-tree");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);
  big_tree_feed (session, shape, n);
  m6_session_set_ended (session, TRUE);
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  m6_capture_writer_free (writer);
}

/* --- reading what came out ------------------------------------------------ */

typedef struct
{
  guint64 bytes;
  guint64 lines;
  guint64 max_line;      /* bytes, without the line break */
  guint64 max_indent;    /* leading spaces */
  guint64 hits;          /* occurrences of the needle */
} Scan;

/* One pass over @path in 64 KiB pieces: a file of any size, little memory. */
static inline void
scan_file (const char *path,
           const char *needle,
           Scan       *scan)
{
  FILE *f = fopen (path, "rb");
  gsize nlen = strlen (needle);
  char buf[65536 + 64];
  gsize carry = 0, n;
  guint64 line = 0, indent = 0;
  gboolean in_indent = TRUE;

  g_assert_nonnull (f);
  memset (scan, 0, sizeof *scan);
  while ((n = fread (buf + carry, 1, 65536, f)) > 0)
    {
      for (gsize i = carry; i < carry + n; i++)
        {
          if (buf[i] == '\n')
            {
              scan->lines++;
              scan->max_line = MAX (scan->max_line, line);
              scan->max_indent = MAX (scan->max_indent, indent);
              line = indent = 0;
              in_indent = TRUE;
              continue;
            }
          line++;
          if (in_indent && buf[i] == ' ')
            indent++;
          else
            in_indent = FALSE;
        }
      scan->bytes += n;
      /* Needles in [0, carry + n): the carried tail is shorter than one,
       * so nothing is counted twice. Keep the last nlen - 1 bytes. */
      gsize total = carry + n;
      for (char *p = buf; (p = g_strstr_len (p, (gssize) (buf + total - p), needle)) != NULL; p++)
        scan->hits++;
      carry = MIN (nlen - 1, total);
      memmove (buf, buf + total - carry, carry);
    }
  fclose (f);
}
