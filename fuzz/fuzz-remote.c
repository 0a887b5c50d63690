/* SPDX-License-Identifier: MIT */
/* fuzz-remote.c — libFuzzer harness for the remote protocol's parsers, both
 * directions, and the m6-pack decoder. The first byte picks the target:
 *   0: the client's side: the rest is a sequence of frames (u32 length,
 *      type, body) fed to M6RemoteStream, which parses each and applies it
 *      to a session, as a remote recording does (SAMPLES through a samples
 *      writer without a capture); then the payload of every thread is
 *      written and the sample totals checked;
 *   1: the server's side: the same frames through the HELLO and ATTACH
 *      parsers, and the client's PROCESSES parser;
 *   2: the rest is one event block for m6_pack_decode(), re-encoded and
 *      decoded again when it decodes (it must round-trip).
 * Nothing may crash, leak, read out of bounds or run into undefined
 * behaviour; a refusal must come with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "m6-pack.h"
#include "m6-payload.h"
#include "m6-remote-client.h"
#include "m6-wire.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static M6Event events[M6_PACK_MAX_EVENTS], again[M6_PACK_MAX_EVENTS];

static void
check_error (gboolean ok, GError *error)
{
  if (ok != (error == NULL) || (error != NULL && error->message[0] == '\0'))
    abort ();
}

static void
fuzz_client (const uint8_t *data, size_t size)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (M6RemoteStream) stream = m6_remote_stream_new ("fuzz:7766", session);
  size_t pos = 0;

  while (pos + 5 <= size)
    {
      g_autoptr (GError) error = NULL;
      guint32 len = (guint32) data[pos] | (guint32) data[pos + 1] << 8 | (guint32) data[pos + 2] << 16
                  | (guint32) data[pos + 3] << 24;
      guint8 type = data[pos + 4];
      pos += 5;
      if (len > size - pos)
        len = (guint32) (size - pos);
      gboolean ok = m6_remote_stream_feed (stream, type, data + pos, len, &error);
      check_error (ok, error);
      pos += len;
      if (!ok)
        break;  /* the client stops reading there */
    }
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      GString *text = g_string_new (NULL);
      m6_payload_append (text, m6_thread_get_tree (thread), m6_tree_get_root (m6_thread_get_tree (thread)));
      g_string_free (text, TRUE);
    }
  /* Samples received: a thread each, never more than the client keeps. */
  const GArray *totals = m6_remote_stream_get_sample_totals (stream);
  if (totals->len > M6_WIRE_MAX_THREADS)
    abort ();
}

static void
fuzz_server (const uint8_t *data, size_t size)
{
  size_t pos = 0;

  while (pos + 5 <= size)
    {
      g_autoptr (GError) e1 = NULL;
      g_autoptr (GError) e2 = NULL;
      g_autoptr (GError) e3 = NULL;
      g_autofree char *token = NULL;
      guint64 version = 0;
      gint pid = 0;
      guint32 len = (guint32) data[pos] | (guint32) data[pos + 1] << 8;
      pos += 5;
      if (len > size - pos)
        len = (guint32) (size - pos);
      check_error (m6_wire_parse_hello (data + pos, len, &version, &token, &e1), e1);
      check_error (m6_wire_parse_attach (data + pos, len, &pid, &e2), e2);
      if (pid < 0)
        abort ();
      g_autoptr (GPtrArray) list = m6_remote_parse_processes ("fuzz:7766", data + pos, len, &e3);
      check_error (list != NULL, e3);
      pos += len;
    }
}

static void
fuzz_block (const uint8_t *data, size_t size)
{
  g_autoptr (GError) error = NULL;
  gsize n = m6_pack_decode (data, size, events, &error);

  check_error (n > 0, error);
  if (n == 0)
    return;
  for (guint codec = 0; codec < 3; codec++)
    {
      g_autoptr (GByteArray) out = g_byte_array_new ();
      m6_pack_encode ((M6PackCodec) codec, events, n, out);
      if (m6_pack_decode (out->data, out->len, again, NULL) != n || memcmp (events, again, n * sizeof (M6Event)) != 0)
        abort ();
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  if (size < 1)
    return 0;
  switch (data[0] % 3)
    {
    case 0:
      fuzz_client (data + 1, size - 1);
      break;
    case 1:
      fuzz_server (data + 1, size - 1);
      break;
    default:
      fuzz_block (data + 1, size - 1);
      break;
    }
  return 0;
}
