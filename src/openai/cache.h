/* cache.h — emptying a server's prefix cache before a run that must start
 * cold or from a known state: vLLM's POST /reset_prefix_cache (served only
 * when the server runs with VLLM_SERVER_DEV_MODE=1), SGLang's POST
 * /flush_cache (refused while requests run or wait), anvil-sim's either. */
#ifndef ANVIL_OPENAI_CACHE_H
#define ANVIL_OPENAI_CACHE_H

#include <stddef.h>

#include <curl/curl.h>

#include "openai/discover.h"

enum cache_flush {
    CACHE_FLUSHED,          /* the server emptied its prefix cache */
    CACHE_FLUSH_UNSUPPORTED,/* the engine has no such endpoint, or does not serve it (404): a warning */
    CACHE_FLUSH_FAILED,     /* the server refused or could not be reached */
};

/* Asks server s (discovered) to empty its prefix cache, the engine's way,
 * bounded by timeout_ms. *path gets the endpoint asked ("/reset_prefix_cache",
 * "/flush_cache"; NULL when the engine has none). err (errlen bytes) says
 * why for anything but CACHE_FLUSHED (credentials in URLs are not shown).
 * headers are not owned. */
enum cache_flush server_flush_prefix_cache(const struct server_info *s, const struct curl_slist *headers,
                                           long timeout_ms, const char **path, char *err, size_t errlen);

/* "flushed", "unsupported" or "failed", as the artifact writes it. */
const char *cache_flush_name(enum cache_flush f);

#endif
