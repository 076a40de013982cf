/* fetch.c — bounded blocking GETs for samplers (see fetch.h). */
#include "observe/fetch.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/stop.h"
#include "net/url.h"

struct sink {
    struct buf *out;
    size_t max;
    bool over;
};

static size_t write_cb(char *p, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;
    size_t len = size * n;
    if (s->out->len + len > s->max || buf_append(s->out, p, len) != 0) {
        s->over = true;
        return 0;               /* curl aborts with CURLE_WRITE_ERROR */
    }
    return len;
}

/* A stop request (core/stop.h) ends a scrape at curl's next progress call,
 * or at once when the signal woke its poll. */
static int stop_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)arg, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return stop_requested() != 0;
}

int obs_fetch_get(struct obs_fetch *f, const char *url, struct buf *out, int64_t *t_sent, int64_t *t_done,
                  char *err, size_t errlen)
{
    buf_reset(out);
    *t_sent = *t_done = clock_now_ns();
    if (!f->easy && !(f->easy = curl_easy_init())) {
        snprintf(err, errlen, "curl_easy_init failed");
        return -1;
    }
    CURL *e = f->easy;
    char errbuf[CURL_ERROR_SIZE] = "";
    struct sink sink = {out, f->max_bytes, false};
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, f->headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, f->timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, f->timeout_ms);
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)f->max_bytes);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https,file");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, stop_cb);
    *t_sent = clock_now_ns();
    CURLcode rc = curl_easy_perform(e);
    *t_done = clock_now_ns();
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    bool file = !strncmp(url, "file:", 5);
    if (sink.over || rc == CURLE_FILESIZE_EXCEEDED) {
        snprintf(err, errlen, "body larger than %zu bytes", f->max_bytes);
        return -1;
    }
    if (rc == CURLE_ABORTED_BY_CALLBACK && stop_requested()) {
        snprintf(err, errlen, "stopped by %s", stop_signal_name(stop_requested()));
        return -1;
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(err, errlen, "timed out after %ld ms", f->timeout_ms);
        return -1;
    }
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
        return -1;
    }
    if (!file && status != 200) {
        snprintf(err, errlen, "HTTP %ld", status);
        return -1;
    }
    if (!out->data && buf_append(out, "", 0) != 0) {     /* an empty body is still a string */
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

void obs_fetch_free(struct obs_fetch *f)
{
    if (f->easy)
        curl_easy_cleanup(f->easy);
    f->easy = NULL;
}

void obs_url_origin(const char *url, char *out, size_t cap)
{
    url_origin(url, out, cap);
}

void obs_url_public(const char *url, char *out, size_t cap)
{
    url_public(url, out, cap);
}

void obs_url_root(const char *base, char *out, size_t cap)
{
    if (url_origin(base, out, cap) != 0)
        snprintf(out, cap, "%s", base);
}
