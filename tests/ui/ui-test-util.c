/* SPDX-License-Identifier: MIT */
/* ui-test-util.c — helpers shared by the UI test programs. */
#include "ui-test-util.h"
#include "m6-session-frames.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "m6-reader.h"
#include "m6-test-hooks.h"
#include "m6-ui.h"
#include "../test-strict.h"

/* --- main() ------------------------------------------------------------- */

static char *test_cache;
static char *test_data_home;

gboolean
ui_test_init (int       *argc,
              char    ***argv,
              gboolean   own_data_home)
{
  /* Not G_TEST_OPTION_ISOLATE_DIRS: that hides the MIME database, and
   * then the app's SVG icons cannot load. Folders of our own instead, set
   * before anything reads them. */
  test_cache = g_dir_make_tmp ("mach6-ui-cache-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", test_cache, TRUE);
  if (own_data_home)
    {
      test_data_home = g_dir_make_tmp ("mach6-ui-data-XXXXXX", NULL);
      g_setenv ("XDG_DATA_HOME", test_data_home, TRUE);
    }
  g_test_init (argc, argv, NULL);
  m6_test_hooks_enable ();
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_setenv ("GTK_A11Y", "none", TRUE);

  if (!gtk_init_check ())
    {
      ui_test_no_display ();
      ui_test_finish (NULL, 0);
      return FALSE;
    }
  return TRUE;
}

void
ui_test_skip (const char *reason)
{
  test_skip_unless_strict (reason);
}

void
ui_test_no_display (void)
{
  if (test_strict ())
    {
      g_printerr ("no display, which make test provides (MACH6_TEST_STRICT): GTK could not open one\n");
      exit (1);
    }
  g_test_skip ("no display: run under xvfb-run (make test does)");
  g_print ("1..0 # SKIP no display\n");
}

const char *
ui_test_get_data_home (void)
{
  return test_data_home;
}

M6Application *
ui_test_app_new (void)
{
  g_autoptr (GError) error = NULL;
  M6Application *app;

  m6_ui_init ();
  app = m6_application_new (G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (app), NULL, &error);
  g_assert_no_error (error);
  g_application_hold (G_APPLICATION (app));
  return app;
}

int
ui_test_finish (M6Application *app,
                int            status)
{
  if (app != NULL)
    {
      g_application_release (G_APPLICATION (app));
      g_object_unref (app);
    }
  if (test_data_home != NULL)
    ui_remove_tree (test_data_home);
  if (test_cache != NULL)
    ui_remove_tree (test_cache);
  g_clear_pointer (&test_data_home, g_free);
  g_clear_pointer (&test_cache, g_free);
  return status;
}

void
ui_remove_tree (const char *root)
{
  g_autoptr (GDir) dir = g_dir_open (root, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (root, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        ui_remove_tree (path);
      else
        g_unlink (path);
    }
  g_rmdir (root);
}

/* --- the main loop ------------------------------------------------------ */

static gboolean
wake_cb (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

gboolean
ui_wait_for (UiCondition cond,
             gpointer    data,
             double      seconds)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  guint wake = g_timeout_add (10, wake_cb, NULL);
  gboolean ok;

  while (!(ok = cond (data)) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (wake);
  return ok;
}

void
ui_spin (double seconds)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  guint wake = g_timeout_add (10, wake_cb, NULL);

  while (g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (wake);
}

/* The game must not outlive a test that aborts. */
static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

GPid
ui_start_game (const char *leak_kb,
               const char *threads)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) env = g_get_environ ();
  const char *argv[] = { DEMO_GAME, "--fps", "60", "--leak-kb", leak_kb,
                         threads ? "--threads" : NULL, threads, NULL };
  GPid pid = 0;

  env = g_environ_setenv (env, "LD_PRELOAD", HEAP_SHIM, TRUE);
  g_spawn_async (NULL, (char **) argv, env,
                 G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                 die_with_parent, NULL, &pid, &error);
  g_assert_no_error (error);
  return pid;
}

void
ui_run_quietly (const char *const *argv,
                char              **envp)
{
  g_autoptr (GError) error = NULL;
  int status;

  g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                NULL, NULL, NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

GPid
ui_start_game_args (const char *const *args)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) env = g_get_environ ();
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  GPid pid = 0;

  g_ptr_array_add (argv, (gpointer) DEMO_GAME);
  for (guint i = 0; args != NULL && args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  env = g_environ_setenv (env, "LD_PRELOAD", HEAP_SHIM, TRUE);
  g_spawn_async (NULL, (char **) argv->pdata, env,
                 G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                 die_with_parent, NULL, &pid, &error);
  g_assert_no_error (error);
  return pid;
}

void
ui_stop_game (GPid pid,
              int  sig)
{
  int status;

  if (pid <= 0)
    return;
  kill (pid, sig);
  waitpid (pid, &status, 0);
  g_spawn_close_pid (pid);
  /* A killed producer leaves its segment behind; do not litter. */
  m6_reader_clean_pid (pid, NULL);
}

gboolean
ui_is_listed (gpointer data)
{
  gint pid = GPOINTER_TO_INT (data);
  g_autoptr (GPtrArray) infos = m6_reader_list (NULL);

  for (guint i = 0; infos != NULL && i < infos->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (infos, i);
      /* Listed and readable: a segment still being created has an error. */
      if (info->pid == pid && info->alive && info->error == NULL)
        return TRUE;
    }
  return FALSE;
}

void
ui_wait_listed (GPid game)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) infos = NULL;
  g_autoptr (GString) seen = g_string_new (NULL);
  int status = 0;

  /* Long enough for a machine busy with other tests. */
  if (ui_wait_for (ui_is_listed, GINT_TO_POINTER (game), 30))
    return;
  infos = m6_reader_list (&error);
  for (guint i = 0; infos != NULL && i < infos->len; i++)
    {
      M6ProcessInfo *info = g_ptr_array_index (infos, i);
      g_string_append_printf (seen, "\n  pid %d %s: %s%s, attached by %d%s%s", info->pid, info->name,
                              info->alive ? "alive" : "not alive", info->ended ? ", ended" : "",
                              info->attached_pid, info->error ? ", " : "", info->error ? info->error : "");
    }
  if (waitpid (game, &status, WNOHANG) == game)
    g_error ("the demo game (pid %d) exited (status 0x%x) before it was listed", game, status);
  g_error ("the demo game (pid %d) was not listed alive and readable within 30 s; the list%s:%s", game,
           error ? error->message : "", seen->len ? seen->str : " is empty");
}

M6Node *
ui_node_at (M6SessionWindow *window,
            const char      *path)
{
  M6Tree *tree = m6_flame_graph_get_tree (m6_session_window_get_flame_graph (window));
  return tree ? m6_tree_find_path (tree, path) : NULL;
}

typedef struct
{
  M6Application   *app;
  GPid             game;
  M6SessionWindow *window;
  guint64          min_count;
  const char      *error_before;   /* the app's last error before attaching */
} LiveWait;

static gboolean
window_is_up (gpointer data)
{
  LiveWait *w = data;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (w->app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && m6_session_window_get_pid (l->data) == w->game)
      {
        w->window = l->data;
        return TRUE;
      }
  /* A new error dialog instead of a window: stop waiting. */
  return m6_application_get_last_error (w->app) != w->error_before;
}

static gboolean
tree_is_drawn (gpointer data)
{
  LiveWait *w = data;
  M6FlameGraph *flame = m6_session_window_get_flame_graph (w->window);
  const char *paths[] = { "frame", "frame/physics", "frame/render", "frame/ai" };
  graphene_rect_t rect;

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      M6Node *node = ui_node_at (w->window, paths[i]);
      if (node == NULL || node->count < MAX (w->min_count, 1)
          || !m6_flame_graph_get_node_rect (flame, node->id, &rect))
        return FALSE;
    }
  return TRUE;
}

M6SessionWindow *
ui_attach_live (M6Application *app,
                GPid           game,
                guint64        min_count)
{
  LiveWait w = { app, game, NULL, min_count, m6_application_get_last_error (app) };

  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (game));
  ui_wait_for (window_is_up, &w, 20);
  if (w.window == NULL)
    g_error ("attaching to the game (pid %d) failed: %s", game,
             m6_application_get_last_error (app) ? m6_application_get_last_error (app) : "no window within 20 s");
  if (!ui_wait_for (tree_is_drawn, &w, 20))
    g_error ("the flame graph did not show frame → physics/render/ai within 20 s");
  return w.window;
}

/* --- real input ---------------------------------------------------------- */

#include <dlfcn.h>
#include <gdk/x11/gdkx.h>
#include <X11/keysym.h>

/* libXtst is loaded at run time: its development files are not needed to
 * build, only the library (libxtst6) to run. */
typedef int (*FakeMotionFunc) (Display *, int, int, int, unsigned long);
typedef int (*FakeButtonFunc) (Display *, unsigned int, Bool, unsigned long);
typedef int (*FakeKeyFunc)    (Display *, unsigned int, Bool, unsigned long);

static struct
{
  gboolean       tried;
  FakeMotionFunc motion;
  FakeButtonFunc button;
  FakeKeyFunc    key;
} xtest;

gboolean
ui_input_available (void)
{
  if (!xtest.tried)
    {
      void *lib = dlopen ("libXtst.so.6", RTLD_NOW | RTLD_LOCAL);

      xtest.tried = TRUE;
      if (lib != NULL)
        {
          /* POSIX's way to take a function from dlsym() (ISO C has no
           * conversion from void * to a function pointer). */
          *(void **) &xtest.motion = dlsym (lib, "XTestFakeMotionEvent");
          *(void **) &xtest.button = dlsym (lib, "XTestFakeButtonEvent");
          *(void **) &xtest.key = dlsym (lib, "XTestFakeKeyEvent");
        }
    }
  return xtest.motion != NULL && xtest.button != NULL && xtest.key != NULL
         && GDK_IS_X11_DISPLAY (gdk_display_get_default ());
}

static Display *
x_display (void)
{
  g_assert_true (ui_input_available ());
  return gdk_x11_display_get_xdisplay (gdk_display_get_default ());
}

void
ui_pointer_move (GtkWidget *widget,
                 double     x,
                 double     y)
{
  GtkNative *native = gtk_widget_get_native (widget);
  Display *dpy = x_display ();
  graphene_point_t p;
  double sx, sy;
  int rx, ry;
  Window child;

  g_assert_true (gtk_widget_compute_point (widget, GTK_WIDGET (native), &GRAPHENE_POINT_INIT (x, y), &p));
  gtk_native_get_surface_transform (native, &sx, &sy);
  XTranslateCoordinates (dpy, gdk_x11_surface_get_xid (gtk_native_get_surface (native)),
                         DefaultRootWindow (dpy), (int) (p.x + sx), (int) (p.y + sy), &rx, &ry, &child);
  xtest.motion (dpy, -1, rx, ry, 0);
  XSync (dpy, False);
  ui_spin (0.1);
}

void
ui_click (GtkWidget *widget,
          double     x,
          double     y)
{
  Display *dpy = x_display ();

  ui_pointer_move (widget, x, y);
  xtest.button (dpy, 1, True, 0);
  xtest.button (dpy, 1, False, 0);
  XSync (dpy, False);
  ui_spin (0.15);
}

void
ui_button (gboolean down)
{
  Display *dpy = x_display ();

  xtest.button (dpy, 1, down, 0);
  XSync (dpy, False);
  ui_spin (0.05);
}

void
ui_press_key (guint    keyval,
              gboolean shift)
{
  ui_press_keys (keyval, shift ? GDK_SHIFT_MASK : 0);
}

void
ui_press_keys (guint           keyval,
               GdkModifierType modifiers)
{
  Display *dpy = x_display ();
  unsigned int shift_code = XKeysymToKeycode (dpy, XK_Shift_L);
  unsigned int control_code = XKeysymToKeycode (dpy, XK_Control_L);
  unsigned int code = XKeysymToKeycode (dpy, keyval);

  g_assert_cmpuint (code, !=, 0);
  if (modifiers & GDK_CONTROL_MASK)
    xtest.key (dpy, control_code, True, 0);
  if (modifiers & GDK_SHIFT_MASK)
    xtest.key (dpy, shift_code, True, 0);
  xtest.key (dpy, code, True, 0);
  xtest.key (dpy, code, False, 0);
  if (modifiers & GDK_SHIFT_MASK)
    xtest.key (dpy, shift_code, False, 0);
  if (modifiers & GDK_CONTROL_MASK)
    xtest.key (dpy, control_code, False, 0);
  XSync (dpy, False);
  ui_spin (0.1);
}

void
ui_drag (GtkWidget *widget,
         double     x1,
         double     y1,
         double     x2,
         double     y2)
{
  Display *dpy = x_display ();

  ui_pointer_move (widget, x1, y1);
  xtest.button (dpy, 1, True, 0);
  XSync (dpy, False);
  ui_spin (0.1);
  for (int i = 1; i <= 5; i++)
    ui_pointer_move (widget, x1 + (x2 - x1) * i / 5, y1 + (y2 - y1) * i / 5);
  xtest.button (dpy, 1, False, 0);
  XSync (dpy, False);
  ui_spin (0.15);
}

void
ui_scroll (GtkWidget       *widget,
           double           x,
           double           y,
           int              clicks,
           GdkModifierType  modifiers)
{
  Display *dpy = x_display ();
  unsigned int control_code = XKeysymToKeycode (dpy, XK_Control_L);

  /* Wheel clicks are buttons 4 (up) and 5 (down) in X. */
  ui_pointer_move (widget, x, y);
  if (modifiers & GDK_CONTROL_MASK)
    xtest.key (dpy, control_code, True, 0);
  for (int i = 0; i < ABS (clicks); i++)
    {
      xtest.button (dpy, clicks < 0 ? 4 : 5, True, 0);
      xtest.button (dpy, clicks < 0 ? 4 : 5, False, 0);
    }
  if (modifiers & GDK_CONTROL_MASK)
    xtest.key (dpy, control_code, False, 0);
  XSync (dpy, False);
  ui_spin (0.15);
}

static gboolean
jobs_done (gpointer data)
{
  M6Application *app = data;

  if (m6_application_get_n_loads (app) > 0)
    return FALSE;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (M6_IS_COMPARE_WINDOW (l->data) && m6_compare_window_get_adding (l->data))
      return FALSE;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data)
        && (m6_session_window_get_saving (l->data) || m6_session_window_get_comparing (l->data)
            || m6_session_frames_get_indexing (l->data)))
      return FALSE;
  return TRUE;
}

void
ui_wait_jobs (M6Application *app)
{
  g_autoptr (GString) pending = NULL;

  if (ui_wait_for (jobs_done, app, 60))
    {
      ui_spin (0.02);   /* their completions: toasts, windows presented */
      return;
    }
  /* Say which job is still running. */
  pending = g_string_new (NULL);
  g_string_append_printf (pending, "%u load(s)", m6_application_get_n_loads (app));
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    {
      if (M6_IS_COMPARE_WINDOW (l->data) && m6_compare_window_get_adding (l->data))
        g_string_append_printf (pending, ", a comparison adding runs (%s)", gtk_window_get_title (l->data));
      if (M6_IS_SESSION_WINDOW (l->data) && m6_session_window_get_saving (l->data))
        g_string_append_printf (pending, ", a save of %s", gtk_window_get_title (l->data));
      if (M6_IS_SESSION_WINDOW (l->data) && m6_session_window_get_comparing (l->data))
        g_string_append_printf (pending, ", a comparison's reading in %s", gtk_window_get_title (l->data));
      if (M6_IS_SESSION_WINDOW (l->data) && m6_session_frames_get_indexing (l->data))
        g_string_append_printf (pending, ", the frame index of %s", gtk_window_get_title (l->data));
    }
  g_error ("a load, save, comparison or frame index did not end within 60 s: %s", pending->str);
}

/* --- looking at what is shown -------------------------------------------- */

GtkWidget *
ui_find_descendant (GtkWidget *widget,
                    GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = ui_find_descendant (child, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

const M6DiffRow *
ui_compare_row (M6CompareWindow *compare,
                const char      *path)
{
  M6CompareRow *row = m6_compare_window_find (compare, path);

  if (row == NULL)
    g_error ("the comparison has no row for %s", path);
  return m6_compare_row_get_diff (row);
}

double
ui_image_variance (const char *path,
                   int        *width,
                   int        *height)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (path, &error);

  if (texture == NULL)
    g_error ("could not read the picture %s: %s", path, error->message);

  int w = gdk_texture_get_width (texture), h = gdk_texture_get_height (texture);
  gsize stride = (gsize) w * 4, n = (gsize) w * h;
  g_autofree guchar *pixels = g_malloc (stride * h);
  double sum = 0, sum2 = 0;

  gdk_texture_download (texture, pixels, stride);
  for (gsize i = 0; i < n; i++)
    {
      const guchar *p = pixels + i * 4;
      double y = 0.299 * p[2] + 0.587 * p[1] + 0.114 * p[0];
      sum += y;
      sum2 += y * y;
    }
  if (width != NULL)
    *width = w;
  if (height != NULL)
    *height = h;
  return sum2 / n - (sum / n) * (sum / n);
}
