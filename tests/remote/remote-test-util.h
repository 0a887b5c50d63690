/* SPDX-License-Identifier: MIT */
/* remote-test-util.h — a real `mach6 serve --listen` process for the
 * remote tests, and raw TLS connections to talk to it byte by byte. */
#pragma once

#include <gio/gio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "m6-wire.h"

typedef struct
{
  GPid   pid;
  int    out_fd;
  FILE  *out;
  guint  port;
  char  *fingerprint;
  char  *token;
  char  *address;   /* "127.0.0.1:PORT" */
  char  *config;    /* its XDG_CONFIG_HOME */
} TestServe;

/* A serve outlives no test that aborts. */
static inline void
test_serve_child_setup (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* Start `mach6 serve --listen 127.0.0.1:0` with @config as its
 * XDG_CONFIG_HOME and read what it prints: port, fingerprint, token. */
static inline TestServe *
test_serve_start_args (const char        *config,
                       const char *const *env,
                       const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) MACH6_CLI);
  g_ptr_array_add (argv, (gpointer) "serve");
  g_ptr_array_add (argv, (gpointer) "--listen");
  g_ptr_array_add (argv, (gpointer) "127.0.0.1:0");
  for (guint i = 0; args != NULL && args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "XDG_CONFIG_HOME", config, TRUE);
  g_autoptr (GError) error = NULL;
  TestServe *s = g_new0 (TestServe, 1);
  char line[512];

  envp = g_environ_setenv (envp, "LANGUAGE", "C", TRUE);
  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    {
      g_auto (GStrv) kv = g_strsplit (env[i], "=", 2);
      envp = g_environ_setenv (envp, kv[0], kv[1], TRUE);
    }
  s->config = g_strdup (config);
  g_spawn_async_with_pipes (NULL, (char **) argv->pdata, envp, G_SPAWN_DO_NOT_REAP_CHILD, test_serve_child_setup, NULL, &s->pid, NULL,
                            &s->out_fd, NULL, &error);
  g_assert_no_error (error);
  s->out = fdopen (s->out_fd, "r");
  /* Blocking reads: a serve that fails exits, and the read sees EOF. */
  while (s->token == NULL && fgets (line, sizeof line, s->out) != NULL)
    {
      g_strchomp (line);
      const char *p;
      if ((p = strstr (line, "127.0.0.1:")) != NULL)
        s->port = (guint) g_ascii_strtoull (p + strlen ("127.0.0.1:"), NULL, 10);
      else if (g_str_has_prefix (line, "Certificate fingerprint (SHA-256): "))
        s->fingerprint = g_strdup (line + strlen ("Certificate fingerprint (SHA-256): "));
      else if (g_str_has_prefix (line, "Token: "))
        s->token = g_strdup (line + strlen ("Token: "));
    }
  g_assert_cmpuint (s->port, >, 0);
  g_assert_nonnull (s->fingerprint);
  g_assert_nonnull (s->token);
  s->address = g_strdup_printf ("127.0.0.1:%u", s->port);
  return s;
}

static inline TestServe *
test_serve_start (const char        *config,
                  const char *const *env)
{
  return test_serve_start_args (config, env, NULL);
}

static inline gboolean
test_serve_alive (TestServe *s)
{
  int status;
  return waitpid (s->pid, &status, WNOHANG) == 0;
}

static inline void
test_serve_free (TestServe *s)
{
  if (s == NULL)
    return;
  if (s->pid > 0)
    {
      int status;
      kill (s->pid, SIGTERM);
      for (int i = 0; i < 2000 && waitpid (s->pid, &status, WNOHANG) == 0; i++)
        g_usleep (5000);
      if (kill (s->pid, 0) == 0)
        {
          kill (s->pid, SIGKILL);
          waitpid (s->pid, &status, 0);
        }
    }
  if (s->out != NULL)
    fclose (s->out);
  g_free (s->fingerprint);
  g_free (s->token);
  g_free (s->address);
  g_free (s->config);
  g_free (s);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestServe, test_serve_free)

static inline gboolean
test_accept_any (GTlsConnection *c, GTlsCertificate *cert, GTlsCertificateFlags f, gpointer data)
{
  return TRUE;
}

/* A TLS connection to @port that speaks nothing by itself; reads and
 * writes time out after 30 s, so a test never hangs. */
static inline GIOStream *
test_raw_tls (guint port)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocketConnectable) address = g_network_address_new ("127.0.0.1", (guint16) port);

  g_socket_client_set_timeout (client, 30);
  g_autoptr (GSocketConnection) connection = g_socket_client_connect (client, address, NULL, &error);
  g_assert_no_error (error);
  GIOStream *tls = g_tls_client_connection_new (G_IO_STREAM (connection), address, &error);
  g_assert_no_error (error);
  g_signal_connect (tls, "accept-certificate", G_CALLBACK (test_accept_any), NULL);
  g_tls_connection_handshake (G_TLS_CONNECTION (tls), NULL, &error);
  g_assert_no_error (error);
  return tls;
}

static inline void
test_send_hello_version (GIOStream  *tls,
                         const char *token,
                         guint       version)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  g_autoptr (GError) error = NULL;

  m6_wire_put_bytes (buf, M6_WIRE_MAGIC, -1);
  m6_wire_put_uint (buf, version);
  m6_wire_put_bytes (buf, token, -1);
  m6_wire_write_frame (g_io_stream_get_output_stream (tls), M6_MSG_HELLO, buf->data, buf->len, NULL, &error);
  g_assert_no_error (error);
}

static inline void
test_send_hello (GIOStream  *tls,
                 const char *token)
{
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  g_autoptr (GError) error = NULL;

  m6_wire_put_bytes (buf, M6_WIRE_MAGIC, -1);
  m6_wire_put_uint (buf, M6_WIRE_VERSION);
  m6_wire_put_bytes (buf, token, -1);
  m6_wire_write_frame (g_io_stream_get_output_stream (tls), M6_MSG_HELLO, buf->data, buf->len, NULL, &error);
  g_assert_no_error (error);
}

/* Read frames until one of @type (returned TRUE) or the end (FALSE). */
static inline gboolean
test_read_until (GIOStream  *tls,
                 guint8      type,
                 GByteArray *body)
{
  for (;;)
    {
      g_autoptr (GError) error = NULL;
      guint8 got = 0;

      if (!m6_wire_read_frame (g_io_stream_get_input_stream (tls), "server", M6_WIRE_MAX_FRAME, &got, body, NULL,
                               &error))
        return FALSE;
      if (got == type)
        return TRUE;
    }
}

/* Remove @dir and everything under it. */
static inline void
rm_rf (const char *dir)
{
  g_autofree char *quoted = g_shell_quote (dir);
  g_autofree char *cmd = g_strdup_printf ("rm -rf %s", quoted);
  g_assert_cmpint (system (cmd), ==, 0);
}

/* The test process's own XDG_CONFIG_HOME (a fresh temporary folder, which
 * the caller removes with test_client_config_remove), and LANGUAGE=C. */
static inline char *
test_client_config_setup (void)
{
  g_autoptr (GError) error = NULL;
  char *config = g_dir_make_tmp ("mach6-remote-XXXXXX", &error);

  g_assert_no_error (error);
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("LANGUAGE", "C", TRUE);
  return config;
}

static inline void
test_client_config_remove (const char *config)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", config);
  (void) system (cmd);
}
