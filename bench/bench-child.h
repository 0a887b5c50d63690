/* SPDX-License-Identifier: MIT */
/* bench-child.h — what bench-capture and bench-soak share: a game forked as
 * a child of the bench (a real libmach6 producer), the built `mach6 record`
 * started on it, the output read back, a child's RSS from /proc and the
 * files the recorder writes looked at, and the JSON line of a figure. One
 * copy, so that both benches measure the same way. */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* {"bench": @bench, "metric": @metric, "value": @value, "unit": @unit}, with
 * "note": @note when it is not NULL, on stdout (flushed). */
void     bench_emit          (const char *bench,
                              const char *metric,
                              double      value,
                              const char *unit,
                              const char *note);
gint64   bench_now_ns        (void);

/* The game: frames of a "frame" scope, 9 systems under it and @jobs "job"
 * scopes under each (the heap reading moving ±64 bytes a job). */
typedef struct
{
  const char *name;       /* its process name (prctl PR_SET_NAME) */
  guint       jobs;       /* a system's jobs a frame */
  gint64      frame_ns;   /* a frame every @frame_ns; 0: flat out */
  gint64      seconds;    /* it exits after this long; 0: never */
} BenchGame;

/* Fork the game (it dies with the bench: PR_SET_PDEATHSIG) and give it
 * 300 ms to make its segment; its pid. */
pid_t    bench_game_start    (const BenchGame *game);
/* SIGKILL it and reap it. */
void     bench_game_stop     (pid_t pid);

/* Start the built mach6 with @args (NULL-terminated, the program first),
 * its stdout in *@out_fd and its stderr thrown away; FALSE with a sentence
 * on stderr naming @who. */
gboolean bench_recorder_start (const char        *who,
                               const char *const *args,
                               GPid              *pid,
                               int               *out_fd);
/* All that @fd holds until its end (then closed); NULL when nothing. */
char    *bench_read_all      (int fd);

/* VmRSS of @pid in MB, -1 when it cannot be read (the process is gone). */
double   bench_rss_mb        (GPid pid);
/* @path's size, 0 when it is not there. */
guint64  bench_file_size     (const char *path);
/* The biggest file in @dir whose name begins with @prefix (NULL: any) and,
 * if @temps, holds ".tmp-" (a file a writer is still writing). */
guint64  bench_biggest_file  (const char *dir,
                              const char *prefix,
                              gboolean    temps);

G_END_DECLS
