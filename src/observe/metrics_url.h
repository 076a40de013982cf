/* metrics_url.h — where the server's Prometheus metrics are read and what a
 * scrape of them may carry, for every command that scrapes them (anvil
 * run's samplers, anvil decode's readiness gate): one rule, so a key never
 * goes to a host one command would have kept it from. */
#ifndef ANVIL_OBSERVE_METRICS_URL_H
#define ANVIL_OBSERVE_METRICS_URL_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

/* Whether u is a URL metrics can be read from: http://, https:// or file://. */
bool obs_metrics_url_ok(const char *u);

/* The server's metrics URL for --server-metrics mode over the OpenAI API at
 * base_url, into out (cap bytes): "auto" → base_url's server root +
 * "/metrics" ("http://h:8000/v1" → "http://h:8000/metrics"); a URL → that
 * URL. Returns true, or false with out = "" when mode is "off" or NULL. */
bool obs_server_metrics_url(const char *mode, const char *base_url, char *out, size_t cap);

/* The headers a scrape of url may send: headers (the run's, the API key
 * among them) when url has the origin (scheme://host[:port]) of base_url,
 * else NULL — a credential goes to the server it is for, never to another
 * host. Not copied: the result is headers or NULL. */
const struct curl_slist *obs_metrics_headers(const char *url, const char *base_url,
                                             const struct curl_slist *headers);

#endif
