/* SPDX-License-Identifier: MIT */
/* m6-export.h — a session leaves the app in the format the next tool
 * expects: the payload JSON, an NDJSON time series, the stats table as CSV,
 * folded stacks, and Chrome Trace Event JSON. Every file is written
 * atomically: a failed export leaves nothing behind. */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "m6-capture.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_EXPORT_ERROR (m6_export_error_quark ())

typedef enum
{
  M6_EXPORT_ERROR_FORMAT,   /* unknown format, or one this source cannot give */
  M6_EXPORT_ERROR_WRITE,    /* writing the output failed */
} M6ExportError;

GQuark      m6_export_error_quark        (void);

typedef enum
{
  M6_EXPORT_JSON,
  M6_EXPORT_NDJSON,
  M6_EXPORT_CSV,
  M6_EXPORT_FOLDED,
  M6_EXPORT_CHROME,
} M6ExportFormat;

gboolean    m6_export_format_parse       (const char     *name,
                                          M6ExportFormat *format);
const char *m6_export_format_name        (M6ExportFormat  format);
/* The usual file name extension, without the dot. */
const char *m6_export_format_extension   (M6ExportFormat  format);

/* The raw events of a session, per thread in ingest order; the formats
 * that need time (ndjson, chrome) read them. Collect them by passing
 * m6_event_log_record as the session's recorder before feeding it. */
typedef struct _M6EventLog M6EventLog;

M6EventLog *m6_event_log_new             (void);
void        m6_event_log_free            (M6EventLog     *self);
void        m6_event_log_record          (M6Session      *session,
                                          M6Thread       *thread,
                                          const M6Event  *events,
                                          gsize           n_events,
                                          gpointer        log);

typedef struct
{
  double interval_s;   /* ndjson: window length, seconds (default 1) */
} M6ExportOptions;

/* Write @session as @format to @path atomically. @log is needed by ndjson
 * and chrome (NULL is an error for those); json, csv and folded read only
 * the trees. */
gboolean    m6_export_session            (M6Session             *session,
                                          M6EventLog            *log,
                                          M6ExportFormat         format,
                                          const M6ExportOptions *options,
                                          const char            *path,
                                          GError               **error);

/* Export the capture file @capture as @format to @path: it is replayed
 * into a private session for the export (its events held only while the
 * export is written, for ndjson and chrome), then dropped. The one replay
 * path for exporting a file: the viewer's exports of a loaded capture or
 * of a live recording's copy, and `mach6 export`. */
gboolean    m6_export_capture            (const char            *capture,
                                          M6ExportFormat         format,
                                          const M6ExportOptions *options,
                                          const char            *path,
                                          GCancellable          *cancellable,
                                          M6ProgressFunc         progress,
                                          gpointer               progress_data,
                                          GError               **error);

/* The same, written to @out as it goes (no temporary file, no rename). */
gboolean    m6_export_session_to_stream  (M6Session             *session,
                                          M6EventLog            *log,
                                          M6ExportFormat         format,
                                          const M6ExportOptions *options,
                                          GOutputStream         *out,
                                          GError               **error);

/* The json export as a node (also used by the viewer's JSON export). */
JsonNode   *m6_export_session_json       (M6Session             *session);
/* The same with only thread @only_thread (-1: all); `mach6 report --json`. */
JsonNode   *m6_export_session_json_thread (M6Session            *session,
                                           gint                  only_thread);

/* Stream the json export (thread @only_thread, or all with -1) to @out as
 * it is written: memory stays bounded by the tree, not by the output. The
 * text equals m6_json_append (m6_export_session_json_thread (), TRUE) and a
 * line break. */
gboolean    m6_export_write_json          (M6Session            *session,
                                           gint                  only_thread,
                                           GOutputStream        *out,
                                           GError              **error);

/* The ndjson export's pieces, for `mach6 stream`: an empty session with
 * @session's labels (shared) and thread indices, to feed one window's
 * scopes into; and the line of window @index (t_start = index ×
 * @interval_s) listing the threads i of @window where @used[i]. */
M6Session  *m6_export_window_session      (M6Session            *session);
void        m6_export_append_ndjson_window (GString             *out,
                                           M6Session            *window,
                                           gint64                index,
                                           double                interval_s,
                                           const gboolean       *used);

/* Write @contents to @path through a temporary file in the same folder,
 * then rename; on any error nothing is left behind. */
typedef gboolean (*M6WriteFunc) (GOutputStream  *out,
                                 gpointer        user_data,
                                 GError        **error);
gboolean    m6_write_atomically          (const char     *path,
                                          M6WriteFunc     write,
                                          gpointer        user_data,
                                          GError        **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6EventLog, m6_event_log_free)

G_END_DECLS
