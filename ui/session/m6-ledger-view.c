/* SPDX-License-Identifier: MIT */
/* m6-ledger-view.c — the ledger panel: the whole, a stacked bar and a row
 * per part, integer bytes underneath and per frame on screen.
 *
 * Rows are slots: added or removed only when the number of parts changes
 * (another scope, a new child). Live updates set texts, and a swatch's
 * colour where the part in its slot changed (parts of about equal size
 * swap places at every refresh), so the panel costs a few label updates
 * per refresh, not a grid of new widgets. The residual is shown every time: 0 is the proof
 * the parts add up, anything else is a bug and looks like one. */
#include "m6-ledger-view.h"

#include <glib/gi18n.h>
#include <math.h>

#include "m6-flame-graph.h"
#include "m6-format.h"
#include "m6-payload.h"
#include "m6-view-node.h"

/* Rows of parts shown at most: a scope of more children shows the largest
 * and one row for the rest (rows_to_show). */
#define LEDGER_ROWS_MAX 64u

enum { COL_SWATCH, COL_NAME, COL_PER_FRAME, COL_TOTAL, COL_SHARE, N_COLS };

struct _M6LedgerView
{
  GtkWidget       parent_instance;

  /* template */
  GtkLabel       *title_label;
  GtkLabel       *whole_label;
  GtkDrawingArea *bar_area;
  GtkGrid        *parts_grid;
  GtkLabel       *residual_label;
  GtkLabel       *leak_label;
  GtkLabel       *shared_label;

  M6Session      *session;
  guint           thread_index;
  guint           node_id;
  guint           leak_node_id;  /* the selection the leak sentence was made for */
  M6Ledger       *ledger;
  GArray         *shown_kinds;   /* (kind << 32 | child id) per row, to see a change */
  GPtrArray      *cells;         /* GtkLabel*, N_COLS - 1 per row (name .. share) */
  GPtrArray      *swatches;      /* GtkDrawingArea*, one per row */
  gboolean        dark;
};

G_DEFINE_FINAL_TYPE (M6LedgerView, m6_ledger_view, GTK_TYPE_WIDGET)

static M6Thread *
get_thread (M6LedgerView *self)
{
  return m6_view_thread (self->session, self->thread_index);
}

static const M6Node *
shown_node (M6LedgerView *self)
{
  return m6_view_shown_node (self->session, self->thread_index, self->node_id);
}

static void
part_color (M6LedgerView       *self,
            M6Tree             *tree,
            const M6LedgerPart *part,
            GdkRGBA            *color)
{
  switch (part->kind)
    {
    case M6_LEDGER_PART_CHILD:
      if (part->node == NULL)   /* the row of the children not shown one by one */
        {
          *color = (GdkRGBA) { 0.5f, 0.5f, 0.5f, 0.6f };
          break;
        }
      {
        g_autofree char *label = m6_payload_label (tree, part->node);
        m6_flame_graph_label_color (label, self->dark, color);
      }
      break;
    case M6_LEDGER_PART_SELF:
      *color = self->dark ? (GdkRGBA) { 0.62f, 0.62f, 0.66f, 1 } : (GdkRGBA) { 0.45f, 0.45f, 0.50f, 1 };
      break;
    case M6_LEDGER_PART_BETWEEN:
      *color = self->dark ? (GdkRGBA) { 0.47f, 0.68f, 0.93f, 1 } : (GdkRGBA) { 0.11f, 0.44f, 0.85f, 1 };
      break;
    case M6_LEDGER_PART_OPEN:
    case M6_LEDGER_PART_LOST:
    default:
      *color = (GdkRGBA) { 0.5f, 0.5f, 0.5f, 0.35f };
      break;
    }
}

static char *
part_name (M6Tree             *tree,
           const M6LedgerPart *part)
{
  switch (part->kind)
    {
    case M6_LEDGER_PART_CHILD:   return m6_payload_label (tree, part->node);
    case M6_LEDGER_PART_SELF:    return g_strdup (_("Self (outside its children)"));
    case M6_LEDGER_PART_BETWEEN: return g_strdup (_("Between frames"));
    case M6_LEDGER_PART_OPEN:    return g_strdup (_("Children of the call still open"));
    case M6_LEDGER_PART_LOST:    return g_strdup (_("Children of calls lost with the stream"));
    default:                     return g_strdup ("?");
    }
}

/* --- the stacked bar ---------------------------------------------------- */

/* Positive parts stack right of zero, negative ones left of it; the whole
 * is the tick where they meet after cancelling. */
static void
bar_draw (GtkDrawingArea *area,
          cairo_t        *cr,
          int             width,
          int             height,
          gpointer        user_data)
{
  M6LedgerView *self = user_data;
  M6Thread *thread = get_thread (self);
  double pos = 0, neg = 0;   /* doubles: extreme parts must not overflow */

  if (self->ledger == NULL || thread == NULL)
    return;

  for (guint i = 0; i < self->ledger->parts->len; i++)
    {
      double b = (double) g_array_index (self->ledger->parts, M6LedgerPart, i).bytes;
      if (b > 0)
        pos += b;
      else
        neg -= b;
    }
  if (pos + neg == 0)
    {
      cairo_set_source_rgba (cr, 0.5, 0.5, 0.5, 0.25);
      cairo_rectangle (cr, 0, height / 2.0 - 1, width, 2);
      cairo_fill (cr);
      return;
    }

  double scale = (double) width / (pos + neg);
  double zero = neg * scale;
  double right = zero, left = zero;

  for (guint i = 0; i < self->ledger->parts->len; i++)
    {
      const M6LedgerPart *part = &g_array_index (self->ledger->parts, M6LedgerPart, i);
      double w = fabs ((double) part->bytes) * scale;
      GdkRGBA color;

      if (part->bytes == 0)
        continue;
      part_color (self, m6_thread_get_tree (thread), part, &color);
      gdk_cairo_set_source_rgba (cr, &color);
      if (part->bytes > 0)
        {
          cairo_rectangle (cr, right, 0, w, height);
          right += w;
        }
      else
        {
          left -= w;
          cairo_rectangle (cr, left, 0, w, height);
        }
      cairo_fill (cr);
    }

  /* Zero and the whole. */
  GdkRGBA fg;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  gdk_cairo_set_source_rgba (cr, &fg);
  cairo_rectangle (cr, floor (zero) , 0, 1, height);
  cairo_fill (cr);
  double whole_x = zero + (double) self->ledger->whole * scale;
  cairo_rectangle (cr, CLAMP (whole_x - 1.5, 0, width - 3), -1, 3, height + 2);
  cairo_fill (cr);
}

/* --- rows --------------------------------------------------------------- */

static void
swatch_draw (GtkDrawingArea *area,
             cairo_t        *cr,
             int             width,
             int             height,
             gpointer        user_data)
{
  GdkRGBA *color = g_object_get_data (G_OBJECT (area), "m6-color");

  if (color == NULL)
    return;
  double size = MIN (width, height);
  cairo_rectangle (cr, (width - size) / 2, (height - size) / 2, size, size);
  gdk_cairo_set_source_rgba (cr, color);
  cairo_fill (cr);
}

static GtkWidget *
cell_label (gboolean numeric,
            gboolean header)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), numeric ? 1.0f : 0.0f);
  if (numeric)
    gtk_widget_add_css_class (label, "numeric");
  if (header)
    {
      gtk_widget_add_css_class (label, "dim-label");
      gtk_widget_add_css_class (label, "caption-heading");
    }
  else if (!numeric)
    {
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
      gtk_widget_set_hexpand (label, TRUE);
    }
  return label;
}

static void
clear_rows (M6LedgerView *self)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->parts_grid))) != NULL)
    gtk_grid_remove (self->parts_grid, child);
  g_ptr_array_set_size (self->cells, 0);
  g_ptr_array_set_size (self->swatches, 0);
  g_array_set_size (self->shown_kinds, 0);
}

/* Exactly @n rows under the headers, keeping those there are. */
static void
ensure_rows (M6LedgerView *self,
             guint         n)
{
  static const char *const headers[] = { NULL, N_("Part"), N_("Per frame"), N_("Total"), N_("Share") };
  guint shown = self->swatches->len;

  if (shown == 0 && gtk_widget_get_first_child (GTK_WIDGET (self->parts_grid)) == NULL)
    for (guint c = COL_NAME; c < N_COLS; c++)
      {
        GtkWidget *header = cell_label (c != COL_NAME, TRUE);
        gtk_label_set_text (GTK_LABEL (header), _(headers[c]));
        gtk_grid_attach (self->parts_grid, header, (int) c, 0, 1, 1);
      }

  for (guint i = shown; i > n; i--)
    {
      gtk_grid_remove (self->parts_grid, g_ptr_array_index (self->swatches, i - 1));
      for (guint c = COL_NAME; c < N_COLS; c++)
        gtk_grid_remove (self->parts_grid, g_ptr_array_index (self->cells, (i - 1) * (N_COLS - 1) + c - COL_NAME));
    }
  if (shown > n)
    {
      g_ptr_array_set_size (self->swatches, n);
      g_ptr_array_set_size (self->cells, n * (N_COLS - 1));
      g_array_set_size (self->shown_kinds, n);
    }

  for (guint i = shown; i < n; i++)
    {
      GtkWidget *swatch = gtk_drawing_area_new ();
      guint64 none = G_MAXUINT64;

      g_object_set_data_full (G_OBJECT (swatch), "m6-color", g_new0 (GdkRGBA, 1), g_free);
      gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (swatch), 10);
      gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (swatch), 10);
      gtk_widget_set_valign (swatch, GTK_ALIGN_CENTER);
      gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (swatch), swatch_draw, NULL, NULL);
      gtk_grid_attach (self->parts_grid, swatch, COL_SWATCH, (int) i + 1, 1, 1);
      g_ptr_array_add (self->swatches, swatch);
      g_array_append_val (self->shown_kinds, none);

      for (guint c = COL_NAME; c < N_COLS; c++)
        {
          GtkWidget *label = cell_label (c != COL_NAME, FALSE);
          gtk_grid_attach (self->parts_grid, label, (int) c, (int) i + 1, 1, 1);
          g_ptr_array_add (self->cells, label);
        }
    }
}

/* Every swatch takes its colour again at the next refresh. */
static void
forget_swatches (M6LedgerView *self)
{
  for (guint i = 0; i < self->shown_kinds->len; i++)
    g_array_index (self->shown_kinds, guint64, i) = G_MAXUINT64;
}

/* The swatch of row @i shows @part's colour. */
static void
set_swatch (M6LedgerView       *self,
            M6Tree             *tree,
            guint               i,
            const M6LedgerPart *part)
{
  guint64 key = ((guint64) part->kind << 32) | (part->node ? part->node->id : 0);
  guint64 *shown = &g_array_index (self->shown_kinds, guint64, i);
  GtkWidget *swatch = g_ptr_array_index (self->swatches, i);

  if (*shown == key)
    return;
  *shown = key;
  part_color (self, tree, part, g_object_get_data (G_OBJECT (swatch), "m6-color"));
  gtk_widget_queue_draw (swatch);
}

static void
set_text (GtkLabel   *label,
          const char *text)
{
  if (g_strcmp0 (gtk_label_get_text (label), text) != 0)
    gtk_label_set_text (label, text);
}

static char *
per_frame_text (gint64  bytes,
                guint64 frames)
{
  return m6_format_kb (frames ? (double) bytes / (double) frames / M6_BYTES_PER_KB : 0.0, TRUE);
}

/* A part's share of the whole: a small part is never shown as "0 %" (a
 * leak of 0.2 % is a leak), nor a large one with false precision. */
static char *
share_text (gint64 bytes,
            gint64 whole)
{
  double share;

  if (whole == 0)
    return g_strdup ("—");
  if (bytes == 0)
    return g_strdup ("0 %");
  share = 100.0 * (double) bytes / (double) whole;
  if (ABS (share) < 0.1)
    return g_strdup (share > 0 ? "<0.1 %" : "−<0.1 %");
  if (ABS (share) < 9.95)
    return g_strdup_printf ("%.1f %%", share);
  return g_strdup_printf ("%.0f %%", share);
}

static int
compare_part_size (gconstpointer a,
                   gconstpointer b,
                   gpointer      user_data)
{
  const GArray *parts = user_data;
  gint64 x = ABS (g_array_index (parts, M6LedgerPart, *(const guint *) a).bytes);
  gint64 y = ABS (g_array_index (parts, M6LedgerPart, *(const guint *) b).bytes);

  return x > y ? -1 : x < y;
}

/* The rows to show: every part of a ledger of up to LEDGER_ROWS_MAX;
 * beyond, the children of the largest share and every other part, in the
 * ledger's order, and one row (node NULL) for the rest of the children,
 * their sum, so that the rows still add up to the whole. A scope of
 * 100,000 children made 100,000 rows of widgets: 30 s to show. */
static GArray *
rows_to_show (const M6Ledger *ledger,
              guint          *n_folded)
{
  GArray *parts = ledger->parts;
  GArray *rows = g_array_new (FALSE, FALSE, sizeof (M6LedgerPart));

  *n_folded = 0;
  if (parts->len <= LEDGER_ROWS_MAX)
    {
      g_array_append_vals (rows, parts->data, parts->len);
      return rows;
    }
  /* The children by size, the largest shown; every other part shown. */
  g_autoptr (GArray) children = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autofree gboolean *shown = g_new (gboolean, parts->len);
  for (guint i = 0; i < parts->len; i++)
    {
      shown[i] = g_array_index (parts, M6LedgerPart, i).kind != M6_LEDGER_PART_CHILD;
      if (!shown[i])
        g_array_append_val (children, i);
    }
  g_array_sort_with_data (children, compare_part_size, parts);
  guint others = parts->len - children->len;
  guint room = LEDGER_ROWS_MAX - 1 > others ? LEDGER_ROWS_MAX - 1 - others : 0;
  M6LedgerPart rest = { M6_LEDGER_PART_CHILD, NULL, 0 };
  for (guint i = 0; i < children->len; i++)
    {
      guint index = g_array_index (children, guint, i);
      shown[index] = i < room;
      if (!shown[index])
        {
          rest.bytes += g_array_index (parts, M6LedgerPart, index).bytes;
          ++*n_folded;
        }
    }
  /* In the ledger's order, the rest after the children, before self. */
  gboolean placed = FALSE;
  for (guint i = 0; i < parts->len; i++)
    {
      const M6LedgerPart *part = &g_array_index (parts, M6LedgerPart, i);
      if (!placed && part->kind != M6_LEDGER_PART_CHILD)
        {
          g_array_append_val (rows, rest);
          placed = TRUE;
        }
      if (shown[i])
        g_array_append_vals (rows, part, 1);
    }
  if (!placed)
    g_array_append_val (rows, rest);
  return rows;
}

static void
show_nothing (M6LedgerView *self,
              const char   *why)
{
  g_clear_pointer (&self->ledger, m6_ledger_free);
  clear_rows (self);
  set_text (self->title_label, _("Ledger"));
  set_text (self->whole_label, why);
  set_text (self->residual_label, "");
  gtk_widget_set_visible (GTK_WIDGET (self->shared_label), FALSE);
  gtk_widget_queue_draw (GTK_WIDGET (self->bar_area));
}

void
m6_ledger_view_refresh (M6LedgerView *self)
{
  M6Thread *thread = get_thread (self);
  const M6Node *node = shown_node (self);

  g_return_if_fail (M6_IS_LEDGER_VIEW (self));

  if (self->session != NULL && !m6_session_get_memory_available (self->session))
    {
      show_nothing (self, _("Memory unavailable: this program reports no heap readings, so there is no ledger."));
      return;
    }
  if (thread == NULL || node == NULL)
    {
      show_nothing (self, _("Waiting for the first frame…"));
      return;
    }

  M6Tree *tree = m6_thread_get_tree (thread);
  g_clear_pointer (&self->ledger, m6_ledger_free);
  self->ledger = m6_ledger_new (tree, node);
  guint n_folded = 0;
  g_autoptr (GArray) rows = rows_to_show (self->ledger, &n_folded);
  ensure_rows (self, rows->len);

  const M6Ledger *ledger = self->ledger;
  g_autofree char *path = m6_ledger_node_path (tree, node);
  g_autofree char *title = g_strdup_printf (_("Ledger of %s"), path);
  g_autofree char *whole = per_frame_text (ledger->whole, ledger->frames);
  g_autofree char *whole_total = m6_format_kb ((double) ledger->whole / M6_BYTES_PER_KB, TRUE);
  g_autofree char *frames = m6_format_count (ledger->frames);
  g_autofree char *whole_text = ledger->top_level
    /* Translators: Drift/frame +4.01 KB (mem.net +2.35 MB over 600 frames) */
    ? g_strdup_printf (_("Drift/frame %s (mem.net %s over %s frames) ="), whole, whole_total, frames)
    /* Translators: Alloc/frame +4.01 KB (ΣD +2.35 MB over 600 frames) */
    : g_strdup_printf (_("Alloc/frame %s (ΣD %s over %s frames) ="), whole, whole_total, frames);

  /* Parts that cancel (their sizes ten times the whole and more): a share
   * of a whole near 0 is a number without meaning, so say so instead. */
  double spread = 0;
  for (guint i = 0; i < ledger->parts->len; i++)
    spread += fabs ((double) g_array_index (ledger->parts, M6LedgerPart, i).bytes);
  gboolean cancel = spread > 10.0 * fabs ((double) ledger->whole);
  if (cancel && spread > 0)
    {
      /* Translators: after "Drift/frame +3 B (…) =": the parts' shares are not shown */
      g_autofree char *more = g_strdup_printf ("%s %s", whole_text,
                                               _("(the parts cancel out: shares of a whole near 0 are not shown)"));
      g_free (whole_text);
      whole_text = g_steal_pointer (&more);
    }

  set_text (self->title_label, title);
  set_text (self->whole_label, whole_text);

  /* Process-wide readings with several threads: every part holds the
   * other threads' bytes too (docs/memory.md). */
  gboolean shared = m6_session_heap_shared (self->session);
  if (shared)
    {
      g_autofree char *text = g_strdup_printf (_("Heap readings are process-wide and %u threads record: each part includes what the other threads allocate meanwhile. MACH6_HEAP=thread (the default of “mach6 run”) keeps them apart."),
                                               m6_session_get_n_threads (self->session));
      set_text (self->shared_label, text);
    }
  if (gtk_widget_get_visible (GTK_WIDGET (self->shared_label)) != shared)
    gtk_widget_set_visible (GTK_WIDGET (self->shared_label), shared);

  for (guint i = 0; i < rows->len; i++)
    {
      const M6LedgerPart *part = &g_array_index (rows, M6LedgerPart, i);
      GtkLabel **cells = (GtkLabel **) &g_ptr_array_index (self->cells, i * (N_COLS - 1));
      g_autofree char *name = part->node == NULL && part->kind == M6_LEDGER_PART_CHILD
        /* Translators: the ledger's row for the children not listed one by one */
        ? g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u more child scope", "%u more child scopes", n_folded), n_folded)
        : part_name (tree, part);
      g_autofree char *per_frame = per_frame_text (part->bytes, ledger->frames);
      g_autofree char *total = m6_format_kb ((double) part->bytes / M6_BYTES_PER_KB, TRUE);
      g_autofree char *share = cancel ? g_strdup ("—") : share_text (part->bytes, ledger->whole);

      set_swatch (self, tree, i, part);
      set_text (cells[0], name);
      set_text (cells[1], per_frame);
      set_text (cells[2], total);
      set_text (cells[3], share);
    }

  g_autofree char *residual = NULL;
  if (m6_ledger_closes (ledger))
    residual = g_strdup (_("✓ The parts add up to the whole: residual 0 bytes."));
  else
    residual = g_strdup_printf (_("✗ The ledger does not close: the parts miss the whole by %lld bytes. This is a bug in mach6’s accounting; please report it."),
                                (long long) ledger->residual);
  set_text (self->residual_label, residual);
  gtk_widget_set_css_classes (GTK_WIDGET (self->residual_label),
                              m6_ledger_closes (ledger) ? (const char *[]) { "success", "caption", NULL }
                                                        : (const char *[]) { "error", "heading", NULL });
  gtk_widget_queue_draw (GTK_WIDGET (self->bar_area));
}

/* --- GObject ------------------------------------------------------------ */

static void
m6_ledger_view_css_changed (GtkWidget         *widget,
                            GtkCssStyleChange *change)
{
  M6LedgerView *self = M6_LEDGER_VIEW (widget);
  GdkRGBA fg;

  GTK_WIDGET_CLASS (m6_ledger_view_parent_class)->css_changed (widget, change);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  gboolean dark = (fg.red + fg.green + fg.blue) / 3 > 0.5;
  if (dark != self->dark)
    {
      self->dark = dark;
      forget_swatches (self);   /* new colours */
      if (self->ledger != NULL)
        m6_ledger_view_refresh (self);
    }
}

static void
m6_ledger_view_dispose (GObject *object)
{
  M6LedgerView *self = M6_LEDGER_VIEW (object);
  GtkWidget *child;

  gtk_widget_dispose_template (GTK_WIDGET (self), M6_TYPE_LEDGER_VIEW);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  g_clear_pointer (&self->ledger, m6_ledger_free);
  g_clear_object (&self->session);

  G_OBJECT_CLASS (m6_ledger_view_parent_class)->dispose (object);
}

static void
m6_ledger_view_finalize (GObject *object)
{
  M6LedgerView *self = M6_LEDGER_VIEW (object);

  g_array_unref (self->shown_kinds);
  g_ptr_array_unref (self->cells);
  g_ptr_array_unref (self->swatches);

  G_OBJECT_CLASS (m6_ledger_view_parent_class)->finalize (object);
}

static void
m6_ledger_view_class_init (M6LedgerViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = m6_ledger_view_dispose;
  object_class->finalize = m6_ledger_view_finalize;
  widget_class->css_changed = m6_ledger_view_css_changed;

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/mach6/Viewer/m6-ledger-view.ui");
  gtk_widget_class_bind_template_child (widget_class, M6LedgerView, title_label);
  gtk_widget_class_bind_template_child (widget_class, M6LedgerView, whole_label);
  gtk_widget_class_bind_template_child (widget_class, M6LedgerView, bar_area);
  gtk_widget_class_bind_template_child (widget_class, M6LedgerView, parts_grid);
  gtk_widget_class_bind_template_child (widget_class, M6LedgerView, residual_label);
  gtk_widget_class_bind_template_child (widget_class, M6LedgerView, leak_label);
  gtk_widget_class_bind_template_child (widget_class, M6LedgerView, shared_label);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "ledgerview");
}

static void
m6_ledger_view_init (M6LedgerView *self)
{
  self->shown_kinds = g_array_new (FALSE, FALSE, sizeof (guint64));
  self->cells = g_ptr_array_new ();
  self->swatches = g_ptr_array_new ();

  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_drawing_area_set_draw_func (self->bar_area, bar_draw, self, NULL);
  show_nothing (self, _("Waiting for the first frame…"));
}

/* --- API ---------------------------------------------------------------- */

GtkWidget *
m6_ledger_view_new (void)
{
  return g_object_new (M6_TYPE_LEDGER_VIEW, NULL);
}

void
m6_ledger_view_set_thread (M6LedgerView *self,
                           M6Session    *session,
                           guint         thread_index)
{
  g_return_if_fail (M6_IS_LEDGER_VIEW (self));

  g_set_object (&self->session, session);
  self->thread_index = thread_index;
  self->node_id = 0;
  forget_swatches (self);   /* node ids of another tree */
  m6_ledger_view_set_leak_text (self, NULL);
  m6_ledger_view_refresh (self);
}

void
m6_ledger_view_set_node (M6LedgerView *self,
                         guint         node_id)
{
  g_return_if_fail (M6_IS_LEDGER_VIEW (self));

  if (self->node_id == node_id && self->ledger != NULL)
    return;
  self->node_id = node_id;
  /* The leak sentence belongs to the selection it was made for. */
  gtk_widget_set_visible (GTK_WIDGET (self->leak_label),
                          self->leak_node_id != 0 && node_id == self->leak_node_id
                          && gtk_label_get_text (self->leak_label)[0] != '\0');
  m6_ledger_view_refresh (self);
}

void
m6_ledger_view_set_leak_text (M6LedgerView *self,
                              const char   *text)
{
  g_return_if_fail (M6_IS_LEDGER_VIEW (self));

  gtk_label_set_text (self->leak_label, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->leak_label), text != NULL);
  self->leak_node_id = text != NULL ? self->node_id : 0;
}

const M6Ledger *
m6_ledger_view_get_ledger (M6LedgerView *self)
{
  return self->ledger;
}

guint
m6_ledger_view_get_n_rows (M6LedgerView *self)
{
  return self->cells->len / (N_COLS - 1);
}

const char *
m6_ledger_view_get_row_text (M6LedgerView *self,
                             guint         row,
                             guint         column)
{
  if (row >= m6_ledger_view_get_n_rows (self) || column < COL_NAME || column >= N_COLS)
    return NULL;
  return gtk_label_get_text (g_ptr_array_index (self->cells, row * (N_COLS - 1) + column - COL_NAME));
}

const char *
m6_ledger_view_get_residual_text (M6LedgerView *self)
{
  return gtk_label_get_text (self->residual_label);
}

const char *
m6_ledger_view_get_shared_text (M6LedgerView *self)
{
  return gtk_widget_get_visible (GTK_WIDGET (self->shared_label)) ? gtk_label_get_text (self->shared_label) : NULL;
}

const char *
m6_ledger_view_get_leak_text (M6LedgerView *self)
{
  return gtk_widget_get_visible (GTK_WIDGET (self->leak_label)) ? gtk_label_get_text (self->leak_label) : NULL;
}
