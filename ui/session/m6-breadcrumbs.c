/* SPDX-License-Identifier: MIT */
/* m6-breadcrumbs.c — the path from the root to the zoomed scope above the
 * flame graph: each ancestor a button that zooms back to it ("activated"),
 * the zoomed scope itself in bold, and a hint on what a click or the
 * colours mean at the end of the row. */
#include "m6-breadcrumbs.h"

#include <glib/gi18n.h>

#include "m6-payload.h"

struct _M6Breadcrumbs
{
  GtkBox parent_instance;
};

G_DEFINE_FINAL_TYPE (M6Breadcrumbs, m6_breadcrumbs, GTK_TYPE_BOX)

enum { ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
crumb_clicked_cb (GtkButton     *button,
                  M6Breadcrumbs *self)
{
  guint id = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "m6-node"));

  g_signal_emit (self, signals[ACTIVATED], 0, id);
}

static void
add_crumb (M6Breadcrumbs *self,
           const char    *label,
           guint          id,
           gboolean       current)
{
  GtkWidget *button;

  if (gtk_widget_get_first_child (GTK_WIDGET (self)) != NULL)
    {
      GtkWidget *sep = gtk_label_new ("›");
      gtk_widget_add_css_class (sep, "dim-label");
      gtk_box_append (GTK_BOX (self), sep);
    }

  if (current)
    {
      GtkWidget *here = gtk_label_new (label);
      gtk_widget_add_css_class (here, "crumb");
      gtk_widget_add_css_class (here, "heading");
      /* A long name is cut, not the window widened. */
      gtk_label_set_ellipsize (GTK_LABEL (here), PANGO_ELLIPSIZE_MIDDLE);
      gtk_label_set_max_width_chars (GTK_LABEL (here), 32);
      gtk_box_append (GTK_BOX (self), here);
      return;
    }

  button = gtk_button_new_with_label (label);
  gtk_label_set_ellipsize (GTK_LABEL (gtk_button_get_child (GTK_BUTTON (button))), PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_max_width_chars (GTK_LABEL (gtk_button_get_child (GTK_BUTTON (button))), 24);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_add_css_class (button, "crumb");
  g_object_set_data (G_OBJECT (button), "m6-node", GUINT_TO_POINTER (id));
  g_signal_connect (button, "clicked", G_CALLBACK (crumb_clicked_cb), self);
  gtk_box_append (GTK_BOX (self), button);
}

#define FIRST_CRUMBS 2
#define LAST_CRUMBS  3
#define GAP_TOOLTIP_SCOPES 40   /* the gap's tooltip: its first and last 20 */

/* "…" for the scopes chain[from, to), the path of them in its tooltip. */
static void
add_gap (M6Breadcrumbs *self,
         M6Tree        *tree,
         GPtrArray     *chain,
         guint          from,
         guint          to)
{
  g_autoptr (GString) path = g_string_new (NULL);

  for (guint i = from; i < to; i++)
    {
      if (to - from > GAP_TOOLTIP_SCOPES && i == from + GAP_TOOLTIP_SCOPES / 2)
        {
          /* Translators: the middle of a long path left out, with how many scopes */
          g_string_append_printf (path, _(" › … %u more … "), to - from - GAP_TOOLTIP_SCOPES);
          i = to - GAP_TOOLTIP_SCOPES / 2 - 1;
          continue;
        }
      g_autofree char *label = m6_payload_label (tree, g_ptr_array_index (chain, i));
      if (path->len > 0)
        g_string_append (path, " › ");
      g_string_append (path, label);
    }
  GtkWidget *sep = gtk_label_new ("›");
  gtk_widget_add_css_class (sep, "dim-label");
  gtk_box_append (GTK_BOX (self), sep);
  /* Translators: scopes left out of the breadcrumbs, with how many */
  g_autofree char *text = g_strdup_printf (_("… %u scopes …"), to - from);
  GtkWidget *gap = gtk_label_new (text);
  gtk_widget_add_css_class (gap, "dim-label");
  gtk_widget_add_css_class (gap, "crumb");
  gtk_widget_set_tooltip_text (gap, path->str);
  gtk_box_append (GTK_BOX (self), gap);
}

void
m6_breadcrumbs_show (M6Breadcrumbs *self,
                     M6Tree        *tree,
                     guint          zoom,
                     M6ColorMode    color_mode)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_box_remove (GTK_BOX (self), child);

  add_crumb (self, _("All"), 0, zoom == 0);
  if (tree != NULL && zoom != 0)
    {
      g_autoptr (GPtrArray) chain = g_ptr_array_new ();
      for (M6Node *n = m6_tree_get_node (tree, zoom); n != NULL && n->id != 0; n = n->parent)
        g_ptr_array_insert (chain, 0, n);
      /* A deep path is cut in its middle: its first FIRST_CRUMBS and
       * last LAST_CRUMBS scopes, and between them "…" for the rest (the
       * whole path in its tooltip, itself cut in the middle), so no depth
       * widens the window. */
      for (guint i = 0; i < chain->len; i++)
        {
          M6Node *n = g_ptr_array_index (chain, i);
          if (chain->len > FIRST_CRUMBS + LAST_CRUMBS + 1 && i == FIRST_CRUMBS)
            {
              add_gap (self, tree, chain, FIRST_CRUMBS, chain->len - LAST_CRUMBS);
              i = chain->len - LAST_CRUMBS - 1;
              continue;
            }
          g_autofree char *label = m6_payload_label (tree, n);
          add_crumb (self, label, n->id, n->id == zoom);
        }
    }

  const char *hint_text;
  if (color_mode == M6_COLOR_MODE_MEMORY)
    hint_text = _("Colored by Self/frame, what a scope keeps outside its children: red grows, green shrinks");
  else if (color_mode == M6_COLOR_MODE_COMPARE)
    hint_text = _("Colored against the baseline: red slower, green faster, grey no significant change");
  else if (zoom == 0)
    hint_text = _("Click a scope to zoom in");
  else
    hint_text = _("Escape zooms out");
  GtkWidget *hint = gtk_label_new (hint_text);
  gtk_widget_add_css_class (hint, "dim-label");
  gtk_widget_add_css_class (hint, "caption");
  gtk_widget_set_hexpand (hint, TRUE);
  gtk_widget_set_halign (hint, GTK_ALIGN_END);
  gtk_label_set_ellipsize (GTK_LABEL (hint), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (GTK_LABEL (hint), 1.0f);
  gtk_box_append (GTK_BOX (self), hint);
}

static void
m6_breadcrumbs_class_init (M6BreadcrumbsClass *klass)
{
  signals[ACTIVATED] = g_signal_new ("activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                     NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
}

static void
m6_breadcrumbs_init (M6Breadcrumbs *self)
{
}
