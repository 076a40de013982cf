/* testutil.c — helpers shared by unit tests. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    cr_assert(p);
    cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
    p[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return p;
}

const char *tu_fixture_body(const char *text, int *status)
{
    const char *http = strstr(text, "HTTP/1.1 ");
    cr_assert(http, "fixture has no status line");
    *status = atoi(http + 9);
    const char *body = strstr(http, "\r\n\r\n");
    cr_assert(body, "fixture has no header end");
    return body + 4;
}

char *tu_fixture_case(const char *text, int n, int *status)
{
    char mark[32];
    snprintf(mark, sizeof mark, "# === CASE %d:", n);
    const char *c = strstr(text, mark);
    cr_assert(c, "fixture has no %s", mark);
    const char *body = tu_fixture_body(c, status);
    const char *next = strstr(body, "\n# === CASE ");
    size_t len = next ? (size_t)(next - body) : strlen(body);
    char *out = malloc(len + 1);
    cr_assert(out);
    memcpy(out, body, len);
    out[len] = '\0';
    return out;
}
