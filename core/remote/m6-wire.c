/* SPDX-License-Identifier: MIT */
/* m6-wire.c — frames of the remote protocol (m6-wire.h): a 5-byte header
 * (u32 little-endian body length, u8 type), then the body. */
#include "m6-wire.h"

#include <glib/gi18n.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "m6-pack.h"

#define HEADER 5u

G_DEFINE_QUARK (m6-wire-error-quark, m6_wire_error)

/* Cancelled stays cancelled; a timeout is told apart (the caller knows
 * how long it waited and says so); anything else broke the connection. */
static void
read_failed (const char  *peer,
             GError      *local,
             GError     **error)
{
  if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_propagate_error (error, local);
      return;
    }
  if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_TIMED_OUT, _("%s sent nothing in time: %s"), peer,
                 local->message);
  else
    g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_CLOSED, _("The connection to %s failed: %s"), peer,
                 local->message);
  g_error_free (local);
}

gboolean
m6_wire_read_frame (GInputStream  *in,
                    const char    *peer,
                    gsize          max_body,
                    guint8        *type,
                    GByteArray    *body,
                    GCancellable  *cancellable,
                    GError       **error)
{
  guint8 header[HEADER];
  gsize got = 0;
  g_autoptr (GError) local = NULL;

  g_byte_array_set_size (body, 0);
  if (!g_input_stream_read_all (in, header, HEADER, &got, cancellable, &local))
    {
      read_failed (peer, g_steal_pointer (&local), error);
      return FALSE;
    }
  if (got < HEADER)
    {
      if (got == 0)
        g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_CLOSED,
                     _("%s closed the connection."), peer);
      else
        g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED,
                     _("%s closed the connection in the middle of a message."), peer);
      return FALSE;
    }
  guint32 len = (guint32) header[0] | (guint32) header[1] << 8 | (guint32) header[2] << 16
              | (guint32) header[3] << 24;
  if (len > max_body)
    {
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED,
                   _("%s sent a message of %u bytes, more than the %zu allowed here."),
                   peer, len, max_body);
      return FALSE;
    }
  *type = header[4];
  g_byte_array_set_size (body, len);
  got = 0;
  if (len > 0 && !g_input_stream_read_all (in, body->data, len, &got, cancellable, &local))
    {
      read_failed (peer, g_steal_pointer (&local), error);
      return FALSE;
    }
  if (got < len)
    {
      g_set_error (error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED,
                   _("%s closed the connection in the middle of a message."), peer);
      return FALSE;
    }
  return TRUE;
}

gboolean
m6_wire_write_frame (GOutputStream *out,
                     guint8         type,
                     const guint8  *body,
                     gsize          len,
                     GCancellable  *cancellable,
                     GError       **error)
{
  g_autoptr (GByteArray) buf = g_byte_array_sized_new (HEADER + len);

  m6_wire_begin (buf, type);
  g_byte_array_append (buf, body, len);
  m6_wire_end (buf);
  return g_output_stream_write_all (out, buf->data, buf->len, NULL, cancellable, error);
}

void
m6_wire_begin (GByteArray *buf,
               guint8      type)
{
  guint8 header[HEADER] = { 0, 0, 0, 0, type };

  g_byte_array_set_size (buf, 0);
  g_byte_array_append (buf, header, HEADER);
}

void
m6_wire_end (GByteArray *buf)
{
  guint32 len = buf->len - HEADER;

  buf->data[0] = len & 0xff;
  buf->data[1] = (len >> 8) & 0xff;
  buf->data[2] = (len >> 16) & 0xff;
  buf->data[3] = len >> 24;
}

void
m6_wire_put_uint (GByteArray *buf,
                  guint64     value)
{
  guint8 tmp[10];

  g_byte_array_append (buf, tmp, m6_varint_put (tmp, value));
}

void
m6_wire_put_int (GByteArray *buf,
                 gint64      value)
{
  m6_wire_put_uint (buf, ((guint64) value << 1) ^ (guint64) (value >> 63));
}

void
m6_wire_put_bytes (GByteArray *buf,
                   const char *data,
                   gssize      len)
{
  gsize n = len < 0 ? strlen (data) : (gsize) len;

  n = MIN (n, M6_WIRE_MAX_STRING);
  m6_wire_put_uint (buf, n);
  g_byte_array_append (buf, (const guint8 *) data, n);
}

void
m6_wire_put_error (GByteArray *buf,
                   guint       code,
                   const char *message)
{
  m6_wire_put_uint (buf, code);
  /* Cut between characters, so it stays UTF-8. */
  gsize len = strlen (message);
  if (len > M6_WIRE_MAX_STRING)
    {
      const char *end = g_utf8_find_prev_char (message, message + M6_WIRE_MAX_STRING + 1);
      len = end != NULL ? (gsize) (end - message) : 0;
    }
  m6_wire_put_bytes (buf, message, len);
}

void
m6_wire_reader_init (M6WireReader  *r,
                     const guint8  *data,
                     gsize          len,
                     GError       **error)
{
  *r = (M6WireReader) { data, len, 0, error, FALSE };
}

gboolean
m6_wire_malformed (M6WireReader *r,
                   const char   *what)
{
  if (!r->failed)
    g_set_error (r->error, M6_WIRE_ERROR, M6_WIRE_ERROR_MALFORMED, _("the field “%s” is malformed"), what);
  r->failed = TRUE;
  return FALSE;
}

gboolean
m6_wire_get_uint (M6WireReader *r,
                  const char   *what,
                  guint64       max,
                  guint64      *value)
{
  guint64 v;

  if (r->failed || !m6_varint_get (r->data, r->len, &r->pos, &v) || v > max)
    return m6_wire_malformed (r, what);
  *value = v;
  return TRUE;
}

gboolean
m6_wire_get_int (M6WireReader *r,
                 const char   *what,
                 gint64       *value)
{
  guint64 v;

  if (!m6_wire_get_uint (r, what, G_MAXUINT64, &v))
    return FALSE;
  *value = (gint64) ((v >> 1) ^ (guint64) -(gint64) (v & 1));
  return TRUE;
}

gboolean
m6_wire_get_string (M6WireReader  *r,
                    const char    *what,
                    gboolean       utf8,
                    char         **value)
{
  guint64 n;

  if (!m6_wire_get_uint (r, what, M6_WIRE_MAX_STRING, &n))
    return FALSE;
  if (n > r->len - r->pos)
    return m6_wire_malformed (r, what);
  const char *s = (const char *) r->data + r->pos;
  if (memchr (s, 0, n) != NULL || (utf8 && !g_utf8_validate (s, n, NULL)))
    return m6_wire_malformed (r, what);
  *value = g_strndup (s, n);
  r->pos += n;
  return TRUE;
}

gboolean
m6_wire_finish (M6WireReader *r,
                const char   *what)
{
  if (r->failed)
    return FALSE;
  if (r->pos != r->len)
    return m6_wire_malformed (r, what);
  return TRUE;
}

gboolean
m6_wire_parse_hello (const guint8  *body,
                     gsize          len,
                     guint64       *version,
                     char         **token,
                     GError       **error)
{
  g_autofree char *magic = NULL;
  g_autofree char *got = NULL;
  M6WireReader r;

  m6_wire_reader_init (&r, body, len, error);
  if (!m6_wire_get_string (&r, "magic", TRUE, &magic))
    return FALSE;
  if (strcmp (magic, M6_WIRE_MAGIC) != 0)
    return m6_wire_malformed (&r, "magic");
  if (!m6_wire_get_uint (&r, "version", G_MAXUINT32, version) || !m6_wire_get_string (&r, "token", TRUE, &got)
      || !m6_wire_finish (&r, "hello"))
    return FALSE;
  *token = g_steal_pointer (&got);
  return TRUE;
}

gboolean
m6_wire_parse_attach (const guint8  *body,
                      gsize          len,
                      gint          *pid,
                      GError       **error)
{
  M6WireReader r;
  guint64 v = 0;

  m6_wire_reader_init (&r, body, len, error);
  if (!m6_wire_get_uint (&r, "pid", G_MAXINT32, &v) || !m6_wire_finish (&r, "attach"))
    return FALSE;
  *pid = (gint) v;
  return TRUE;
}

void
m6_wire_set_keepalive (GSocket *socket)
{
  g_socket_set_keepalive (socket, TRUE);
  /* The kernel's defaults wait two hours before the first probe. */
  g_socket_set_option (socket, IPPROTO_TCP, TCP_KEEPIDLE, 30, NULL);
  g_socket_set_option (socket, IPPROTO_TCP, TCP_KEEPINTVL, 10, NULL);
  g_socket_set_option (socket, IPPROTO_TCP, TCP_KEEPCNT, 3, NULL);
}
