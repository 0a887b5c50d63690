/* SPDX-License-Identifier: MIT */
/* m6-remote-trust.c — certificates, pins and tokens (m6-remote-trust.h).
 * The certificate is made with GnuTLS, the library glib-networking itself
 * uses, so `serve` needs no openssl binary and no subprocess. */
#include "m6-remote-trust.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

char *
m6_trust_server_dir (void)
{
  return g_build_filename (g_get_user_config_dir (), "mach6", "serve", NULL);
}

char *
m6_trust_known_hosts_path (void)
{
  return g_build_filename (g_get_user_config_dir (), "mach6", "known-hosts", NULL);
}

char *
m6_trust_tokens_path (void)
{
  return g_build_filename (g_get_user_config_dir (), "mach6", "remote-tokens", NULL);
}

static void
random_bytes (guint8 *buf,
              gsize   len)
{
  gsize got = 0;

  while (got < len)
    {
      ssize_t n = getrandom (buf + got, len - got, 0);
      if (n < 0 && errno == EINTR)
        continue;
      g_assert (n > 0);  /* the kernel's generator does not fail after boot */
      got += (gsize) n;
    }
}

char *
m6_trust_new_token (void)
{
  guint8 bytes[32];
  GString *s = g_string_sized_new (65);

  random_bytes (bytes, sizeof bytes);
  for (gsize i = 0; i < sizeof bytes; i++)
    g_string_append_printf (s, "%02x", bytes[i]);
  return g_string_free (s, FALSE);
}

gboolean
m6_trust_token_equal (const char *a,
                      const char *b)
{
  gsize la = strlen (a), lb = strlen (b);
  guint8 diff = la != lb;

  for (gsize i = 0; i < la; i++)
    diff |= (guint8) a[i] ^ (guint8) b[i % MAX (lb, 1)];
  return diff == 0;
}

gboolean
m6_trust_token_check (const char  *token,
                      const char  *what,
                      GError     **error)
{
  guint counts[256] = { 0 };
  gsize len = strlen (token);
  guint distinct = 0, most = 0;

  if (len < 16)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("The token %s is too short: a token needs at least 16 characters."), what);
      return FALSE;
    }
  for (gsize i = 0; i < len; i++)
    {
      guint c = (guint8) token[i];
      distinct += counts[c]++ == 0;
      most = MAX (most, counts[c]);
    }
  if (distinct < 8 || most * 4 > len)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("The token %s is weak: it has %u different characters, and one makes up %u of its %zu; "
                     "leave the token to “mach6 serve”, or make one with “head -c 32 /dev/urandom | base64”."),
                   what, distinct, most, len);
      return FALSE;
    }
  return TRUE;
}

char *
m6_trust_read_token_file (const char  *path,
                          GError     **error)
{
  g_autofree char *contents = NULL;
  g_autofree char *what = NULL;
  char buf[4096];
  struct stat st;
  ssize_t n;
  int fd = g_open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0);

  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Could not read the token file “%s”: %s"),
                   path, g_strerror (saved));
      return NULL;
    }
  /* A token others may read is not a secret; one they may write is theirs. */
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || (st.st_uid != getuid () && st.st_uid != 0)
      || (st.st_mode & 077) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   _("The token file “%s” may be read or written by other users (owner uid %u, mode %03o); "
                     "it must be a file of yours with mode 600: run “chmod 600 %s”."),
                   path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 0777), path);
      close (fd);
      return NULL;
    }
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Could not read the token file “%s”: %s"),
                   path, g_strerror (saved));
      return NULL;
    }
  buf[n] = '\0';
  contents = g_strdup (buf);
  memset (buf, 0, sizeof buf);
  char *nl = strchr (contents, '\n');
  if (nl != NULL)
    *nl = '\0';
  g_strstrip (contents);
  what = g_strdup_printf (_("in “%s”"), path);
  if (!g_utf8_validate (contents, -1, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("The token in “%s” is not UTF-8 text."), path);
      return NULL;
    }
  if (!m6_trust_token_check (contents, what, error))
    return NULL;
  return g_steal_pointer (&contents);
}

/* --- the server's certificate ------------------------------------------- */

static gboolean
gnutls_failed (int         rc,
               const char *dir,
               GError    **error)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
               _("Could not create the server certificate in “%s”: %s"), dir, gnutls_strerror (rc));
  return FALSE;
}

static gboolean
create_identity (const char  *dir,
                 const char  *cert_path,
                 const char  *key_path,
                 GError     **error)
{
  gnutls_x509_privkey_t key = NULL;
  gnutls_x509_crt_t crt = NULL;
  gnutls_datum_t cert_pem = { NULL, 0 }, key_pem = { NULL, 0 };
  guint8 serial[16];
  time_t now = time (NULL);
  gboolean ok = FALSE;
  int rc;

  random_bytes (serial, sizeof serial);
  serial[0] &= 0x7f;  /* a positive serial */
  if ((rc = gnutls_x509_privkey_init (&key)) < 0
      || (rc = gnutls_x509_privkey_generate (key, GNUTLS_PK_ECDSA,
                                             GNUTLS_CURVE_TO_BITS (GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0
      || (rc = gnutls_x509_crt_init (&crt)) < 0
      || (rc = gnutls_x509_crt_set_version (crt, 3)) < 0
      || (rc = gnutls_x509_crt_set_serial (crt, serial, sizeof serial)) < 0
      || (rc = gnutls_x509_crt_set_activation_time (crt, now - 24 * 3600)) < 0
      || (rc = gnutls_x509_crt_set_expiration_time (crt, now + 10 * 365 * 24 * 3600L)) < 0
      || (rc = gnutls_x509_crt_set_dn_by_oid (crt, GNUTLS_OID_X520_COMMON_NAME, 0,
                                              "mach6 serve", strlen ("mach6 serve"))) < 0
      || (rc = gnutls_x509_crt_set_key (crt, key)) < 0
      || (rc = gnutls_x509_crt_set_key_usage (crt, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0
      || (rc = gnutls_x509_crt_sign2 (crt, crt, key, GNUTLS_DIG_SHA256, 0)) < 0
      || (rc = gnutls_x509_crt_export2 (crt, GNUTLS_X509_FMT_PEM, &cert_pem)) < 0
      || (rc = gnutls_x509_privkey_export2_pkcs8 (key, GNUTLS_X509_FMT_PEM, NULL,
                                                  GNUTLS_PKCS_PLAIN, &key_pem)) < 0)
    {
      gnutls_failed (rc, dir, error);
      goto out;
    }
  /* The key first: a certificate without its key is never left behind. */
  if (!g_file_set_contents_full (key_path, (const char *) key_pem.data, key_pem.size,
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0600, error)
      || !g_file_set_contents_full (cert_path, (const char *) cert_pem.data, cert_pem.size,
                                    G_FILE_SET_CONTENTS_CONSISTENT, 0600, error))
    goto out;
  ok = TRUE;

out:
  gnutls_free (cert_pem.data);
  if (key_pem.data != NULL)
    {
      memset (key_pem.data, 0, key_pem.size);
      gnutls_free (key_pem.data);
    }
  if (crt != NULL)
    gnutls_x509_crt_deinit (crt);
  if (key != NULL)
    gnutls_x509_privkey_deinit (key);
  return ok;
}

static gboolean
identity_item_safe (const char  *path,
                    gboolean     folder,
                    GError     **error)
{
  struct stat st;

  if (lstat (path, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Could not read “%s”: %s"),
                   path, g_strerror (saved));
      return FALSE;
    }
  if ((folder ? !S_ISDIR (st.st_mode) : !S_ISREG (st.st_mode))
      || (st.st_uid != getuid () && st.st_uid != 0) || (st.st_mode & 022) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   folder ? _("The server's certificate folder “%s” is not a folder of yours that only you may write "
                              "(owner uid %u, mode %03o): another user could plant a certificate and key there. "
                              "Run “chmod 700 %s” if it is yours, or remove it to make a new one.")
                          : _("The server's certificate file “%s” is not a file of yours that only you may write "
                              "(owner uid %u, mode %03o): another user could have planted it. "
                              "Run “chmod 600 %s” if it is yours, or remove it to make a new one."),
                   path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 0777), path);
      return FALSE;
    }
  return TRUE;
}

GTlsCertificate *
m6_trust_server_identity (const char  *dir,
                          GError     **error)
{
  g_autofree char *cert_path = g_build_filename (dir, "cert.pem", NULL);
  g_autofree char *key_path = g_build_filename (dir, "key.pem", NULL);
  GStatBuf st;

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   _("Could not create the folder “%s”: %s"), dir, g_strerror (saved));
      return NULL;
    }
  /* Whoever may write the folder or the files may replace the server's
   * identity with theirs: the folder and both files must be ours (or
   * root's), and writable by nobody else. */
  if (!identity_item_safe (dir, TRUE, error))
    return NULL;
  if (!g_file_test (key_path, G_FILE_TEST_EXISTS) || !g_file_test (cert_path, G_FILE_TEST_EXISTS))
    if (!create_identity (dir, cert_path, key_path, error))
      return NULL;
  if (!identity_item_safe (cert_path, FALSE, error) || !identity_item_safe (key_path, FALSE, error))
    return NULL;
  /* A key others may read is not a secret any more. */
  if (g_stat (key_path, &st) == 0 && (st.st_mode & 077) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   _("The server key “%s” may be read by other users (mode %03o); "
                     "run “chmod 600 %s” or remove it to make a new one."),
                   key_path, (unsigned) (st.st_mode & 0777), key_path);
      return NULL;
    }
  g_autoptr (GError) local = NULL;
  GTlsCertificate *cert = g_tls_certificate_new_from_files (cert_path, key_path, &local);
  if (cert == NULL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 _("Could not load the server certificate “%s”: %s"), cert_path, local->message);
  return cert;
}

char *
m6_trust_fingerprint (GTlsCertificate *certificate)
{
  g_autoptr (GByteArray) der = NULL;
  guint8 digest[32];
  gsize len = sizeof digest;
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  GString *s = g_string_sized_new (96);

  g_object_get (certificate, "certificate", &der, NULL);
  g_checksum_update (sum, der->data, der->len);
  g_checksum_get_digest (sum, digest, &len);
  for (gsize i = 0; i < len; i++)
    g_string_append_printf (s, i == 0 ? "%02x" : ":%02x", digest[i]);
  return g_string_free (s, FALSE);
}

/* --- the client's pins and tokens --------------------------------------- */

/* The second and third fields of the line of @path for @key, or FALSE. */
static gboolean
lookup_line (const char  *path,
             const char  *key,
             char       **value,
             char       **extra)
{
  g_autofree char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return FALSE;
  g_auto (GStrv) lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit_set (lines[i], " \t", 4);
      if (f[0] != NULL && f[1] != NULL && strcmp (f[0], key) == 0)
        {
          *value = g_strdup (f[1]);
          if (extra != NULL)
            *extra = g_strdup (f[2] != NULL ? f[2] : "?");
          return TRUE;
        }
    }
  return FALSE;
}

/* Replace (or add) the line for @key, keeping the others; 0600. */
static gboolean
store_line (const char  *path,
            const char  *key,
            const char  *line,
            GError     **error)
{
  g_autofree char *contents = NULL;
  g_autofree char *dir = g_path_get_dirname (path);
  GString *out = g_string_new (NULL);

  g_mkdir_with_parents (dir, 0700);
  if (g_file_get_contents (path, &contents, NULL, NULL))
    {
      g_auto (GStrv) lines = g_strsplit (contents, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        {
          g_auto (GStrv) f = g_strsplit_set (lines[i], " \t", 2);
          if (lines[i][0] == '\0' || (f[0] != NULL && strcmp (f[0], key) == 0))
            continue;
          g_string_append_printf (out, "%s\n", lines[i]);
        }
    }
  g_string_append_printf (out, "%s\n", line);
  gboolean ok = g_file_set_contents_full (path, out->str, out->len, G_FILE_SET_CONTENTS_CONSISTENT,
                                          0600, error);
  g_string_free (out, TRUE);
  return ok;
}

gboolean
m6_trust_check_pin (const char  *known_hosts,
                    const char  *host_port,
                    const char  *fingerprint,
                    gboolean    *new_pin,
                    GError     **error)
{
  g_autofree char *pinned = NULL, *date = NULL;

  *new_pin = FALSE;
  if (!lookup_line (known_hosts, host_port, &pinned, &date))
    {
      *new_pin = TRUE;
      return TRUE;
    }
  if (g_ascii_strcasecmp (pinned, fingerprint) == 0)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
               _("%s presented a different certificate (SHA-256 %s) than the one pinned in %s on %s "
                 "(SHA-256 %s); if the server was reinstalled or its certificate renewed, remove that "
                 "line; otherwise someone may be intercepting the connection."),
               host_port, fingerprint, known_hosts, date, pinned);
  return FALSE;
}

gboolean
m6_trust_add_pin (const char  *known_hosts,
                  const char  *host_port,
                  const char  *fingerprint,
                  GError     **error)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *date = g_date_time_format (now, "%Y-%m-%d");
  g_autofree char *line = g_strdup_printf ("%s %s %s", host_port, fingerprint, date);

  return store_line (known_hosts, host_port, line, error);
}

char *
m6_trust_lookup_token (const char *path,
                       const char *host_port)
{
  char *token = NULL;

  if (!lookup_line (path, host_port, &token, NULL))
    return NULL;
  return token;
}

gboolean
m6_trust_store_token (const char  *path,
                      const char  *host_port,
                      const char  *token,
                      GError     **error)
{
  g_autofree char *line = g_strdup_printf ("%s %s", host_port, token);

  return store_line (path, host_port, line, error);
}
