/* SPDX-License-Identifier: MIT */
/* sharing-util.h — what the sharing tests (test-sharing*.c) share: their
 * application, a fixture with the demo game attached live (or only a
 * folder), opening captures as app.open does, synthetic captures written
 * as they are ingested, and the message dialog an error shows. */
#pragma once

#include <adwaita.h>

#include "m6-application.h"
#include "m6-session-window.h"

#define SYNTH_FRAMES 400

extern M6Application *app;

typedef struct
{
  GPid             game;
  M6SessionWindow *window;
  char            *tmpdir;
} Fixture;

/* Session windows other than @except, newest last. */
M6SessionWindow *other_session_window (M6SessionWindow *except);
/* The contents of @path, or a test failure. */
char *read_text (const char *path);

/* A frame loop of physics, render and ai with uniform noise, written with
 * M6CaptureWriter as it is ingested; @physics_scale and @ai_scale slow
 * those down, and @ai_spikes makes every tenth ai call take 20 ms. */
void write_capture_full (const char *path, guint32 seed, double physics_scale,
                         double ai_scale, gboolean ai_spikes);
void write_synthetic_capture (const char *path, guint32 seed, double physics_scale);

/* The demo game attached live (at least 20 frames) and a folder; or only
 * the folder. The teardown closes every window and kills the game. */
void live_setup (Fixture *f, gconstpointer data);
void live_teardown (Fixture *f, gconstpointer data);
void plain_setup (Fixture *f, gconstpointer data);

/* Open @path as app.open does; the window it made. */
M6SessionWindow *open_capture (const char *path, M6SessionWindow *except);
/* Whether an error's message dialog is up; it is closed. */
gboolean has_dialog (void);
