/* SPDX-License-Identifier: MIT */
/* usability-util.c — see usability-util.h. */
#include "usability-util.h"

#include <math.h>
#include <string.h>

#include "m6-session-private.h"
#include "ui-test-util.h"

M6Application *app;
char *tmpdir;

void
deep_mark (Deep       *d,
           const char *label,
           guint       depth)
{
  M6Event ev = { d->t, d->heap, m6_session_intern_label (d->session, label, -1), depth };
  g_array_append_val (d->events, ev);
}

void
deep_done (Deep  *d,
           guint  depth,
           gint64 dt)
{
  d->t += dt;
  d->heap += 16;
  M6Event ev = { d->t, d->heap, M6_EVENT_DONE, depth };
  g_array_append_val (d->events, ev);
}

/* A one-thread capture of program @name (@pid), started at @start_time
 * (0: not said), in tmpdir/@file: frames are
 * written with deep_mark/deep_done and deep_frame_end, the file finished by
 * deep_end. Returns its path. */
char *
deep_begin (Deep       *d,
            const char *file,
            gint        pid,
            const char *name,
            gint64      start_time)
{
  char *path = g_build_filename (tmpdir, file, NULL);
  g_autoptr (GError) error = NULL;

  *d = (Deep) { m6_session_new (), NULL, g_array_new (FALSE, FALSE, sizeof (M6Event)), 1000, 1 << 20, NULL };
  m6_session_set_process (d->session, pid, name);
  if (start_time != 0)
    m6_session_set_start_time (d->session, start_time);
  m6_session_set_heap_source (d->session, M6_HEAP_SOURCE_HOOKS);
  d->thread = m6_session_add_thread (d->session, pid, "main");
  d->writer = m6_capture_writer_new (path, d->session, &error);
  g_assert_no_error (error);
  return path;
}

void
deep_frame_end (Deep *d)
{
  m6_session_ingest (d->session, d->thread, (M6Event *) d->events->data, d->events->len);
  g_array_set_size (d->events, 0);
}

void
deep_end (Deep *d)
{
  g_autoptr (GError) error = NULL;

  m6_session_notify_changed (d->session);
  g_assert_true (m6_capture_writer_finish (d->writer, &error));
  g_assert_no_error (error);
  m6_capture_writer_free (d->writer);
  g_array_unref (d->events);
  g_object_unref (d->session);
}

/* frame → system_0..7 → a chain of 28 steps, each step with 34 short
 * leaves beside the next step: about 7,900 scopes, 30 rows deep. The
 * leaves are narrower than a pixel in the whole view. */
char *
write_deep_capture (void)
{
  Deep d;
  char *path = deep_begin (&d, "deep.mach6", 4243, "deep-game", 0);

  for (guint f = 0; f < 3; f++)
    {
      deep_mark (&d, "frame", 0);
      for (guint s = 0; s < DEEP_SYSTEMS; s++)
        {
          g_autofree char *system = g_strdup_printf ("system_%u", s);
          deep_mark (&d, system, 1);
          for (guint level = 0; level < DEEP_LEVELS; level++)
            {
              guint depth = 2 + level;
              for (guint k = 0; k < DEEP_LEAVES; k++)
                {
                  g_autofree char *leaf = g_strdup_printf ("leaf_%u", k);
                  deep_mark (&d, leaf, depth);
                  deep_done (&d, depth, 1000);
                }
              g_autofree char *step = g_strdup_printf ("step_%u", level);
              deep_mark (&d, step, depth);
            }
          for (guint level = DEEP_LEVELS; level-- > 0;)
            deep_done (&d, 2 + level, 2000000);
          deep_done (&d, 1, 1000);
        }
      deep_done (&d, 0, 1000);
      deep_frame_end (&d);
    }
  deep_end (&d);
  return path;
}

M6SessionWindow *
newest_session_window (void)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data))
      return l->data;   /* most recently focused first */
  return NULL;
}

M6SessionWindow *
open_capture (const char *path)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  M6SessionWindow *window = newest_session_window ();
  g_assert_nonnull (window);
  gtk_window_set_default_size (GTK_WINDOW (window), 1024, 640);
  gtk_window_present (GTK_WINDOW (window));
  ui_spin (0.5);
  return window;
}

gboolean
zoomed_to (gpointer data)
{
  NodeWait *w = data;
  return m6_flame_graph_get_zoom_node (w->flame) == w->node;
}

gboolean
selected_is (gpointer data)
{
  NodeWait *w = data;
  return m6_flame_graph_get_selected_node (w->flame) == w->node;
}

/* Real input arrives when the X server and a busy main loop get to it. */
void
wait_zoom (M6FlameGraph *flame,
           guint         node)
{
  NodeWait w = { flame, node };
  if (!ui_wait_for (zoomed_to, &w, 3))
    g_error ("expected the flame graph zoomed to node %u, it is at %u", node, m6_flame_graph_get_zoom_node (flame));
}

GtkAdjustment *
flame_vadjustment (M6SessionWindow *window)
{
  GtkWidget *flame = GTK_WIDGET (m6_session_window_get_flame_graph (window));
  GtkWidget *scroller = gtk_widget_get_ancestor (flame, GTK_TYPE_SCROLLED_WINDOW);
  return gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
}

/* Is the row of @node_id inside the visible part of the scrolled graph? */
gboolean
node_row_visible (M6SessionWindow *window,
                  guint            node_id)
{
  M6FlameGraph *flame = m6_session_window_get_flame_graph (window);
  GtkAdjustment *adj = flame_vadjustment (window);
  graphene_rect_t rect;

  if (!m6_flame_graph_get_node_rect (flame, node_id, &rect))
    return FALSE;
  return rect.origin.y >= gtk_adjustment_get_value (adj) - 0.5
         && rect.origin.y + rect.size.height <= gtk_adjustment_get_value (adj) + gtk_adjustment_get_page_size (adj) + 0.5;
}

/* The middle of @node_id's box, in the flame graph's coordinates. */
void
node_center (M6SessionWindow *window,
             guint            node_id,
             double          *x,
             double          *y)
{
  graphene_rect_t rect;

  g_assert_true (m6_flame_graph_get_node_rect (m6_session_window_get_flame_graph (window), node_id, &rect));
  *x = rect.origin.x + MIN (rect.size.width / 2, 40);
  *y = rect.origin.y + rect.size.height / 2;
}

/* What a widget below another is looked for by: its type, and where set
 * a CSS class, a CSS name, a label's text, and being mapped. */
typedef struct
{
  GType       type;
  const char *css_class;
  const char *css_name;
  const char *label;
  gboolean    mapped;
} WidgetQuery;

static gboolean
widget_matches (GtkWidget         *widget,
                const WidgetQuery *query)
{
  return G_TYPE_CHECK_INSTANCE_TYPE (widget, query->type)
         && (query->css_class == NULL || gtk_widget_has_css_class (widget, query->css_class))
         && (query->css_name == NULL || g_str_equal (gtk_widget_get_css_name (widget), query->css_name))
         && (query->label == NULL || g_str_equal (gtk_label_get_text (GTK_LABEL (widget)), query->label))
         && (!query->mapped || gtk_widget_get_mapped (widget));
}

/* The first widget below @widget, depth first, that @query matches. */
static GtkWidget *
find_below (GtkWidget         *widget,
            const WidgetQuery *query)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (widget_matches (child, query))
        return child;
      GtkWidget *found = find_below (child, query);
      if (found != NULL)
        return found;
    }
  return NULL;
}

GtkWidget *
find_widget (GtkWidget  *widget,
             GType       type,
             const char *css_class)
{
  return find_below (widget, &(WidgetQuery) { .type = type, .css_class = css_class, .mapped = TRUE });
}

GtkWidget *
find_label_widget (GtkWidget  *widget,
                   const char *text)
{
  return find_below (widget, &(WidgetQuery) { .type = GTK_TYPE_LABEL, .label = text, .mapped = TRUE });
}

GtkWidget *
find_by_css_name (GtkWidget  *widget,
                  const char *name)
{
  return find_below (widget, &(WidgetQuery) { .type = GTK_TYPE_WIDGET, .css_name = name });
}

GtkWidget *
find_tooltip (GtkWidget *widget)
{
  return find_below (widget, &(WidgetQuery) { .type = GTK_TYPE_WIDGET, .css_name = "tooltip", .mapped = TRUE });
}

void
maybe_screenshot (M6SessionWindow *window,
                  const char      *name)
{
  /* For people checking the layout by eye: MACH6_TEST_SHOTS=DIR. */
  const char *dir = g_getenv ("MACH6_TEST_SHOTS");
  if (dir != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_action_group_activate_action (G_ACTION_GROUP (window), "screenshot", g_variant_new_string (path));
    }
}

/* frame → physics (60 %), render (35 %: cull 3.5 % of the frame, draw),
 * ai (5 %): three rows, with a box just wide enough for "cull". */
char *
write_shallow_capture (void)
{
  Deep d;
  char *path = deep_begin (&d, "shallow.mach6", 4244, "slide-game", g_get_real_time ());

  for (guint f = 0; f < 20; f++)
    {
      deep_mark (&d, "frame", 0);
      deep_mark (&d, "physics", 1);
      deep_done (&d, 1, 6000000);
      deep_mark (&d, "render", 1);
      deep_mark (&d, "cull", 2);
      deep_done (&d, 2, 350000);
      deep_mark (&d, "draw", 2);
      deep_done (&d, 2, 3150000);
      deep_done (&d, 1, 0);
      deep_mark (&d, "ai", 1);
      deep_done (&d, 1, 500000);
      deep_done (&d, 0, 0);
      deep_frame_end (&d);
      d.t += 6000000;
    }
  deep_end (&d);
  return path;
}
