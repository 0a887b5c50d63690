/* SPDX-License-Identifier: MIT */
/* m6-session-frames.h — what a session window needs to hunt hitches,
 * kept apart from the window: its frame index (live raw window or a
 * capture's index), the frame view it opens from the frame-time lane,
 * and "Capture on Hitch". The window calls these few hooks:
 *
 *   init        win.frames (Ctrl+J), win.capture-on-hitch (Ctrl+Shift+H)
 *               and the hitch and live-window settings as actions; the
 *               drift graph's lane opens frames
 *   attach_live before its recording starts
 *   set_capture for a loaded capture (indexed on a thread at once)
 *   dispose     after its recording stopped */
#pragma once

#include "m6-frame-index.h"
#include "m6-frame-window.h"
#include "m6-hitch-catcher.h"
#include "m6-session-window.h"

G_BEGIN_DECLS

void            m6_session_frames_init          (M6SessionWindow *window,
                                                 M6DriftGraph    *drift_graph);
void            m6_session_frames_attach_live   (M6SessionWindow *window,
                                                 M6Recording     *recording);
void            m6_session_frames_set_capture   (M6SessionWindow *window,
                                                 const char      *path);
void            m6_session_frames_dispose       (M6SessionWindow *window);

/* Open the frame view at the frame running at @t_ns of the shown thread
 * (< 0: the slowest frame). NULL, with a toast, when there are none. */
M6FrameWindow  *m6_session_frames_open          (M6SessionWindow *window,
                                                 gint64           t_ns);
/* Open the frame view on every thread's scopes in [@t0, @t1) (ns), as a
 * drag across the frame-time lane does. */
M6FrameWindow  *m6_session_frames_open_range    (M6SessionWindow *window,
                                                 gint64           t0,
                                                 gint64           t1);
M6FrameWindow  *m6_session_frames_get_window    (M6SessionWindow *window);
/* The index; NULL while a capture's is still being built. */
M6FrameIndex   *m6_session_frames_get_index     (M6SessionWindow *window);
/* Is a capture's index being built (on a thread)? */
gboolean        m6_session_frames_get_indexing  (M6SessionWindow *window);
M6HitchCatcher *m6_session_frames_get_catcher   (M6SessionWindow *window);
/* Paths of the hitch captures this window wrote. */
GStrv           m6_session_frames_dup_hitch_paths (M6SessionWindow *window);

G_END_DECLS
