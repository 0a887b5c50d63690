/* SPDX-License-Identifier: MIT */
/* m6-wire.h — the remote protocol's frames (docs/remote-protocol.md):
 * reading and writing length-prefixed frames on a stream, building
 * bodies, and a bounds-checked cursor to parse them. Both `mach6 serve`
 * and the remote client use it; nothing received is trusted. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define M6_WIRE_ERROR (m6_wire_error_quark ())
GQuark m6_wire_error_quark (void);

/* Error codes, also sent in ERROR frames. */
typedef enum
{
  M6_WIRE_ERROR_MALFORMED = 1,  /* a frame breaks the protocol */
  M6_WIRE_ERROR_VERSION   = 2,  /* no common protocol version */
  M6_WIRE_ERROR_TOKEN     = 3,  /* wrong token */
  M6_WIRE_ERROR_ATTACH    = 4,  /* the process cannot be attached */
  M6_WIRE_ERROR_STATE     = 5,  /* a request out of turn */
  M6_WIRE_ERROR_BUSY      = 6,  /* too many clients */
  M6_WIRE_ERROR_CLOSED    = 7,  /* the peer closed the connection */
  M6_WIRE_ERROR_CERTIFICATE = 8, /* the pinned certificate does not match */
  M6_WIRE_ERROR_TIMED_OUT = 9,  /* the peer sent nothing for the socket's timeout */
} M6WireError;

#define M6_WIRE_VERSION     2u   /* 2: SAMPLES; a server still speaks 1 to a client of 1 */
#define M6_WIRE_VERSION_MIN 1u
#define M6_WIRE_VERSION_SAMPLES 2u
#define M6_WIRE_MAGIC       "mach6-remote"
#define M6_WIRE_MAX_FRAME   (1u << 20)  /* body bytes, after the type */
#define M6_WIRE_MAX_HELLO   4096u       /* before the token is accepted */
#define M6_WIRE_MAX_STRING  4096u
#define M6_WIRE_MAX_PROCESSES 4096u
#define M6_WIRE_MAX_LABELS  4096u       /* per LABELS frame */
#define M6_WIRE_MAX_THREADS 4096u

typedef enum
{
  /* client → server */
  M6_MSG_HELLO     = 0x01,
  M6_MSG_LIST      = 0x02,
  M6_MSG_ATTACH    = 0x03,
  M6_MSG_DETACH    = 0x04,
  /* server → client */
  M6_MSG_WELCOME   = 0x81,
  M6_MSG_PROCESSES = 0x82,
  M6_MSG_ATTACHED  = 0x83,
  M6_MSG_LABELS    = 0x84,
  M6_MSG_THREAD    = 0x85,
  M6_MSG_EVENTS    = 0x86,
  M6_MSG_COUNTS    = 0x87,
  M6_MSG_STATE     = 0x88,
  M6_MSG_END       = 0x89,
  M6_MSG_SAMPLES   = 0x8a,  /* version 2: one sample record (capture types 20-24) */
  M6_MSG_ERROR     = 0xff,
} M6WireType;

/* Read one frame: its type and body (@body is reset, then filled). A
 * frame longer than @max_body, a clean close (G_IO_ERROR_CLOSED... as
 * M6_WIRE_ERROR_CLOSED), the socket's timeout (M6_WIRE_ERROR_TIMED_OUT)
 * or a read error fails with a sentence that names @peer. */
gboolean  m6_wire_read_frame   (GInputStream  *in,
                                const char    *peer,
                                gsize          max_body,
                                guint8        *type,
                                GByteArray    *body,
                                GCancellable  *cancellable,
                                GError       **error);
/* Write one frame (header and body in one write). */
gboolean  m6_wire_write_frame  (GOutputStream *out,
                                guint8         type,
                                const guint8  *body,
                                gsize          len,
                                GCancellable  *cancellable,
                                GError       **error);
/* Start a frame in @buf (room for the header) and finish it: then
 * buf->data/len is ready to write as is. */
void      m6_wire_begin        (GByteArray    *buf,
                                guint8         type);
void      m6_wire_end          (GByteArray    *buf);

void      m6_wire_put_uint     (GByteArray    *buf,
                                guint64        value);
void      m6_wire_put_int      (GByteArray    *buf,
                                gint64         value);
void      m6_wire_put_bytes    (GByteArray    *buf,
                                const char    *data,
                                gssize         len);

/* A cursor over a received body. Every getter fails (FALSE, @error set
 * once, naming @what) on truncation or an out-of-range value; later calls
 * fail too. */
typedef struct
{
  const guint8 *data;
  gsize         len;
  gsize         pos;
  GError      **error;
  gboolean      failed;
} M6WireReader;

void      m6_wire_reader_init  (M6WireReader  *r,
                                const guint8  *data,
                                gsize          len,
                                GError       **error);
gboolean  m6_wire_get_uint     (M6WireReader  *r,
                                const char    *what,
                                guint64        max,
                                guint64       *value);
gboolean  m6_wire_get_int      (M6WireReader  *r,
                                const char    *what,
                                gint64        *value);
/* A string of at most M6_WIRE_MAX_STRING bytes without NUL; @utf8: it
 * must be valid UTF-8. The result is a new NUL-terminated copy. */
gboolean  m6_wire_get_string   (M6WireReader  *r,
                                const char    *what,
                                gboolean       utf8,
                                char         **value);
/* The body must end here. */
gboolean  m6_wire_finish       (M6WireReader  *r,
                                const char    *what);
gboolean  m6_wire_malformed    (M6WireReader  *r,
                                const char    *what);

/* The server's parsers of the client's requests. A HELLO body: the magic
 * must match; @version and @token are returned for the caller to judge. */
gboolean  m6_wire_parse_hello  (const guint8  *body,
                                gsize          len,
                                guint64       *version,
                                char         **token,
                                GError       **error);
gboolean  m6_wire_parse_attach (const guint8  *body,
                                gsize          len,
                                gint          *pid,
                                GError       **error);

/* TCP keepalive on @socket, probing after 30 s of silence every 10 s:
 * a peer whose machine or network vanished is noticed within about a
 * minute, even on a connection where nobody is reading or writing. */
void      m6_wire_set_keepalive (GSocket      *socket);

/* An ERROR frame's body. */
void      m6_wire_put_error    (GByteArray    *buf,
                                guint          code,
                                const char    *message);

G_END_DECLS
