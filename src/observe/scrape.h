/* scrape.h — one /metrics reading: fetch, parse, extract (engines.h), and
 * SGLang's /server_info. Blocking: called on a sampler's own thread, or
 * before and after the load on the run's. */
#ifndef ANVIL_OBSERVE_SCRAPE_H
#define ANVIL_OBSERVE_SCRAPE_H

#include <stdint.h>

#include "core/buf.h"
#include "observe/engines.h"
#include "observe/fetch.h"
#include "observe/server.h"

/* Largest /metrics body read, and how long one scrape may take. vLLM's is
 * tens of KiB; a body past the cap is a broken or hostile server. The
 * timeout keeps a scrape thread's every sample shorter than the 5 s the end
 * of a run waits for it (load/driver.h). */
#define SRV_SCRAPE_MAX_BYTES ((size_t)8 << 20)
#define SRV_SCRAPE_TIMEOUT_MS 2000

/* A scraper. Used by one thread at a time. */
struct srv_scraper {
    struct obs_fetch fetch;
    char url[1024];
    char shown[1024];           /* url without credentials, for messages */
    enum srv_engine engine;     /* the table to read with; set by the first good scrape */
    bool engine_known;
    struct buf body;
};

/* Sets s up for url (copied) with headers (not owned; NULL = none). */
void srv_scraper_init(struct srv_scraper *s, const char *url, const struct curl_slist *headers);

/* Takes one reading for instant t_due and phase (enum obs_phase). The
 * first good scrape fixes the engine (srv_engine_detect). Returns a
 * malloc'd reading — ok false with the reason in error when the fetch or
 * the parse failed (a huge, malformed, slow or absent /metrics) — or NULL
 * when memory ran out. The caller frees it (srv_reading_free, free). */
struct srv_reading *srv_scrape(struct srv_scraper *s, int64_t t_due, int phase);

/* Frees what s holds. */
void srv_scraper_free(struct srv_scraper *s);

/* SGLang's server info from root (http://host:port): GET /server_info,
 * else the older /get_server_info; max_total_num_tokens and
 * internal_states[0].avg_spec_accept_length. Fields not found stay NaN.
 * Writes the URL that answered into used (cap bytes, "" when none).
 * Returns 0, or -1 when neither answered with a JSON object. */
int srv_fetch_info(struct obs_fetch *f, const char *root, struct srv_info *out, char *used, size_t cap);

#endif
