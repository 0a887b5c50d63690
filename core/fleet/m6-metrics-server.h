/* SPDX-License-Identifier: MIT */
/* m6-metrics-server.h — `/metrics` over plain HTTP/1.1 for Prometheus: the
 * exposition (m6-metrics.h) of every recording of an M6Attacher, made on
 * each GET. One request per connection; a request larger than
 * M6_METRICS_SERVER_MAX_REQUEST bytes, a client slower than
 * M6_METRICS_SERVER_TIMEOUT_S seconds, and the oldest client when
 * M6_METRICS_SERVER_MAX_CLIENTS are connected, are cut off, so no client can hang serve.
 * Beyond loopback, scrapes need a bearer token. */
#pragma once

#include <gio/gio.h>

#include "m6-attacher.h"
#include "m6-metrics.h"

G_BEGIN_DECLS

#define M6_METRICS_SERVER_DEFAULT_HOST  "127.0.0.1"
#define M6_METRICS_SERVER_MAX_REQUEST   8192u
#define M6_METRICS_SERVER_TIMEOUT_S     10u
#define M6_METRICS_SERVER_MAX_CLIENTS   32u

#define M6_TYPE_METRICS_SERVER (m6_metrics_server_get_type ())
G_DECLARE_FINAL_TYPE (M6MetricsServer, m6_metrics_server, M6, METRICS_SERVER, GObject)

M6MetricsServer *m6_metrics_server_new      (M6Attacher             *attacher,
                                             const M6MetricsOptions *options);

/* The bearer token scrapes must send when the server listens beyond
 * loopback ("Authorization: Bearer TOKEN"; a request without it, or with
 * another, gets 401). On loopback, as for anyone on this machine, no token
 * is asked. Before m6_metrics_server_listen(). */
void             m6_metrics_server_set_token (M6MetricsServer       *self,
                                             const char             *token);

/* Listen on @address: "HOST:PORT", "[V6]:PORT" or "PORT" (on the loopback
 * address); port 0 picks a free one. HOST is an address or a name that
 * resolves (its first address is used). An address other than loopback
 * needs a token (m6_metrics_server_set_token()). FALSE with a sentence
 * naming the address. Connections are served on the thread-default main
 * context. */
gboolean         m6_metrics_server_listen   (M6MetricsServer        *self,
                                             const char             *address,
                                             GError                **error);
/* Does a scrape need the token (listening beyond loopback)? */
gboolean         m6_metrics_server_get_needs_token (M6MetricsServer *self);
/* "http://127.0.0.1:9464/metrics": where it listens (the port it got). */
char            *m6_metrics_server_dup_url  (M6MetricsServer        *self);
/* Close the listener and every connection. */
void             m6_metrics_server_stop     (M6MetricsServer        *self);


G_END_DECLS
