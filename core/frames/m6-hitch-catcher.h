/* SPDX-License-Identifier: MIT */
/* m6-hitch-catcher.h — capture on hitch: watches a live recording's frames
 * and, for every frame slower than a threshold, writes a capture of the
 * seconds around it (before and after) from the frame index's raw window,
 * one file per hitch, named by the time of the hitch. All of it runs on the
 * recorder's side: the game pays nothing extra. Shared by `mach6 record
 * --on-hitch` and the viewer's toggle. */
#pragma once

#include <gio/gio.h>

#include "m6-frame-index.h"
#include "m6-recording.h"

G_BEGIN_DECLS

#define M6_HITCH_DEFAULT_KEEP_NS  (G_GINT64_CONSTANT (10000000000))  /* 10 s before */
#define M6_HITCH_DEFAULT_AFTER_NS (G_GINT64_CONSTANT (2000000000))   /* 2 s after */

#define M6_TYPE_HITCH_CATCHER (m6_hitch_catcher_get_type ())
G_DECLARE_FINAL_TYPE (M6HitchCatcher, m6_hitch_catcher, M6, HITCH_CATCHER, GObject)

/* Watch @recording's frames through @index (a live index on its session;
 * its window is widened to keep + after if shorter). Frames of thread
 * @thread (the session's thread index, usually 0: the first thread that
 * recorded, a game's main thread) slower than @threshold_ns are hitches.
 * Captures go to @dir (created if missing) as
 * "PROCESS-YYYY-MM-DDTHH-MM-SS.mmm-hitch-41ms.mach6" (local time of the
 * hitch, with the slowest frame's duration). A hitch that comes while the
 * previous capture still waits for its "after" seconds joins it (its
 * "after" then runs from the later hitch), unless that capture would span
 * more than keep: a burst of slow frames is one file, not one a frame.
 * Create it with the recording's lock held or before it starts. */
M6HitchCatcher *m6_hitch_catcher_new          (M6Recording    *recording,
                                               M6FrameIndex   *index,
                                               guint           thread,
                                               gint64          threshold_ns,
                                               const char     *dir);
/* Watch a thread by what it is rather than by its index, for a recording
 * whose threads are not known yet: the thread named @name, else the one
 * whose tid is @tid, else (both NULL/0) the game's frame thread — the
 * process's main thread (its tid is the pid) or the thread named "main",
 * whichever records a frame first. The first thread that matches is
 * watched from then on. With the recording's lock held or before it
 * starts. */
void            m6_hitch_catcher_watch        (M6HitchCatcher *self,
                                               const char     *name,
                                               guint64         tid);
/* The session index of the thread watched, or -1 while no thread that
 * matches has recorded a frame. */
gint            m6_hitch_catcher_get_watched  (M6HitchCatcher *self);
/* Seconds of events kept before the hitch frame and after it (0 keeps the
 * current value). */
void            m6_hitch_catcher_set_span     (M6HitchCatcher *self,
                                               gint64          keep_ns,
                                               gint64          after_ns);
/* The live window a capture needs: keep + after + 1 s (the catcher widens
 * the index's to it; whoever sets the window later keeps it at least
 * that while catching). */
gint64          m6_hitch_catcher_get_window_needed (M6HitchCatcher *self);
/* A new threshold (> 0) for the frames closing from now on. With the
 * recording's lock held, like every setter here. */
void            m6_hitch_catcher_set_threshold (M6HitchCatcher *self,
                                                gint64          threshold_ns);
/* Stop catching (nothing new is caught); pending captures still get
 * written by m6_hitch_catcher_flush(). */
void            m6_hitch_catcher_set_enabled  (M6HitchCatcher *self,
                                               gboolean        enabled);
/* Start writing the hitches still waiting for their "after" seconds with
 * what the window holds now (the game ended, the recording stops). With
 * the recording's lock held (a viewer's main thread always holds it). */
void            m6_hitch_catcher_flush        (M6HitchCatcher *self);
/* Wait until every capture started is written. Without the lock. */
void            m6_hitch_catcher_wait         (M6HitchCatcher *self);

/* Captures written so far (paths, in order) and hitches seen. Any thread. */
GStrv           m6_hitch_catcher_dup_paths    (M6HitchCatcher *self);
guint           m6_hitch_catcher_get_n_hitches (M6HitchCatcher *self);
/* The first error writing a capture, or NULL (a copy). */
GError         *m6_hitch_catcher_dup_error    (M6HitchCatcher *self);

/* Dropping the last reference waits for the captures being written; do it
 * with the recording's lock held or after the recording stopped (the
 * worker calls the catcher).
 *
 * Signals, on the main context of the thread that created it:
 *   "hitch" (guint64 frame number, gint64 duration ns): a hitch was seen;
 *   "saved" (const char *path, gint64 duration ns): its capture is written;
 *   "failed" (const char *message): a capture could not be written. */

G_END_DECLS
