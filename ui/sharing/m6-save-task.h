/* SPDX-License-Identifier: MIT */
/* m6-save-task.h — a save or an export of a session that runs on a thread:
 * a copy of a live recording or of a capture file, or an export that
 * replays one (NDJSON, Chrome trace). Touches no widget and no live
 * session: the recording takes its own lock for a moment. */
#pragma once

#include <gio/gio.h>

#include "m6-export.h"
#include "m6-job-bar.h"
#include "m6-recording.h"

G_BEGIN_DECLS

/* Copy the capture of @recording (or, if NULL, the file @capture_path) to
 * @dest; or, with @export set, export it as @format to @dest. Progress goes
 * to @bar, which also holds the cancellable (see m6_job_bar_begin). */
void      m6_save_task_run     (M6JobBar               *bar,
                                GCancellable           *cancellable,
                                M6Recording            *recording,
                                const char             *capture_path,
                                gboolean                export,
                                M6ExportFormat          format,
                                const M6ExportOptions  *options,
                                const char             *dest,
                                GAsyncReadyCallback     callback,
                                gpointer                user_data);
/* Export the trees of @session (json, csv, folded) to @dest. Only for a
 * session nothing ingests any more (a loaded capture): the thread reads
 * it while the window does. Cancel removes what was written. */
void      m6_save_task_run_trees (M6JobBar              *bar,
                                  GCancellable          *cancellable,
                                  M6Session             *session,
                                  M6ExportFormat         format,
                                  const char            *dest,
                                  GAsyncReadyCallback    callback,
                                  gpointer               user_data);
/* Write @bytes (a live session's export, serialised on the main thread
 * under the recording's lock, where it costs a few ms and no I/O) to
 * @dest atomically. */
void      m6_save_task_run_bytes (M6JobBar              *bar,
                                  GCancellable          *cancellable,
                                  GBytes                *bytes,
                                  const char            *dest,
                                  GAsyncReadyCallback    callback,
                                  gpointer               user_data);
/* The export of @recording's copy (or, if NULL, of the file
 * @capture_path) as @format to @dest, replayed from the file
 * (m6_export_capture), on the calling thread; progress to @bar if given.
 * The one replay path of the viewer's exports. */
gboolean  m6_save_task_export_replayed (M6Recording           *recording,
                                        const char            *capture_path,
                                        M6ExportFormat         format,
                                        const M6ExportOptions *options,
                                        const char            *dest,
                                        GCancellable          *cancellable,
                                        M6JobBar              *bar,
                                        GError               **error);
gboolean  m6_save_task_finish  (GAsyncResult           *result,
                                GError                **error);

G_END_DECLS
