/* SPDX-License-Identifier: MIT */
/* m6-cli-recording.h — the recording loop shared by `mach6 record`, `run`
 * and `report PID`. */
#pragma once

#include <glib.h>

#include "m6-reader.h"
#include "m6-recording.h"
#include "m6-sampler.h"

G_BEGIN_DECLS

typedef struct
{
  M6Recording     *recording;    /* drains on its worker thread */
  GMainLoop       *loop;
  gint64           started_us;
  gint64           deadline_us;  /* 0: none */
  gint64           next_progress_us;
  gboolean         progress;
  gboolean         interrupted;
  gboolean         ended;
  guint            tick;
} M6CliRecording;

/* `--sample HZ` and `--unwind fp|dwarf|auto` (record, run). */
typedef struct
{
  gint      hz;                  /* 0: off */
  M6Unwind  unwind;
} M6CliSampling;

#define M6_CLI_SAMPLING_ENTRIES(hz, unwind) \
  { "sample", 0, 0, G_OPTION_ARG_INT, &(hz), N_("Sample the threads' call stacks HZ times a second of CPU time (1–10000; default off)"), "HZ" }, \
  { "unwind", 0, 0, G_OPTION_ARG_STRING, &(unwind), N_("With --sample: how to take call chains: fp (frame pointers), dwarf (a copy of the stack, unwound with its CFI) or auto (default: frame pointers unless a thread has none)"), "METHOD" }

/* Check the options; FALSE with a sentence for bad ones. */
gboolean m6_cli_sampling_parse  (M6CliSampling   *sampling,
                                 gint             hz,
                                 const char      *unwind,
                                 GError         **error);

/* Record until the producer ends, @seconds are up (0: no limit) or a
 * signal comes; then take what the rings still hold and finish the capture
 * if there is one. */
gboolean m6_cli_record_loop     (M6CliRecording  *rec,
                                 double           seconds,
                                 GError         **error);
/* --split EVERY for the recordings that follow: a new capture file every
 * N seconds/minutes/hours ("10min", "30s", "1h") or every N bytes of
 * capture ("100MB", "1G": powers of 1024). FALSE with a sentence for
 * anything else. */
gboolean m6_cli_recording_set_split (const char *every,
                                     GError    **error);
/* --max-size SIZE for the recordings that follow: a rolling capture of at
 * most SIZE on disk. */
gboolean m6_cli_recording_set_max_size (const char *size,
                                        GError    **error);

/* Record an attached reader (taken) into @output (NULL: NAME-PID-DATE-TIME
 * .mach6); *@ended (optional) says whether the producer ended by itself. */
int      m6_cli_record_to_file  (M6Reader        *reader,
                                 const char      *output,
                                 double           seconds,
                                 gboolean        *ended);
/* m6_cli_record_to_file() with samples (@sampling NULL or hz 0: none). */
int      m6_cli_record_to_file_sampled (M6Reader            *reader,
                                        const char          *output,
                                        double               seconds,
                                        gboolean            *ended,
                                        const M6CliSampling *sampling);
/* The same for a recording not started yet (taken): a remote one. */
int      m6_cli_record_recording_to_file (M6Recording *recording,
                                          const char  *output,
                                          double       seconds,
                                          gboolean    *ended);

G_END_DECLS
