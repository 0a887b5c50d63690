/* SPDX-License-Identifier: MIT */
/* test-edges.c — the promises at the edges (issue 26), with the real demo
 * game and the real CLI: a full /dev/shm (a small tmpfs in a private mount
 * namespace) never crashes the game and a second attach works; a segment
 * planted by another user is never read, by root neither; the game's
 * first mark does not scan /dev/shm; `record --on-hitch -o DIR/` does not
 * follow a link another user planted. Needs root (namespaces, a second
 * user); skipped otherwise. */
#include "reader-test-util.h"
#include "../test-strict.h"

#include "mach6-abi.h"

#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static uid_t
nobody_uid (void)
{
  struct passwd *pw = getpwnam ("nobody");
  return pw != NULL ? pw->pw_uid : 65534;
}

/* The game dies with the test (or the test's namespace child). */
static void
die_with_parent (gpointer data)
{
  (void) data;
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static GPid
start_game (const char *threads)
{
  const char *argv[] = { DEMO_GAME, "--fps", "200", "--threads", threads,
                         "--hitch-every", "20", "--hitch-ms", "20", NULL };
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "MACH6_RING_EVENTS", "4096", TRUE);
  GPid pid;

  g_spawn_async (NULL, (char **) argv, env, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                 die_with_parent, NULL, &pid, &error);
  g_assert_no_error (error);
  return pid;
}

/* Wait until @pid has made its segment. */
static void
wait_segment (GPid pid)
{
  for (int i = 0; i < 1000; i++)
    {
      g_autofree char *shm = m6_reader_shm_name (pid);
      if (shm != NULL)
        return;
      g_usleep (10000);
    }
  g_error ("process %d made no segment", pid);
}

static gboolean
game_runs (GPid pid)
{
  int status;
  pid_t r = waitpid (pid, &status, WNOHANG);
  if (r == pid)
    g_printerr ("# the game ended: %s %d\n", WIFSIGNALED (status) ? "signal" : "status",
                WIFSIGNALED (status) ? WTERMSIG (status) : WEXITSTATUS (status));
  return r == 0;
}

static void
stop_game (GPid pid)
{
  kill (pid, SIGTERM);
  waitpid (pid, NULL, 0);
}

/* Fill /dev/shm to the last byte: ENOSPC from then on. */
static void
fill_shm (const char *path)
{
  int fd = open (path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  static char block[65536];

  g_assert_cmpint (fd, >=, 0);
  memset (block, 0xee, sizeof block);
  while (write (fd, block, sizeof block) > 0)
    ;
  while (write (fd, block, 1) > 0)
    ;
  close (fd);
}

/* Run @body in a child with its own mount namespace and a tmpfs of @size
 * on /dev/shm; its exit status 0 passes. */
static void
in_private_shm (const char *size,
                void      (*body) (void))
{
  pid_t child = fork ();
  if (child == 0)
    {
      g_autofree char *options = g_strdup_printf ("size=%s,mode=1777", size);
      if (unshare (CLONE_NEWNS) != 0
          || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0
          || mount ("tmpfs", "/dev/shm", "tmpfs", 0, options) != 0)
        _exit (77);
      body ();
      _exit (0);
    }
  int status;
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    {
      test_skip_unless_strict ("no private mount namespace here");
      return;
    }
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
}

/* --- 1. a full /dev/shm ---------------------------------------------------- */

/* Threads that find no memory for their ring are counted without a slot;
 * the game lives on, a second attach reads it, and once space is back the
 * threads get their rings at the next attach. */
static void
full_shm_body_threads (const char *threads,
                       const char *unslotted)
{
  GPid game = start_game (threads);
  wait_segment (game);
  fill_shm ("/dev/shm/junk");

  for (int attach = 0; attach < 2; attach++)
    {
      g_auto (TestCliRun) r = { 0 };
      g_autofree char *pid = g_strdup_printf ("%d", game);
      const char *args[] = { "report", pid, "--duration", "0.3", NULL };
      test_cli_run (&r, args);
      if (r.status != 0)
        g_error ("attach %d: mach6 report says %d: %s", attach + 1, r.status, r.err);
      g_autofree char *want = g_strdup_printf ("%s threads without a slot", unslotted);
      if (strstr (r.out, want) == NULL)
        g_error ("attach %d: not \"%s\" in:\n%s", attach + 1, want, r.out);
      g_assert_true (game_runs (game));
    }

  unlink ("/dev/shm/junk");
  {
    g_auto (TestCliRun) r = { 0 };
    g_autofree char *pid = g_strdup_printf ("%d", game);
    const char *args[] = { "report", pid, "--duration", "0.3", NULL };
    test_cli_run (&r, args);
    g_assert_cmpint (r.status, ==, 0);
    if (strstr (r.out, "“main”") == NULL || strstr (r.out, "  physics ") == NULL)
      g_error ("with space again, no rings:\n%s", r.out);
  }
  g_assert_true (game_runs (game));
  stop_game (game);
}

static void
full_shm_body_3 (void)
{
  full_shm_body_threads ("2", "3");
}

static void
full_shm_body_1 (void)
{
  full_shm_body_threads ("0", "1");
}

static void
test_full_shm_threads (void)
{
  if (getuid () != 0)
    {
      test_skip_unless_strict ("needs root for a private /dev/shm");
      return;
    }
  in_private_shm ("4m", full_shm_body_3);
}

static void
test_full_shm_single_thread (void)
{
  if (getuid () != 0)
    {
      test_skip_unless_strict ("needs root for a private /dev/shm");
      return;
    }
  in_private_shm ("4m", full_shm_body_1);
}

/* --- 7. a segment planted by another user --------------------------------- */

/* A plausible segment of ours at @name, owned by @owner: a filled control
 * page naming the process "forged". */
static void
plant_segment (const char *name,
               uid_t       owner)
{
  gsize size = MACH6_CONTROL_SIZE + 4096 + 64 * 1024;
  int fd = shm_open (name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_no_errno (ftruncate (fd, (off_t) size));
  Mach6Control *c = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  g_assert_true (c != MAP_FAILED);
  c->abi_version = MACH6_ABI_VERSION;
  c->control_size = MACH6_CONTROL_SIZE;
  c->segment_size = size;
  c->pid = getpid ();
  c->state = MACH6_PROCESS_ALIVE;
  strcpy (c->process_name, "forged");
  c->clock.kind = MACH6_CLOCK_MONOTONIC;
  c->clock.tick1 = 1;
  c->clock.ns1 = 1;
  c->label_offset = MACH6_CONTROL_SIZE;
  c->label_capacity = 4096;
  c->threads_offset = MACH6_CONTROL_SIZE + 4096;
  c->max_threads = 1;
  c->ring_capacity = 1024;
  c->thread_stride = sizeof (Mach6ThreadHeader) + 1024 * sizeof (Mach6Event);
  c->event_size = sizeof (Mach6Event);
  c->depth_max = MACH6_DEPTH_MAX;
  c->magic = MACH6_MAGIC;
  munmap (c, size);
  g_assert_no_errno (fchown (fd, owner, (gid_t) -1));
  close (fd);
}

/* Root's `report PID` for a pid without a segment (ours, here) must not
 * read /mach6-0-PID or /mach6-0-PID-<hex> that another user made. */
static void
test_planted_segment_refused (void)
{
  if (getuid () != 0)
    {
      test_skip_unless_strict ("needs root to act as two users");
      return;
    }
  g_autofree char *legacy = g_strdup_printf ("/mach6-0-%d", getpid ());
  g_autofree char *current = g_strdup_printf ("/mach6-0-%d-00000000000000aa", getpid ());
  g_autofree char *pid = g_strdup_printf ("%d", getpid ());
  const char *names[] = { legacy, current };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_auto (TestCliRun) r = { 0 };
      const char *args[] = { "report", pid, "--duration", "0.2", NULL };
      shm_unlink (names[i]);
      plant_segment (names[i], nobody_uid ());
      test_cli_run (&r, args);
      shm_unlink (names[i]);
      if (strstr (r.out, "forged") != NULL)
        g_error ("%s of another user was read:\n%s", names[i], r.out);
      g_test_message ("%s: %s", names[i], r.err);
      g_assert_cmpint (r.status, !=, 0);
    }
}

/* --- 12. a planted output folder ------------------------------------------ */

static guint
count_files (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  while (d != NULL && g_dir_read_name (d) != NULL)
    n++;
  return n;
}

/* In a sticky folder everyone may write, another user plants DIR as a
 * link to a folder of theirs: `record --on-hitch -o DIR/` refuses with a
 * sentence and writes nothing there. Through a link of our own it
 * writes. */
static void
test_planted_output_folder (void)
{
  if (getuid () != 0)
    {
      test_skip_unless_strict ("needs root to act as two users");
      return;
    }
  uid_t other = nobody_uid ();
  g_autofree char *shared = test_tmp_dir ();
  g_autofree char *theirs = g_build_filename (shared, "theirs", NULL);
  g_autofree char *planted = g_build_filename (shared, "caps", NULL);
  g_autofree char *mine = g_build_filename (shared, "mine", NULL);
  g_autofree char *my_link = g_build_filename (shared, "my-caps", NULL);
  g_assert_no_errno (chmod (shared, 01777));

  pid_t child = fork ();
  if (child == 0)
    {
      if (setgid (other) != 0 || setuid (other) != 0 || mkdir (theirs, 0777) != 0
          || symlink (theirs, planted) != 0)
        _exit (1);
      _exit (0);
    }
  int status;
  waitpid (child, &status, 0);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  g_assert_no_errno (mkdir (mine, 0700));
  g_assert_no_errno (symlink (mine, my_link));

  GPid game = start_game ("0");
  wait_segment (game);
  g_autofree char *pid = g_strdup_printf ("%d", game);
  {
    g_autofree char *out = g_strconcat (planted, "/", NULL);
    const char *args[] = { "record", pid, "--on-hitch", "10ms", "--keep", "0.2s", "--after", "0.1s",
                           "--duration", "1", "-o", out, NULL };
    g_auto (TestCliRun) r = { 0 };
    test_cli_run (&r, args);
    g_test_message ("%s", r.err);
    g_assert_cmpuint (count_files (theirs), ==, 0);
    g_assert_cmpint (r.status, !=, 0);
    g_assert_nonnull (strstr (r.err, "symbolic link that uid"));
  }
  {
    g_autofree char *out = g_strconcat (my_link, "/", NULL);
    const char *args[] = { "record", pid, "--on-hitch", "10ms", "--keep", "0.2s", "--after", "0.1s",
                           "--duration", "1", "-o", out, NULL };
    g_auto (TestCliRun) r = { 0 };
    test_cli_run (&r, args);
    if (r.status != 0)
      g_error ("through our own link: %s", r.err);
    g_assert_cmpuint (count_files (mine), >, 0);
  }
  stop_game (game);
  unlink (planted);
  unlink (my_link);
  test_rm_dir (theirs);
  test_rm_dir (mine);
  g_rmdir (shared);
}

/* --- 2. junk in /dev/shm --------------------------------------------------- */

/* 20,000 neighbours' files and dead segments of ours in /dev/shm: the
 * game's own thread (its first mark) never reads the folder; the prune
 * runs on a thread of its own, and still removes the dead ones. */
static void
junk_body (void)
{
  for (guint i = 0; i < 20000; i++)
    {
      g_autofree char *name = i % 2 == 0 ? g_strdup_printf ("/dev/shm/junk-%u", i)
                                         : g_strdup_printf ("/dev/shm/mach6-%u-%u-%016x", (unsigned) getuid (),
                                                            3000000 + i, i);
      int fd = open (name, O_CREAT | O_WRONLY, 0600);
      g_assert_cmpint (fd, >=, 0);
      close (fd);
    }
  g_autofree char *trace = g_strdup ("/dev/shm/strace.out");
  const char *argv[] = { "strace", "-f", "-qq", "-e", "trace=execve,getdents64", "-o", trace,
                         DEMO_GAME, "--fps", "200", "--frames", "1000", NULL };
  g_autoptr (GError) error = NULL;
  int status = 0;
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (trace, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  /* strace -f writes the tid first on every line; the first line is the
   * game's execve, on its main thread. */
  long main_tid = 0;
  guint on_main = 0, elsewhere = 0;
  g_autoptr (GDir) dir = NULL;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      long tid = strtol (lines[i], NULL, 10);
      if (tid == 0)
        continue;
      if (main_tid == 0)
        main_tid = tid;
      if (strstr (lines[i], "getdents64(") == NULL)
        continue;
      if (tid == main_tid)
        on_main++;
      else
        elsewhere++;
    }
  g_test_message ("getdents64 calls: %u on the game's main thread (tid %ld), %u on others", on_main, main_tid,
                  elsewhere);
  g_assert_cmpuint (on_main, ==, 0);
  g_assert_cmpuint (elsewhere, >, 0);
  guint left = 0;
  dir = g_dir_open ("/dev/shm", 0, NULL);
  for (const char *name; dir != NULL && (name = g_dir_read_name (dir)) != NULL;)
    left += g_str_has_prefix (name, "mach6-");
  g_test_message ("mach6- files left of 10,000 dead: %u", left);
  /* The prune ran (on its own thread, while the game played); whether it
   * finished before the game's end depends on the machine's load under
   * strace: that it keeps at most 4 is reader-counting's test. */
  g_assert_cmpuint (left, <, 10000);
  unlink (trace);
}

static void
test_junk_not_on_game_path (void)
{
  if (getuid () != 0)
    {
      test_skip_unless_strict ("needs root for a private /dev/shm");
      return;
    }
  if (!g_find_program_in_path ("strace"))
    {
      test_skip_unless_strict ("needs strace");
      return;
    }
  in_private_shm ("64m", junk_body);
}

/* `mach6 list` with 20,000 dead or junk segments under our names: the
 * game is listed, the junk summed up in one line, not 20,000. */
static void
list_junk_body (void)
{
  GPid game = start_game ("0");
  wait_segment (game);
  g_usleep (500000);   /* its prune, which would remove what follows, is over */
  for (guint i = 0; i < 20000; i++)
    {
      g_autofree char *name = g_strdup_printf ("/dev/shm/mach6-%u-%u-%016x", (unsigned) getuid (), 3000000 + i, i);
      int fd = open (name, O_CREAT | O_WRONLY, 0600);
      g_assert_cmpint (fd, >=, 0);
      close (fd);
    }
  g_auto (TestCliRun) r = { 0 };
  const char *args[] = { "list", NULL };
  test_cli_run (&r, args);
  g_assert_cmpint (r.status, ==, 0);
  g_auto (GStrv) lines = g_strsplit (r.out, "\n", -1);
  g_autofree char *game_pid = g_strdup_printf ("%-8d demo-game", game);
  g_test_message ("mach6 list: %u lines; the last: %s", g_strv_length (lines),
                  g_strv_length (lines) > 1 ? lines[g_strv_length (lines) - 2] : "");
  g_assert_nonnull (strstr (r.out, game_pid));
  g_assert_cmpuint (g_strv_length (lines), <, 20);
  g_assert_nonnull (strstr (r.out, "and 19990 more segments of ended processes"));
  stop_game (game);
}

static void
test_list_with_junk (void)
{
  if (getuid () != 0)
    {
      test_skip_unless_strict ("needs root for a private /dev/shm");
      return;
    }
  in_private_shm ("64m", list_junk_body);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/edges/full-shm/threads", test_full_shm_threads);
  g_test_add_func ("/edges/full-shm/single-thread", test_full_shm_single_thread);
  g_test_add_func ("/edges/planted-segment", test_planted_segment_refused);
  g_test_add_func ("/edges/planted-output-folder", test_planted_output_folder);
  g_test_add_func ("/edges/junk-not-on-game-path", test_junk_not_on_game_path);
  g_test_add_func ("/edges/list-with-junk", test_list_with_junk);
  return g_test_run ();
}
