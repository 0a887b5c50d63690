/* SPDX-License-Identifier: MIT */
/* test-hitch-settings.c — hunting a hitch in the viewer (issue 11), what
 * is read and set around one: times carry their unit in the stats table
 * and the flame graph's tooltip, keys step through frames (to the next one
 * over budget too), and the frame budget is a setting the lane and those
 * keys follow. Real windows under Xvfb, real keys through XTest where there
 * is XTest, the real game through real shared memory. */
#include <adwaita.h>
#include <math.h>
#include <string.h>

#include "hitch-test-util.h"
#include "m6-application.h"
#include "m6-capture.h"
#include "m6-duration.h"
#include "m6-frame-window.h"
#include "m6-frame-lane.h"
#include "m6-session-frames.h"
#include "m6-session-window.h"
#include "m6-settings.h"
#include "m6-stats-view.h"
#include "ui-test-util.h"

/* --- 4b: times carry their unit ----------------------------------------- */

/* The text of the first GtkInscription at or below @widget. */
static const char *
inscription_text (GtkWidget *widget)
{
  GtkWidget *found = ui_find_descendant (widget, GTK_TYPE_INSCRIPTION);
  return found != NULL ? gtk_inscription_get_text (GTK_INSCRIPTION (found)) : NULL;
}

/* The cell of @row under the header titled @title: where the user reads
 * it (a row's cells need not be in the columns' order once one was hidden
 * and shown again). */
static GtkWidget *
cell_under (GtkColumnView *view,
            GtkWidget     *row,
            const char    *title)
{
  GtkWidget *header = NULL;
  graphene_rect_t h, c;

  /* Every header label: the titles' row is the view's first child. */
  for (GtkWidget *t = gtk_widget_get_first_child (gtk_widget_get_first_child (GTK_WIDGET (view)));
       t != NULL && header == NULL; t = gtk_widget_get_next_sibling (t))
    {
      GtkWidget *label = ui_find_descendant (t, GTK_TYPE_LABEL);
      if (label != NULL && gtk_widget_get_mapped (t) && g_str_equal (gtk_label_get_text (GTK_LABEL (label)), title))
        header = t;
    }
  if (header == NULL)
    g_error ("no header “%s” shown", title);
  g_assert_true (gtk_widget_compute_bounds (header, GTK_WIDGET (view), &h));
  for (GtkWidget *cell = gtk_widget_get_first_child (row); cell != NULL; cell = gtk_widget_get_next_sibling (cell))
    {
      g_assert_true (gtk_widget_compute_bounds (cell, GTK_WIDGET (view), &c));
      double mid = c.origin.x + c.size.width / 2;
      if (mid >= h.origin.x && mid < h.origin.x + h.size.width)
        return cell;
    }
  g_error ("no cell under “%s”", title);
}

typedef struct
{
  M6StatsView *stats;
  const char  *scope;
  GtkWidget   *row;
} RowFind;

/* The row widget of the table showing @scope (a mapped one). */
static gboolean
row_shown (gpointer data)
{
  RowFind *find = data;
  GtkWidget *list_view = ui_find_descendant (GTK_WIDGET (m6_stats_view_get_column_view (find->stats)), GTK_TYPE_LIST_VIEW);

  for (GtkWidget *row = gtk_widget_get_first_child (list_view); row != NULL; row = gtk_widget_get_next_sibling (row))
    if (gtk_widget_get_mapped (row) && g_strcmp0 (inscription_text (row), find->scope) == 0)
      {
        find->row = row;
        return TRUE;
      }
  return FALSE;
}

/* The stats table's Avg and Max cells of load_chunk and the flame graph's
 * tooltip of it give times with a unit, from the shared formatter: the
 * hitch's 40 ms as ms, the ordinary calls' microseconds as µs. */
static void
test_units (void)
{
  ensure_session ();
  M6StatsView *stats = m6_session_window_get_stats_view (window);
  GtkColumnView *view = m6_stats_view_get_column_view (stats);
  M6Node *load = ui_node_at (window, "frame/stream/load_chunk");
  RowFind find = { stats, "load_chunk", NULL };

  gtk_window_present (GTK_WINDOW (window));
  m6_stats_view_set_selected_node (stats, load->id);
  if (!ui_wait_for (row_shown, &find, 5))
    g_error ("the table shows no row for load_chunk");
  g_assert_cmpstr (inscription_text (cell_under (view, find.row, "Scope")), ==, "load_chunk");
  const char *avg_text = inscription_text (cell_under (view, find.row, "Avg"));
  const char *max_text = inscription_text (cell_under (view, find.row, "Max"));
  g_test_message ("load_chunk: avg “%s”, max “%s”", avg_text, max_text);
  if (!has_unit (avg_text) || !has_unit (max_text))
    g_error ("load_chunk's Avg “%s” and Max “%s” should carry a unit", avg_text, max_text);
  /* The max is a hitch (at least 40 ms): read in ms, not 0.040 s. */
  g_assert_true (g_str_has_suffix (max_text, "\u00a0ms"));

  g_autofree char *markup = m6_flame_graph_get_tooltip_markup (m6_session_window_get_flame_graph (window), load->id);
  g_autofree char *tip = NULL;
  g_assert_true (pango_parse_markup (markup, -1, 0, NULL, &tip, NULL, NULL));
  g_test_message ("flame graph tooltip: %s", tip);
  static const char *const names[] = { "Time avg ", "p50 ", "p90 ", "max " };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      const char *at = strstr (tip, names[i]);
      g_assert_nonnull (at);
      /* Up to the next pair ("    ") or line. */
      at += strlen (names[i]);
      g_autofree char *value = g_strndup (at, strcspn (at, "\n"));
      char *gap = strstr (value, "    ");
      if (gap != NULL)
        *gap = '\0';
      if (!has_unit (value))
        g_error ("the flame graph's tooltip gives %s“%s”, without a unit", names[i], value);
    }
}

/* --- 5: keys step through frames ----------------------------------------- */

static void
press (M6FrameWindow *fw,
       guint          keyval,
       GdkModifierType mods,
       const char    *action)
{
  if (ui_input_available ())
    ui_press_keys (keyval, mods);
  else
    {
      g_autofree char *name = g_strconcat ("frame.", action, NULL);
      gtk_widget_activate_action (GTK_WIDGET (fw), name, NULL);
    }
}

static void
test_keys (void)
{
  M6FrameInfo a, b;

  ensure_session ();
  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  gtk_window_present (GTK_WINDOW (fw));
  ui_wait_for (window_active, fw, 5);
  gtk_widget_grab_focus (GTK_WIDGET (m6_frame_window_get_timeline (fw)));
  g_assert_true (m6_frame_window_get_frame (fw, &a));

  press (fw, GDK_KEY_bracketright, 0, "next");
  g_assert_true (m6_frame_window_get_frame (fw, &b));
  g_assert_cmpuint (b.number, ==, a.number + 1);
  press (fw, GDK_KEY_bracketleft, 0, "previous");
  g_assert_true (m6_frame_window_get_frame (fw, &b));
  g_assert_cmpuint (b.number, ==, a.number);

  /* Ctrl+]: the next frame over budget, past the normal ones between. */
  press (fw, GDK_KEY_bracketright, GDK_CONTROL_MASK, "next-slow");
  g_assert_true (m6_frame_window_get_frame (fw, &b));
  if (b.number == a.number)
    {
      /* The slowest was the last hitch so far: go back instead. */
      press (fw, GDK_KEY_bracketleft, GDK_CONTROL_MASK, "previous-slow");
      g_assert_true (m6_frame_window_get_frame (fw, &b));
      g_assert_cmpuint (b.number, <, a.number);
    }
  else
    g_assert_cmpuint (b.number, >, a.number + 1);
  g_assert_cmpint (b.duration_ns, >=, SLOW_NS);
}

/* --- 5b: the frame budget is a setting ----------------------------------- */

static int
compare_gint64 (gconstpointer a,
                   gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* The first frame after @from slower than @budget_ns, or G_MAXUINT64. */
static guint64
next_over (M6FrameIndex *index,
           guint         thread,
           guint64       from,
           gint64        budget_ns)
{
  M6FrameInfo frame;

  for (guint64 n = from + 1; m6_frame_index_get_frame (index, thread, n, &frame); n++)
    if (frame.duration_ns > budget_ns)
      return n;
  return G_MAXUINT64;
}

typedef struct
{
  M6DriftGraph *drift;
  guint         n_over;
} OverCheck;

static gboolean
over_changed (gpointer data)
{
  OverCheck *c = data;
  return m6_drift_graph_get_n_over_budget (c->drift) != c->n_over;
}

static gboolean
menu_has_target (GMenuModel *model,
                 const char *action,
                 double      target)
{
  for (int i = 0; i < g_menu_model_get_n_items (model); i++)
    {
      g_autofree char *name = NULL;
      g_autoptr (GVariant) value = g_menu_model_get_item_attribute_value (model, i, G_MENU_ATTRIBUTE_TARGET, G_VARIANT_TYPE_DOUBLE);
      g_autoptr (GMenuLinkIter) links = g_menu_model_iterate_item_links (model, i);
      const char *link;
      GMenuModel *child;

      if (g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &name) && g_str_equal (name, action)
          && value != NULL && g_variant_get_double (value) == target)
        return TRUE;
      while (g_menu_link_iter_get_next (links, &link, &child))
        {
          g_autoptr (GMenuModel) owned = child;
          if (menu_has_target (child, action, target))
            return TRUE;
        }
    }
  return FALSE;
}

static gboolean
widget_menu_has_target (GtkWidget  *widget,
                        const char *action,
                        double      target)
{
  if (GTK_IS_MENU_BUTTON (widget) && gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget)) != NULL
      && menu_has_target (gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget)), action, target))
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    if (widget_menu_has_target (child, action, target))
      return TRUE;
  return FALSE;
}

/* The frame budget (Hitch Settings › Frame Budget, the frame-budget-ms
 * setting) is the lane's: a budget at the game's median frame marks about
 * half of them; and Ctrl+]'s: it steps to the next frame slower than it,
 * past the ones between the old budget and the new. */
static void
test_budget_setting (void)
{
  M6DriftGraph *drift;
  M6FrameIndex *index;
  guint thread;
  GSettings *settings;
  M6FrameInfo a, b;

  ensure_session ();
  settings = m6_settings_get_default ();
  g_assert_nonnull (settings);
  drift = m6_session_window_get_drift_graph (window);
  index = m6_session_frames_get_index (window);
  thread = m6_session_window_get_thread (window);

  /* In the window's menu, beside the Live Window. */
  g_assert_true (widget_menu_has_target (GTK_WIDGET (window), "win.frame-budget-ms", 33.333333));
  g_assert_cmpfloat (g_settings_get_double (settings, "frame-budget-ms"), ==, 16.666667);

  /* The game's median frame: half the frames are slower. */
  g_autoptr (GArray) series = m6_frame_index_get_series (index, thread, G_MININT64, G_MAXINT64);
  g_autoptr (GArray) durations = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; i < series->len; i++)
    g_array_append_val (durations, g_array_index (series, M6FrameInfo, i).duration_ns);
  g_array_sort (durations, (GCompareFunc) compare_gint64);
  double median_ms = floor (g_array_index (durations, gint64, durations->len / 2) / 1e4) / 100.0;
  g_test_message ("median frame %.2f ms of %u", median_ms, durations->len);
  g_assert_cmpfloat (median_ms, >=, 0.01);
  g_assert_cmpfloat (median_ms, <, 16.0);

  OverCheck c = { drift, 0 };
  m6_drift_graph_invalidate (drift);
  ui_spin (0.3);
  c.n_over = m6_drift_graph_get_n_over_budget (drift);
  g_action_group_activate_action (G_ACTION_GROUP (window), "frame-budget-ms", g_variant_new_double (median_ms));
  g_assert_cmpfloat (g_settings_get_double (settings, "frame-budget-ms"), ==, median_ms);
  if (!ui_wait_for (over_changed, &c, 10))
    g_error ("the lane still marks %u frames over budget at a budget of %.2f ms", c.n_over, median_ms);
  g_test_message ("over budget: %u at 16.7 ms, %u at %.2f ms", c.n_over, m6_drift_graph_get_n_over_budget (drift), median_ms);
  g_assert_cmpuint (m6_drift_graph_get_n_over_budget (drift), >, c.n_over + 10);

  /* Ctrl+] from the slowest frame: the next one over the median, not the
   * next hitch. */
  M6FrameWindow *fw = m6_session_frames_open (window, -1);
  gtk_window_present (GTK_WINDOW (fw));
  ui_wait_for (window_active, fw, 5);
  gtk_widget_grab_focus (GTK_WIDGET (m6_frame_window_get_timeline (fw)));
  g_assert_true (m6_frame_window_get_frame (fw, &a));
  press (fw, GDK_KEY_bracketright, GDK_CONTROL_MASK, "next-slow");
  g_assert_true (m6_frame_window_get_frame (fw, &b));
  gint64 median_ns = (gint64) llround (median_ms * 1e6);
  g_assert_cmpuint (b.number, ==, next_over (index, thread, a.number, median_ns));
  g_assert_cmpuint (b.number, <, next_over (index, thread, a.number, M6_DEFAULT_BUDGET_NS));
  /* Its title says by how much, against this budget. */
  AdwWindowTitle *title = ADW_WINDOW_TITLE (ui_find_descendant (GTK_WIDGET (fw), ADW_TYPE_WINDOW_TITLE));
  g_autofree char *budget_text = m6_duration_format (median_ns);
  g_autofree char *over_text = g_strdup_printf ("over the %s budget", budget_text);
  g_test_message ("frame %" G_GUINT64_FORMAT ": %s", b.number, adw_window_title_get_subtitle (title));
  g_assert_nonnull (strstr (adw_window_title_get_subtitle (title), over_text));

  /* 30 ms: Ctrl+] goes past every frame up to 30 ms (those over 16.7 ms
   * among them), to the next hitch. */
  c.n_over = m6_drift_graph_get_n_over_budget (drift);
  g_action_group_activate_action (G_ACTION_GROUP (window), "frame-budget-ms", g_variant_new_double (30.0));
  g_assert_true (ui_wait_for (over_changed, &c, 10));
  g_assert_null (strstr (adw_window_title_get_subtitle (title), "over the"));
  guint skipped = 0;
  M6FrameInfo f;
  guint64 expected = next_over (index, thread, b.number, G_GINT64_CONSTANT (30000000));
  for (guint64 n = b.number + 1; n < expected && m6_frame_index_get_frame (index, thread, n, &f); n++)
    skipped += f.duration_ns > M6_DEFAULT_BUDGET_NS;
  g_test_message ("from frame %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT ", past %u over 16.7 ms", b.number, expected, skipped);
  press (fw, GDK_KEY_bracketright, GDK_CONTROL_MASK, "next-slow");
  g_assert_true (m6_frame_window_get_frame (fw, &a));
  if (expected == G_MAXUINT64)
    g_assert_cmpuint (a.number, ==, b.number);   /* none yet: it stays */
  else
    {
      g_assert_cmpuint (a.number, ==, expected);
      g_assert_cmpint (a.duration_ns, >, G_GINT64_CONSTANT (30000000));
    }

  g_settings_reset (settings, "frame-budget-ms");
  g_assert_cmpfloat (g_settings_get_double (settings, "frame-budget-ms"), ==, 16.666667);
}

/* --- 14: Capture on Hitch shows its state ---------------------------------- */

static GtkWidget *
template_child (M6SessionWindow *w,
                const char      *name)
{
  return GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (w), M6_TYPE_SESSION_WINDOW, name));
}

/* The main menu's item (a GtkModelButton) whose text is @text, opened. */
static GtkWidget *
find_model_button (GtkWidget  *widget,
                   const char *text)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (g_str_equal (G_OBJECT_TYPE_NAME (child), "GtkModelButton"))
        {
          g_autofree char *t = NULL;
          g_object_get (child, "text", &t, NULL);
          if (g_strcmp0 (t, text) == 0)
            return child;
        }
      GtkWidget *found = find_model_button (child, text);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The main menu of @w opened: its Capture on Hitch item. */
static GtkWidget *
menu_item (M6SessionWindow *w)
{
  GtkMenuButton *menu = GTK_MENU_BUTTON (ui_find_descendant (GTK_WIDGET (w), GTK_TYPE_MENU_BUTTON));
  g_assert_nonnull (menu);
  gtk_menu_button_popup (menu);
  ui_spin (0.2);
  GtkWidget *item = find_model_button (GTK_WIDGET (gtk_menu_button_get_popover (menu)), "Capture on Hitch");
  g_assert_nonnull (item);
  return item;
}

static void
close_menu (M6SessionWindow *w)
{
  gtk_menu_button_popdown (GTK_MENU_BUTTON (ui_find_descendant (GTK_WIDGET (w), GTK_TYPE_MENU_BUTTON)));
  ui_spin (0.1);
}

static gboolean
hitch_state_is (gpointer data)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (window), "capture-on-hitch");
  return g_variant_get_boolean (state) == GPOINTER_TO_INT (data);
}

static void
press_hitch_button (GtkWidget *button,
                    gboolean   on)
{
  if (ui_input_available ())
    {
      /* The frame view the other tests opened would take the click: the
       * session window on top first (a key first: X gives the focus to a
       * present() only after a user event newer than the last focus change). */
      M6FrameWindow *fw = m6_session_frames_get_window (window);
      if (fw != NULL)
        gtk_window_destroy (GTK_WINDOW (fw));
      ui_press_keys (GDK_KEY_Shift_L, 0);
      gtk_window_present (GTK_WINDOW (window));
      g_assert_true (ui_wait_for (window_active, window, 5));
      ui_click (button, gtk_widget_get_width (button) / 2.0, gtk_widget_get_height (button) / 2.0);
    }
  else
    g_action_group_change_action_state (G_ACTION_GROUP (window), "capture-on-hitch", g_variant_new_boolean (on));
  if (!ui_wait_for (hitch_state_is, GINT_TO_POINTER (on), 5))
    g_error ("a click on the header's toggle did not switch Capture on Hitch %s", on ? "on" : "off");
  ui_spin (0.1);
}

/* Off: the header's toggle is up, the menu's check empty. On (a real
 * click on the toggle): pressed, red, "Hitches > 33 ms" beside its icon,
 * the menu's check ticked. A saved capture offers none of it. */
static void
test_capture_on_hitch_state (void)
{
  g_autoptr (GError) error = NULL;

  ensure_session ();
  GtkWidget *button = template_child (window, "hitch_button");
  GtkWidget *label = template_child (window, "hitch_label");
  g_assert_nonnull (button);
  g_assert_nonnull (label);
  g_assert_true (gtk_widget_get_mapped (button));
  g_assert_true (hitch_state_is (GINT_TO_POINTER (FALSE)));
  g_assert_false (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (button)));
  g_assert_false (gtk_widget_get_mapped (label));

  GtkWidget *item = menu_item (window);
  /* A check item: the role's nick (GtkButtonRole is GTK's own). */
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (item), "role");
  g_assert_true (G_IS_PARAM_SPEC_ENUM (pspec));
  int role;
  gboolean active;
  g_object_get (item, "role", &role, "active", &active, NULL);
  GEnumValue *value = g_enum_get_value (G_PARAM_SPEC_ENUM (pspec)->enum_class, role);
  g_assert_nonnull (value);
  g_assert_cmpstr (value->value_nick, ==, "check");
  g_assert_false (active);
  g_assert_true (gtk_widget_get_sensitive (item));
  close_menu (window);

  press_hitch_button (button, TRUE);
  g_assert_true (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (button)));
  g_assert_true (gtk_widget_has_css_class (button, "hitch-armed"));
  g_assert_true (gtk_widget_get_mapped (label));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (label)), ==, "Hitches > 33.0\u00a0ms");
  shoot (GTK_WIDGET (window), "capture-on-hitch-armed.png");
  item = menu_item (window);
  g_object_get (item, "active", &active, NULL);
  g_assert_true (active);
  shoot (GTK_WIDGET (gtk_menu_button_get_popover (GTK_MENU_BUTTON (ui_find_descendant (GTK_WIDGET (window), GTK_TYPE_MENU_BUTTON)))),
         "capture-on-hitch-menu.png");
  close_menu (window);

  press_hitch_button (button, FALSE);
  g_assert_false (gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (button)));
  g_assert_false (gtk_widget_has_css_class (button, "hitch-armed"));
  g_assert_false (gtk_widget_get_mapped (label));

  /* A saved capture: no toggle, the item insensitive, the action off. */
  g_autofree char *path = g_build_filename (tmpdir, "state.mach6", NULL);
  g_autoptr (M6WindowSlice) slice = m6_frame_index_slice (m6_session_frames_get_index (window), G_MININT64, G_MAXINT64);
  g_assert_true (m6_window_slice_write_capture (slice, path, &error));
  g_assert_no_error (error);
  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (path, &info, &error);
  g_assert_no_error (error);
  M6SessionWindow *saved = m6_session_window_new_for_capture (GTK_APPLICATION (app), session, path);
  gtk_window_present (GTK_WINDOW (saved));
  ui_spin (0.3);
  g_assert_false (g_action_group_get_action_enabled (G_ACTION_GROUP (saved), "capture-on-hitch"));
  g_assert_false (gtk_widget_get_visible (template_child (saved, "hitch_button")));
  item = menu_item (saved);
  g_assert_false (gtk_widget_get_sensitive (item));
  close_menu (saved);
  gtk_window_destroy (GTK_WINDOW (saved));
  ui_spin (0.05);
}

int
main (int   argc,
      char *argv[])
{
  if (!hitch_test_init (&argc, &argv))
    return 0;

  g_test_add_func ("/ui/hitch/units", test_units);
  g_test_add_func ("/ui/hitch/keys", test_keys);
  g_test_add_func ("/ui/hitch/budget-setting", test_budget_setting);
  g_test_add_func ("/ui/hitch/capture-on-hitch-state", test_capture_on_hitch_state);

  return hitch_test_finish (g_test_run ());
}
