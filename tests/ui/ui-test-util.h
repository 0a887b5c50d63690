/* SPDX-License-Identifier: MIT */
/* ui-test-util.h — what the UI test programs share: the start and end of
 * their main(), running the main loop until a condition holds, starting and
 * stopping the real demo game, and real input through the X server. */
#pragma once

#include <glib.h>

#include "m6-application.h"
#include "m6-compare-window.h"
#include "m6-session-window.h"

typedef gboolean (*UiCondition) (gpointer data);

/* The start of a UI test program's main(): a cache folder of its own
 * ($XDG_CACHE_HOME, where live sessions record) and, with @own_data_home,
 * a data folder ($XDG_DATA_HOME: the recent list stays out of the user's);
 * g_test_init(); settings in memory and no accessibility bus; GTK. FALSE
 * when there is no display: main() then returns 0 (a TAP skip is printed). */
gboolean       ui_test_init          (int            *argc,
                                      char         ***argv,
                                      gboolean        own_data_home);
/* Skip the running test for @reason, naming what is missing; under make
 * test ($MACH6_TEST_STRICT), which provides it, fail instead. */
void           ui_test_skip          (const char     *reason);
/* No display for GTK: a skip (TAP plan 1..0), or under make test a
 * failure that ends the program. */
void           ui_test_no_display    (void);
/* The data folder of ui_test_init(), or NULL. */
const char    *ui_test_get_data_home (void);
/* The application the tests drive: the UI initialized, registered, held. */
M6Application *ui_test_app_new       (void);
/* The end of main(): release and drop @app (may be NULL), remove the
 * folders of ui_test_init() with all they hold; returns @status. */
int            ui_test_finish        (M6Application  *app,
                                      int             status);
/* Remove @root and everything below it (links are not followed). */
void           ui_remove_tree        (const char     *root);

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
/* Run @argv (a `mach6 run -o FILE -- GAME …`, say) to its end in @envp
 * (NULL: ours), its output to /dev/null; it must exit 0. */
void      ui_run_quietly  (const char *const *argv,
                           char       **envp);
/* Send @sig, reap, and remove the segment a killed game leaves behind. */
void      ui_stop_game    (GPid             pid,
                           int              sig);
/* Is @pid (GINT_TO_POINTER) listed, alive and readable? */
gboolean  ui_is_listed    (gpointer         pid);
/* Wait until @game is listed alive and readable; fails the test saying
 * what the list holds instead. */
void      ui_wait_listed  (GPid             game);

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
/* Press (@down) or release the first button where the pointer is. */
void      ui_button          (gboolean         down);
/* Turn the wheel @clicks clicks at (@x, @y) of @widget (< 0: up, away
 * from the user), with @modifiers (only Control) held. */
void      ui_scroll          (GtkWidget       *widget,
                              double           x,
                              double           y,
                              int              clicks,
                              GdkModifierType  modifiers);
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

/* The first widget of @type at or below @widget, or NULL. */
GtkWidget       *ui_find_descendant (GtkWidget       *widget,
                                     GType            type);
/* The comparison's row for the scope at @path; fails the test without one. */
const M6DiffRow *ui_compare_row     (M6CompareWindow *compare,
                                     const char      *path);
/* The luminance variance of the image file @path (0 for a blank one), and
 * its size in @width and @height (may be NULL). */
double           ui_image_variance  (const char      *path,
                                     int             *width,
                                     int             *height);
