/* url.h — the parts of a URL as libcurl's URL API (curl_url) reads them, so
 * that what anvil shows, compares and joins is what curl will connect to:
 * an IPv6 host in brackets, a query without a path, user:password@ before
 * the host. */
#ifndef ANVIL_NET_URL_H
#define ANVIL_NET_URL_H

#include <stdbool.h>
#include <stddef.h>

/* Writes scheme://[user[:password]@]host[:port] of url into out (cap bytes):
 * the scheme lower case as curl writes it, the rest as given, without a
 * trailing '/'. Returns 0, or -1 with out "" when curl refuses url (no
 * scheme, a bad host or port) or the origin does not fit in cap. */
int url_origin(const char *url, char *out, size_t cap);

/* Writes url without its user:password@ (a URL's credentials are as secret
 * as an API key) into out (cap bytes), for messages and artifacts; the rest
 * is as written. A URL curl refuses is cut from its "://" to the last '@'
 * before the path, so no part of a password shows either way. */
void url_public(const char *url, char *out, size_t cap);

/* Whether url names a user or a password (user:password@). A URL curl
 * refuses counts as having them when an '@' precedes its path. */
bool url_has_credentials(const char *url);

/* Writes url's path into out (cap bytes), "" when it has none or only "/"
 * ("http://h:8000/v1?x=1" → "/v1"; dot segments kept as written). Returns
 * 0, or -1 with out "" when curl refuses url or the path does not fit. */
int url_path(const char *url, char *out, size_t cap);

/* Where a plain-HTTP request goes, for anvil's own transport: the host to
 * connect to (an IPv6 address without its brackets), the port (the
 * scheme's default when none is written), the Host header's value (the
 * host as written, ":port" when one is written) and the request target
 * (the path, "/" when none, with "?query"). */
struct url_target {
    char host[256];
    char port[8];
    char host_header[272];
    char target[4096];
};

/* Fills *t from url. Returns 0, or -1 when curl refuses url, its scheme is
 * not http (any case), it names a user or password, a zone id, or a part
 * does not fit. */
int url_target(const char *url, struct url_target *t);

#endif
