/* SPDX-License-Identifier: MIT */
/* test-serve-edges.c — `mach6 serve` against neighbours and peers (issue
 * 26), real processes over real TLS on loopback: wrong tokens are limited
 * per source address, with a sentence in serve's log; token files others
 * may read and weak tokens are refused; a certificate folder or files
 * another user may write are refused; the CLI shows the fingerprint on
 * first connection; half handshakes from one address do not keep a client
 * with the token from another out. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "../test-strict.h"
#include "m6-remote-client.h"
#include "reader-test-util.h"
#include "remote-test-util.h"

static uid_t
nobody_uid (void)
{
  struct passwd *pw = getpwnam ("nobody");
  return pw != NULL ? pw->pw_uid : 65534;
}

/* `mach6 serve --listen 127.0.0.1:0 ARGS` with XDG_CONFIG_HOME @config,
 * its stderr into @log; NULL if it exits before printing its token. */
static TestServe *
serve_start_logged (const char        *config,
                    const char        *log,
                    const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "XDG_CONFIG_HOME", config, TRUE);
  g_autoptr (GError) error = NULL;
  TestServe *s = g_new0 (TestServe, 1);
  char line[512];

  envp = g_environ_setenv (envp, "LANGUAGE", "C", TRUE);
  g_ptr_array_add (argv, (gpointer) "/bin/sh");
  g_ptr_array_add (argv, (gpointer) "-c");
  g_ptr_array_add (argv, (gpointer) "log=$1; shift; exec \"$@\" 2>\"$log\"");
  g_ptr_array_add (argv, (gpointer) "sh");
  g_ptr_array_add (argv, (gpointer) log);
  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  g_ptr_array_add (argv, (gpointer) "serve");
  g_ptr_array_add (argv, (gpointer) "--listen");
  g_ptr_array_add (argv, (gpointer) "127.0.0.1:0");
  for (guint i = 0; args != NULL && args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  s->config = g_strdup (config);
  g_spawn_async_with_pipes (NULL, (char **) argv->pdata, envp, G_SPAWN_DO_NOT_REAP_CHILD, test_serve_child_setup,
                            NULL, &s->pid, NULL, &s->out_fd, NULL, &error);
  g_assert_no_error (error);
  s->out = fdopen (s->out_fd, "r");
  gboolean token = FALSE;
  while (!token && fgets (line, sizeof line, s->out) != NULL)
    {
      const char *p;
      g_strchomp (line);
      if ((p = strstr (line, "127.0.0.1:")) != NULL)
        s->port = (guint) g_ascii_strtoull (p + strlen ("127.0.0.1:"), NULL, 10);
      else if (g_str_has_prefix (line, "Certificate fingerprint (SHA-256): "))
        s->fingerprint = g_strdup (line + strlen ("Certificate fingerprint (SHA-256): "));
      else if (g_str_has_prefix (line, "Token: "))
        {
          s->token = g_strdup (line + strlen ("Token: "));
          token = TRUE;
        }
    }
  if (!token)
    {
      int status;
      waitpid (s->pid, &status, 0);
      s->pid = 0;
      test_serve_free (s);
      return NULL;
    }
  s->address = g_strdup_printf ("127.0.0.1:%u", s->port);
  return s;
}

static char *
read_log (const char *log)
{
  char *text = NULL;
  g_file_get_contents (log, &text, NULL, NULL);
  return text != NULL ? text : g_strdup ("");
}

typedef struct
{
  int   status;
  char *out;
  char *err;
} CliRun;

static void
cli_run_clear (CliRun *r)
{
  g_free (r->out);
  g_free (r->err);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CliRun, cli_run_clear)

/* The CLI with XDG_CONFIG_HOME @config. */
static void
run_cli (CliRun            *r,
         const char        *config,
         const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "XDG_CONFIG_HOME", config, TRUE);
  int wait_status = 0;

  env = g_environ_setenv (env, "LANGUAGE", "C", TRUE);
  env = g_environ_unsetenv (env, "MACH6_TOKEN");
  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err, &wait_status,
                &error);
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
}

static char *
tmp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("mach6-edges-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

/* --- 9. token guessing -------------------------------------------------- */

/* Six wrong tokens at once from 127.0.0.1: the fifth locks the address
 * out, so the right token is not even checked from there afterwards. */
static void
test_token_guessing_limited (void)
{
  g_autofree char *dir = tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *client_config = g_build_filename (dir, "client", NULL);
  g_autofree char *log = g_build_filename (dir, "serve.log", NULL);
  g_autoptr (TestServe) serve = serve_start_logged (server_config, log, NULL);
  g_assert_nonnull (serve);

  GPid guessers[6];
  for (guint i = 0; i < G_N_ELEMENTS (guessers); i++)
    {
      g_autofree char *guess = g_strdup_printf ("Wr0ngT0ken-%u-abcdefgh", i);
      const char *argv[] = { MACH6_CLI, "list", "--remote", serve->address, "--token", guess, NULL };
      g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "XDG_CONFIG_HOME", client_config, TRUE);
      g_autoptr (GError) error = NULL;
      g_spawn_async (NULL, (char **) argv, env,
                     G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                     &guessers[i], &error);
      g_assert_no_error (error);
    }
  for (guint i = 0; i < G_N_ELEMENTS (guessers); i++)
    waitpid (guessers[i], NULL, 0);

  g_auto (CliRun) r = { 0 };
  const char *args[] = { "list", "--remote", serve->address, "--token", serve->token, NULL };
  run_cli (&r, client_config, args);
  g_test_message ("the right token after 6 wrong ones: %s", r.err);
  g_assert_cmpint (r.status, !=, 0);
  g_assert_nonnull (strstr (r.err, "Too many wrong tokens came from your address"));
  g_autofree char *said = read_log (log);
  if (strstr (said, "wrong tokens from 127.0.0.1 within 60 seconds") == NULL)
    g_error ("serve's log does not say so:\n%s", said);
  g_assert_true (test_serve_alive (serve));
  rm_rf (dir);
}

/* --- 9. token files and weak tokens --------------------------------------- */

static void
test_token_file_refused (void)
{
  g_autofree char *dir = tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *file = g_build_filename (dir, "token", NULL);
  g_autofree char *log = g_build_filename (dir, "serve.log", NULL);
  const char *args[] = { "--token-file", file, NULL };
  struct { const char *token; int mode; const char *said; } cases[] = {
    { "6f1c0e2b9a4d8e7f3c5b1a0d9e8f7c6b", 0644, "may be read or written by other users" },
    { "6f1c0e2b9a4d8e7f3c5b1a0d9e8f7c6b", 0620, "may be read or written by other users" },
    { "aaaaaaaaaaaaaaaa", 0600, "is weak" },
    { "abcdabcdabcdabcdabcd", 0600, "is weak" },
    { "6f1c0e2b9a4d8e7f3c5b1a0d9e8f7c6b", 0600, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_assert_true (g_file_set_contents (file, cases[i].token, -1, NULL));
      g_assert_no_errno (chmod (file, (mode_t) cases[i].mode));
      g_autoptr (TestServe) serve = serve_start_logged (server_config, log, args);
      g_autofree char *said = read_log (log);
      g_test_message ("%s, mode %03o: %s", cases[i].token, (unsigned) cases[i].mode, said);
      if (cases[i].said == NULL)
        g_assert_nonnull (serve);
      else
        {
          g_assert_null (serve);
          g_assert_nonnull (strstr (said, cases[i].said));
        }
    }
  rm_rf (dir);
}

/* --- 10. the certificate's folder ----------------------------------------- */

static void
test_identity_folder_refused (void)
{
  if (getuid () != 0)
    {
      test_skip_unless_strict ("needs root to act as two users");
      return;
    }
  g_autofree char *dir = tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *identity = g_build_filename (server_config, "mach6", "serve", NULL);
  g_autofree char *key = g_build_filename (identity, "key.pem", NULL);
  g_autofree char *cert = g_build_filename (identity, "cert.pem", NULL);
  g_autofree char *log = g_build_filename (dir, "serve.log", NULL);

  /* Made once, as it should be. */
  {
    g_autoptr (TestServe) serve = serve_start_logged (server_config, log, NULL);
    g_assert_nonnull (serve);
  }
  struct { const char *what; const char *path; int mode; uid_t owner; const char *said; } cases[] = {
    { "folder writable by all", identity, 0777, 0, "certificate folder" },
    { "folder of another user", identity, 0700, nobody_uid (), "certificate folder" },
    { "certificate of another user", cert, 0644, nobody_uid (), "certificate file" },
    { "certificate writable by the group", cert, 0664, 0, "certificate file" },
    { "key of another user", key, 0600, nobody_uid (), "certificate file" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      struct stat before;
      g_assert_no_errno (stat (cases[i].path, &before));
      g_assert_no_errno (chmod (cases[i].path, (mode_t) cases[i].mode));
      g_assert_no_errno (chown (cases[i].path, cases[i].owner, (gid_t) -1));
      g_autoptr (TestServe) serve = serve_start_logged (server_config, log, NULL);
      g_autofree char *said = read_log (log);
      g_test_message ("%s: %s", cases[i].what, said);
      g_assert_null (serve);
      g_assert_nonnull (strstr (said, cases[i].said));
      g_assert_nonnull (strstr (said, "another user"));
      g_assert_no_errno (chmod (cases[i].path, before.st_mode & 07777));
      g_assert_no_errno (chown (cases[i].path, before.st_uid, (gid_t) -1));
    }
  /* Put right, it serves again. */
  g_autoptr (TestServe) serve = serve_start_logged (server_config, log, NULL);
  g_assert_nonnull (serve);
  rm_rf (dir);
}

/* --- 11. the fingerprint on first connection ----------------------------- */

static void
test_cli_shows_fingerprint (void)
{
  g_autofree char *dir = tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *client_config = g_build_filename (dir, "client", NULL);
  g_autofree char *log = g_build_filename (dir, "serve.log", NULL);
  g_autoptr (TestServe) serve = serve_start_logged (server_config, log, NULL);
  g_assert_nonnull (serve);
  const char *args[] = { "list", "--remote", serve->address, "--token", serve->token, NULL };

  g_auto (CliRun) first = { 0 };
  run_cli (&first, client_config, args);
  g_test_message ("first: %s", first.err);
  g_assert_cmpint (first.status, ==, 0);
  g_autofree char *want = g_strdup_printf ("First connection to %s: its certificate's fingerprint is SHA-256 %s.",
                                           serve->address, serve->fingerprint);
  g_assert_nonnull (strstr (first.err, want));
  g_assert_nonnull (strstr (first.err, "“mach6 serve” printed"));

  g_auto (CliRun) second = { 0 };
  run_cli (&second, client_config, args);
  g_assert_cmpint (second.status, ==, 0);
  g_assert_null (strstr (second.err, "First connection"));
  rm_rf (dir);
}

/* --- 8. half handshakes --------------------------------------------------- */

typedef struct
{
  guint         port;
  volatile gint stop;
  guint         opened;
} Flood;

/* From 127.0.0.2: connections that send the first 5 bytes of a TLS
 * record (a ClientHello of 512 bytes announced) and nothing more, one
 * every 20 ms, each held until the flood stops. */
static gpointer
flood_main (gpointer data)
{
  Flood *f = data;
  GArray *fds = g_array_new (FALSE, FALSE, sizeof (int));
  static const guint8 half[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01 };

  while (!g_atomic_int_get (&f->stop))
    {
      int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      struct sockaddr_in from = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (0x7f000002) };
      struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons ((guint16) f->port),
                                .sin_addr.s_addr = htonl (0x7f000001) };
      if (fd >= 0 && bind (fd, (struct sockaddr *) &from, sizeof from) == 0
          && connect (fd, (struct sockaddr *) &to, sizeof to) == 0
          && write (fd, half, sizeof half) == (ssize_t) sizeof half)
        {
          g_array_append_val (fds, fd);
          f->opened++;
        }
      else if (fd >= 0)
        close (fd);
      g_usleep (20000);
    }
  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, int, i));
  g_array_unref (fds);
  return NULL;
}

static gsize
rss_kb (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", pid);
  g_autofree char *text = NULL;
  const char *p;

  if (!g_file_get_contents (path, &text, NULL, NULL) || (p = strstr (text, "VmRSS:")) == NULL)
    return 0;
  return (gsize) g_ascii_strtoull (p + strlen ("VmRSS:"), NULL, 10);
}

/* A client with the token, from 127.0.0.1, connects and lists 8 times
 * while 127.0.0.2 floods serve with half handshakes: every time. */
static void
test_half_handshakes_bounded (void)
{
  g_autofree char *dir = tmp_dir ();
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autofree char *client_config = g_build_filename (dir, "client", NULL);
  g_autofree char *known = g_build_filename (client_config, "known-hosts", NULL);
  g_autofree char *log = g_build_filename (dir, "serve.log", NULL);
  g_autoptr (TestServe) serve = serve_start_logged (server_config, log, NULL);
  g_assert_nonnull (serve);
  g_assert_no_errno (g_mkdir_with_parents (client_config, 0700));
  g_setenv ("XDG_CONFIG_HOME", client_config, TRUE);

  gsize rss_before = rss_kb (serve->pid);
  Flood flood = { .port = serve->port };
  GThread *thread = g_thread_new ("flood", flood_main, &flood);
  g_usleep (2 * G_USEC_PER_SEC);   /* 100 half handshakes under way */

  guint ok = 0;
  for (guint i = 0; i < 8; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (M6RemoteClient) client = m6_remote_client_connect (serve->address, serve->token, known, NULL, &error);
      g_autoptr (GPtrArray) procs = client != NULL ? m6_remote_client_list (client, &error) : NULL;
      if (procs != NULL)
        ok++;
      else
        g_test_message ("client %u: %s", i, error->message);
    }
  gsize rss_flood = rss_kb (serve->pid);
  g_atomic_int_set (&flood.stop, 1);
  g_thread_join (thread);
  g_test_message ("%u half handshakes from 127.0.0.2; %u of 8 clients with the token got in; serve's RSS "
                  "%zu kB before, %zu kB during", flood.opened, ok, rss_before, rss_flood);
  g_assert_cmpuint (ok, ==, 8);
  /* Handshakes in progress are bounded, so is their memory (before the
   * bound: 263 MB of RSS here, 26 MB with it). */
  g_assert_cmpuint (rss_flood, <, rss_before + 64 * 1024);
  g_autofree char *said = read_log (log);
  g_assert_nonnull (strstr (said, "connections from 127.0.0.2 wait for their HELLO"));
  g_assert_true (test_serve_alive (serve));
  g_unsetenv ("XDG_CONFIG_HOME");
  rm_rf (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_setenv ("LANGUAGE", "C", TRUE);
  g_unsetenv ("MACH6_TOKEN");
  g_test_add_func ("/remote/edges/token-guessing", test_token_guessing_limited);
  g_test_add_func ("/remote/edges/token-file", test_token_file_refused);
  g_test_add_func ("/remote/edges/identity-folder", test_identity_folder_refused);
  g_test_add_func ("/remote/edges/fingerprint", test_cli_shows_fingerprint);
  g_test_add_func ("/remote/edges/half-handshakes", test_half_handshakes_bounded);
  return g_test_run ();
}
