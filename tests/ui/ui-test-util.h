/* ui-test-util.h — what the UI test programs share: running the main loop
 * until a condition holds, and starting and stopping the real demo game. */
#pragma once

#include <glib.h>

#include "m6-application.h"
#include "m6-session-window.h"

typedef gboolean (*UiCondition) (gpointer data);

/* Run the main loop until @cond holds or @seconds pass; returns @cond. */
gboolean  ui_wait_for     (UiCondition      cond,
                           gpointer         data,
                           double           seconds);
/* Run the main loop for @seconds. */
void      ui_spin         (double           seconds);

/* Start the demo game with the heap shim preloaded (killed if the test
 * dies); @threads may be NULL for none. */
GPid      ui_start_game   (const char      *leak_kb,
                           const char      *threads);
/* The same with the demo game's options @args (NULL-terminated). */
GPid      ui_start_game_args (const char *const *args);
/* Send @sig, reap, and remove the segment a killed game leaves behind. */
void      ui_stop_game    (GPid             pid,
                           int              sig);
/* Is @pid (GINT_TO_POINTER) listed, alive and readable? */
gboolean  ui_is_listed    (gpointer         pid);

M6Node   *ui_node_at      (M6SessionWindow *window,
                           const char      *path);

/* Attach @app to the running @game through its "attach" action and wait
 * until the flame graph shows frame → physics/render/ai, each closed at
 * least @min_count times. Fails the test, saying why, otherwise. */
M6SessionWindow *ui_attach_live (M6Application *app,
                                 GPid           game,
                                 guint64        min_count);

/* Real input through the X server (XTest, under Xvfb): the events reach
 * the widgets the way a user's do, focus handling included. FALSE from
 * ui_input_available() when the display is not X11 or libXtst is missing. */
gboolean  ui_input_available (void);
/* Move the pointer to (@x, @y) of @widget, and click there. */
void      ui_pointer_move    (GtkWidget       *widget,
                              double           x,
                              double           y);
void      ui_click           (GtkWidget       *widget,
                              double           x,
                              double           y);
/* Press at (@x1, @y1) of @widget, move to (@x2, @y2) and release. */
void      ui_drag            (GtkWidget       *widget,
                              double           x1,
                              double           y1,
                              double           x2,
                              double           y2);
/* Press and release @keyval, with Shift when @shift. */
void      ui_press_key       (guint            keyval,
                              gboolean         shift);
/* The same with Control and/or Shift held. */
void      ui_press_keys      (guint            keyval,
                              GdkModifierType  modifiers);

/* Spin until every load, save, export and comparison's reading of @app
 * has ended (they run on threads: the main loop does no file I/O). */
void      ui_wait_jobs       (M6Application   *app);
