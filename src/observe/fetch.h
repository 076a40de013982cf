/* fetch.h — one bounded, blocking GET for samplers off the measuring loop:
 * a /metrics scrape, SGLang's /server_info, a GPU exporter. Unlike the set-up
 * fetch of net/http.h it stops at a size cap instead of reading on, says
 * when the request went out and when its last byte came back, and keeps its
 * connection for the next call. http://, https:// and file:// URLs. */
#ifndef ANVIL_OBSERVE_FETCH_H
#define ANVIL_OBSERVE_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "core/buf.h"

struct obs_fetch {
    CURL *easy;                         /* kept between calls (connection reuse); owned */
    const struct curl_slist *headers;   /* sent with every request; not owned (may be NULL) */
    long timeout_ms;                    /* the whole transfer */
    size_t max_bytes;                   /* a body larger than this fails the fetch */
};

/* GETs url into out (reset first; out->max must exceed f->max_bytes).
 * Accepts gzip/deflate bodies (curl decodes; the cap applies to the
 * decoded bytes). *t_sent and *t_done get CLOCK_MONOTONIC ns of the start
 * and the end of the transfer. Returns 0 for a 200 reply (or a readable
 * file), else -1 with the reason in err: "HTTP 404", "timed out after 2000
 * ms", "larger than 8388608 bytes", curl's message. Never prints. */
int obs_fetch_get(struct obs_fetch *f, const char *url, struct buf *out, int64_t *t_sent, int64_t *t_done,
                  char *err, size_t errlen);

/* Frees the kept handle. */
void obs_fetch_free(struct obs_fetch *f);

/* The origin (scheme://host[:port]) of url into out (cap bytes); "" when
 * url has no "://". */
void obs_url_origin(const char *url, char *out, size_t cap);

/* url without its "user:password@" part, for messages and artifacts (a
 * URL's credentials are as secret as an API key), into out (cap bytes). */
void obs_url_public(const char *url, char *out, size_t cap);

/* The server root of an OpenAI base URL: base without its path
 * ("http://h:8000/v1" → "http://h:8000"), into out (cap bytes). */
void obs_url_root(const char *base, char *out, size_t cap);

#endif
