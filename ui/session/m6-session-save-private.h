/* SPDX-License-Identifier: MIT */
/* m6-session-save-private.h — what the session window's saving parts
 * share: the kinds of file, a save's choices, and the steps between the
 * chooser (m6-session-save.c) and the job thread (m6-session-jobs.c). */
#pragma once

#include "m6-session-window-private.h"

G_BEGIN_DECLS

typedef enum
{
  SAVED_SCREENSHOT,
  SAVED_JSON,
  SAVED_CAPTURE,
  SAVED_EXPORT,
  SAVED_FLAME_GRAPH,
  SAVED_DRIFT_GRAPH,
} SavedKind;

/* What to write, and how: the chooser's choices land here too. */
typedef struct
{
  SavedKind       kind;
  M6ExportFormat  format;       /* SAVED_EXPORT */
  double          interval_s;   /* SAVED_EXPORT as ndjson */
  int             width;        /* graphs: 0 is the widget's current size */
  int             height;
} SaveJob;

typedef gboolean (*WriteFunc) (M6SessionWindow *self,
                               const char      *path,
                               const SaveJob   *job,
                               GError         **error);

/* Say what was written (a toast), or why not (a dialog). */
void m6_session_report_written   (M6SessionWindow *self,
                                  const char      *path,
                                  const SaveJob   *job,
                                  const GError    *error);
/* The size a graph picture is drawn at: the one chosen, or the widget's. */
void m6_session_picture_size     (M6SessionWindow *self,
                                  const SaveJob   *job,
                                  int             *width,
                                  int             *height);
/* Write @path with @write, on the job thread where the kind allows (all
 * but screenshots), after the save under way if there is one. */
void m6_session_write_and_report (M6SessionWindow *self,
                                  WriteFunc        write,
                                  const char      *path,
                                  const SaveJob   *job);

G_END_DECLS
