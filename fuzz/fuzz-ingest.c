/* SPDX-License-Identifier: MIT */
/* fuzz-ingest.c — libFuzzer harness for the event-stream validator
 * (m6_session_ingest): the input is a stream of 24-byte events for three
 * threads of a session with four labels. After it, every tree must be
 * balanced within M6_MAX_DEPTH, every node must keep the telescoping
 * identity mem.net == h_last - h_first (in two's complement), counts must
 * add up, and the payload must be written without undefined behaviour.
 * The trees have a node budget of 8 (docs/accounting.md#the-node-budget),
 * so deeper or wider streams go through (other) and its folded calls. */
#include <stdint.h>
#include <string.h>

#include "m6-payload.h"
#include "m6-session.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define EVENT_BYTES 24u

static void
check_tree (M6Thread *thread)
{
  M6Tree *tree = m6_thread_get_tree (thread);

  if (m6_tree_get_depth (tree) > M6_MAX_DEPTH)
    abort ();
  for (guint id = 1; id < m6_tree_get_n_nodes (tree); id++)
    {
      M6Node *node = m6_tree_get_node (tree, id);
      M6NodeStats stats;

      if (node->opens > 0
          && m6_node_mem_net (node) != (gint64) ((guint64) node->h_last - (guint64) node->h_first))
        abort ();
      if (node->count > node->opens || node->depth > M6_MAX_DEPTH)
        abort ();
      if (m6_node_is_other (node) && node->first_child != NULL)
        abort ();
      if (node->count > 0 && (node->mem_min > node->mem_max || node->time_min > node->time_max))
        abort ();
      m6_node_stats_compute (tree, node, &stats);
    }
  GString *text = g_string_new (NULL);
  m6_payload_append (text, tree, m6_tree_get_root (tree));
  g_string_free (text, TRUE);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr (M6Session) session = m6_session_new ();
  M6Thread *threads[3];
  g_autoptr (GArray) batch = g_array_new (FALSE, FALSE, sizeof (M6Event));
  guint64 given[3] = { 0 }, accepted[3] = { 0 };

  for (guint i = 0; i < 4; i++)
    {
      char label[8];
      g_snprintf (label, sizeof label, "l%u", i);
      m6_session_intern_label (session, label, -1);
    }
  m6_session_set_max_nodes (session, 8);
  for (guint i = 0; i < 3; i++)
    threads[i] = m6_session_add_thread (session, 100 + i, "t");

  /* Each event: i64 t, i64 heap, u32 label, u32 depth; the thread is the
   * label's top bits, so one input covers several streams; a batch ends
   * at a thread change, as drains do. */
  guint current = 0;
  for (size_t off = 0; off + EVENT_BYTES <= size; off += EVENT_BYTES)
    {
      M6Event ev;
      memcpy (&ev.t_ns, data + off, 8);
      memcpy (&ev.heap, data + off + 8, 8);
      memcpy (&ev.label, data + off + 16, 4);
      memcpy (&ev.depth, data + off + 20, 4);
      guint thread = (ev.label >> 30) % 3;
      ev.label &= 0x3fffffff;
      /* Small values are the interesting ones: labels 0-5, depths as given. */
      if (ev.label > 64)
        ev.label %= 6;

      if (thread != current && batch->len > 0)
        {
          accepted[current] += m6_session_ingest (session, threads[current], (M6Event *) batch->data, batch->len);
          given[current] += batch->len;
          g_array_set_size (batch, 0);
        }
      current = thread;
      g_array_append_val (batch, ev);
    }
  if (batch->len > 0)
    {
      accepted[current] += m6_session_ingest (session, threads[current], (M6Event *) batch->data, batch->len);
      given[current] += batch->len;
    }

  for (guint i = 0; i < 3; i++)
    {
      M6Thread *t = threads[i];
      if (accepted[i] != m6_thread_get_n_events (t)
          || m6_thread_get_n_events (t) + m6_thread_get_skipped (t) + m6_thread_get_rejected (t) != given[i])
        abort ();
      check_tree (t);
      M6Tree *tree = m6_thread_get_tree (t);
      guint others = 0;
      for (guint id = 0; id < m6_tree_get_n_nodes (tree); id++)
        others += m6_node_is_other (m6_tree_get_node (tree, id));
      if (m6_tree_get_n_nodes (tree) - others > 8)
        abort ();
    }
  return 0;
}
