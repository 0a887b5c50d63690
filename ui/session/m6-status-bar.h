/* SPDX-License-Identifier: MIT */
/* m6-status-bar.h — the line under a session: its state, length, events
 * and their rate, what was lost, and where memory readings come from. */
#pragma once

#include <gtk/gtk.h>

#include "m6-session.h"

G_BEGIN_DECLS

typedef enum
{
  M6_STATUS_CAPTURE,   /* a loaded capture */
  M6_STATUS_ENDED,     /* a live session that ended or stopped reading */
  M6_STATUS_DISCONNECTED, /* a remote session whose server went away, its game not known to have ended */
  M6_STATUS_PAUSED,    /* live, still recording, the view held */
  M6_STATUS_LIVE,
  M6_STATUS_CATCHING_UP, /* live, the recording behind the program: views slowed */
} M6StatusState;

#define M6_TYPE_STATUS_BAR (m6_status_bar_get_type ())
G_DECLARE_FINAL_TYPE (M6StatusBar, m6_status_bar, M6, STATUS_BAR, GtkBox)

/* Show @session as it is now; the event rate is measured since the last
 * update (and shown only while live). */
void    m6_status_bar_update                (M6StatusBar   *self,
                                             M6Session     *session,
                                             M6StatusState  state);

G_END_DECLS
