/* SPDX-License-Identifier: MIT */
/* m6-session-state.h — a session's accounting state as bytes, and back:
 * what a capture's checkpoint carries (docs/capture-format.md,
 * *Checkpoints*) so that a viewer shows a long capture without replaying
 * its events. The state is everything ingest reads or writes: labels, the
 * thread table and its counts, each thread's tree (nodes with their sums,
 * reservoirs and the generator that fills them, the open scopes, the node
 * budget), its frame series and its mem.net history, all bounded as they
 * are live. Restoring it and ingesting the events that came after gives
 * exactly the session a replay of every event gives. The capture floor
 * frames these bytes in records; the accounting owns what they mean. */
#pragma once

#include "m6-session.h"

G_BEGIN_DECLS

#define M6_SESSION_STATE_ERROR (m6_session_state_error_quark ())
GQuark        m6_session_state_error_quark (void);

/* The version of the byte layout that _write produces (its first varint). */
#define M6_SESSION_STATE_VERSION 1u

/* Append the state of @self to @out. Call it where nothing ingests into
 * @self (a recording's lock held). */
void          m6_session_state_write     (M6Session     *self,
                                          GByteArray    *out);

/* Restore @length bytes of @data, made by _write, into @self, a new
 * session (no threads, no labels but the root): FALSE with a sentence
 * (M6_SESSION_STATE_ERROR) for bytes that are not such a state, and then
 * @self must be thrown away. Trusts nothing: every count is bounded by
 * the bytes left before anything is allocated. */
/* The node budget a state was written with, without reading the rest. */
gboolean      m6_session_state_peek_max_nodes (const guint8 *data,
                                               gsize         length,
                                               guint        *max_nodes);
gboolean      m6_session_state_read      (M6Session     *self,
                                          const guint8  *data,
                                          gsize          length,
                                          GError       **error);

G_END_DECLS
