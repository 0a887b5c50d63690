/* m6-export.c — exporters: json, ndjson, csv, folded stacks, Chrome trace.
 *
 * Each format is a writer into a buffered stream; m6_write_atomically()
 * puts the stream on a temporary file next to the target and renames it
 * only when every byte is written and synced. */
#include "m6-export.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "m6-json.h"
#include "m6-payload.h"
#include "m6-tempfile.h"

G_DEFINE_QUARK (m6-export-error-quark, m6_export_error)

static const struct
{
  const char *name;
  const char *extension;
} formats[] = {
  [M6_EXPORT_JSON]   = { "json", "json" },
  [M6_EXPORT_NDJSON] = { "ndjson", "ndjson" },
  [M6_EXPORT_CSV]    = { "csv", "csv" },
  [M6_EXPORT_FOLDED] = { "folded", "folded" },
  [M6_EXPORT_CHROME] = { "chrome", "trace.json" },
};

gboolean
m6_export_format_parse (const char     *name,
                        M6ExportFormat *format)
{
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_ascii_strcasecmp (name, formats[i].name) == 0)
      {
        *format = (M6ExportFormat) i;
        return TRUE;
      }
  return FALSE;
}

const char *
m6_export_format_name (M6ExportFormat format)
{
  return formats[format].name;
}

const char *
m6_export_format_extension (M6ExportFormat format)
{
  return formats[format].extension;
}

/* --- event log ---------------------------------------------------------- */

struct _M6EventLog
{
  GPtrArray *threads;   /* index -> GArray of M6Event */
};

M6EventLog *
m6_event_log_new (void)
{
  M6EventLog *self = g_new0 (M6EventLog, 1);

  self->threads = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  return self;
}

void
m6_event_log_free (M6EventLog *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->threads);
  g_free (self);
}

static GArray *
log_thread (M6EventLog *self,
            guint       index)
{
  while (self->threads->len <= index)
    g_ptr_array_add (self->threads, g_array_new (FALSE, FALSE, sizeof (M6Event)));
  return g_ptr_array_index (self->threads, index);
}

void
m6_event_log_record (M6Session     *session,
                     M6Thread      *thread,
                     const M6Event *events,
                     gsize          n_events,
                     gpointer       log)
{
  g_array_append_vals (log_thread (log, thread->index), events, n_events);
}

gsize
m6_event_log_get_n_events (M6EventLog *self,
                           guint       thread_index)
{
  return thread_index < self->threads->len
    ? ((GArray *) g_ptr_array_index (self->threads, thread_index))->len : 0;
}

/* --- atomic output ------------------------------------------------------ */

gboolean
m6_write_atomically (const char   *path,
                     M6WriteFunc   write,
                     gpointer      user_data,
                     GError      **error)
{
  g_autofree char *tmp = NULL;
  g_autoptr (GError) local_error = NULL;
  int fd = m6_tempfile_open (path, 0644, &tmp);

  if (fd < 0)
    {
      int saved = errno;
      g_autofree char *dir = g_path_get_dirname (path);
      g_set_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_WRITE,
                   _("Could not create a file in “%s”: %s"), dir, g_strerror (saved));
      return FALSE;
    }

  g_autoptr (GOutputStream) raw = g_unix_output_stream_new (fd, FALSE);
  g_autoptr (GOutputStream) out = g_buffered_output_stream_new_sized (raw, 1 << 16);
  gboolean ok = write (out, user_data, &local_error)
             && g_output_stream_flush (out, NULL, &local_error);

  if (ok && fsync (fd) != 0)
    {
      int saved = errno;
      g_set_error_literal (&local_error, G_IO_ERROR, g_io_error_from_errno (saved), g_strerror (saved));
      ok = FALSE;
    }
  g_output_stream_close (out, NULL, NULL);
  if (close (fd) != 0 && ok)
    {
      int saved = errno;
      g_set_error_literal (&local_error, G_IO_ERROR, g_io_error_from_errno (saved), g_strerror (saved));
      ok = FALSE;
    }
  if (ok && g_rename (tmp, path) != 0)
    {
      int saved = errno;
      g_set_error_literal (&local_error, G_IO_ERROR, g_io_error_from_errno (saved), g_strerror (saved));
      ok = FALSE;
    }

  if (!ok)
    {
      g_unlink (tmp);
      g_set_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_WRITE,
                   _("Could not write “%s”: %s"), path,
                   local_error ? local_error->message : _("unknown error"));
      return FALSE;
    }
  return TRUE;
}

/* Text goes through a GString flushed to the stream in 64 KiB pieces. */
typedef struct
{
  GOutputStream *out;
  GString       *buf;
  GError       **error;
  gboolean       failed;
} Sink;

static gboolean
sink_flush (Sink *sink)
{
  if (!sink->failed && sink->buf->len > 0)
    {
      if (!g_output_stream_write_all (sink->out, sink->buf->str, sink->buf->len, NULL, NULL, sink->error))
        sink->failed = TRUE;
    }
  g_string_truncate (sink->buf, 0);
  return !sink->failed;
}

static inline gboolean
sink_maybe_flush (Sink *sink)
{
  return sink->buf->len < (1 << 16) || sink_flush (sink);
}

static void
sink_init (Sink          *sink,
           GOutputStream *out,
           GError       **error)
{
  sink->out = out;
  sink->buf = g_string_sized_new (1 << 17);
  sink->error = error;
  sink->failed = FALSE;
}

static gboolean
sink_finish (Sink *sink)
{
  gboolean ok = sink_flush (sink);
  g_string_free (sink->buf, TRUE);
  return ok;
}

/* --- shared helpers ----------------------------------------------------- */

/* "frame/physics": the labels from the top-level scope down to the node
 * last pushed. A pre-order walk pushes each node once; the path is then
 * its parent's (kept as a prefix) and its own label, so the cost is the
 * path's length, not its depth times a label lookup. */
typedef struct
{
  GString *path;
  GArray  *ends;     /* guint: path length up to depth d + 1 */
  char     separator;
  gboolean folded;
} PathStack;

static void
path_stack_init (PathStack *ps,
                 char       separator,
                 gboolean   folded)
{
  ps->path = g_string_new (NULL);
  ps->ends = g_array_new (FALSE, FALSE, sizeof (guint));
  ps->separator = separator;
  ps->folded = folded;
}

static void
path_stack_clear (PathStack *ps)
{
  g_string_free (ps->path, TRUE);
  g_array_unref (ps->ends);
}

/* @node's parent must be the root or pushed before (pre-order). Returns
 * @node's label as in the path. */
static const char *
path_stack_push (PathStack    *ps,
                 M6Tree       *tree,
                 const M6Node *node)
{
  guint depth = node->depth;
  guint parent_end = depth >= 2 ? g_array_index (ps->ends, guint, depth - 2) : 0;
  g_autofree char *label = m6_payload_label (tree, node);

  g_string_truncate (ps->path, parent_end);
  if (depth >= 2)
    g_string_append_c (ps->path, ps->separator);
  if (ps->folded)
    {
      /* flamegraph.pl splits frames on ';' and the count on the last
       * space; a line break would end the record. */
      for (char *p = label; *p; p++)
        if (*p == ';')
          *p = ':';
        else if (*p == '\n' || *p == '\r')
          *p = ' ';
    }
  g_string_append (ps->path, label);
  g_array_set_size (ps->ends, depth);
  g_array_index (ps->ends, guint, depth - 1) = (guint) ps->path->len;
  return ps->path->str + parent_end + (depth >= 2);
}

/* Pre-order walk of a subtree without recursion. */
static const M6Node *
next_preorder (const M6Node *node,
               const M6Node *top)
{
  if (node->first_child)
    return node->first_child;
  while (node != top)
    {
      if (node->next_sibling)
        return node->next_sibling;
      node = node->parent;
    }
  return NULL;
}

/* "exited" only when the thread or its program is known to have exited;
 * a recording that stopped while it ran says "stopped". */
static const char *
thread_state_name (M6Session *session,
                   M6Thread  *thread)
{
  if (thread->state == M6_THREAD_STATE_EXITED || m6_session_get_process_exited (session))
    return "exited";
  return m6_session_get_ended (session) ? "stopped" : "live";
}

/* --- json --------------------------------------------------------------- */

static void
add_session_metadata (JsonBuilder *builder,
                      M6Session   *session)
{
  g_autoptr (GDateTime) start =
    g_date_time_new_from_unix_utc (m6_session_get_start_time (session) / G_USEC_PER_SEC);
  g_autofree char *iso = start ? g_date_time_format_iso8601 (start) : g_strdup ("");

  json_builder_set_member_name (builder, "format");
  json_builder_add_string_value (builder, "mach6");
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "process");
  json_builder_add_string_value (builder, m6_session_get_process_name (session));
  json_builder_set_member_name (builder, "pid");
  json_builder_add_int_value (builder, m6_session_get_pid (session));
  json_builder_set_member_name (builder, "start_time");
  json_builder_add_string_value (builder, iso);
  json_builder_set_member_name (builder, "duration");
  json_builder_add_double_value (builder, (double) m6_session_get_duration (session) / 1e9);
  json_builder_set_member_name (builder, "drops");
  json_builder_add_int_value (builder, (gint64) m6_session_get_drops (session));
  json_builder_set_member_name (builder, "unbalanced");
  json_builder_add_int_value (builder, (gint64) m6_session_get_unbalanced (session));
  json_builder_set_member_name (builder, "threads_unslotted");
  json_builder_add_int_value (builder, (gint64) m6_session_get_threads_unslotted (session));
  json_builder_set_member_name (builder, "depth_refused");
  json_builder_add_int_value (builder, (gint64) m6_session_get_depth_refused (session));
  json_builder_set_member_name (builder, "label_full");
  json_builder_add_int_value (builder, (gint64) m6_session_get_label_full (session));
  json_builder_set_member_name (builder, "memory_available");
  json_builder_add_boolean_value (builder, m6_session_get_memory_available (session));
  json_builder_set_member_name (builder, "ended");
  json_builder_add_boolean_value (builder, m6_session_get_ended (session));
}

static void
add_thread (JsonBuilder *builder,
            M6Session   *session,
            M6Thread    *thread,
            gboolean     with_payload)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "index");
  json_builder_add_int_value (builder, thread->index);
  json_builder_set_member_name (builder, "tid");
  json_builder_add_int_value (builder, (gint64) thread->tid);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, thread->name);
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, thread_state_name (session, thread));
  json_builder_set_member_name (builder, "drops");
  json_builder_add_int_value (builder, (gint64) thread->drops);
  json_builder_set_member_name (builder, "stray_dones");
  json_builder_add_int_value (builder, (gint64) thread->stray_dones);
  json_builder_set_member_name (builder, "depth_refused");
  json_builder_add_int_value (builder, (gint64) thread->depth_refused);
  json_builder_set_member_name (builder, "label_full");
  json_builder_add_int_value (builder, (gint64) thread->label_full);
  json_builder_set_member_name (builder, "payload");
  if (with_payload)
    json_builder_add_value (builder, m6_payload_build (thread->tree, m6_tree_get_root (thread->tree)));
  else
    json_builder_add_null_value (builder);   /* streamed in its place */
  json_builder_end_object (builder);
}

JsonNode *
m6_export_session_json (M6Session *session)
{
  return m6_export_session_json_thread (session, -1);
}

static JsonNode *
session_json (M6Session *session,
              gint       only_thread,
              gboolean   with_payload)
{
  g_autoptr (JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  add_session_metadata (builder, session);
  json_builder_set_member_name (builder, "threads");
  json_builder_begin_array (builder);
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    if (only_thread < 0 || (guint) only_thread == i)
      add_thread (builder, session, m6_session_get_thread (session, i), with_payload);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

JsonNode *
m6_export_session_json_thread (M6Session *session,
                               gint       only_thread)
{
  return session_json (session, only_thread, TRUE);
}

typedef struct
{
  M6Session             *session;
  M6EventLog            *log;
  const M6ExportOptions *options;
} ExportJob;

static gboolean
sink_flush_payload (GString  *out,
                    gpointer  data)
{
  return sink_flush (data);
}

/* The members of @object, pretty at @level, in order. The "payload" member
 * of a thread (null in the skeleton) is written straight from its tree. */
static gboolean
stream_object (Sink       *sink,
               M6Session  *session,
               JsonObject *object,
               guint       level,
               M6Thread   *thread)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;
  gboolean first = TRUE;

  g_string_append_c (sink->buf, '{');
  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &name, &member))
    {
      if (!first)
        g_string_append_c (sink->buf, ',');
      first = FALSE;
      m6_json_indent (sink->buf, TRUE, level + 1);
      m6_json_append_string (sink->buf, name);
      g_string_append (sink->buf, ": ");

      if (thread != NULL && strcmp (name, "payload") == 0)
        {
          if (!m6_payload_write (sink->buf, thread->tree, m6_tree_get_root (thread->tree),
                                 TRUE, level + 1, sink_flush_payload, sink))
            return FALSE;
        }
      else if (thread == NULL && strcmp (name, "threads") == 0 && JSON_NODE_HOLDS_ARRAY (member))
        {
          JsonArray *threads = json_node_get_array (member);
          guint n = json_array_get_length (threads);

          g_string_append_c (sink->buf, '[');
          for (guint i = 0; i < n; i++)
            {
              JsonObject *t = json_array_get_object_element (threads, i);
              M6Thread *th = m6_session_get_thread (session, (guint) json_object_get_int_member (t, "index"));

              if (i > 0)
                g_string_append_c (sink->buf, ',');
              m6_json_indent (sink->buf, TRUE, level + 2);
              if (!stream_object (sink, session, t, level + 2, th))
                return FALSE;
            }
          if (n > 0)
            m6_json_indent (sink->buf, TRUE, level + 1);
          g_string_append_c (sink->buf, ']');
        }
      else
        m6_json_append_at (sink->buf, member, TRUE, level + 1);
      if (!sink_maybe_flush (sink))
        return FALSE;
    }
  if (!first)
    m6_json_indent (sink->buf, TRUE, level);
  g_string_append_c (sink->buf, '}');
  return TRUE;
}

/* The json document, streamed: the same text m6_json_append() would give
 * for m6_export_session_json_thread(), while only the metadata is built in
 * memory; the payloads go to @sink as they are written. */
static gboolean
stream_session_json (Sink      *sink,
                     M6Session *session,
                     gint       only_thread)
{
  g_autoptr (JsonNode) skeleton = session_json (session, only_thread, FALSE);

  if (!stream_object (sink, session, json_node_get_object (skeleton), 0, NULL))
    return FALSE;
  g_string_append_c (sink->buf, '\n');
  return TRUE;
}

gboolean
m6_export_write_json (M6Session      *session,
                      gint            only_thread,
                      GOutputStream  *out,
                      GError        **error)
{
  Sink sink;

  sink_init (&sink, out, error);
  stream_session_json (&sink, session, only_thread);
  return sink_finish (&sink);
}

static gboolean
write_json (GOutputStream  *out,
            gpointer        data,
            GError        **error)
{
  ExportJob *job = data;

  return m6_export_write_json (job->session, -1, out, error);
}

/* --- csv ---------------------------------------------------------------- */

static void
csv_field (GString    *out,
           const char *text)
{
  if (strpbrk (text, ",\"\n\r") == NULL)
    {
      g_string_append (out, text);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *p = text; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

static void
csv_number (GString *out,
            double   value)
{
  g_string_append_c (out, ',');
  m6_json_append_double (out, value);
}

static gboolean
write_csv (GOutputStream  *out,
           gpointer        data,
           GError        **error)
{
  ExportJob *job = data;
  Sink sink;

  sink_init (&sink, out, error);
  g_string_append (sink.buf,
                   "thread,tid,path,label,depth,count,"
                   "time_avg_ms,time_p10_ms,time_p50_ms,time_p90_ms,time_max_ms,time_total_ms,"
                   "mem_delta_avg_kb,mem_delta_total_kb,inverse_mem_total_kb,mem_net_kb,mem_rate_kb\n");

  for (guint i = 0; i < m6_session_get_n_threads (job->session) && !sink.failed; i++)
    {
      M6Thread *thread = m6_session_get_thread (job->session, i);
      const M6Node *root = m6_tree_get_root (thread->tree);
      PathStack ps;

      path_stack_init (&ps, '/', FALSE);
      for (const M6Node *node = root->first_child; node; node = next_preorder (node, root))
        {
          M6NodeStats s;
          const char *label = path_stack_push (&ps, thread->tree, node);

          m6_node_stats_compute (thread->tree, node, &s);
          csv_field (sink.buf, thread->name);
          g_string_append_printf (sink.buf, ",%" G_GUINT64_FORMAT ",", thread->tid);
          csv_field (sink.buf, ps.path->str);
          g_string_append_c (sink.buf, ',');
          csv_field (sink.buf, label);
          g_string_append_printf (sink.buf, ",%u,%" G_GUINT64_FORMAT, node->depth, s.count);
          csv_number (sink.buf, s.time_avg * 1e3);
          csv_number (sink.buf, s.time_p10 * 1e3);
          csv_number (sink.buf, s.time_p50 * 1e3);
          csv_number (sink.buf, s.time_p90 * 1e3);
          csv_number (sink.buf, s.time_max * 1e3);
          csv_number (sink.buf, s.time_total * 1e3);
          csv_number (sink.buf, s.mem_delta_avg);
          csv_number (sink.buf, s.mem_delta_total);
          csv_number (sink.buf, s.inverse_mem_total);
          csv_number (sink.buf, s.mem_net);
          csv_number (sink.buf, s.mem_rate);
          g_string_append_c (sink.buf, '\n');
          if (!sink_maybe_flush (&sink))
            break;
        }
      path_stack_clear (&ps);
    }
  return sink_finish (&sink);
}

/* --- folded stacks ------------------------------------------------------ */

/* Self time in ns: a node's line plus its descendants' lines add up to its
 * total time exactly. */
static gint64
self_time (const M6Node *node)
{
  guint64 self = (guint64) node->time_sum;

  for (const M6Node *c = node->first_child; c; c = c->next_sibling)
    self -= (guint64) c->time_sum;
  return MAX ((gint64) self, 0);
}

static gboolean
write_folded (GOutputStream  *out,
              gpointer        data,
              GError        **error)
{
  ExportJob *job = data;
  guint n_threads = m6_session_get_n_threads (job->session);
  Sink sink;

  sink_init (&sink, out, error);
  for (guint i = 0; i < n_threads && !sink.failed; i++)
    {
      M6Thread *thread = m6_session_get_thread (job->session, i);
      const M6Node *root = m6_tree_get_root (thread->tree);
      g_autofree char *name = g_strdelimit (g_strdup (thread->name[0] ? thread->name : "thread"),
                                            ";\n\r", ':');
      PathStack ps;

      path_stack_init (&ps, ';', TRUE);
      for (const M6Node *node = root->first_child; node; node = next_preorder (node, root))
        {
          gint64 self = self_time (node);

          path_stack_push (&ps, thread->tree, node);
          if (self == 0)
            continue;
          /* With several threads, the thread is the bottom frame. */
          if (n_threads > 1)
            g_string_append_printf (sink.buf, "%s;", name);
          g_string_append_len (sink.buf, ps.path->str, ps.path->len);
          g_string_append_printf (sink.buf, " %" G_GINT64_FORMAT "\n", self);
          if (!sink_maybe_flush (&sink))
            break;
        }
      path_stack_clear (&ps);
    }
  return sink_finish (&sink);
}

/* --- chrome trace ------------------------------------------------------- */

static void
chrome_metadata (GString    *out,
                 const char *what,
                 gint        pid,
                 guint64     tid,
                 const char *name)
{
  g_string_append_printf (out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%" G_GUINT64_FORMAT
                          ",\"args\":{\"name\":", what, pid, tid);
  m6_json_append_string (out, name);
  g_string_append (out, "}},\n");
}

static void
chrome_us (GString *out,
           gint64   ns)
{
  /* µs with ns precision, printed exactly. */
  gint64 us = ns / 1000, rest = ns % 1000;
  if (rest < 0)
    {
      us -= 1;
      rest += 1000;
    }
  g_string_append_printf (out, "%" G_GINT64_FORMAT ".%03d", us, (int) rest);
}

static void
chrome_counter (GString *out,
                gint     pid,
                gint64   t_ns,
                gint64   heap)
{
  g_string_append_printf (out, "{\"ph\":\"C\",\"name\":\"heap\",\"cat\":\"mach6\",\"pid\":%d,\"tid\":0,\"ts\":", pid);
  chrome_us (out, t_ns);
  g_string_append (out, ",\"args\":{\"heap_kb\":");
  m6_json_append_double (out, (double) heap / 1024.0);
  g_string_append (out, "}},\n");
}

typedef struct
{
  gint64  t;
  gint64  heap;
  guint32 label;
} OpenMark;

static gboolean
write_chrome (GOutputStream  *out,
              gpointer        data,
              GError        **error)
{
  ExportJob *job = data;
  M6Session *session = job->session;
  M6Labels *labels = m6_session_get_labels (session);
  gint pid = m6_session_get_pid (session);
  gboolean memory = m6_session_get_memory_available (session);
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (OpenMark));
  Sink sink;

  sink_init (&sink, out, error);
  g_string_append (sink.buf, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"mach6\",\"process\":");
  m6_json_append_string (sink.buf, m6_session_get_process_name (session));
  g_string_append (sink.buf, "},\"traceEvents\":[\n");
  chrome_metadata (sink.buf, "process_name", pid, 0, m6_session_get_process_name (session));

  for (guint i = 0; i < m6_session_get_n_threads (session) && !sink.failed; i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      GArray *events = i < job->log->threads->len ? g_ptr_array_index (job->log->threads, i) : NULL;
      gboolean synced = FALSE;

      chrome_metadata (sink.buf, "thread_name", pid, thread->tid, thread->name);
      if (events == NULL)
        continue;

      g_array_set_size (stack, 0);
      for (guint e = 0; e < events->len; e++)
        {
          const M6Event *ev = &g_array_index (events, M6Event, e);

          /* The same rules as the session's ingest, kept simple: start at a
           * top-level mark, ignore what does not nest or is out of range. */
          if (!m6_event_in_range (ev))
            {
              g_array_set_size (stack, 0);
              synced = FALSE;
              continue;
            }
          if (!synced && (ev->label == M6_EVENT_DONE || ev->depth != 0))
            continue;
          synced = TRUE;

          if (ev->label != M6_EVENT_DONE)
            {
              if (ev->depth != stack->len || stack->len >= M6_MAX_DEPTH)
                {
                  g_array_set_size (stack, 0);
                  synced = FALSE;
                  continue;
                }
              OpenMark mark = { ev->t_ns, ev->heap, ev->label };
              g_array_append_val (stack, mark);
              if (memory && ev->depth == 0)
                chrome_counter (sink.buf, pid, ev->t_ns, ev->heap);
              continue;
            }

          if (stack->len == 0 || ev->depth != stack->len - 1)
            {
              g_array_set_size (stack, 0);
              synced = FALSE;
              continue;
            }

          OpenMark *mark = &g_array_index (stack, OpenMark, stack->len - 1);
          const char *label = m6_labels_get (labels, mark->label);
          g_autofree char *name = g_utf8_make_valid (label ? label : "?", -1);
          gint64 dur = MAX (ev->t_ns - mark->t, 0);

          g_string_append (sink.buf, "{\"ph\":\"X\",\"cat\":\"mach6\",\"name\":");
          m6_json_append_string (sink.buf, name);
          g_string_append_printf (sink.buf, ",\"pid\":%d,\"tid\":%" G_GUINT64_FORMAT ",\"ts\":", pid, thread->tid);
          chrome_us (sink.buf, mark->t);
          g_string_append (sink.buf, ",\"dur\":");
          chrome_us (sink.buf, dur);
          if (memory)
            {
              g_string_append (sink.buf, ",\"args\":{\"mem_delta_kb\":");
              m6_json_append_double (sink.buf, (double) (ev->heap - mark->heap) / 1024.0);
              g_string_append_c (sink.buf, '}');
            }
          g_string_append (sink.buf, "},\n");
          g_array_set_size (stack, stack->len - 1);
          if (memory && ev->depth == 0)
            chrome_counter (sink.buf, pid, ev->t_ns, ev->heap);
          if (!sink_maybe_flush (&sink))
            break;
        }
    }

  /* Close the array with a metadata record so no trailing comma is left. */
  chrome_metadata (sink.buf, "process_labels", pid, 0, "mach6");
  g_string_truncate (sink.buf, sink.buf->len - 2);
  g_string_append (sink.buf, "\n]}\n");
  return sink_finish (&sink);
}

/* --- ndjson: one payload per time window -------------------------------- */

/* A complete top-level scope of one thread: events [first, last]. */
typedef struct
{
  gint64 window;
  guint  thread;
  guint  first;
  guint  last;
} TopScope;

static int
compare_top_scope (gconstpointer a,
                   gconstpointer b)
{
  const TopScope *x = a, *y = b;

  if (x->window != y->window)
    return x->window < y->window ? -1 : 1;
  if (x->thread != y->thread)
    return x->thread < y->thread ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

M6Session *
m6_export_window_session (M6Session *session)
{
  /* Same label ids (shared: a window costs no copy of 100,000 labels),
   * same thread indices (and so the same seeds). */
  M6Session *window = m6_session_new_with_labels (m6_session_get_labels (session));

  m6_session_set_process (window, m6_session_get_pid (session), m6_session_get_process_name (session));
  m6_session_set_heap_source (window, m6_session_get_heap_source (session));
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      m6_session_add_thread (window, thread->tid, thread->name);
    }
  return window;
}

static void
write_window (Sink      *sink,
              M6Session *window,
              gint64     index,
              double     interval_s,
              gboolean  *used)
{
  m6_export_append_ndjson_window (sink->buf, window, index, interval_s, used);
}

void
m6_export_append_ndjson_window (GString        *out,
                                M6Session      *window,
                                gint64          index,
                                double          interval_s,
                                const gboolean *used)
{
  g_string_append_printf (out, "{\"window\":%" G_GINT64_FORMAT ",\"t_start\":", index);
  m6_json_append_double (out, (double) index * interval_s);
  g_string_append (out, ",\"t_end\":");
  m6_json_append_double (out, (double) (index + 1) * interval_s);
  g_string_append (out, ",\"threads\":[");

  gboolean first = TRUE;
  for (guint i = 0; i < m6_session_get_n_threads (window); i++)
    {
      M6Thread *thread = m6_session_get_thread (window, i);

      if (!used[i])
        continue;
      if (!first)
        g_string_append_c (out, ',');
      first = FALSE;
      g_string_append_printf (out, "{\"index\":%u,\"tid\":%" G_GUINT64_FORMAT ",\"name\":", i, thread->tid);
      m6_json_append_string (out, thread->name);
      g_string_append (out, ",\"payload\":");
      m6_payload_append (out, thread->tree, m6_tree_get_root (thread->tree));
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}\n");
}

static gboolean
write_ndjson (GOutputStream  *out,
              gpointer        data,
              GError        **error)
{
  ExportJob *job = data;
  M6Session *session = job->session;
  guint n_threads = m6_session_get_n_threads (session);
  double interval_s = job->options && job->options->interval_s > 0 ? job->options->interval_s : 1.0;
  gint64 interval_ns = MAX ((gint64) (interval_s * 1e9), 1);
  g_autoptr (GArray) scopes = g_array_new (FALSE, FALSE, sizeof (TopScope));
  Sink sink;

  /* Each complete top-level scope belongs to the window it starts in, so a
   * frame crossing a boundary is counted once, whole. */
  for (guint i = 0; i < n_threads && i < job->log->threads->len; i++)
    {
      GArray *events = g_ptr_array_index (job->log->threads, i);
      gint64 open = -1;

      for (guint e = 0; e < events->len; e++)
        {
          const M6Event *ev = &g_array_index (events, M6Event, e);

          if (!m6_event_in_range (ev))
            open = -1;   /* the session rejects it, and the scope with it */
          if (ev->depth != 0 || !m6_event_in_range (ev))
            continue;
          if (ev->label != M6_EVENT_DONE)
            open = e;
          else if (open >= 0)
            {
              const M6Event *mark = &g_array_index (events, M6Event, open);
              TopScope scope = { MAX (mark->t_ns, 0) / interval_ns, i, (guint) open, e };
              g_array_append_val (scopes, scope);
              open = -1;
            }
        }
    }
  g_array_sort (scopes, compare_top_scope);

  sink_init (&sink, out, error);
  g_autofree gboolean *used = g_new0 (gboolean, MAX (n_threads, 1));

  /* Only the windows that hold scopes: a capture whose clock jumps far
   * ahead gives one more line, not one line per empty interval. */
  for (guint s = 0; s < scopes->len && !sink.failed;)
    {
      gint64 w = g_array_index (scopes, TopScope, s).window;
      g_autoptr (M6Session) window = m6_export_window_session (session);

      memset (used, 0, sizeof (gboolean) * MAX (n_threads, 1));
      for (; s < scopes->len && g_array_index (scopes, TopScope, s).window == w; s++)
        {
          const TopScope *scope = &g_array_index (scopes, TopScope, s);
          GArray *events = g_ptr_array_index (job->log->threads, scope->thread);

          m6_session_ingest (window, m6_session_get_thread (window, scope->thread),
                             &g_array_index (events, M6Event, scope->first),
                             scope->last - scope->first + 1);
          used[scope->thread] = TRUE;
        }
      write_window (&sink, window, w, interval_s, used);
      sink_maybe_flush (&sink);
    }
  return sink_finish (&sink);
}

/* --- entry point -------------------------------------------------------- */

static const M6WriteFunc writers[] = {
  [M6_EXPORT_JSON]   = write_json,
  [M6_EXPORT_NDJSON] = write_ndjson,
  [M6_EXPORT_CSV]    = write_csv,
  [M6_EXPORT_FOLDED] = write_folded,
  [M6_EXPORT_CHROME] = write_chrome,
};

static gboolean
check_format (M6EventLog      *log,
              M6ExportFormat   format,
              GError         **error)
{
  if ((guint) format >= G_N_ELEMENTS (writers))
    {
      g_set_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_FORMAT, _("Unknown export format %d"), format);
      return FALSE;
    }
  if ((format == M6_EXPORT_NDJSON || format == M6_EXPORT_CHROME) && log == NULL)
    {
      g_set_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_FORMAT,
                   _("The %s export needs the recorded events; export from a capture file"),
                   m6_export_format_name (format));
      return FALSE;
    }
  return TRUE;
}

gboolean
m6_export_session (M6Session             *session,
                   M6EventLog            *log,
                   M6ExportFormat         format,
                   const M6ExportOptions *options,
                   const char            *path,
                   GError               **error)
{
  ExportJob job = { session, log, options };

  g_return_val_if_fail (M6_IS_SESSION (session), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  if (!check_format (log, format, error))
    return FALSE;
  return m6_write_atomically (path, writers[format], &job, error);
}

gboolean
m6_export_session_to_stream (M6Session             *session,
                             M6EventLog            *log,
                             M6ExportFormat         format,
                             const M6ExportOptions *options,
                             GOutputStream         *out,
                             GError               **error)
{
  ExportJob job = { session, log, options };

  g_return_val_if_fail (M6_IS_SESSION (session), FALSE);
  g_return_val_if_fail (G_IS_OUTPUT_STREAM (out), FALSE);

  if (!check_format (log, format, error))
    return FALSE;
  return writers[format] (out, &job, error) && g_output_stream_flush (out, NULL, error);
}
