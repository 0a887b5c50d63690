/* SPDX-License-Identifier: MIT */
/* m6-recording-private.h — a recording's state, shared by m6-recording.c
 * (the worker, the capture, the GObject) and m6-recording-main-loop.c
 * (the main thread's share of the lock). Private to core/. */
#pragma once

#include "m6-recording.h"
#include "m6-samples.h"

struct _M6Recording
{
  GObject          parent_instance;

  M6Reader        *reader;
  const M6RecordingSource *source_funcs;  /* or another source (remote) */
  gpointer         source;
  M6Session       *session;
  M6CaptureWriter *writer;
  char            *capture_path;   /* the file being written (one of split_paths when split) */
  /* --split: a new file every split_bytes of capture or split_us of
   * recording (0: no limit); split_base is the path asked for, the files
   * are BASE-001.mach6, BASE-002.mach6, ...; split_paths keeps every name
   * for the recording's life (under state_lock), so a reader of
   * capture_path never sees it freed. */
  guint64          split_bytes;
  gint64           split_us;
  char            *split_base;
  GPtrArray       *split_paths;
  gint64           split_started_us;
  guint64          max_size;       /* --max-size: a rolling capture (0: none) */

  GMutex           lock;          /* the session and the writer */
  GMutex           state_lock;    /* the fields below */
  GCond            wake;
  GThread         *worker;
  GMainContext    *context;       /* where signals are emitted */
  gboolean         stopping;
  gboolean         finishing;     /* drain to empty, then stop */
  gboolean         held;          /* tests: the worker waits */
  gboolean         running;
  GError          *error;

  gint             notify_pending; /* atomic: a "changed" is queued */
  gint             ui_waiting;     /* atomic: the main thread waits for the lock */
  guint64          n_batches;      /* atomic */
  gint64           lock_wait_us;   /* atomic: the worker waiting for readers */
  gint64           busy_us;        /* atomic: the worker holding the lock */
  gint64           cpu_ns;         /* atomic: the worker's CPU time */
  gint64           caught_up_us;   /* atomic: the last drain that emptied the source */
  gint64           rate;           /* atomic: events a second, as the last batch saw */
  guint64          n_notifies;
  gboolean         on_main_loop;
  GThread         *main_thread;    /* holds the lock outside poll() */
  gboolean         main_released;  /* ...but gave it up while it renders */

  /* Sampling (m6-recording-samples.c), under the lock. */
  M6Sampler       *sampler;
  M6SamplesWriter *samples_writer;
  M6SampleModel   *sample_model;
  gint64           next_samples_us;
};

/* Does the calling thread hold the lock already, as the main loop's? */
gboolean  m6_recording_holds_lock (M6Recording *self);

/* Between two batches (the worker holding the lock): with --split set,
 * finish the capture file when its time or size is up and open the next
 * of the series (m6-recording-capture.c). FALSE with @error when that
 * fails. */
gboolean  m6_recording_maybe_split (M6Recording  *self,
                                    GError      **error);

/* Between two batches (the worker holding the lock): every 250 ms, the
 * sampler's new samples into the capture and the model (@emptied: the
 * drain emptied the rings, every event up to now is in). FALSE with
 * @error when the capture cannot take them. */
gboolean  m6_recording_take_samples (M6Recording  *self,
                                     gboolean      emptied,
                                     GError      **error);
/* The worker gone: stop the sampler and hand over the rest. */
void      m6_recording_end_samples  (M6Recording  *self);
void      m6_recording_clear_samples (M6Recording *self);
