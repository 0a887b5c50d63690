/* SPDX-License-Identifier: MIT */
/* m6-recording.h — a live recording: a worker thread that drains a reader's
 * rings, feeds the session's accounting and appends to a capture, so the
 * thread that draws (or the CLI's main loop) never drains, writes or waits.
 *
 * THE RULE for code that reads the session of a live recording:
 *
 *   The worker changes the session only while it holds the recording's
 *   lock, one bounded batch at a time. Whoever reads the session holds the
 *   lock too. A viewer calls m6_recording_attach_main_loop() once: from
 *   then on the main thread holds the lock all the time except while its
 *   main loop sleeps in poll(), so every handler, snapshot(), tooltip and
 *   action on the main thread may read the session without doing anything.
 *   Any other thread wraps its reads in m6_recording_lock()/unlock().
 *
 *   The session's own signals ("changed", "thread-added", notify::ended)
 *   fire on the worker thread: connect to the recording's "changed" and
 *   notify::running instead, which are emitted on the main context. */
#pragma once

#include <gio/gio.h>

#include "m6-capture.h"
#include "m6-reader.h"
#include "m6-session.h"
#include "m6-sample-model.h"
#include "m6-sampler.h"

G_BEGIN_DECLS

#define M6_TYPE_RECORDING (m6_recording_get_type ())
G_DECLARE_FINAL_TYPE (M6Recording, m6_recording, M6, RECORDING, GObject)

/* Take over @reader. Nothing is drained until m6_recording_start(). */
M6Recording  *m6_recording_new                (M6Reader      *reader);

/* Another source of events than a local reader (the remote client):
 * @drain moves up to @max_events into @session like m6_reader_drain() and
 * is called with the recording's lock held; @get_pending counts what it
 * holds not drained yet; @detach stops it; @free releases it. */
typedef struct
{
  gboolean (*drain)       (gpointer source, gsize max_events, gsize *n_drained, GError **error);
  guint64  (*get_pending) (gpointer source);
  void     (*detach)      (gpointer source);
  gint     (*get_pid)     (gpointer source);
  void     (*free)        (gpointer source);
} M6RecordingSource;

/* Take over @source (its events go to @session). */
M6Recording  *m6_recording_new_for_source     (M6Session               *session,
                                               const M6RecordingSource *funcs,
                                               gpointer                 source);

/* Before start: record everything drained to @capture_path (a temporary
 * file next to it until finished). FALSE with @error if it cannot be
 * created; the recording then runs without a capture. */
gboolean      m6_recording_set_capture        (M6Recording   *self,
                                               const char    *capture_path,
                                               GError       **error);

/* Before set_capture: write a new capture file every @bytes of capture or
 * @seconds of recording, whichever comes first (0: no limit); each file
 * opens on its own. The path given to set_capture then names the series:
 * "x.mach6" becomes x-001.mach6, x-002.mach6, ... */
void          m6_recording_set_split          (M6Recording   *self,
                                               guint64        bytes,
                                               double         seconds);
/* "10min", "30s", "1h" (seconds in *@seconds) or "100MB", "64K", "1G"
 * (powers of 1024, in *@bytes; "m" alone is minutes, "M" a size): what
 * `--split` and the viewer's recording-split setting take. */
gboolean      m6_recording_parse_split        (const char    *every,
                                               guint64       *bytes,
                                               double        *seconds,
                                               GError       **error);
/* Before set_capture: a rolling capture of at most @bytes on disk (at
 * least 4 MB; 0: no limit), which drops its oldest whole segments
 * (m6_capture_writer_set_max_size). Not with set_split: set_capture then
 * fails, saying so. */
void          m6_recording_set_max_size       (M6Recording   *self,
                                               guint64        bytes);
/* "1G", "500MB", "64M" (powers of 1024): what `--max-size` and the
 * viewer's recording-max-size setting take; at least 4 MB. */
gboolean      m6_recording_parse_max_size     (const char    *size,
                                               guint64       *bytes,
                                               GError       **error);
/* The capture files written so far, the current one last (a copy;
 * g_strfreev). */
char        **m6_recording_dup_capture_paths  (M6Recording   *self);

/* Before start: sample the process with @sampler (taken; started by the
 * caller). Every 250 ms the worker hands its new samples, between two
 * batches with the lock held, to the capture (records 20-24: a killed
 * recorder keeps its samples up to about a second before, like its
 * events) and to @model (optional; a reference is taken, and it becomes
 * the session's recorder, m6_sample_model_events_func); the rest when the
 * recording stops or finishes. @sampler NULL: the samples come from the
 * source (a remote stream, m6_recording_add_samples) into @model. */
void          m6_recording_set_sampler        (M6Recording   *self,
                                               M6Sampler     *sampler,
                                               M6SampleModel *model);
/* Samples that came from elsewhere (a remote stream's SAMPLES), taken:
 * into the capture and the model as a sampler's would be. With the lock
 * held (a source's drain), or from a source's detach (the worker gone). */
gboolean      m6_recording_add_samples        (M6Recording   *self,
                                               M6Samples     *chunk,
                                               GError       **error);
/* Place the samples still waiting in the model under the scopes open now
 * (a source whose last samples came in its detach). Same locking. */
void          m6_recording_flush_sample_model (M6Recording   *self);
/* Was a sampler set? */
gboolean      m6_recording_get_sampling       (M6Recording   *self);
/* The model given to set_sampler, or NULL (read it with the lock held). */
M6SampleModel *m6_recording_get_sample_model  (M6Recording   *self);
/* The sampled threads so far (M6SampleTotals, m6-samples.h) and the
 * sampler's status sentence (or NULL); with the lock held, or after stop. */
const GArray *m6_recording_get_sample_totals  (M6Recording   *self);
const char   *m6_recording_get_sample_status  (M6Recording   *self);

/* Start the worker thread. "changed" and notify::running are emitted on
 * the thread-default main context of the caller. */
void          m6_recording_start              (M6Recording   *self);

/* Stop the worker (it finishes its batch) and join it; the session keeps
 * what it has, the capture stays temporary. Safe to call more than once. */
void          m6_recording_stop               (M6Recording   *self);

/* Let the worker drain what the rings hold now (until a drain comes back
 * short of its budget, so a game still running flat out cannot keep it
 * going), stop it, detach and finish the capture (END record, sync,
 * rename). For `mach6 record` at its end. */
gboolean      m6_recording_finish             (M6Recording   *self,
                                               GError       **error);

/* Hold the session still (see the rule above). Not recursive. */
void          m6_recording_lock               (M6Recording   *self);
void          m6_recording_unlock             (M6Recording   *self);

/* The viewer's side of the rule: the calling (main) thread takes the lock
 * now and gives it up only while the default main context polls. Undone by
 * detach, stop and dispose. */
void          m6_recording_attach_main_loop   (M6Recording   *self);
void          m6_recording_detach_main_loop   (M6Recording   *self);

/* The main thread's polls, and the time it waited after one for a worker
 * to finish its batch (µs), over every attached recording. */
void          m6_recording_get_main_loop_stats (guint64      *n_polls,
                                                gint64       *lock_wait_us);

/* The viewer, between the end of its window's snapshot (every read of the
 * session for this frame is done; the render nodes hold copies) and the
 * frame clock's after-paint: let the worker ingest while GTK renders.
 * Only on the main thread of an attached recording; the next poll()
 * takes the lock back at the latest. */
void          m6_recording_release_for_render (M6Recording   *self);
void          m6_recording_reacquire          (M6Recording   *self);

M6Session    *m6_recording_get_session        (M6Recording   *self);
/* The local reader, or NULL for another source. */
M6Reader     *m6_recording_get_reader         (M6Recording   *self);
gint          m6_recording_get_pid            (M6Recording   *self);
/* The capture being written, or NULL. */
const char   *m6_recording_get_capture_path   (M6Recording   *self);
/* The capture's writer, or NULL: records of a higher floor (samples) go
 * through it with the lock held, before finish. */
M6CaptureWriter *m6_recording_get_capture_writer (M6Recording *self);
/* Bytes of the capture so far (0 without one); with the lock held. */
guint64       m6_recording_get_capture_size   (M6Recording   *self);
/* Is the worker draining? FALSE once the producer has ended and its rings
 * are empty, once the reader failed, and after stop. */
gboolean      m6_recording_get_running        (M6Recording   *self);
/* Why the worker stopped on its own, or NULL (main thread, or locked). */
const GError *m6_recording_get_error          (M6Recording   *self);
/* Batches the worker ingested (each emits at most one "changed"). */
guint64       m6_recording_get_n_batches      (M6Recording   *self);
/* Wall time the worker spent draining with the lock held, and waiting
 * for the lock (readers, the main loop outside poll()), in µs. */
void          m6_recording_get_worker_times   (M6Recording   *self,
                                               gint64        *busy_us,
                                               gint64        *lock_wait_us);
/* The worker's CPU time so far (CLOCK_THREAD_CPUTIME_ID), in ns. */
gint64        m6_recording_get_worker_cpu_ns  (M6Recording   *self);
/* How far the worker is behind the game, in µs: the time since a drain
 * last emptied every ring (0 while it keeps up, or once it stopped).
 * A worker that keeps up empties the rings about every millisecond; a
 * lag of several ms means the rings are filling. Any thread. */
gint64        m6_recording_get_lag_us         (M6Recording   *self);
/* Events in the rings that make a recording "behind": a quarter of the
 * default ring (524,288 events). */
#define M6_RECORDING_BEHIND_EVENTS 131072
/* Is the recording behind the game: have about M6_RECORDING_BEHIND_EVENTS
 * come in since a drain last emptied the rings (the lag times the rate
 * the last batch saw)? At 20 M events/s that is a lag of 6.5 ms; at 1 M
 * events/s, 131 ms. Any thread. */
gboolean      m6_recording_is_behind          (M6Recording   *self);

/* Save what is recorded so far to @dest, with its own END record; the
 * recording goes on. Takes the lock only to flush and to fix the END
 * record, then copies without it: run it off the main thread (see
 * a GTask). @progress gets bytes done and total. */
gboolean      m6_recording_save_copy          (M6Recording   *self,
                                               const char    *dest,
                                               GCancellable  *cancellable,
                                               M6ProgressFunc progress,
                                               gpointer       progress_data,
                                               GError       **error);

/* Save what is recorded so far to a new file in the user's cache folder
 * (named after this process, so a viewer killed mid-way leaves a copy the
 * next writer there removes: m6-tempfile.h) and return its path in
 * @path_out; the caller unlinks it when done. */
gboolean      m6_recording_save_temp_copy     (M6Recording   *self,
                                               GCancellable  *cancellable,
                                               char         **path_out,
                                               GError       **error);

/* Tests: hold the worker between batches (not holding the lock), to show
 * that nothing else waits for it. Once it returns, no batch is under way
 * and none starts until the worker is let go. */
void          m6_recording_hold_worker        (M6Recording   *self,
                                               gboolean       hold);

G_END_DECLS
