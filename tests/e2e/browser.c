/* browser.c — see browser.h. */
#include "browser.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <zlib.h>

#include "harness.h"

static const char *chromium(void)
{
    const char *c = getenv("ANVIL_CHROMIUM");
    return c && *c ? c : "/usr/bin/chromium";
}

/* Chromium flags: headless, no GPU, no sandbox (root in CI), every host
 * unresolvable and every connection through a proxy that refuses: no
 * network at open time. */
#define BROWSER_FLAGS "--headless", "--disable-gpu", "--no-sandbox", "--virtual-time-budget=8000", \
    "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0"

int browser_count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static long attr(const char *dom, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%s=\"", name);
    const char *p = strstr(dom, key);
    cr_assert(p, "no %s in the status", name);
    return strtol(p + strlen(key), NULL, 10);
}

/* Big-endian 32 bits. */
static unsigned long be32(const unsigned char *p)
{
    return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}

/* How many distinct byte values the PNG's decompressed scanlines hold: a
 * uniform image has at most 9 (5 filter types, its colour's 4 channels and
 * 0); a page of charts has hundreds. */
static int png_distinct_bytes(const char *path, unsigned long *w, unsigned long *h)
{
    size_t len;
    unsigned char *png = (unsigned char *)harness_read_file(path, &len);
    cr_assert(png && len > 33 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8), "%s is not a PNG", path);
    unsigned char *idat = NULL;
    size_t n_idat = 0;
    for (size_t p = 8; p + 12 <= len;) {
        unsigned long clen = be32(png + p);
        cr_assert(p + 12 + clen <= len, "truncated PNG chunk");
        if (!memcmp(png + p + 4, "IHDR", 4)) {
            *w = be32(png + p + 8);
            *h = be32(png + p + 12);
        } else if (!memcmp(png + p + 4, "IDAT", 4)) {
            idat = realloc(idat, n_idat + clen);
            memcpy(idat + n_idat, png + p + 8, clen);
            n_idat += clen;
        }
        p += 12 + clen;
    }
    cr_assert(n_idat > 0 && *w > 0 && *h > 0);
    uLongf raw_len = (uLongf)(*w * 4 + 1) * *h;
    unsigned char *raw = malloc(raw_len);
    cr_assert_eq(uncompress(raw, &raw_len, idat, n_idat), Z_OK, "cannot inflate %s", path);
    bool seen[256] = {0};
    int distinct = 0;
    for (uLongf i = 0; i < raw_len; i++)
        if (!seen[raw[i]]) {
            seen[raw[i]] = true;
            distinct++;
        }
    free(raw);
    free(idat);
    free(png);
    return distinct;
}


static void url_of(const char *path, char *url, size_t cap)
{
    char cwd[1024];
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(url, cap, path[0] == '/' ? "file://%s" : "file://%s/%s", path[0] == '/' ? path : cwd, path);
}

void browser_open(const char *path, struct browser_page *p)
{
    cr_assert_eq(access(chromium(), X_OK), 0, "%s is missing: run scripts/install-browser-deps", chromium());
    char url[2200];
    url_of(path, url, sizeof url);
    size_t cap = 8 << 20;
    static char log[1 << 20];
    p->dom = malloc(cap);
    cr_assert(p->dom);
    int status;
    const char *dump[] = {chromium(), BROWSER_FLAGS, "--dump-dom", url, NULL};
    cr_assert_eq(run_cmd_err(dump, p->dom, cap, log, sizeof log, &status), 0);
    cr_assert_eq(status, 0, "chromium failed: %s", log);
    cr_assert_null(strstr(log, "INFO:CONSOLE"), "the page logged to the console:\n%s", strstr(log, "INFO:CONSOLE"));
    const char *st = strstr(p->dom, "id=\"anvil-status\"");
    cr_assert(st, "no status element");
    p->charts = attr(st, "data-charts");
    p->drawn = attr(st, "data-drawn");
    p->errors = attr(st, "data-errors");
    p->status = st;
}

void browser_assert_clean(const struct browser_page *p)
{
    cr_assert_eq(p->drawn, p->charts, "%ld of %ld charts drawn: %.600s", p->drawn, p->charts, p->status);
    cr_assert_eq(p->errors, 0, "%.600s", p->status);
    cr_assert_eq(browser_count(p->dom, "data-chart=\""), p->charts);
    /* the charts' marks, less the status element's own data-drawn="1" (one chart drawn) */
    int drawn = browser_count(p->dom, "data-drawn=\"1\"");
    const char *own = strstr(p->status, "data-drawn=\"1\""), *tag_end = strchr(p->status, '>');
    cr_assert_eq(drawn - (own && own < tag_end), p->charts);
}

void browser_close(struct browser_page *p)
{
    free(p->dom);
    p->dom = NULL;
}

void browser_screenshot(const char *path, const char *png, int width, int height)
{
    char url[2200], size[64], shot[1100];
    url_of(path, url, sizeof url);
    snprintf(size, sizeof size, "--window-size=%d,%d", width, height);
    snprintf(shot, sizeof shot, "--screenshot=%s", png);
    static char log[1 << 20];
    int status;
    const char *argv[] = {chromium(), BROWSER_FLAGS, size, shot, url, NULL};
    cr_assert_eq(run_cmd_err(argv, NULL, 0, log, sizeof log, &status), 0);
    cr_assert_eq(status, 0, "chromium failed: %s", log);
    unsigned long w = 0, h = 0;
    int distinct = png_distinct_bytes(png, &w, &h);
    cr_assert_eq(w, (unsigned long)width);
    cr_assert_eq(h, (unsigned long)height);
    cr_assert_gt(distinct, 64, "the screenshot is (nearly) uniform: %d distinct byte values", distinct);
}
