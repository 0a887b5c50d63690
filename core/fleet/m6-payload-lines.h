/* SPDX-License-Identifier: MIT */
/* m6-payload-lines.h — the ndjson export, live: a live session's top-level scopes
 * cut into windows of session time as they arrive, each window's payload
 * written as one line of the ndjson export's schema (docs/payload.md) once
 * the session's time has passed its end. For `mach6 stream`. */
#pragma once

#include <glib.h>

#include "m6-session.h"

G_BEGIN_DECLS

typedef struct _M6PayloadLines M6PayloadLines;

/* Become @session's recorder (m6_session_set_recorder) and cut windows of
 * @interval_s seconds. Install it before the session is fed (a live
 * recording: before m6_recording_start(), or with its lock held). */
M6PayloadLines *m6_payload_lines_new  (M6Session      *session,
                                       double          interval_s);
/* Stop being the recorder; with the session held still. */
void            m6_payload_lines_free (M6PayloadLines *self);

/* With the session held still: append to @out the line of every window
 * whose end the session's time has passed (by a quarter interval, at most
 * a second, so a thread drained a little later is not cut off), or of
 * every window left when @all (the game ended). Windows without a scope
 * give no line. Returns the number of lines. */
guint           m6_payload_lines_take (M6PayloadLines *self,
                                       GString        *out,
                                       gboolean        all);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6PayloadLines, m6_payload_lines_free)

G_END_DECLS
