/* SPDX-License-Identifier: MIT */
/* m6-samples.h — call-stack samples and off-CPU spans of a recorded
 * process (core/sampling): what the sampler collected, symbolized, as it
 * is stored in a capture's records 20-29 (docs/capture-format.md) and
 * read back, and placed under the scope open on its thread at its time.
 * docs/sampling.md describes the design. */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "m6-capture.h"
#include "m6-session.h"

G_BEGIN_DECLS

/* How a thread's call chains were taken. */
typedef enum
{
  M6_UNWIND_AUTO = 0,    /* a request only: frame pointers unless they fail */
  M6_UNWIND_FP = 1,      /* the kernel walked the frame pointers */
  M6_UNWIND_DWARF = 2,   /* a copy of the user stack unwound with libdwfl */
} M6Unwind;

const char *m6_unwind_name (M6Unwind unwind);   /* "auto", "fp", "dwarf" */
gboolean    m6_unwind_parse (const char *text,
                             M6Unwind   *unwind);

typedef struct
{
  gint64  t_ns;     /* session time */
  guint32 first;    /* its frames: M6Samples.frames[first .. first + depth), leaf first */
  guint32 depth;
} M6Sample;

typedef struct
{
  gint64  t_out;    /* session time it left the CPU */
  gint64  t_in;     /* and came back */
  guint32 first;    /* the chain where it blocked (may be empty) */
  guint32 depth;
} M6OffCpu;

typedef struct
{
  guint64  tid;
  M6Unwind method;
  guint64  lost;       /* samples the kernel could not hand over (ring full) */
  GArray  *samples;    /* M6Sample, in time order */
  GArray  *off_cpu;    /* M6OffCpu, in time order */
} M6SampleThread;

typedef struct
{
  guint32    hz;
  char      *status;     /* why a sampler could not be opened, or NULL */
  GPtrArray *threads;    /* M6SampleThread */
  GArray    *frames;     /* guint32 symbol ids */
  GPtrArray *symbols;    /* char *: id -> name; 0 is "[unknown]" */
  GHashTable *symbol_ids; /* name -> id + 1 */
  guint64    wire_name_bytes;  /* names read by m6_samples_read_wire(), in bytes */
} M6Samples;

M6Samples      *m6_samples_new          (void);
void            m6_samples_free         (M6Samples  *self);
guint32         m6_samples_intern       (M6Samples  *self,
                                         const char *name);
/* @name's id in a table of names (@names, owning them; @ids: name -> id
 * + 1), added at the end if new: M6Samples' symbols and the model's. */
guint32         m6_names_intern         (GPtrArray  *names,
                                         GHashTable *ids,
                                         const char *name);
M6SampleThread *m6_samples_thread       (M6Samples  *self,
                                         guint64     tid);
guint64         m6_samples_count        (M6Samples  *self);

/* A capture's samples written as they come (records 20-24, each chunk
 * after the ones before): the names a chunk needs that the capture does
 * not hold yet go first, then a SAMPLE_THREAD record per thread with its
 * running totals, then its samples and spans. */
typedef struct _M6SamplesWriter M6SamplesWriter;

typedef struct
{
  guint64  tid;
  M6Unwind method;
  guint64  samples;    /* written so far */
  guint64  lost;
  guint64  off_cpu;
} M6SampleTotals;

M6SamplesWriter *m6_samples_writer_new   (void);
void             m6_samples_writer_free  (M6SamplesWriter *self);
/* Write @chunk through @writer (the recording's lock held). */
gboolean         m6_samples_writer_write (M6SamplesWriter *self,
                                          M6Samples       *chunk,
                                          M6CaptureWriter *writer,
                                          GError         **error);
/* M6SampleTotals, a thread each, in the order they came. */
const GArray    *m6_samples_writer_get_totals (M6SamplesWriter *self);
/* The last status sentence written, or NULL. */
const char      *m6_samples_writer_get_status (M6SamplesWriter *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6SamplesWriter, m6_samples_writer_free)

/* The same records handed to @sink (type, payload) instead of a capture:
 * `mach6 serve` sends each as a SAMPLES message. */
typedef gboolean (*M6SamplesSink) (guint32       type,
                                   const guint8 *payload,
                                   gsize         length,
                                   gpointer      user_data,
                                   GError      **error);
gboolean         m6_samples_writer_write_to (M6SamplesWriter *self,
                                             M6Samples       *chunk,
                                             M6SamplesSink    sink,
                                             gpointer         sink_data,
                                             GError         **error);

/* A name in a SAMPLES message: at most this many bytes. */
#define M6_WIRE_SAMPLES_MAX_NAME 4096u

/* The client's side: one record (type 20-24, as a SAMPLES message carries
 * it) read into @self, which keeps the names and threads of the stream so
 * far; every field checked, with a sentence for a bad one. For a record
 * with samples, spans, a thread's totals or a status, *@chunk is what it
 * adds, with its names, ready for m6_samples_writer_write(). */
gboolean        m6_samples_read_wire    (M6Samples     *self,
                                         guint32        type,
                                         const guint8  *payload,
                                         gsize          length,
                                         M6Samples    **chunk,
                                         GError       **error);

/* Write them as records 20-24 through @writer at once (the recording's lock held). */
gboolean        m6_samples_write        (M6Samples       *self,
                                         M6CaptureWriter *writer,
                                         GError         **error);

/* The samples of capture @path (empty if it has none), with a sentence
 * naming the file and record for a bad one. */
M6Samples      *m6_samples_load         (const char  *path,
                                         GError     **error);

/* `report --samples`: @path's session with its samples under its scopes,
 * as a table or as JSON (docs/sampling.md). */
char           *m6_samples_report       (const char  *path,
                                         gboolean     json,
                                         GError     **error);

/* What m6_samples_report() gives, as a JSON tree. */
JsonNode       *m6_samples_scopes_json  (M6Session   *session,
                                         GPtrArray   *thread_events,
                                         M6Samples   *samples);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (M6Samples, m6_samples_free)

G_END_DECLS
