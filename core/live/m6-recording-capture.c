/* SPDX-License-Identifier: MIT */
/* m6-recording-capture.c — a recording's capture: the writer it appends
 * to (m6_recording_set_capture), the series of --split files
 * (F-001.mach6, …: each finished and the next opened between batches)
 * and the parsing of --split's argument, shared by the CLI and the
 * viewer. The worker and the rest of the recording are in m6-recording.c. */
#include "m6-recording-private.h"

#include <glib/gi18n.h>
#include <string.h>

void
m6_recording_set_split (M6Recording *self,
                        guint64      bytes,
                        double       seconds)
{
  g_return_if_fail (M6_IS_RECORDING (self));
  g_return_if_fail (self->writer == NULL);

  self->split_bytes = bytes;
  self->split_us = seconds > 0 ? (gint64) (seconds * G_USEC_PER_SEC) : 0;
}

/* The next file of a split series. */
static char *
split_name (M6Recording *self)
{
  const char *base = self->split_base;
  g_autofree char *stem = g_str_has_suffix (base, ".mach6")
    ? g_strndup (base, strlen (base) - strlen (".mach6")) : g_strdup (base);

  return g_strdup_printf ("%s-%03u.mach6", stem, self->split_paths->len + 1);
}

/* A writer for @path, in the background. */
static M6CaptureWriter *
open_writer (M6Recording  *self,
             const char   *path,
             GError      **error)
{
  M6CaptureWriter *writer = m6_capture_writer_new (path, self->session, error);

  if (writer == NULL)
    return NULL;
  if (self->max_size > 0 && !m6_capture_writer_set_max_size (writer, self->max_size, error))
    {
      m6_capture_writer_free (writer);
      return NULL;
    }
  /* The worker's share of recording is then a memcpy; the page-cache
   * copy of write() (about 10 ns an event) runs beside it. */
  if (!m6_capture_writer_set_background (writer, error))
    {
      m6_capture_writer_free (writer);
      return NULL;
    }
  g_mutex_lock (&self->state_lock);
  g_ptr_array_add (self->split_paths, g_strdup (path));
  __atomic_store_n (&self->capture_path, g_ptr_array_index (self->split_paths, self->split_paths->len - 1),
                    __ATOMIC_RELEASE);
  g_mutex_unlock (&self->state_lock);
  self->split_started_us = g_get_monotonic_time ();
  return writer;
}

gboolean
m6_recording_set_capture (M6Recording  *self,
                          const char   *capture_path,
                          GError      **error)
{
  g_return_val_if_fail (M6_IS_RECORDING (self), FALSE);
  g_return_val_if_fail (self->worker == NULL && self->writer == NULL, FALSE);

  if (self->max_size > 0 && (self->split_bytes > 0 || self->split_us > 0))
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           _("a rolling capture (--max-size) is one file, not a --split series: "
                             "give one or the other"));
      return FALSE;
    }
  if (self->split_paths == NULL)
    self->split_paths = g_ptr_array_new_with_free_func (g_free);
  g_free (self->split_base);
  self->split_base = g_strdup (capture_path);
  g_autofree char *first = self->split_bytes > 0 || self->split_us > 0 ? split_name (self) : g_strdup (capture_path);
  self->writer = open_writer (self, first, error);
  return self->writer != NULL;
}

/* With the lock held, between batches: the current file is finished and
 * the next begins, on the same session (its labels and threads declared
 * again at its start: each file opens on its own). */
gboolean
m6_recording_maybe_split (M6Recording  *self,
                          GError      **error)
{
  if (self->writer == NULL || (self->split_bytes == 0 && self->split_us == 0))
    return TRUE;
  if (!(self->split_bytes > 0 && m6_capture_writer_get_size (self->writer) >= self->split_bytes)
      && !(self->split_us > 0 && g_get_monotonic_time () - self->split_started_us >= self->split_us))
    return TRUE;
  /* Finished (or, failing, kept as far as it got: the error says so),
   * the old writer goes either way, so that finishing the recording does
   * not finish it twice. */
  gboolean ok = m6_capture_writer_finish (self->writer, error);
  g_clear_pointer (&self->writer, m6_capture_writer_free);
  if (!ok)
    return FALSE;
  g_autofree char *next = split_name (self);
  self->writer = open_writer (self, next, error);
  return self->writer != NULL;
}

void
m6_recording_set_max_size (M6Recording *self,
                           guint64      bytes)
{
  g_return_if_fail (M6_IS_RECORDING (self));
  g_return_if_fail (self->writer == NULL);

  self->max_size = bytes;
}

gboolean
m6_recording_parse_max_size (const char  *size,
                             guint64     *bytes,
                             GError     **error)
{
  static const struct { const char *suffix; guint64 bytes; } units[] = {
    { "k", 1024 }, { "kb", 1024 }, { "kib", 1024 },
    { "m", 1024 * 1024 }, { "mb", 1024 * 1024 }, { "mib", 1024 * 1024 },
    { "g", 1024 * 1024 * 1024 }, { "gb", 1024 * 1024 * 1024 }, { "gib", 1024 * 1024 * 1024 },
    { "t", (guint64) 1024 * 1024 * 1024 * 1024 }, { "tb", (guint64) 1024 * 1024 * 1024 * 1024 },
  };
  char *end = NULL;
  double value = g_ascii_strtod (size, &end);

  *bytes = 0;
  if (end != size && end != NULL && value > 0 && value < 1e15)
    for (gsize i = 0; i < G_N_ELEMENTS (units); i++)
      if (g_ascii_strcasecmp (end, units[i].suffix) == 0)
        {
          *bytes = (guint64) (value * (double) units[i].bytes);
          if (*bytes < 4 * 1024 * 1024)
            {
              g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           _("--max-size must be at least 4MB, not “%s”"), size);
              return FALSE;
            }
          return TRUE;
        }
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               _("--max-size takes a size like 500MB or 1G, not “%s”"), size);
  return FALSE;
}

gboolean
m6_recording_parse_split (const char  *every,
                          guint64     *bytes,
                          double      *seconds,
                          GError     **error)
{
  static const struct { const char *suffix; double seconds; guint64 bytes; } units[] = {
    { "s", 1, 0 }, { "min", 60, 0 }, { "m", 60, 0 }, { "h", 3600, 0 },
    { "k", 0, 1024 }, { "kb", 0, 1024 }, { "kib", 0, 1024 },
    { "mb", 0, 1024 * 1024 }, { "mib", 0, 1024 * 1024 },
    { "g", 0, 1024 * 1024 * 1024 }, { "gb", 0, 1024 * 1024 * 1024 }, { "gib", 0, 1024 * 1024 * 1024 },
  };
  char *end = NULL;
  double value = g_ascii_strtod (every, &end);

  *bytes = 0;
  *seconds = 0;
  if (end != every && value > 0 && end != NULL)
    for (gsize i = 0; i < G_N_ELEMENTS (units); i++)
      if (g_ascii_strcasecmp (end, units[i].suffix) == 0)
        {
          /* "m" alone is minutes; "M" (or "MB") a size. */
          if (g_str_equal (end, "M"))
            {
              *bytes = (guint64) (value * 1024 * 1024);
              return TRUE;
            }
          if (units[i].bytes > 0)
            *bytes = (guint64) (value * (double) units[i].bytes);
          else
            *seconds = value * units[i].seconds;
          return TRUE;
        }
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               _("a split takes a time (like 10min, 30s or 1h) or a size (like 100MB or 1G), not “%s”"), every);
  return FALSE;
}

char **
m6_recording_dup_capture_paths (M6Recording *self)
{
  GStrvBuilder *builder = g_strv_builder_new ();

  g_return_val_if_fail (M6_IS_RECORDING (self), NULL);

  g_mutex_lock (&self->state_lock);
  for (guint i = 0; self->split_paths != NULL && i < self->split_paths->len; i++)
    g_strv_builder_add (builder, g_ptr_array_index (self->split_paths, i));
  g_mutex_unlock (&self->state_lock);
  char **paths = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  return paths;
}
