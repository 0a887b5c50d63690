/* SPDX-License-Identifier: MIT */
/* m6-remote-receive.c — the client's parser of a stream after ATTACHED and
 * its effect on a session (docs/remote-protocol.md). Parsing runs on the
 * client's network thread (every frame is checked there, blocks decoded);
 * applying runs in the recording's drain, with the session locked. */
#include "m6-remote-receive.h"

#include <glib/gi18n.h>
#include <string.h>

#include "m6-pack.h"
#include "m6-reader.h"
#include "m6-wire.h"

void
m6_remote_item_free (M6RemoteItem *item)
{
  g_clear_pointer (&item->strings, g_ptr_array_unref);
  g_free (item->events);
  g_free (item->name);
  g_clear_pointer (&item->samples, m6_samples_free);
  g_clear_error (&item->error);
  g_free (item);
}

void
m6_remote_parser_init (M6RemoteParser *parser,
                       const char     *peer)
{
  parser->peer = g_strdup (peer);
  parser->next_label = 1;
  parser->n_threads = 0;
  parser->samples = m6_samples_new ();
}

void
m6_remote_parser_clear (M6RemoteParser *parser)
{
  g_clear_pointer (&parser->peer, g_free);
  g_clear_pointer (&parser->samples, m6_samples_free);
}

static M6RemoteItem *
malformed_because (M6RemoteParser *parser,
                   guint8          type,
                   const char     *why,
                   GError        **error)
{
  gsize len = strlen (why);
  g_autofree char *reason = g_strndup (why, len > 0 && why[len - 1] == '.' ? len - 1 : len);

  g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED, _("%s sent a malformed message (type %u): %s."),
               parser->peer, type, reason);
  return NULL;
}

static M6RemoteItem *
malformed (M6RemoteParser *parser,
           guint8          type,
           GError         *cause,
           GError        **error)
{
  return malformed_because (parser, type, cause != NULL ? cause->message : _("it is not expected here"), error);
}

M6RemoteItem *
m6_remote_parser_parse (M6RemoteParser *parser,
                        guint8          type,
                        const guint8   *body,
                        gsize           len,
                        GError        **error)
{
  g_autoptr (GError) cause = NULL;
  g_autoptr (M6RemoteItem) item = g_new0 (M6RemoteItem, 1);
  M6WireReader r;
  guint64 v;

  item->type = type;
  m6_wire_reader_init (&r, body, len, &cause);
  switch (type)
    {
    case M6_MSG_LABELS:
      {
        guint64 first, n;
        if (!m6_wire_get_uint (&r, "first id", G_MAXUINT32, &first))
          return malformed (parser, type, cause, error);
        if (first != parser->next_label)
          return malformed_because (parser, type, _("its labels do not follow the ones before"), error);
        if (!m6_wire_get_uint (&r, "count", M6_WIRE_MAX_LABELS, &n) || n == 0)
          return malformed (parser, type, cause, error);
        item->strings = g_ptr_array_new_with_free_func (g_free);
        for (guint64 i = 0; i < n; i++)
          {
            char *s = NULL;
            if (!m6_wire_get_string (&r, "label", FALSE, &s))
              return malformed (parser, type, cause, error);
            g_ptr_array_add (item->strings, s);
          }
        if (!m6_wire_finish (&r, "labels"))
          return malformed (parser, type, cause, error);
        item->first = (guint) first;
        parser->next_label += (guint) n;
        break;
      }
    case M6_MSG_THREAD:
      if (!m6_wire_get_uint (&r, "thread index", MIN (parser->n_threads, M6_WIRE_MAX_THREADS - 1), &v)
          || !m6_wire_get_uint (&r, "tid", G_MAXUINT64, &item->tid)
          || !m6_wire_get_string (&r, "thread name", FALSE, &item->name) || !m6_wire_finish (&r, "thread"))
        return malformed (parser, type, cause, error);
      item->index = (guint) v;
      if (item->index == parser->n_threads)
        parser->n_threads++;
      break;
    case M6_MSG_EVENTS:
      {
        if (parser->n_threads == 0)
          return malformed_because (parser, type, _("it names a thread that was not announced"), error);
        if (!m6_wire_get_uint (&r, "thread index", parser->n_threads - 1, &v))
          return malformed (parser, type, cause, error);
        g_autofree M6Event *events = g_new (M6Event, M6_PACK_MAX_EVENTS);
        item->n = m6_pack_decode (body + r.pos, len - r.pos, events, &cause);
        if (item->n == 0)
          return malformed (parser, type, cause, error);
        item->index = (guint) v;
        item->events = g_renew (M6Event, g_steal_pointer (&events), item->n);
        break;
      }
    case M6_MSG_COUNTS:
      if (parser->n_threads == 0)
        return malformed_because (parser, type, _("it names a thread that was not announced"), error);
      if (!m6_wire_get_uint (&r, "thread index", parser->n_threads - 1, &v)
          || !m6_wire_get_uint (&r, "state", 1, &item->v[0]))
        return malformed (parser, type, cause, error);
      item->index = (guint) v;
      for (guint k = 1; k < 6; k++)
        if (!m6_wire_get_uint (&r, "count", G_MAXUINT64, &item->v[k]))
          return malformed (parser, type, cause, error);
      if (!m6_wire_finish (&r, "counts"))
        return malformed (parser, type, cause, error);
      break;
    case M6_MSG_STATE:
      if (!m6_wire_get_uint (&r, "flags", 1, &item->v[0])
          || !m6_wire_get_uint (&r, "threads without a slot", G_MAXUINT32, &item->v[1])
          || !m6_wire_get_uint (&r, "heap source", M6_HEAP_SOURCE_SHIM_THREAD, &item->v[2])
          || !m6_wire_finish (&r, "state"))
        return malformed (parser, type, cause, error);
      break;
    case M6_MSG_SAMPLES:
      /* Version 2: uint record type, then the record's payload as in a
       * capture (docs/capture-format.md, records 20-24). */
      if (!m6_wire_get_uint (&r, "record type", 255, &v))
        return malformed (parser, type, cause, error);
      if (!m6_samples_read_wire (parser->samples, (guint32) v, body + r.pos, len - r.pos, &item->samples, &cause))
        return malformed (parser, type, cause, error);
      break;
    case M6_MSG_END:
      if (len != 0)
        return malformed (parser, type, NULL, error);
      break;
    case M6_MSG_ERROR:
      {
        g_autofree char *message = NULL;
        if (!m6_wire_get_uint (&r, "code", G_MAXUINT32, &v) || !m6_wire_get_string (&r, "message", TRUE, &message))
          return malformed (parser, type, cause, error);
        g_set_error (error, M6_WIRE_ERROR, (gint) v, _("%s: %s"), parser->peer, message);
        return NULL;
      }
    default:
      return malformed (parser, type, NULL, error);
    }
  return g_steal_pointer (&item);
}

void
m6_remote_applier_init (M6RemoteApplier *applier,
                        M6Session       *session)
{
  applier->session = session;
  applier->labels = g_array_new (FALSE, FALSE, sizeof (guint32));
  guint32 root = M6_LABEL_ROOT;
  g_array_append_val (applier->labels, root);
  applier->threads = g_ptr_array_new ();
  applier->net_drops = g_array_new (FALSE, TRUE, sizeof (guint64));
}

guint64
m6_remote_applier_get_net_drops (M6RemoteApplier *applier)
{
  guint64 sum = 0;

  for (guint i = 0; i < applier->net_drops->len; i++)
    sum += g_array_index (applier->net_drops, guint64, i);
  return sum;
}

void
m6_remote_applier_clear (M6RemoteApplier *applier)
{
  g_clear_pointer (&applier->labels, g_array_unref);
  g_clear_pointer (&applier->threads, g_ptr_array_unref);
  g_clear_pointer (&applier->net_drops, g_array_unref);
}

gsize
m6_remote_applier_apply (M6RemoteApplier *applier,
                         M6RemoteItem    *item)
{
  M6Session *session = applier->session;

  switch (item->type)
    {
    case M6_MSG_LABELS:
      for (guint i = 0; i < item->strings->len; i++)
        {
          const char *s = g_ptr_array_index (item->strings, i);
          guint32 id = m6_session_intern_label (session, s, -1);
          g_array_append_val (applier->labels, id);
        }
      return 0;
    case M6_MSG_THREAD:
      if (item->index == applier->threads->len)
        g_ptr_array_add (applier->threads, m6_session_add_thread (session, item->tid, item->name));
      else
        m6_session_set_thread_name (session, g_ptr_array_index (applier->threads, item->index), item->name);
      return 0;
    case M6_MSG_EVENTS:
      {
        const guint32 *map = (const guint32 *) applier->labels->data;
        guint n_map = applier->labels->len;
        /* Ids the server has not named stay unknown (rejected, counted). */
        for (gsize i = 0; i < item->n; i++)
          if (item->events[i].label != M6_EVENT_DONE)
            item->events[i].label = item->events[i].label < n_map ? map[item->events[i].label] : G_MAXUINT32;
        m6_session_ingest (session, g_ptr_array_index (applier->threads, item->index), item->events, item->n);
        return item->n;
      }
    case M6_MSG_COUNTS:
      {
        M6Thread *thread = g_ptr_array_index (applier->threads, item->index);
        m6_session_set_thread_state (session, thread, item->v[0] ? M6_THREAD_STATE_EXITED : M6_THREAD_STATE_LIVE);
        /* The server's drops (a slow link) count like the ring's. */
        m6_session_set_thread_drops (session, thread, item->v[1] + item->v[2]);
        m6_session_set_thread_refusals (session, thread, item->v[3], item->v[4], item->v[5]);
        if (applier->net_drops->len <= item->index)
          g_array_set_size (applier->net_drops, item->index + 1);
        g_array_index (applier->net_drops, guint64, item->index) = item->v[2];
        return 0;
      }
    case M6_MSG_STATE:
      m6_session_set_process_exited (session, item->v[0] != 0);
      m6_session_set_threads_unslotted (session, item->v[1]);
      m6_session_set_heap_source (session, (M6HeapSource) item->v[2]);
      return 0;
    case M6_MSG_SAMPLES:
      if (item->samples != NULL && applier->samples_func != NULL)
        applier->samples_func (g_steal_pointer (&item->samples), applier->samples_data);
      return 0;
    case M6_MSG_END:
      m6_session_set_ended (session, TRUE);
      return 0;
    default:
      return 0;
    }
}
