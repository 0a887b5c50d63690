/* SPDX-License-Identifier: MIT */
/* m6-export-private.h — what the exporters share: the buffered sink
 * they write through, the path stack, the pre-order walk, and each
 * exporter's writer for m6_export_session_to_stream() (m6-export.c). */
#pragma once

#include "m6-export.h"
#include "m6-json.h"
#include "m6-payload.h"
#include "m6-tempfile.h"
#include "m6-session-private.h"
#include "m6-sample-model.h"

G_BEGIN_DECLS

/* The raw events of a capture, by thread index (M6Event arrays). */

struct _M6EventLog
{
  GPtrArray *threads;   /* index -> GArray of M6Event */
};

/* Text goes through a GString flushed to the stream in 64 KiB pieces. */
typedef struct
{
  GOutputStream *out;
  GString       *buf;
  GError       **error;
  gboolean       failed;
} Sink;

/* "frame/physics": the labels from the top-level scope down to the node
 * last pushed. A pre-order walk pushes each node once; the path is then
 * its parent's (kept as a prefix) and its own label, so the cost is the
 * path's length, not its depth times a label lookup. */
typedef struct
{
  GString *path;
  GArray  *ends;     /* guint: path length up to depth d + 1 */
  char     separator;
  gboolean folded;
} PathStack;

typedef struct
{
  M6Session             *session;
  M6EventLog            *log;
  const M6ExportOptions *options;
  M6SampleModel         *samples;   /* or NULL: folded and chrome carry them */
} ExportJob;

/* m6-export-writer.c */
gboolean m6_export_sink_flush (Sink *sink);
void m6_export_sink_init (Sink          *sink,
                          GOutputStream *out,
                          GError       **error);
gboolean m6_export_sink_finish (Sink *sink);
void m6_export_path_stack_init (PathStack *ps,
                                char       separator,
                                gboolean   folded);
void m6_export_path_stack_clear (PathStack *ps);
const char *m6_export_path_stack_push (PathStack    *ps,
                                       M6Tree       *tree,
                                       const M6Node *node);
const char *m6_export_thread_state_name (M6Session *session,
                                         M6Thread  *thread);

/* m6-export-json.c */
gboolean m6_export_json_write (GOutputStream  *out,
                               gpointer        data,
                               GError        **error);

/* m6-export-csv.c */
gboolean m6_export_csv_write (GOutputStream  *out,
                              gpointer        data,
                              GError        **error);

/* m6-export-folded.c */
gboolean m6_export_folded_write (GOutputStream  *out,
                                 gpointer        data,
                                 GError        **error);

/* m6-export-chrome.c */
gboolean m6_export_chrome_write (GOutputStream  *out,
                                 gpointer        data,
                                 GError        **error);

/* m6-export-ndjson.c */
gboolean m6_export_ndjson_write (GOutputStream  *out,
                                 gpointer        data,
                                 GError        **error);

/* Flush once the buffer holds 64 KiB; FALSE when writing failed. */
static inline gboolean
m6_export_sink_maybe_flush (Sink *sink)
{
  return sink->buf->len < (1 << 16) || m6_export_sink_flush (sink);
}

G_END_DECLS
