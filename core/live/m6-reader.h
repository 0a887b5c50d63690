/* SPDX-License-Identifier: MIT */
/* m6-reader.h — find instrumented processes, attach to one's shared-memory
 * segment (mach6.h) and drain its rings into an M6Session. Nothing read
 * from shared memory is trusted: a hostile or corrupt segment yields a
 * GError, never a crash or a hang. */
#pragma once

#include <glib.h>

#include "m6-session.h"

G_BEGIN_DECLS

#define M6_READER_ERROR (m6_reader_error_quark ())

typedef enum
{
  M6_READER_ERROR_NOT_FOUND,  /* no segment for that process */
  M6_READER_ERROR_ACCESS,     /* the segment exists but cannot be opened or mapped */
  M6_READER_ERROR_NOT_READY,  /* the producer is still creating it: retry shortly */
  M6_READER_ERROR_VERSION,    /* another ABI version */
  M6_READER_ERROR_CORRUPT,    /* a field fails validation; sticky for a reader */
  M6_READER_ERROR_BUSY,       /* another viewer holds the session */
  M6_READER_ERROR_FAILED,
} M6ReaderError;

GQuark        m6_reader_error_quark    (void);

/* One entry of m6_reader_list(). */
typedef struct
{
  gint      pid;
  char     *name;          /* process name, valid UTF-8; "" when unreadable */
  char     *shm_name;      /* "/mach6-<uid>-<pid>-<hex>" */
  guint     n_threads;     /* ring slots claimed */
  guint     threads_unslotted; /* threads that found no slot (over the process's life) */
  guint     threads_active; /* threads that have marked and not exited (alive processes; 0 = not known) */
  gboolean  alive;         /* state ALIVE and the pid exists */
  gboolean  ended;         /* state EXITED or the pid is gone */
  gint      attached_pid;  /* viewer holding it; 0 if none or if it is dead */
  char     *error;         /* NULL, or why the segment cannot be read (a sentence) */
} M6ProcessInfo;

void          m6_process_info_free     (M6ProcessInfo *info);

/* Every mach6 segment of our uid (of every uid for root), sorted by pid
 * (element type M6ProcessInfo; unreadable segments are listed with @error
 * set, except one a live producer is still creating; objects a neighbour
 * planted under our name are not listed). */
GPtrArray    *m6_reader_list           (GError      **error);

typedef struct _M6Reader M6Reader;

/* Map the segment of @pid, validate it, claim it (one viewer at a time; a
 * dead holder, or one whose pid now names another process, is taken over)
 * and start a session. For a producer that is already gone, the unread
 * rest of its rings is read for a post-mortem, and nothing in the segment
 * is written (a second post-mortem reads the same). Root may attach to any
 * user's process. */
M6Reader     *m6_reader_attach         (gint          pid,
                                        GError      **error);

/* Move up to @max_events new events (over all threads) into the session,
 * with new labels, threads, names, states, drops and refusals; notices the
 * end of the producer. Each call also stamps the heartbeat that keeps the
 * producer recording (it stops after 3 s without one; the next drain then
 * starts recording again). Emits the session's "changed" once if anything was
 * ingested. A corrupt segment makes the reader fail from then on with the
 * same error; the session keeps what it has. */
gboolean      m6_reader_drain          (M6Reader     *self,
                                        gsize         max_events,
                                        gsize        *n_drained,
                                        GError      **error);

/* Stop the recording and release the claim (also done by free). */
void          m6_reader_detach         (M6Reader     *self);
void          m6_reader_free           (M6Reader     *self);

M6Session    *m6_reader_get_session    (M6Reader     *self);
gint          m6_reader_get_pid        (M6Reader     *self);
const char   *m6_reader_get_shm_name   (M6Reader     *self);
/* Is the producer still running? (Checked at most every 100 ms.) */
gboolean      m6_reader_is_alive       (M6Reader     *self);
/* Events in the rings not drained yet, over all threads (a backlog). */
guint64       m6_reader_get_pending    (M6Reader     *self);
/* Events the producer ever put in its rings (over the slots' lives). With
 * get_pending() == 0 on an ended program: > 0 means an earlier reader took
 * them all, 0 that nothing was ever recorded. */
guint64       m6_reader_get_written    (M6Reader     *self);
/* The CLOCK_MONOTONIC time (ns) that is session time 0: a sampler's
 * kernel times minus it are the events' times. */
guint64       m6_reader_get_origin_ns  (M6Reader     *self);

/* Unlink the segments of our uid whose producer is gone (one that cannot
 * be removed is skipped); returns how many were removed, or -1 with @error
 * set if /dev/shm cannot be listed. */
gint          m6_reader_clean          (GError      **error);
/* Unlink the segment of @pid if its producer is gone. */
gboolean      m6_reader_clean_pid      (gint          pid,
                                        GError      **error);

/* The segment name of @pid ("/mach6-<uid>-<pid>-<hex>", the newest if a
 * reused pid has two, of an owner we may read), or NULL if it has none. */
char         *m6_reader_shm_name       (gint          pid);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Reader, m6_reader_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6ProcessInfo, m6_process_info_free)

G_END_DECLS
