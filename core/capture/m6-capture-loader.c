/* SPDX-License-Identifier: MIT */
/* m6-capture-loader.c — replaying a .mach6 capture: the loader reads one
 * record at a time into a buffer bounded by M6_CAPTURE_RECORD_MAX, checks
 * it against the file size and its CRC, and feeds it to a fresh session
 * through m6_session_ingest(), the path the live reader takes, so the
 * payload comes out the same. The format: m6-capture-format.h. */
#include "m6-capture-format.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "m6-pack.h"

G_DEFINE_QUARK (m6-capture-error-quark, m6_capture_error)

/* --- loader ------------------------------------------------------------- */

gboolean
m6_capture_decode_events (guint32        type,
                          const guint8  *payload,
                          guint32        length,
                          guint32       *thread,
                          M6Event      **events,
                          gsize         *events_alloc,
                          guint32       *n_events,
                          GError       **error)
{
  const char *name = type == M6_CAPTURE_RECORD_PACKED_EVENTS ? "PACKED_EVENTS" : "EVENTS";

  g_return_val_if_fail (events != NULL && events_alloc != NULL && n_events != NULL, FALSE);

  if ((type != M6_CAPTURE_RECORD_EVENTS && type != M6_CAPTURE_RECORD_PACKED_EVENTS)
      || length < 8 || length > M6_CAPTURE_RECORD_MAX)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("a record of type %u and length %u is not an EVENTS or PACKED_EVENTS record"),
                   type, length);
      return FALSE;
    }
  guint32 count = m6_get_u32 (payload + 4);
  gboolean packed = type == M6_CAPTURE_RECORD_PACKED_EVENTS;
  /* The count is bounded before anything is allocated: by the length (24
   * bytes an event) or by the block's own limit. */
  if (packed ? count == 0 || count > M6_PACK_MAX_EVENTS
             : (guint64) length != 8 + (guint64) count * EVENT_SIZE)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s length %u does not hold its %u events"), name, length, count);
      return FALSE;
    }
  gsize room = packed ? M6_PACK_MAX_EVENTS : count;
  if (room > *events_alloc)
    {
      *events_alloc = room;
      *events = g_renew (M6Event, *events, room);
    }
  if (packed)
    {
      g_autoptr (GError) local = NULL;
      gsize n = m6_pack_decode (payload + 8, length - 8, *events, &local);
      if (n != count)
        {
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                       _("PACKED_EVENTS of length %u does not decode as %u events: %s"), length, count,
                       local != NULL ? local->message : _("another number of events"));
          return FALSE;
        }
    }
  else
    {
      const guint8 *e = payload + 8;
      for (guint32 i = 0; i < count; i++, e += EVENT_SIZE)
        {
          (*events)[i].t_ns = (gint64) m6_get_u64 (e);
          (*events)[i].heap = (gint64) m6_get_u64 (e + 8);
          (*events)[i].label = m6_get_u32 (e + 16);
          (*events)[i].depth = m6_get_u32 (e + 20);
        }
    }
  if (thread != NULL)
    *thread = m6_get_u32 (payload);
  *n_events = count;
  return TRUE;
}

typedef struct
{
  const char *display;     /* file name for messages */
  M6Session  *session;
  guint64     record;      /* 1-based number of the record being read */
  guint64     offset;      /* its offset */
  guint64     n_events;
  M6Event    *events;      /* EVENTS_PER_RECORD is not trusted: sized per record */
  gsize       events_alloc;
  guint32     version;
} Loader;

static gboolean
load_fail (Loader      *ld,
           GError     **error,
           const char  *format,
           ...) G_GNUC_PRINTF (3, 4);

static gboolean
load_fail (Loader      *ld,
           GError     **error,
           const char  *format,
           ...)
{
  va_list args;
  g_autofree char *detail = NULL;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
               _("%s: record %llu at offset %llu: %s"),
               ld->display, U (ld->record), U (ld->offset), detail);
  return FALSE;
}

static M6Thread *
load_thread (Loader        *ld,
             const guint8  *payload,
             const char    *type,
             GError       **error)
{
  guint32 index = m6_get_u32 (payload);
  M6Thread *thread = m6_session_get_thread (ld->session, index);

  if (thread == NULL)
    load_fail (ld, error, _("%s for thread %u, which was not declared"), type, index);
  return thread;
}

static gboolean
load_record (Loader        *ld,
             guint32        type,
             const guint8  *p,
             guint32        length,
             GError       **error)
{
  const char *name = m6_capture_record_type_name (type);
  M6Thread *thread;

  switch (type)
    {
    case M6_CAPTURE_RECORD_LABEL:
      {
        if (length < 4)
          return load_fail (ld, error, _("LABEL length %u is too short"), length);
        guint32 id = m6_get_u32 (p);
        guint32 expected = m6_labels_count (m6_session_get_labels (ld->session));
        if (id != expected)
          return load_fail (ld, error, _("LABEL %u is out of order (expected %u)"), id, expected);
        if (memchr (p + 4, '\0', length - 4) != NULL)
          return load_fail (ld, error, _("LABEL %u contains a NUL byte"), id);
        guint32 got = m6_session_intern_label (ld->session, (const char *) p + 4, length - 4);
        if (got != id)
          return load_fail (ld, error, _("LABEL %u repeats label %u"), id, got);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD:
      {
        if (length < 12)
          return load_fail (ld, error, _("THREAD length %u is too short"), length);
        guint32 index = m6_get_u32 (p);
        guint32 expected = m6_session_get_n_threads (ld->session);
        if (index != expected)
          return load_fail (ld, error, _("THREAD %u is out of order (expected %u)"), index, expected);
        g_autofree char *thread_name = g_strndup ((const char *) p + 12, length - 12);
        m6_session_add_thread (ld->session, m6_get_u64 (p + 4), thread_name);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD_NAME:
      {
        if (length < 4)
          return load_fail (ld, error, _("THREAD_NAME length %u is too short"), length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        g_autofree char *thread_name = g_strndup ((const char *) p + 4, length - 4);
        m6_session_set_thread_name (ld->session, thread, thread_name);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_THREAD_STATE:
      {
        if (length != 8)
          return load_fail (ld, error, _("THREAD_STATE length %u is not 8"), length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        guint32 state = m6_get_u32 (p + 4);
        if (state != M6_THREAD_STATE_LIVE && state != M6_THREAD_STATE_EXITED)
          return load_fail (ld, error, _("THREAD_STATE %u is not a thread state"), state);
        m6_session_set_thread_state (ld->session, thread, state);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_DROPS:
      if (length != 12)
        return load_fail (ld, error, _("DROPS length %u is not 12"), length);
      if ((thread = load_thread (ld, p, name, error)) == NULL)
        return FALSE;
      m6_session_set_thread_drops (ld->session, thread, m6_get_u64 (p + 4));
      return TRUE;

    case M6_CAPTURE_RECORD_REFUSALS:
      if (length != 28)
        return load_fail (ld, error, _("REFUSALS length %u is not 28"), length);
      if ((thread = load_thread (ld, p, name, error)) == NULL)
        return FALSE;
      m6_session_set_thread_refusals (ld->session, thread, m6_get_u64 (p + 4), m6_get_u64 (p + 12),
                                      m6_get_u64 (p + 20));
      return TRUE;

    case M6_CAPTURE_RECORD_UNSLOTTED:
      if (length != 8)
        return load_fail (ld, error, _("UNSLOTTED length %u is not 8"), length);
      m6_session_set_threads_unslotted (ld->session, m6_get_u64 (p));
      return TRUE;

    case M6_CAPTURE_RECORD_HEAP_SOURCE:
      {
        if (length != 4)
          return load_fail (ld, error, _("HEAP_SOURCE length %u is not 4"), length);
        guint32 source = m6_get_u32 (p);
        if (source > M6_HEAP_SOURCE_SHIM_THREAD)
          return load_fail (ld, error, _("HEAP_SOURCE %u is not a heap source"), source);
        m6_session_set_heap_source (ld->session, source);
        return TRUE;
      }

    case M6_CAPTURE_RECORD_PACKED_EVENTS:
    case M6_CAPTURE_RECORD_EVENTS:
      {
        g_autoptr (GError) local = NULL;
        guint32 count;

        if (type == M6_CAPTURE_RECORD_PACKED_EVENTS && ld->version < 3)
          return load_fail (ld, error, _("PACKED_EVENTS in a version %u capture (they came with version 3)"),
                            ld->version);
        if (length < 8)
          return load_fail (ld, error, _("%s length %u is too short"), name, length);
        if ((thread = load_thread (ld, p, name, error)) == NULL)
          return FALSE;
        if (!m6_capture_decode_events (type, p, length, NULL, &ld->events, &ld->events_alloc, &count, &local))
          return load_fail (ld, error, "%s", local->message);
        m6_session_ingest (ld->session, thread, ld->events, count);
        ld->n_events += count;
        return TRUE;
      }

    case M6_CAPTURE_RECORD_PAD:
      if (length > PAD_MAX)
        return load_fail (ld, error, _("PAD length %u is more than %u"), length, PAD_MAX);
      return TRUE;

    case M6_CAPTURE_RECORD_END:
      {
        if (length != END_SIZE)
          return load_fail (ld, error, _("END length %u is not %u"), length, END_SIZE);
        guint64 records = m6_get_u64 (p);
        guint64 events = m6_get_u64 (p + 8);
        guint32 threads = m6_get_u32 (p + 16);
        guint32 labels = m6_get_u32 (p + 20);
        guint32 flags = m6_get_u32 (p + 24);
        if (records != ld->record - 1)
          return load_fail (ld, error, _("END counts %llu records before it, but there are %llu"),
                            U (records), U (ld->record - 1));
        if (events != ld->n_events)
          return load_fail (ld, error, _("END counts %llu events, but the records hold %llu"),
                            U (events), U (ld->n_events));
        if (threads != m6_session_get_n_threads (ld->session))
          return load_fail (ld, error, _("END counts %u threads, but %u were declared"),
                            threads, m6_session_get_n_threads (ld->session));
        if (labels != m6_labels_count (m6_session_get_labels (ld->session)))
          return load_fail (ld, error, _("END counts %u labels, but %u were declared"),
                            labels, m6_labels_count (m6_session_get_labels (ld->session)));
        /* Whether the program exited while it was recorded, or only the
         * recording stopped. */
        m6_session_set_process_exited (ld->session, (flags & END_FLAG_ENDED) != 0);
        return TRUE;
      }

    default:
      return load_fail (ld, error, _("unknown record type %u"), type);
    }
}

static gboolean
read_exact (int            fd,
            guint8        *buf,
            gsize          length,
            guint64        offset,
            const char    *display,
            GError       **error)
{
  while (length > 0)
    {
      gssize n = pread (fd, buf, length, (off_t) offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = n < 0 ? errno : EIO;
          g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                       _("cannot read %s at offset %llu: %s"),
                       display, U (offset), n < 0 ? g_strerror (saved) : _("the file got shorter"));
          return FALSE;
        }
      buf += n;
      length -= (gsize) n;
      offset += (guint64) n;
    }
  return TRUE;
}

static gboolean
load_header (int            fd,
             guint64        size,
             const char    *display,
             M6Session     *session,
             M6CaptureInfo *info,
             GError       **error)
{
  guint8 h[M6_CAPTURE_HEADER_SIZE];
  gsize have = (gsize) MIN (size, (guint64) sizeof h);

  if (!read_exact (fd, h, have, 0, display, error))
    return FALSE;
  if (have < 8 || memcmp (h, MAGIC, 8) != 0)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_NOT_CAPTURE,
                   _("%s is not a mach6 capture (it does not start with “%s”)"), display, MAGIC);
      return FALSE;
    }
  if (have < sizeof h)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the file is %llu bytes, too short for the %u-byte capture header"),
                   display, U (size), M6_CAPTURE_HEADER_SIZE);
      return FALSE;
    }

  guint32 version = m6_get_u32 (h + 8);
  guint32 header_size = m6_get_u32 (h + 12);

  info->version = version;
  guint32 crc = m6_get_u32 (h + M6_CAPTURE_HEADER_SIZE - 4);

  if (version < 1 || version > M6_CAPTURE_VERSION)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_VERSION,
                   _("%s: capture format version %u is not the version this program reads (%u)"),
                   display, version, M6_CAPTURE_VERSION);
      return FALSE;
    }
  if (header_size != M6_CAPTURE_HEADER_SIZE)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: header size %u is not %u"), display, header_size, M6_CAPTURE_HEADER_SIZE);
      return FALSE;
    }

  if (crc != m6_capture_crc (0, h, sizeof h - 4))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the header checksum does not match"), display);
      return FALSE;
    }

  guint32 heap_source = m6_get_u32 (h + 36);
  if (heap_source > M6_HEAP_SOURCE_SHIM_THREAD)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: heap source %u in the header is not a heap source"), display, heap_source);
      return FALSE;
    }
  if (memchr (h + 40, '\0', 64) == NULL)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                   _("%s: the process name in the header is not NUL-terminated"), display);
      return FALSE;
    }

  info->created_unix_us = (gint64) m6_get_u64 (h + 16);
  m6_session_set_start_time (session, (gint64) m6_get_u64 (h + 24));
  m6_session_set_process (session, (gint) m6_get_u32 (h + 32), (const char *) h + 40);
  m6_session_set_heap_source (session, heap_source);
  return TRUE;
}

M6Session *
m6_capture_load_full (const char     *path,
                      M6CaptureInfo  *info,
                      GError        **error)
{
  g_autoptr (M6Session) session = m6_session_new ();

  if (!m6_capture_load_into (path, session, info, error))
    return NULL;
  return g_steal_pointer (&session);
}

gboolean
m6_capture_load_into (const char     *path,
                      M6Session      *target,
                      M6CaptureInfo  *info,
                      GError        **error)
{
  return m6_capture_load_into_full (path, target, info, NULL, NULL, NULL, error);
}

gboolean
m6_capture_load_into_full (const char      *path,
                           M6Session       *target,
                           M6CaptureInfo   *info,
                           GCancellable    *cancellable,
                           M6ProgressFunc   progress,
                           gpointer         progress_data,
                           GError         **error)
{
  g_autofree char *display = NULL;
  M6Session *session = target;
  g_autofree guint8 *payload = NULL;
  M6CaptureInfo local_info;
  Loader ld = { 0 };
  struct stat st;
  guint64 offset;
  gboolean ok = FALSE;
  int fd;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (M6_IS_SESSION (target), FALSE);

  m6_capture_crc_init ();
  if (info == NULL)
    info = &local_info;
  memset (info, 0, sizeof *info);
  display = g_filename_display_name (path);

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("cannot open %s: %s"), display, g_strerror (saved));
      return FALSE;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_IO,
                   _("%s is not a regular file"), display);
      close (fd);
      return FALSE;
    }

  guint64 size = (guint64) st.st_size;
  info->file_size = size;
  if (!load_header (fd, size, display, session, info, error))
    goto out;

  ld.display = display;
  ld.session = session;
  ld.version = info->version;
  payload = g_malloc (M6_CAPTURE_RECORD_MAX);
  offset = M6_CAPTURE_HEADER_SIZE;

  /* Each turn consumes at least a record header: ends within size / 12. */
  while (offset < size)
    {
      guint8 rh[RECORD_HEADER_SIZE];
      guint64 remaining = size - offset;

      ld.record++;
      ld.offset = offset;
      /* Every 64 records (up to 12 MB): cheap, and often enough to show. */
      if ((ld.record & 63) == 0)
        {
          if (g_cancellable_set_error_if_cancelled (cancellable, error))
            goto out;
          if (progress != NULL)
            progress (offset, size, progress_data);
        }
      if (remaining < RECORD_HEADER_SIZE)
        {
          info->ignored_bytes = remaining;
          break;
        }
      if (!read_exact (fd, rh, sizeof rh, offset, display, error))
        goto out;

      guint32 type = m6_get_u32 (rh);
      guint32 length = m6_get_u32 (rh + 4);
      guint32 crc = m6_get_u32 (rh + 8);
      const char *name = m6_capture_record_type_name (type);

      if (name == NULL)
        {
          load_fail (&ld, error, _("unknown record type %u"), type);
          goto out;
        }
      if (length > M6_CAPTURE_RECORD_MAX)
        {
          load_fail (&ld, error, _("%s length %u exceeds the limit of %u bytes"),
                     name, length, M6_CAPTURE_RECORD_MAX);
          goto out;
        }
      if (length > remaining - RECORD_HEADER_SIZE)
        {
          /* Cut short: a recorder that was killed mid-write. */
          info->ignored_bytes = remaining;
          break;
        }
      if (!read_exact (fd, payload, length, offset + RECORD_HEADER_SIZE, display, error))
        goto out;

      guint32 computed = m6_capture_crc (m6_capture_crc (0, rh, 8), payload, length);
      if (computed != crc)
        {
          load_fail (&ld, error, _("%s checksum 0x%08x does not match its contents (0x%08x)"),
                     name, crc, computed);
          goto out;
        }
      if (!load_record (&ld, type, payload, length, error))
        goto out;
      offset += RECORD_HEADER_SIZE + length;
      info->n_records++;

      if (type == M6_CAPTURE_RECORD_END)
        {
          info->finished = TRUE;
          if (offset != size)
            {
              g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT,
                           _("%s: %llu bytes follow the END record at offset %llu"),
                           display, U (size - offset), U (ld.offset));
              goto out;
            }
          break;
        }
    }

  info->n_events = ld.n_events;
  if (progress != NULL)
    progress (size, size, progress_data);
  /* A capture never grows: it is over. */
  m6_session_set_ended (session, TRUE);
  m6_session_notify_changed (session);
  ok = TRUE;

out:
  close (fd);
  g_free (ld.events);
  return ok;
}

M6Session *
m6_capture_load (const char  *path,
                 GError     **error)
{
  return m6_capture_load_full (path, NULL, error);
}
