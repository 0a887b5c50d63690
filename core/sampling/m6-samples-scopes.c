/* SPDX-License-Identifier: MIT */
/* m6-samples-scopes.c — samples under the scopes: a sample's time (the
 * ring's clock) finds the scope open on its thread then, from the
 * capture's own events; each scope's self samples split by function and
 * its off-CPU time with the chains where it blocked. `report --samples`. */
#include "m6-samples.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "m6-json.h"

typedef struct
{
  guint       thread;
  char       *path;
  guint64     calls;       /* times it was entered */
  guint64     samples;
  GHashTable *functions;   /* name -> guint64 count */
  gint64      off_cpu_ns;
  GHashTable *blocked;     /* chain text -> gint64 ns */
  GHashTable *chains;      /* chain text -> JsonArray (names) */
} Scope;

static void
scope_free (gpointer data)
{
  Scope *s = data;

  g_free (s->path);
  g_hash_table_unref (s->functions);
  g_hash_table_unref (s->blocked);
  g_hash_table_unref (s->chains);
  g_free (s);
}

typedef struct
{
  M6Session  *session;
  M6Labels   *labels;
  GArray     *stack;       /* guint32 label ids */
  const GArray *events;
  guint       next;
} Walk;

static void
walk_one (Walk *w)
{
  const M6Event *e = &g_array_index (w->events, M6Event, w->next);

  if (e->label != 0)
    {
      if (e->depth < M6_MAX_DEPTH)
        g_array_set_size (w->stack, MIN (e->depth, w->stack->len));
      g_array_append_val (w->stack, e->label);
    }
  else if (w->stack->len > 0)
    g_array_set_size (w->stack, w->stack->len - 1);
  w->next++;
}

static void
walk_to (Walk  *w,
         gint64 t)
{
  while (w->events != NULL && w->next < w->events->len
         && g_array_index (w->events, M6Event, w->next).t_ns <= t)
    walk_one (w);
}

static char *
path_of (Walk *w)
{
  GString *path = g_string_new (NULL);

  if (w->stack->len == 0)
    g_string_append (path, _("(outside any scope)"));
  for (guint i = 0; i < w->stack->len; i++)
    {
      if (i > 0)
        g_string_append_c (path, '/');
      g_string_append (path, m6_labels_get (w->labels, g_array_index (w->stack, guint32, i)));
    }
  return g_string_free (path, FALSE);
}

static Scope *
scope_for (GHashTable *scopes,
           GPtrArray  *order,
           guint       thread,
           char       *path)
{
  g_autofree char *key = g_strdup_printf ("%u\n%s", thread, path);
  Scope *s = g_hash_table_lookup (scopes, key);

  if (s != NULL)
    {
      g_free (path);
      return s;
    }
  s = g_new0 (Scope, 1);
  s->thread = thread;
  s->path = path;
  s->functions = g_hash_table_new (g_str_hash, g_str_equal);
  s->blocked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  s->chains = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) json_array_unref);
  g_hash_table_insert (scopes, g_steal_pointer (&key), s);
  g_ptr_array_add (order, s);
  return s;
}

static GPtrArray *
keys_of (GHashTable *table)
{
  GPtrArray *keys = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (keys, key);
  return keys;
}

static gint
by_count_desc (gconstpointer a,
               gconstpointer b,
               gpointer      table)
{
  guint64 ca = GPOINTER_TO_SIZE (g_hash_table_lookup (table, *(char **) a));
  guint64 cb = GPOINTER_TO_SIZE (g_hash_table_lookup (table, *(char **) b));

  if (ca != cb)
    return ca > cb ? -1 : 1;
  return strcmp (*(char **) a, *(char **) b);
}

static const char *
thread_index_name (M6Session *session,
                   guint64    tid,
                   gint      *index)
{
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *t = m6_session_get_thread (session, i);
      if (m6_thread_get_tid (t) == tid)
        {
          *index = (gint) i;
          return m6_thread_get_name (t);
        }
    }
  *index = -1;
  return NULL;
}

JsonNode *
m6_samples_scopes_json (M6Session *session,
                        GPtrArray *thread_events,
                        M6Samples *samples)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (GHashTable) scopes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GPtrArray) order = g_ptr_array_new_with_free_func (scope_free);
  const guint32 *frames = (const guint32 *) samples->frames->data;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "hz");
  json_builder_add_int_value (b, samples->hz);
  json_builder_set_member_name (b, "status");
  if (samples->status != NULL)
    json_builder_add_string_value (b, samples->status);
  else
    json_builder_add_null_value (b);

  json_builder_set_member_name (b, "threads");
  json_builder_begin_array (b);
  for (guint i = 0; i < samples->threads->len; i++)
    {
      M6SampleThread *t = samples->threads->pdata[i];
      gint index;
      const char *name = thread_index_name (session, t->tid, &index);
      gint64 off = 0;

      for (guint k = 0; k < t->off_cpu->len; k++)
        off += g_array_index (t->off_cpu, M6OffCpu, k).t_in - g_array_index (t->off_cpu, M6OffCpu, k).t_out;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "tid");
      json_builder_add_int_value (b, (gint64) t->tid);
      json_builder_set_member_name (b, "thread");
      json_builder_add_int_value (b, index);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, name != NULL ? name : "");
      json_builder_set_member_name (b, "method");
      json_builder_add_string_value (b, m6_unwind_name (t->method));
      json_builder_set_member_name (b, "samples");
      json_builder_add_int_value (b, t->samples->len);
      json_builder_set_member_name (b, "lost");
      json_builder_add_int_value (b, (gint64) t->lost);
      json_builder_set_member_name (b, "off_cpu_ns");
      json_builder_add_int_value (b, off);
      json_builder_end_object (b);

      /* Place them: the samples, then the off-CPU spans, by time. */
      if (index < 0)
        continue;
      if ((guint) index < thread_events->len)
        {
          /* Every scope of the thread, with its calls. */
          Walk w = { session, m6_session_get_labels (session), g_array_new (FALSE, FALSE, sizeof (guint32)),
                     thread_events->pdata[index], 0 };
          while (w.next < w.events->len)
            {
              gboolean mark = g_array_index (w.events, M6Event, w.next).label != 0;
              walk_one (&w);
              if (mark)
                scope_for (scopes, order, (guint) index, path_of (&w))->calls++;
            }
          g_array_unref (w.stack);
        }
      for (int pass = 0; pass < 2; pass++)
        {
          Walk w = { session, m6_session_get_labels (session), g_array_new (FALSE, FALSE, sizeof (guint32)),
                     (guint) index < thread_events->len ? thread_events->pdata[index] : NULL, 0 };
          GArray *items = pass == 0 ? t->samples : t->off_cpu;
          for (guint k = 0; k < items->len; k++)
            {
              if (pass == 0)
                {
                  const M6Sample *s = &g_array_index (items, M6Sample, k);
                  walk_to (&w, s->t_ns);
                  Scope *scope = scope_for (scopes, order, (guint) index, path_of (&w));
                  const char *fn = samples->symbols->pdata[s->depth > 0 ? frames[s->first] : 0];
                  scope->samples++;
                  g_hash_table_insert (scope->functions, (gpointer) fn,
                                       GSIZE_TO_POINTER (GPOINTER_TO_SIZE (g_hash_table_lookup (scope->functions, fn)) + 1));
                }
              else
                {
                  const M6OffCpu *s = &g_array_index (items, M6OffCpu, k);
                  walk_to (&w, s->t_out);
                  Scope *scope = scope_for (scopes, order, (guint) index, path_of (&w));
                  GString *key = g_string_new (NULL);
                  JsonArray *chain = json_array_new ();
                  for (guint32 d = 0; d < s->depth; d++)
                    {
                      const char *fn = samples->symbols->pdata[frames[s->first + d]];
                      g_string_append_printf (key, "%s%s", d ? ";" : "", fn);
                      json_array_add_string_element (chain, fn);
                    }
                  scope->off_cpu_ns += s->t_in - s->t_out;
                  gint64 had = GPOINTER_TO_SIZE (g_hash_table_lookup (scope->blocked, key->str));
                  if (!g_hash_table_contains (scope->chains, key->str))
                    g_hash_table_insert (scope->chains, g_strdup (key->str), json_array_ref (chain));
                  g_hash_table_replace (scope->blocked, g_string_free (key, FALSE),
                                        GSIZE_TO_POINTER ((gsize) (had + s->t_in - s->t_out)));
                  json_array_unref (chain);
                }
            }
          g_array_unref (w.stack);
        }
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "scopes");
  json_builder_begin_array (b);
  for (guint i = 0; i < order->len; i++)
    {
      Scope *s = order->pdata[i];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "thread");
      json_builder_add_int_value (b, s->thread);
      json_builder_set_member_name (b, "path");
      json_builder_add_string_value (b, s->path);
      json_builder_set_member_name (b, "calls");
      json_builder_add_int_value (b, (gint64) s->calls);
      json_builder_set_member_name (b, "samples");
      json_builder_add_int_value (b, (gint64) s->samples);
      json_builder_set_member_name (b, "functions");
      json_builder_begin_array (b);
      {
        g_autoptr (GPtrArray) names = keys_of (s->functions);
        g_ptr_array_sort_with_data (names, by_count_desc, s->functions);
        for (guint k = 0; k < names->len; k++)
          {
            json_builder_begin_object (b);
            json_builder_set_member_name (b, "name");
            json_builder_add_string_value (b, names->pdata[k]);
            json_builder_set_member_name (b, "samples");
            json_builder_add_int_value (b, (gint64) GPOINTER_TO_SIZE (g_hash_table_lookup (s->functions, names->pdata[k])));
            json_builder_end_object (b);
          }
      }
      json_builder_end_array (b);
      json_builder_set_member_name (b, "off_cpu_ns");
      json_builder_add_int_value (b, s->off_cpu_ns);
      json_builder_set_member_name (b, "blocked");
      json_builder_begin_array (b);
      {
        g_autoptr (GPtrArray) keys = keys_of (s->blocked);
        g_ptr_array_sort_with_data (keys, by_count_desc, s->blocked);
        for (guint k = 0; k < keys->len && k < 8; k++)
          {
            json_builder_begin_object (b);
            json_builder_set_member_name (b, "chain");
            json_builder_add_value (b, json_node_init_array (json_node_alloc (),
                                                             g_hash_table_lookup (s->chains, keys->pdata[k])));
            json_builder_set_member_name (b, "ns");
            json_builder_add_int_value (b, (gint64) GPOINTER_TO_SIZE (g_hash_table_lookup (s->blocked, keys->pdata[k])));
            json_builder_end_object (b);
          }
      }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static void
collect_events (M6Session     *session,
                M6Thread      *thread,
                const M6Event *events,
                gsize          n_events,
                gpointer       user_data)
{
  GPtrArray *threads = user_data;
  guint index = m6_thread_get_index (thread);

  while (threads->len <= index)
    g_ptr_array_add (threads, g_array_new (FALSE, FALSE, sizeof (M6Event)));
  g_array_append_vals (threads->pdata[index], events, (guint) n_events);
}

static void
print_text (GString  *out,
            JsonNode *root)
{
  JsonObject *o = json_node_get_object (root);
  JsonArray *threads = json_object_get_array_member (o, "threads");
  JsonArray *scopes = json_object_get_array_member (o, "scopes");

  if (!json_object_get_null_member (o, "status"))
    g_string_append_printf (out, _("Note: %s\n"), json_object_get_string_member (o, "status"));
  for (guint i = 0; i < json_array_get_length (threads); i++)
    {
      JsonObject *t = json_array_get_object_element (threads, i);
      /* Translators: thread tid, its samples, how their chains were taken ("fp" or "dwarf") */
      g_string_append_printf (out, _("thread %lld %s: %lld samples (%s unwinding), %lld lost, %.1f ms off-CPU\n"),
                              (long long) json_object_get_int_member (t, "tid"),
                              json_object_get_string_member (t, "name"),
                              (long long) json_object_get_int_member (t, "samples"),
                              json_object_get_string_member (t, "method"),
                              (long long) json_object_get_int_member (t, "lost"),
                              json_object_get_int_member (t, "off_cpu_ns") / 1e6);
    }
  for (guint i = 0; i < json_array_get_length (scopes); i++)
    {
      JsonObject *s = json_array_get_object_element (scopes, i);
      JsonArray *fns = json_object_get_array_member (s, "functions");
      JsonArray *blocked = json_object_get_array_member (s, "blocked");
      gint64 n = json_object_get_int_member (s, "samples");

      g_string_append_printf (out, "\n%s  [thread %lld]: %lld samples, %.1f ms off-CPU\n",
                              json_object_get_string_member (s, "path"),
                              (long long) json_object_get_int_member (s, "thread"), (long long) n,
                              json_object_get_int_member (s, "off_cpu_ns") / 1e6);
      for (guint k = 0; k < json_array_get_length (fns) && k < 10; k++)
        {
          JsonObject *f = json_array_get_object_element (fns, k);
          gint64 c = json_object_get_int_member (f, "samples");
          g_string_append_printf (out, "  %5.1f%%  %6lld  %s\n", n > 0 ? 100.0 * (double) c / (double) n : 0.0,
                                  (long long) c, json_object_get_string_member (f, "name"));
        }
      for (guint k = 0; k < json_array_get_length (blocked) && k < 3; k++)
        {
          JsonObject *bl = json_array_get_object_element (blocked, k);
          JsonArray *chain = json_object_get_array_member (bl, "chain");
          g_string_append_printf (out, _("  blocked %.1f ms in:"), json_object_get_int_member (bl, "ns") / 1e6);
          if (json_array_get_length (chain) == 0)
            g_string_append (out, _(" (no chain)"));
          for (guint d = 0; d < json_array_get_length (chain) && d < 12; d++)
            g_string_append_printf (out, "%s%s", d ? " < " : " ", json_array_get_string_element (chain, d));
          g_string_append_c (out, '\n');
        }
    }
}

char *
m6_samples_report (const char  *path,
                   gboolean     json,
                   GError     **error)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GPtrArray) events = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (M6Samples) samples = NULL;
  M6CaptureInfo info;

  m6_session_set_recorder (session, collect_events, events);
  if (!m6_capture_load_into (path, session, &info, error))
    return NULL;
  m6_session_set_recorder (session, NULL, NULL);
  samples = m6_samples_load (path, error);
  if (samples == NULL)
    return NULL;
  if (samples->threads->len == 0 && samples->status == NULL)
    {
      g_set_error (error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_FAILED,
                   _("%s has no samples: record with --sample HZ (like --sample 4000)"), path);
      return NULL;
    }
  g_autoptr (JsonNode) root = m6_samples_scopes_json (session, events, samples);
  if (json)
    {
      char *text = m6_json_to_string (root, TRUE);
      return text;
    }
  GString *out = g_string_new (NULL);
  print_text (out, root);
  return g_string_free (out, FALSE);
}
