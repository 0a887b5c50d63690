/* SPDX-License-Identifier: MIT */
/* m6-export.c — exporters: json, ndjson, csv, folded stacks, Chrome trace.
 *
 * Each format is a writer into a buffered stream; m6_write_atomically()
 * puts the stream on a temporary file next to the target and renames it
 * only when every byte is written and synced. */
#include "m6-export-private.h"
#include "m6-capture.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK (m6-export-error-quark, m6_export_error)

static const struct
{
  const char *name;
  const char *extension;
} formats[] = {
  [M6_EXPORT_JSON]   = { "json", "json" },
  [M6_EXPORT_NDJSON] = { "ndjson", "ndjson" },
  [M6_EXPORT_CSV]    = { "csv", "csv" },
  [M6_EXPORT_FOLDED] = { "folded", "folded" },
  [M6_EXPORT_CHROME] = { "chrome", "trace.json" },
};

gboolean
m6_export_format_parse (const char     *name,
                        M6ExportFormat *format)
{
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_ascii_strcasecmp (name, formats[i].name) == 0)
      {
        *format = (M6ExportFormat) i;
        return TRUE;
      }
  return FALSE;
}

const char *
m6_export_format_name (M6ExportFormat format)
{
  return formats[format].name;
}

const char *
m6_export_format_extension (M6ExportFormat format)
{
  return formats[format].extension;
}

/* --- entry point -------------------------------------------------------- */

static const M6WriteFunc writers[] = {
  [M6_EXPORT_JSON]   = m6_export_json_write,
  [M6_EXPORT_NDJSON] = m6_export_ndjson_write,
  [M6_EXPORT_CSV]    = m6_export_csv_write,
  [M6_EXPORT_FOLDED] = m6_export_folded_write,
  [M6_EXPORT_CHROME] = m6_export_chrome_write,
};

static gboolean
check_format (M6EventLog      *log,
              M6ExportFormat   format,
              GError         **error)
{
  if ((guint) format >= G_N_ELEMENTS (writers))
    {
      g_set_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_FORMAT, _("Unknown export format %d"), format);
      return FALSE;
    }
  if ((format == M6_EXPORT_NDJSON || format == M6_EXPORT_CHROME) && log == NULL)
    {
      g_set_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_FORMAT,
                   _("The %s export needs the recorded events; export from a capture file"),
                   m6_export_format_name (format));
      return FALSE;
    }
  return TRUE;
}

gboolean
m6_export_session (M6Session              *session,
                   M6EventLog             *log,
                   M6ExportFormat          format,
                   const M6ExportOptions  *options,
                   const char             *path,
                   GError                **error)
{
  ExportJob job = { session, log, options };

  g_return_val_if_fail (M6_IS_SESSION (session), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  if (!check_format (log, format, error))
    return FALSE;
  return m6_write_atomically (path, writers[format], &job, error);
}

gboolean
m6_export_session_to_stream (M6Session              *session,
                             M6EventLog             *log,
                             M6ExportFormat          format,
                             const M6ExportOptions  *options,
                             GOutputStream          *out,
                             GError                **error)
{
  ExportJob job = { session, log, options };

  g_return_val_if_fail (M6_IS_SESSION (session), FALSE);
  g_return_val_if_fail (G_IS_OUTPUT_STREAM (out), FALSE);

  if (!check_format (log, format, error))
    return FALSE;
  return writers[format] (out, &job, error) && g_output_stream_flush (out, NULL, error);
}

typedef struct
{
  M6EventLog    *log;
  M6SampleModel *model;
} Feed;

static void
feed_events (M6Session     *session,
             M6Thread      *thread,
             const M6Event *events,
             gsize          n_events,
             gpointer       data)
{
  Feed *feed = data;

  if (feed->log != NULL)
    m6_event_log_record (session, thread, events, n_events, feed->log);
  if (feed->model != NULL)
    m6_sample_model_events_func (session, thread, events, n_events, feed->model);
}

gboolean
m6_export_capture (const char             *capture,
                   M6ExportFormat          format,
                   const M6ExportOptions  *options,
                   const char             *path,
                   GCancellable           *cancellable,
                   M6ProgressFunc          progress,
                   gpointer                progress_data,
                   GError                **error)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6EventLog) log = NULL;
  g_autoptr (M6SampleModel) model = NULL;
  gboolean ok;

  g_return_val_if_fail (capture != NULL && path != NULL, FALSE);

  /* The events are collected only for the formats that need time, and
   * only for as long as the export takes. */
  if (format == M6_EXPORT_NDJSON || format == M6_EXPORT_CHROME)
    log = m6_event_log_new ();
  /* Folded stacks and Chrome traces carry the capture's samples. */
  if (format == M6_EXPORT_FOLDED || format == M6_EXPORT_CHROME)
    {
      g_autoptr (M6Samples) samples = m6_samples_load (capture, error);
      if (samples == NULL)
        return FALSE;
      if (samples->threads->len > 0)
        {
          model = m6_sample_model_new (session);
          m6_sample_model_set_lane_max (model, 0);
          m6_sample_model_add (model, samples, FALSE);
        }
    }
  Feed feed = { log, model };
  ok = m6_capture_replay_into (capture, session, log != NULL || model != NULL ? feed_events : NULL, &feed,
                               NULL, cancellable, progress, progress_data, error);
  if (!ok)
    return FALSE;
  if (model != NULL)
    m6_sample_model_flush (model);
  if (!check_format (log, format, error))
    return FALSE;
  ExportJob job = { session, log, options, model };
  return m6_write_atomically (path, writers[format], &job, error);
}
