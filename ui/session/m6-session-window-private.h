/* SPDX-License-Identifier: MIT */
/* m6-session-window-private.h — the session window's state, shared by the
 * files that make up the window (m6-session-*.c): the live loop, search and
 * zoom, saves and exports, the comparison and the panes. Not for use outside
 * the window. */
#pragma once

#include "m6-session-window.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>
#include "m6-app-requests.h"
#include "m6-breadcrumbs.h"
#include "m6-capture.h"
#include "m6-compare-window.h"
#include "m6-recording.h"
#include "m6-sample-model.h"
#include "m6-export.h"
#include "m6-format.h"
#include "m6-job-bar.h"
#include "m6-json.h"
#include "m6-ledger.h"
#include "m6-ledger-view.h"
#include "m6-painter.h"
#include "m6-payload.h"
#include "m6-save-task.h"
#include "m6-screenshot.h"
#include "m6-settings.h"
#include "m6-status-bar.h"
#include "m6-toast-overlay.h"

G_BEGIN_DECLS

#define STATUS_INTERVAL_MS    500
#define STATS_INTERVAL_US     (G_USEC_PER_SEC / 10)
#define DRIFT_INTERVAL_US     (G_USEC_PER_SEC / 20)
#define COMPARE_INTERVAL_US   G_USEC_PER_SEC
/* Catching up (m6-session-live.c): while the recording is behind the game
 * (m6_recording_is_behind(): about a quarter of a ring waiting); the flame graph
 * then follows at most every CATCH_UP_FLAME_US, the table and the drift
 * graph every CATCH_UP_VIEWS_US, one view a frame, until the worker has
 * kept up for CATCH_UP_HOLD_US. */
#define CATCH_UP_FLAME_US     (G_USEC_PER_SEC / 10)
#define CATCH_UP_VIEWS_US     (G_USEC_PER_SEC / 5)
#define CATCH_UP_HOLD_US      G_USEC_PER_SEC

void m6_session_window_clear_save_queue (M6SessionWindow *self);

struct _M6SessionWindow
{
  AdwApplicationWindow  parent_instance;

  /* template */
  M6ToastOverlay       *toast_overlay;
  AdwWindowTitle       *window_title;
  GtkToggleButton      *pause_button;
  GtkDropDown          *thread_dropdown;
  GtkInfoBar           *ended_bar;
  GtkLabel             *ended_label;
  GtkWidget            *ended_save_button;
  GMenu                *color_section;
  GtkSearchBar         *search_bar;
  GtkSearchEntry       *search_entry;
  GtkLabel             *match_label;
  M6Breadcrumbs        *breadcrumbs;
  GtkStack             *flame_stack;
  AdwStatusPage        *waiting_page;
  GtkScrolledWindow    *flame_scroller;
  GtkPaned             *main_paned;
  GtkPaned             *bottom_paned;
  M6FlameGraph         *flame_graph;
  M6StatsView          *stats_view;
  M6DriftGraph         *drift_graph;
  M6LedgerView         *ledger_view;
  M6StatusBar          *status_bar;

  M6Session            *session;
  M6SampleModel        *sample_model;    /* its call-stack samples, or NULL */
  GDestroyNotify        sample_model_destroy;
  M6Recording          *recording;       /* a live session's, or NULL */
  M6JobBar             *job_bar;         /* a save or export on a thread */
  GQueue                save_queue;      /* QueuedSave: saves waiting for job_bar */
  gboolean              painting;        /* between before- and after-paint */
  char                 *capture_path;    /* the file a loaded session came from */
  char                 *host;            /* HOST:PORT of a remote game, NULL here */
  M6CompareWindow      *compare_window;  /* the comparison with a baseline, or NULL */
  char                 *compare_copy;    /* a live recording copied for it to read */
  gboolean              compare_colors;  /* the flame graph shows the comparison */
  guint64               compare_serial;
  gint64                last_compare_us;
  GCancellable         *compare_cancellable; /* a comparison's reading on a thread, or NULL */
  char                 *last_written;
  char                 *last_message;
  GtkStringList        *thread_names;

  guint                 thread_index;
  gboolean              thread_chosen;   /* by the user: stop auto-picking */
  gboolean              paused;
  gboolean              drain_failed;
  gboolean              pane_fitted;
  gboolean              scroll_to_zoom;  /* bring the zoomed scope to the top once laid out */
  guint                 scroll_idle_id;
  double                flame_fraction;  /* remembered pane sizes to apply once laid out, or 0 */
  double                table_fraction;
  gboolean              table_sized;     /* the user placed the table's divider */
  guint                 panes_idle_id;
  guint                 syncing;

  guint                 status_id;
  guint                 tick_id;
  guint64               status_serial;
  guint64               data_serial;
  guint64               shown_serial;
  guint64               stats_serial;
  guint64               drift_serial;
  gint64                last_refresh_us;
  gint64                last_stats_us;
  gint64                last_drift_us;
  gint64                catch_up_until_us;
};

/* m6-session-live.c */
void m6_session_window_add_live_actions (M6SessionWindow *self);
void m6_session_window_sync_thread_names (M6SessionWindow *self);
void m6_session_window_auto_pick_thread (M6SessionWindow *self);
void m6_session_window_thread_added_cb (M6Session       *session,
                                       guint            index,
                                       M6SessionWindow *self);
void m6_session_window_thread_selected_cb (GtkDropDown     *dropdown,
                                           GParamSpec      *pspec,
                                           M6SessionWindow *self);
void m6_session_window_refresh_views (M6SessionWindow *self,
                                      gboolean         force);
void m6_session_window_ensure_ticking (M6SessionWindow *self);
void m6_session_window_session_changed_cb (M6Session       *session,
                                           M6SessionWindow *self);
void m6_session_window_show_ended (M6SessionWindow *self,
                                   const char      *message,
                                   GtkMessageType   type);
void m6_session_window_session_ended_cb (M6Session       *session,
                                         GParamSpec      *pspec,
                                         M6SessionWindow *self);
void m6_session_window_recording_changed_cb (M6Recording     *recording,
                                             M6SessionWindow *self);
void m6_session_window_recording_running_cb (M6Recording     *recording,
                                             GParamSpec      *pspec,
                                             M6SessionWindow *self);
void m6_session_window_update_status (M6SessionWindow *self);
void m6_session_window_live_realize_cb (M6SessionWindow *self,
                                        gpointer         user_data);
void m6_session_window_stop_live (M6SessionWindow *self);

/* m6-session-navigate.c */
void m6_session_window_init_navigate (M6SessionWindow *self);
void m6_session_window_update_match_label (M6SessionWindow *self);
void m6_session_window_search_changed_cb (M6SessionWindow *self,
                                          GtkSearchEntry  *entry);

/* m6-session-save.c */
void m6_session_window_add_save_actions (M6SessionWindow *self);
/* m6-session-sampling.c: the sample-stacks and sample-hz actions, and the
 * sampler of a live session when the setting is on. */
void m6_session_sampling_install_actions (M6SessionWindow *self);
void m6_session_sampling_start           (M6SessionWindow *self,
                                          M6Recording     *recording);

void m6_session_window_show_toast (M6SessionWindow *self,
                                   const char      *message);
char *m6_session_window_display_path (const char *path);
void m6_session_window_add_filter (GtkFileChooser *chooser,
                                   const char     *name,
                                   const char     *mime_type,
                                   const char     *extension);

/* m6-session-compare.c */
void m6_session_window_add_compare_actions (M6SessionWindow *self);
void m6_session_window_refresh_compare (M6SessionWindow *self);
void m6_session_window_apply_color_mode (M6SessionWindow *self);

/* m6-session-panes.c */
void m6_session_window_save_window_state (M6SessionWindow *self);
int m6_session_window_auto_table_width (M6SessionWindow *self,
                                        int              width);
void m6_session_window_table_divider_pressed_cb (M6SessionWindow *self,
                                                 double           x,
                                                 double           y);
void m6_session_window_panes_resized (M6SessionWindow *self);

G_END_DECLS
