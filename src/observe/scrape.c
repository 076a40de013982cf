/* scrape.c — fetch, parse and extract one /metrics reading (see scrape.h). */
#include "observe/scrape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/clock.h"

void srv_scraper_init(struct srv_scraper *s, const char *url, const struct curl_slist *headers)
{
    *s = (struct srv_scraper){
        .fetch = {.headers = headers, .timeout_ms = SRV_SCRAPE_TIMEOUT_MS, .max_bytes = SRV_SCRAPE_MAX_BYTES}};
    snprintf(s->url, sizeof s->url, "%s", url);
    obs_url_public(url, s->shown, sizeof s->shown);
    buf_init(&s->body, SRV_SCRAPE_MAX_BYTES + 1);
}

struct srv_reading *srv_scrape(struct srv_scraper *s, int64_t t_due, int phase)
{
    struct srv_reading *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->t_due = t_due;
    r->phase = phase;
    char err[256];
    if (obs_fetch_get(&s->fetch, s->url, &s->body, &r->t_sent, &r->t_done, err, sizeof err) != 0) {
        snprintf(r->error, sizeof r->error, "GET %.120s: %.250s", s->shown, err);
        return r;
    }
    r->bytes = s->body.len;
    int64_t t0 = clock_now_ns();
    struct prom_snapshot snap;
    if (prom_parse(s->body.data, s->body.len, &snap, err, sizeof err) != 0) {
        snprintf(r->error, sizeof r->error, "%.120s is not Prometheus text: %.250s", s->shown, err);
        return r;
    }
    if (!s->engine_known) {
        s->engine = srv_engine_detect(&snap);
        s->engine_known = true;
    }
    r->ok = srv_extract(s->engine, &snap, r) == 0;
    prom_snapshot_free(&snap);
    r->parse_ms = (double)(clock_now_ns() - t0) / 1e6;
    return r;
}

void srv_scraper_free(struct srv_scraper *s)
{
    obs_fetch_free(&s->fetch);
    buf_free(&s->body);
}

static double number_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int srv_fetch_info(struct obs_fetch *f, const char *root, struct srv_info *out, char *used, size_t cap)
{
    static const char *const paths[] = {"/server_info", "/get_server_info"};
    *out = (struct srv_info){NAN, NAN};
    snprintf(used, cap, "%s", "");
    struct buf body;
    buf_init(&body, ((size_t)4 << 20) + 1);
    int rc = -1;
    for (size_t i = 0; rc != 0 && i < sizeof paths / sizeof *paths; i++) {
        char url[1100], err[256];
        int64_t t0, t1;
        snprintf(url, sizeof url, "%s%s", root, paths[i]);
        size_t max = f->max_bytes;
        f->max_bytes = (size_t)4 << 20;
        int got = obs_fetch_get(f, url, &body, &t0, &t1, err, sizeof err);
        f->max_bytes = max;
        cJSON *j = got == 0 ? cJSON_ParseWithLength(body.data, body.len) : NULL;
        if (cJSON_IsObject(j)) {
            out->max_total_num_tokens = number_at(j, "max_total_num_tokens");
            const cJSON *states = cJSON_GetObjectItemCaseSensitive(j, "internal_states");
            out->avg_spec_accept_length = number_at(cJSON_IsArray(states) ? cJSON_GetArrayItem(states, 0) : NULL,
                                                    "avg_spec_accept_length");
            obs_url_public(url, used, cap);
            rc = 0;
        }
        cJSON_Delete(j);
    }
    buf_free(&body);
    return rc;
}
