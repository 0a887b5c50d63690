/* SPDX-License-Identifier: MIT */
/* m6-cli-hitch.h — hunting hitches without a display: `mach6 record
 * --on-hitch` (a capture around every slow frame) and `mach6 report
 * --worst N` (the slowest frames and what cost them most). */
#pragma once

#include <glib.h>

#include "m6-frame-index.h"
#include "m6-reader.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 threshold_ns;   /* 0: not asked for */
  gint64 keep_ns;
  gint64 after_ns;
  const char *thread_name;   /* --thread NAME (borrowed), or NULL */
  guint64 thread_tid;        /* --thread TID, or 0; neither: the main thread */
} M6CliHitchOptions;

/* Parse --on-hitch, --keep, --after and --thread (each may be NULL);
 * the others without --on-hitch are an error. */
gboolean m6_cli_hitch_options_parse (M6CliHitchOptions *options,
                                     const char        *on_hitch,
                                     const char        *keep,
                                     const char        *after,
                                     const char        *thread,
                                     GError           **error);

/* Record @reader (taken) until it ends, @seconds pass (0: no limit) or
 * Ctrl-C, writing a capture per hitch next to @output (a file's folder, a
 * folder, or NULL: the current folder). */
int      m6_cli_record_hitches      (M6Reader                *reader,
                                     const char              *output,
                                     double                   seconds,
                                     const M6CliHitchOptions *options);

/* The @n slowest frames of each thread (or only @only_thread) with their
 * heaviest scope. */
gboolean m6_cli_print_worst         (M6FrameIndex            *index,
                                     gint                     only_thread,
                                     guint                    n,
                                     GError                 **error);

G_END_DECLS
