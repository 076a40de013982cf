/* browser.h — `anvil report`'s HTML opened in headless Chromium (Debian's
 * chromium, scripts/install-browser-deps; ANVIL_CHROMIUM overrides the
 * path) with the network cut, for the report tests of every kind. */
#ifndef ANVIL_TESTS_BROWSER_H
#define ANVIL_TESTS_BROWSER_H

#include <stddef.h>

/* Ends a chart's title in the DOM when the page found it drawn. */
#define BROWSER_DRAWN "\" data-drawn=\"1\""

/* What the page's self-check (#anvil-status) found. */
struct browser_page {
    char *dom;          /* the DOM after the scripts ran (owned; browser_close frees it) */
    long charts;        /* charts made */
    long drawn;         /* of them, with their series' colours on the canvas */
    long errors;        /* script errors, refused fetches, charts of over 8 series */
    const char *status; /* the status element's text, in dom */
};

/* Opens the HTML file at path (relative to the working directory or
 * absolute) and dumps its DOM; asserts (Criterion) that chromium exists,
 * exits 0, logs nothing to the console, and that the status element is
 * there. Fills *p. */
void browser_open(const char *path, struct browser_page *p);

/* Asserts every chart drawn and no error, naming what was not. */
void browser_assert_clean(const struct browser_page *p);

/* Frees p->dom. */
void browser_close(struct browser_page *p);

/* Screenshots path into png (width × height px); asserts it is a PNG of
 * that size that is not one uniform colour. */
void browser_screenshot(const char *path, const char *png, int width, int height);

/* How many times what occurs in s. */
int browser_count(const char *s, const char *what);

#endif
