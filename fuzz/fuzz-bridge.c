/* SPDX-License-Identifier: MIT */
/* fuzz-bridge.c — libFuzzer harness for the bridge's batch parser
 * (core/bridge/m6-bridge-batch.c, docs/bridge-protocol.md). The first byte
 * says how many labels the bridge holds of every session (0-255) and the
 * second where its last batch ended (x 2^20 ns); the rest is the body. A
 * batch either parses into events that are balanced, bounded and forward
 * in time, or is refused with a sentence. Nothing may crash, leak or read
 * out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "m6-bridge-batch.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static M6BridgeSessionState known;

static gboolean
lookup (const char *session, M6BridgeSessionState *state, gpointer user_data)
{
  if (session[0] == 'n')   /* sessions named n… are new */
    return FALSE;
  *state = known;
  return TRUE;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 2)
    return 0;
  known.n_labels = data[0];
  known.last_t_ns = (gint64) data[1] << 20;
  GError *error = NULL;
  M6BridgeBatch *batch = m6_bridge_batch_parse ((const char *) data + 2, size - 2, lookup, NULL, &error);
  if ((batch == NULL) == (error == NULL) || (error != NULL && error->message[0] == '\0'))
    abort ();
  if (batch != NULL)
    {
      /* What the parser promises the session. */
      guint depth = 0;
      gint64 t = batch->t_ns;
      guint32 n_labels = MAX (batch->label_base + batch->labels->len, known.n_labels);
      for (guint i = 0; i < batch->events->len; i++)
        {
          const M6BridgeEvent *e = &g_array_index (batch->events, M6BridgeEvent, i);
          if (e->label > n_labels || e->t_ns < t || e->t_ns > M6_BRIDGE_TIME_MAX_NS
              || e->heap_kb > M6_BRIDGE_HEAP_MAX_KB || e->heap_kb < -M6_BRIDGE_HEAP_MAX_KB)
            abort ();
          t = e->t_ns;
          if (e->label != 0)
            depth++;
          else if (depth-- == 0)
            abort ();
          if (depth > M6_BRIDGE_DEPTH_MAX)
            abort ();
        }
      if (depth != 0 && !batch->end)
        abort ();
      m6_bridge_batch_free (batch);
    }
  g_clear_error (&error);
  return 0;
}
