/* verdict.h — what both transports say of a reply anvil will not read and
 * of a failure that is this machine's, not the server's: one wording
 * whichever transport met it (net/http.h's codes). */
#ifndef ANVIL_NET_VERDICT_H
#define ANVIL_NET_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

/* What a final header block says the body cannot be: a reply anvil can
 * read. A redirect (anvil follows none: it measures the server it was
 * given), or a body in a content coding anvil never asked for (it sends no
 * Accept-Encoding). location and encoding are the block's Location and
 * Content-Encoding ("" when none). Returns CURLE_OK, or the verdict
 * (CURLE_TOO_MANY_REDIRECTS, CURLE_BAD_CONTENT_ENCODING) with its message
 * in why (cap bytes). */
CURLcode http_judge_head(long status, const char *location, const char *encoding, char *why, size_t cap);

/* Whether errno e of a failed socket() or connect() is a limit of this
 * machine's rather than the server's: no descriptor (EMFILE, ENFILE), no
 * memory for a socket (ENOBUFS, ENOMEM), no free local port
 * (EADDRNOTAVAIL). When it is, why (cap bytes) names the limit and the
 * fix; else it is left as it was. */
bool http_limit_reason(int e, char *why, size_t cap);

#endif
