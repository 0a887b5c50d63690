/* SPDX-License-Identifier: MIT */
/* m6-session-window.h — one profiled session: flame graph, stats tree,
 * drift graph and status, live while attached, browsable after.
 *
 * Its actions (a path parameter of '' asks with a file chooser):
 *   win.save-capture(s)        the recording so far, as a .mach6 capture
 *   win.export-json(s)         the payload JSON (Ctrl+E)
 *   win.export(s)              "FORMAT" asks where, "FORMAT:PATH" writes there;
 *                              json, ndjson (1 s windows), csv, folded, chrome
 *   win.export-flame-graph(s)  a picture, .svg, .pdf or .png by extension,
 *   win.export-drift-graph(s)  at the size win.graph-size says
 *   win.graph-size(s)          state: "" (as shown) or "WIDTHxHEIGHT"
 *   win.compare(s)             compare with a baseline capture
 *   win.color-mode(s)          state: "label", "memory" or, while comparing, "compare"
 *   win.screenshot(s), win.zoom-out, win.zoom-reset, win.thread(u),
 *   win.pause (state), win.search (state) */
#pragma once

#include <adwaita.h>

#include "m6-compare-window.h"
#include "m6-drift-graph.h"
#include "m6-export.h"
#include "m6-flame-graph.h"
#include "m6-job-bar.h"
#include "m6-ledger-view.h"
#include "m6-reader.h"
#include "m6-recording.h"
#include "m6-sample-model.h"
#include "m6-session.h"
#include "m6-stats-view.h"

G_BEGIN_DECLS

#define M6_TYPE_SESSION_WINDOW (m6_session_window_get_type ())
G_DECLARE_FINAL_TYPE (M6SessionWindow, m6_session_window, M6, SESSION_WINDOW, AdwApplicationWindow)

/* A live session: @reader (taken over) is drained and recorded to a
 * temporary capture by an M6Recording on its worker thread; the window
 * holds the session's lock outside poll() (see m6-recording.h). */
M6SessionWindow *m6_session_window_new_live          (GtkApplication  *app,
                                                      M6Reader        *reader);
/* The same for a recording not started yet (taken over): a remote one. */
M6SessionWindow *m6_session_window_new_for_recording (GtkApplication  *app,
                                                      M6Recording     *recording);
/* A session loaded from @path (a capture file). */
M6SessionWindow *m6_session_window_new_for_capture   (GtkApplication  *app,
                                                      M6Session       *session,
                                                      const char      *path);

/* The session's call-stack samples (m6-sample-model.h), shown by the
 * flame graph, the stats tree and the frame view; @destroy (may be NULL)
 * is called on @model when the window is done with it. */
void             m6_session_window_set_sample_model  (M6SessionWindow *self,
                                                      M6SampleModel   *model,
                                                      GDestroyNotify   destroy);
M6SampleModel   *m6_session_window_get_sample_model  (M6SessionWindow *self);
M6Session       *m6_session_window_get_session       (M6SessionWindow *self);
M6FlameGraph    *m6_session_window_get_flame_graph   (M6SessionWindow *self);
M6StatsView     *m6_session_window_get_stats_view    (M6SessionWindow *self);
M6DriftGraph    *m6_session_window_get_drift_graph   (M6SessionWindow *self);
M6LedgerView    *m6_session_window_get_ledger_view   (M6SessionWindow *self);
guint            m6_session_window_get_thread        (M6SessionWindow *self);
gint             m6_session_window_get_pid           (M6SessionWindow *self);
gboolean         m6_session_window_get_live          (M6SessionWindow *self);
void             m6_session_window_set_host          (M6SessionWindow *self,
                                                      const char      *host);
const char      *m6_session_window_get_host          (M6SessionWindow *self);
/* The session window of @app attached to @pid on @host ("HOST:PORT" of a
 * `mach6 serve`; NULL: this machine), live or kept open after its program
 * ended, or NULL. A pid is only unique on its own machine. */
GtkWindow       *m6_session_window_find_attached     (GtkApplication  *app,
                                                      const char      *host,
                                                      gint             pid);
/* Was this window attached to a process (live or ended since), not a file? */
gboolean         m6_session_window_get_attached      (M6SessionWindow *self);
gboolean         m6_session_window_get_paused        (M6SessionWindow *self);
/* Is the "program exited" bar shown? */
gboolean         m6_session_window_get_ended_shown   (M6SessionWindow *self);
/* A comparison is reading its baseline or this session on a thread. */
gboolean         m6_session_window_get_comparing     (M6SessionWindow *self);
/* A save or export is running or waiting for its turn. */
gboolean         m6_session_window_get_saving        (M6SessionWindow *self);
/* What tests count (m6-test-hooks.h): "refresh", a redraw of the live view
 * (pausing stops them); "catch-up-refresh", one of those made while catching
 * up (the recording was behind the game, and the views followed at 10 Hz to
 * leave it the CPU); "tick", a frame-clock tick or status-timer turn (they
 * stop while the view is paused or caught up with an idle program). */
/* Nothing scheduled to redraw: no tick callback and no status-timer turn
 * (a live view caught up with an idle program, or paused and quiet). */
gboolean         m6_session_window_get_idle          (M6SessionWindow *self);
/* The file the last screenshot, export or save wrote, or NULL. */
const char      *m6_session_window_get_last_written  (M6SessionWindow *self);
/* The text of the most recent toast (tests read what the user read). */
const char      *m6_session_window_get_last_message  (M6SessionWindow *self);

/* A warning above the views (an unfinished capture), and its text while
 * shown (NULL otherwise). */
void             m6_session_window_show_notice       (M6SessionWindow *self,
                                                      const char      *message);
const char      *m6_session_window_get_notice        (M6SessionWindow *self);
/* The header's subtitle ("pid 4242 on rig:7766 · live"). */
const char      *m6_session_window_get_subtitle      (M6SessionWindow *self);
/* A live session's recording (its worker drains; see m6-recording.h), or
 * NULL; the bar of a save or export running on a thread; the file a
 * loaded session came from, or NULL. */
M6Recording     *m6_session_window_get_recording     (M6SessionWindow *self);
M6JobBar        *m6_session_window_get_job_bar       (M6SessionWindow *self);
const char      *m6_session_window_get_capture_path  (M6SessionWindow *self);
/* The comparison `win.compare` opened, or NULL. */
M6CompareWindow *m6_session_window_get_compare_window (M6SessionWindow *self);

/* Show @message (a sentence) in a toast. */
void             m6_session_window_show_message      (M6SessionWindow *self,
                                                      const char      *message);

/* Show @text in a toast for @timeout_s seconds with a button
 * (@button_label, a mnemonic) that activates @action_name with @target. */
void             m6_session_window_show_toast_action (M6SessionWindow *self,
                                                      const char      *text,
                                                      const char      *button_label,
                                                      const char      *action_name,
                                                      GVariant        *target,
                                                      guint            timeout_s);

/* The payload JSON of every thread, as `win.export-json` writes it. */
char            *m6_session_window_build_json        (M6SessionWindow *self);

G_END_DECLS
