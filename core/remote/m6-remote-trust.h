/* SPDX-License-Identifier: MIT */
/* m6-remote-trust.h — who is who between `mach6 serve` and its clients:
 * the server's self-signed certificate (created with GnuTLS on first run),
 * its SHA-256 fingerprint, the client's pins of those fingerprints
 * (~/.config/mach6/known-hosts, trust on first use) and the tokens a
 * client keeps per server (~/.config/mach6/remote-tokens, 0600). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The folder of the server's certificate and key:
 * $XDG_CONFIG_HOME/mach6/serve. */
char            *m6_trust_server_dir        (void);

/* Load cert.pem and key.pem from @dir, creating both (ECDSA P-256,
 * self-signed, 10 years; the folder 0700, the files 0600) if there are
 * none. */
GTlsCertificate *m6_trust_server_identity   (const char      *dir,
                                             GError         **error);

/* "ab:cd:…" (32 bytes of SHA-256 over the DER certificate). */
char            *m6_trust_fingerprint       (GTlsCertificate *certificate);

/* 32 random bytes as 64 hex digits. */
char            *m6_trust_new_token         (void);

/* Is @token strong enough to guard a server? At least 16 characters, of
 * which at least 8 differ and none makes up more than a quarter: FALSE
 * with a sentence otherwise (@what names where it came from). */
gboolean         m6_trust_token_check       (const char      *token,
                                             const char      *what,
                                             GError         **error);

/* The first line of @path, stripped, checked as m6_trust_token_check()
 * does; the file must be a regular file of ours (or root's) that no other
 * user may read or write. */
char            *m6_trust_read_token_file   (const char      *path,
                                             GError         **error);

/* $XDG_CONFIG_HOME/mach6/known-hosts and .../remote-tokens. */
char            *m6_trust_known_hosts_path  (void);
char            *m6_trust_tokens_path       (void);

/* Check @fingerprint of the server at @host_port against @known_hosts:
 * TRUE if it is pinned and equal, or not pinned yet (then *@new_pin is
 * TRUE); FALSE with a sentence naming the host, both fingerprints, the
 * file and the date of the pin if it differs. */
gboolean         m6_trust_check_pin         (const char      *known_hosts,
                                             const char      *host_port,
                                             const char      *fingerprint,
                                             gboolean        *new_pin,
                                             GError         **error);
gboolean         m6_trust_add_pin           (const char      *known_hosts,
                                             const char      *host_port,
                                             const char      *fingerprint,
                                             GError         **error);

/* The token kept for @host_port in @path, or NULL. */
char            *m6_trust_lookup_token      (const char      *path,
                                             const char      *host_port);
gboolean         m6_trust_store_token       (const char      *path,
                                             const char      *host_port,
                                             const char      *token,
                                             GError         **error);

/* Constant-time comparison of two tokens. */
gboolean         m6_trust_token_equal       (const char      *a,
                                             const char      *b);

G_END_DECLS
