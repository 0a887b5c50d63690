/* SPDX-License-Identifier: MIT */
/* m6-view-samples.c — a scope's sampled entries, their ids in the shared
 * selection and their call chains, from the sample model. */
#include "m6-view-samples.h"

#include <glib/gi18n.h>

typedef struct
{
  guint   thread;
  guint   node_id;
  guint32 symbol;
} Given;

typedef struct
{
  GHashTable *ids;     /* "thread/node/symbol" -> id + 1 */
  GArray     *given;   /* Given, by id & ~M6_VIEW_SAMPLED */
} Registry;

static void
registry_free (gpointer data)
{
  Registry *r = data;

  g_hash_table_unref (r->ids);
  g_array_unref (r->given);
  g_free (r);
}

static Registry *
registry_of (M6Session *session,
             gboolean   create)
{
  static GQuark quark;
  Registry *r;

  if (quark == 0)
    quark = g_quark_from_static_string ("m6-view-sampled-ids");
  r = g_object_get_qdata (G_OBJECT (session), quark);
  if (r == NULL && create)
    {
      r = g_new0 (Registry, 1);
      r->ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      r->given = g_array_new (FALSE, FALSE, sizeof (Given));
      g_object_set_qdata_full (G_OBJECT (session), quark, r, registry_free);
    }
  return r;
}

guint
m6_view_sampled_id (M6Session *session,
                    guint      thread,
                    guint      node_id,
                    guint32    symbol)
{
  Registry *r = registry_of (session, TRUE);
  char key[48];

  g_snprintf (key, sizeof key, "%u/%u/%u", thread, node_id, symbol);
  gpointer hit = g_hash_table_lookup (r->ids, key);
  if (hit != NULL)
    return GPOINTER_TO_UINT (hit) - 1;

  Given given = { thread, node_id, symbol };
  guint id = M6_VIEW_SAMPLED | r->given->len;
  g_array_append_val (r->given, given);
  g_hash_table_insert (r->ids, g_strdup (key), GUINT_TO_POINTER (id + 1));
  return id;
}

gboolean
m6_view_sampled_lookup (M6Session *session,
                        guint      id,
                        guint     *thread,
                        guint     *node_id,
                        guint32   *symbol)
{
  Registry *r = session != NULL ? registry_of (session, FALSE) : NULL;
  guint n = id & ~M6_VIEW_SAMPLED;

  if (r == NULL || !m6_view_is_sampled (id) || n >= r->given->len)
    return FALSE;
  const Given *given = &g_array_index (r->given, Given, n);
  if (thread != NULL)
    *thread = given->thread;
  if (node_id != NULL)
    *node_id = given->node_id;
  if (symbol != NULL)
    *symbol = given->symbol;
  return TRUE;
}

guint
m6_view_scope_of (M6Session *session,
                  guint      id)
{
  guint node_id = 0;

  if (!m6_view_is_sampled (id))
    return id;
  return m6_view_sampled_lookup (session, id, NULL, &node_id, NULL) ? node_id : 0;
}

gint64
m6_view_self_time (const M6Node *node)
{
  gint64 t = node->time_sum;

  for (const M6Node *c = node->first_child; c != NULL; c = c->next_sibling)
    t -= c->time_sum;
  return MAX (t, 0);
}

GArray *
m6_view_samples_entries (M6SampleModel *model,
                         M6Session     *session,
                         guint          thread,
                         const M6Node  *node,
                         guint64       *total)
{
  M6SampleScope *scope = model != NULL && node != NULL && node->depth > 0
    ? m6_sample_model_lookup (model, thread, node) : NULL;

  *total = 0;
  if (scope == NULL)
    return NULL;

  g_autoptr (GArray) functions = m6_sample_scope_dup_functions (scope);
  gint64 off = m6_sample_scope_get_off_cpu_ns (scope);
  GArray *entries = g_array_new (FALSE, FALSE, sizeof (M6ViewSampled));

  *total = m6_sample_scope_get_samples (scope);
  for (guint i = 0; functions != NULL && i < functions->len; i++)
    {
      const M6SampleFunction *f = &g_array_index (functions, M6SampleFunction, i);
      M6ViewSampled e = { m6_view_sampled_id (session, thread, node->id, f->symbol), f->symbol, f->samples, 0 };
      g_array_append_val (entries, e);
    }
  if (off > 0)
    {
      M6ViewSampled e = { m6_view_sampled_id (session, thread, node->id, M6_VIEW_OFF_CPU), M6_VIEW_OFF_CPU, 0, off };
      g_array_append_val (entries, e);
    }
  if (entries->len == 0)
    g_clear_pointer (&entries, g_array_unref);
  return entries;
}

const char *
m6_view_samples_symbol (M6SampleModel *model,
                        guint32        symbol)
{
  if (symbol == M6_VIEW_OFF_CPU)
    /* Translators: a scope's time off the CPU, as a box of the flame graph and a row of the table */
    return _("off-CPU");
  return model != NULL ? m6_sample_model_get_symbol (model, symbol) : "";
}

char *
m6_view_samples_chain_text (M6SampleModel *model,
                            guint32        chain,
                            guint          max)
{
  guint32 depth = 0;
  const guint32 *symbols = m6_sample_model_get_chain (model, chain, &depth);
  GString *text = g_string_new (NULL);

  if (depth == 0)
    g_string_append (text, _("(no chain)"));
  for (guint32 d = 0; d < depth && d < max; d++)
    g_string_append_printf (text, "%s%s", d ? " < " : "", m6_sample_model_get_symbol (model, symbols[d]));
  if (depth > max)
    g_string_append (text, " < …");
  return g_string_free (text, FALSE);
}

/* Is the model's path @path the scope @node (its labels all the way up)? */
static gboolean
path_is_node (M6SampleModel *model,
              guint32        path,
              const M6Node  *node)
{
  for (const M6Node *n = node; n != NULL && n->depth > 0; n = n->parent)
    {
      guint32 parent = 0;
      if (path == 0 || m6_sample_model_get_path_label (model, path, &parent) != n->label)
        return FALSE;
      path = parent;
    }
  return path == 0;
}

static gint
by_weight_desc (gconstpointer a,
                gconstpointer b)
{
  const M6ViewChain *ca = a, *cb = b;

  if (ca->weight != cb->weight)
    return ca->weight > cb->weight ? -1 : 1;
  return ca->chain < cb->chain ? -1 : ca->chain > cb->chain;
}

GArray *
m6_view_samples_chains (M6SampleModel *model,
                        M6Session     *session,
                        guint          thread,
                        const M6Node  *node,
                        guint32        symbol,
                        guint          max)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (M6ViewChain));
  M6SampleScope *scope = model != NULL && node != NULL ? m6_sample_model_lookup (model, thread, node) : NULL;

  if (scope == NULL)
    return out;
  if (symbol == M6_VIEW_OFF_CPU)
    {
      g_autoptr (GArray) blocked = m6_sample_scope_dup_blocked (scope);
      for (guint i = 0; blocked != NULL && i < blocked->len; i++)
        {
          const M6SampleBlocked *b = &g_array_index (blocked, M6SampleBlocked, i);
          M6ViewChain c = { b->chain, b->ns };
          g_array_append_val (out, c);
        }
    }
  else
    {
      /* The thread's ticks in this scope with this leaf, by chain. */
      g_autoptr (GHashTable) paths = g_hash_table_new (NULL, NULL);   /* path + 1 -> 1 yes, 2 no */
      g_autoptr (GHashTable) counts = g_hash_table_new (NULL, NULL);  /* chain + 1 -> count */
      gsize n = 0;
      const M6SampleTick *ticks = m6_sample_model_get_ticks (model, thread, G_MININT64, G_MAXINT64, &n);

      for (gsize i = 0; i < n; i++)
        {
          guint32 depth = 0;
          const guint32 *symbols = m6_sample_model_get_chain (model, ticks[i].chain, &depth);
          if ((depth > 0 ? symbols[0] : 0) != symbol)
            continue;
          gpointer key = GUINT_TO_POINTER (ticks[i].path + 1);
          guint state = GPOINTER_TO_UINT (g_hash_table_lookup (paths, key));
          if (state == 0)
            {
              state = path_is_node (model, ticks[i].path, node) ? 1 : 2;
              g_hash_table_insert (paths, key, GUINT_TO_POINTER (state));
            }
          if (state != 1)
            continue;
          gpointer ck = GUINT_TO_POINTER (ticks[i].chain + 1);
          g_hash_table_insert (counts, ck, GSIZE_TO_POINTER (GPOINTER_TO_SIZE (g_hash_table_lookup (counts, ck)) + 1));
        }
      GHashTableIter iter;
      gpointer key, value;
      g_hash_table_iter_init (&iter, counts);
      while (g_hash_table_iter_next (&iter, &key, &value))
        {
          M6ViewChain c = { GPOINTER_TO_UINT (key) - 1, (gint64) GPOINTER_TO_SIZE (value) };
          g_array_append_val (out, c);
        }
    }
  g_array_sort (out, by_weight_desc);
  if (out->len > max)
    g_array_set_size (out, max);
  return out;
}
