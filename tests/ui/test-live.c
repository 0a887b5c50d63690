/* test-live.c — the live view of a program whose instrumented thread is not
 * its main one: a producer thread of this test process, recorded through
 * the window's own recording as a game would be. */
#include <pthread.h>
#include <unistd.h>

#include "mach6.h"
#include "m6-flame-graph.h"
#include "ui-test-util.h"

static M6Application *app;
static gint stop;

static void *
produce (void *data)
{
  uint32_t frame = mach6_label_id ("frame");
  uint32_t work = mach6_label_id ("work");

  mach6_thread_name ("game");
  while (!g_atomic_int_get (&stop))
    {
      mach6_mark_id (frame);
      for (int i = 0; i < 20; i++)
        {
          mach6_mark_id (work);
          mach6_done ();
        }
      mach6_done ();
      g_usleep (100);
    }
  return NULL;
}

static gboolean
tree_shown (gpointer window)
{
  return m6_flame_graph_get_tree (m6_session_window_get_flame_graph (window)) != NULL;
}

/* No thread has the pid's tid, and frames are in by the window's first
 * look: it shows the game thread all the same. */
static void
test_worker_thread_shown (void)
{
  g_autoptr (GError) error = NULL;
  pthread_t thread;

  g_atomic_int_set (&stop, 0);
  pthread_create (&thread, NULL, produce, NULL);
  /* The segment comes with the thread's first event. */
  M6Reader *reader = NULL;
  for (int i = 0; i < 500 && reader == NULL; i++)
    {
      g_clear_error (&error);
      reader = m6_reader_attach (getpid (), &error);
      if (reader == NULL)
        g_usleep (10000);
    }
  g_assert_no_error (error);
  M6SessionWindow *window = m6_session_window_new_live (GTK_APPLICATION (app), reader);
  gtk_window_present (GTK_WINDOW (window));

  gboolean shown = ui_wait_for (tree_shown, window, 10);
  M6Session *session = m6_session_window_get_session (window);
  guint frames = m6_thread_get_frames (m6_session_get_thread (session, 0))->len;
  g_atomic_int_set (&stop, 1);
  pthread_join (thread, NULL);

  if (!shown)
    g_error ("the window showed no thread in 10 s; thread 0 had %u frames", frames);
  M6Thread *t = m6_session_get_thread (session, m6_session_window_get_thread (window));
  g_assert_cmpstr (m6_thread_get_name (t), ==, "game");
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, FALSE))
    return 0;
  app = ui_test_app_new ();

  g_test_add_func ("/ui/live/worker-thread-shown", test_worker_thread_shown);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
