/* SPDX-License-Identifier: MIT */
/* hitch-test-util.h — what the hitch tests (test-hitch.c,
 * test-hitch-settings.c) share: their application and the one live session
 * of the demo game hitching, its slow frames, screenshots, times with a
 * unit, and the start and end of their main(). */
#pragma once

#include <adwaita.h>

#include "m6-application.h"
#include "m6-frame-index.h"
#include "m6-session-window.h"

#define HITCH_MS     40
#define HITCH_EVERY  120
#define SLOW_NS      (G_GINT64_CONSTANT (25000000))   /* well above a normal frame */

extern M6Application   *app;
extern char            *tmpdir;
extern GPid             game;
extern M6SessionWindow *window;

/* @widget drawn to MACH6_TEST_SHOTS/@name, when that is set. */
void     shoot             (GtkWidget    *widget,
                            const char   *name);
/* The frames of the session's thread at least SLOW_NS long. */
guint    count_slow_frames (M6FrameIndex *index);
/* A UiCondition: the session's index holds 3 slow frames. */
gboolean enough_hitches    (gpointer      data);
/* The one live session every test uses, paused after 3 hitches. */
void     ensure_session    (void);
/* Whether @text is a time with a unit ("41.2 ms"). */
gboolean has_unit          (const char   *text);
/* A UiCondition: the GtkWindow @data is active. */
gboolean window_active     (gpointer      data);

/* The start of main(): a folder of its own, g_test_init(), GTK and the
 * application. FALSE when there is no display: main() then returns 0. */
gboolean hitch_test_init   (int          *argc,
                            char       ***argv);
/* The end of main(): the session closed, the game stopped; @status back. */
int      hitch_test_finish (int           status);
