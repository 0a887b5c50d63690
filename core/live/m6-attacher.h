/* SPDX-License-Identifier: MIT */
/* m6-attacher.h — attach without a viewer, for servers: every instrumented
 * process of the user (all) or those with given names, new ones as they
 * start, each through an M6Recording (the same worker the viewer and
 * `mach6 record` use; no capture file); ended ones are released. Used by
 * `mach6 serve --attach-all` / `--attach NAME`. */
#pragma once

#include <gio/gio.h>

#include "m6-recording.h"

G_BEGIN_DECLS

#define M6_TYPE_ATTACHER (m6_attacher_get_type ())
G_DECLARE_FINAL_TYPE (M6Attacher, m6_attacher, M6, ATTACHER, GObject)

/* Every process of the user if @all, else those whose name is one of
 * @names (NULL-terminated; may be NULL with @all). */
M6Attacher   *m6_attacher_new             (gboolean            all,
                                           const char *const  *names);

/* How often the process list is read again, in ms (default 1000). */
void          m6_attacher_set_scan_interval (M6Attacher       *self,
                                           guint               interval_ms);

/* Scan now and then every interval on the thread-default main context.
 * Signals are emitted there:
 *   "attached" (M6Recording *): a new process is being recorded;
 *   "released" (M6Recording *): its process ended (and its rings are
 *     read) or reading it failed; the recording is finished and dropped
 *     after the signal;
 *   "refused" (gint pid, const char *sentence): a matching process could
 *     not be attached (another viewer holds it, a bad segment); said once
 *     per process, tried again on each scan. */
void          m6_attacher_start           (M6Attacher         *self);
/* Stop scanning, finish and release every recording (no signals). */
void          m6_attacher_stop            (M6Attacher         *self);
/* One scan, now: attach what matches and is new. */
void          m6_attacher_scan            (M6Attacher         *self);

/* The recordings attached now, oldest first (element type M6Recording;
 * a new reference to the array, whose elements stay valid while it is
 * held). */
GPtrArray    *m6_attacher_dup_recordings  (M6Attacher         *self);
guint         m6_attacher_get_n_attached  (M6Attacher         *self);
/* The recording of @pid attached now (a new reference), or NULL. A game
 * has one recorder: another part of serve that wants a process the
 * attacher holds (a remote viewer) reads this recording's session, under
 * its lock, rather than attaching a second reader. */
M6Recording  *m6_attacher_dup_recording   (M6Attacher         *self,
                                           gint                pid);

/* The same from any thread (the remote server's connections): runs on the
 * attacher's main context, where a process that matches but is not held
 * yet (it started since the last scan) is attached first, so that a game
 * serve should record is recorded by serve whoever comes first. NULL if
 * the attacher does not hold or want @pid, is not started, or
 * @cancellable fires while waiting for its main context. */
M6Recording  *m6_attacher_claim           (M6Attacher         *self,
                                           gint                pid,
                                           GCancellable       *cancellable);

G_END_DECLS
