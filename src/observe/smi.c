/* smi.c — nvidia-smi's CSV as GPU samples (see smi.h). */
#include "observe/smi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/child.h"


/* A field's text, trimmed, into out (cap bytes). */
static void trim(const char *p, size_t n, char *out, size_t cap)
{
    while (n && (*p == ' ' || *p == '\t'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
        n--;
    snprintf(out, cap, "%.*s", (int)n, p);
}

/* A number, or NaN for nvidia-smi's "[N/A]"-style placeholders. Returns -1
 * for anything else. */
static int number(const char *s, double *out)
{
    if (!*s || s[0] == '[' || !strcmp(s, "N/A")) {
        *out = NAN;
        return 0;
    }
    char *e;
    *out = strtod(s, &e);
    return *e == '\0' && isfinite(*out) ? 0 : -1;
}

static int parse_line(const char *line, size_t len, bool with_throttle, struct gpu_sample *s, struct gpu_info *g,
                      int lineno, char *err, size_t errlen)
{
    char f[13][128];
    int nf = 0, want = with_throttle ? 13 : 12;
    const char *p = line, *end = line + len;
    while (nf < 13) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        trim(p, (size_t)((c ? c : end) - p), f[nf], sizeof f[nf]);
        nf++;
        if (!c)
            break;
        p = c + 1;
    }
    if (nf != want) {
        snprintf(err, errlen, "nvidia-smi line %d: %d fields, expected %d", lineno, nf, want);
        return -1;
    }
    *s = gpu_sample_none();
    double idx;
    double *dst[] = {&s->util_pct, &s->mem_util_pct, &s->mem_used_mib, &s->mem_total_mib, &s->power_w,
                     &s->power_limit_w, &s->temp_c, &s->sm_mhz, &s->mem_mhz};
    if (number(f[0], &idx) != 0 || isnan(idx)) {
        snprintf(err, errlen, "nvidia-smi line %d: index '%s' is not a number", lineno, f[0]);
        return -1;
    }
    for (int i = 0; i < 9; i++)
        if (number(f[3 + i], dst[i]) != 0) {
            snprintf(err, errlen, "nvidia-smi line %d, field %d: '%s' is not a number", lineno, 4 + i, f[3 + i]);
            return -1;
        }
    if (with_throttle && f[12][0] != '[') {
        char *e;
        s->throttle = strtoull(f[12], &e, 16);
        s->has_throttle = *e == '\0' && f[12][0];
    }
    *g = (struct gpu_info){.index = (int)idx};
    snprintf(g->name, sizeof g->name, "%.95s", f[1]);
    snprintf(g->uuid, sizeof g->uuid, "%.95s", f[2][0] == '[' ? "" : f[2]);
    return 0;
}

int smi_parse(const char *csv, bool with_throttle, struct gpu_sample *out, struct gpu_info *info, int cap,
              char *err, size_t errlen)
{
    int n = 0, lineno = 0;
    for (const char *p = csv; *p && n < cap;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        char probe[8];
        trim(p, len, probe, sizeof probe);
        if (probe[0] && parse_line(p, len, with_throttle, &out[n], &info[n], lineno, err, errlen) != 0)
            return -1;
        n += probe[0] != '\0';
        p = nl ? nl + 1 : p + len;
    }
    if (n == 0)
        snprintf(err, errlen, "nvidia-smi listed no GPU");
    return n ? n : -1;
}

/* Runs program with the query, its stdout into out (past the buffer's cap
 * the parse says what is wrong), dying with anvil (core/child.h: signal mask
 * and dispositions reset, as a sampler thread blocks every signal); killed
 * after SMI_TIMEOUT_MS. Returns the exit status (0..255, 128 + signal), or
 * -1 with err set. */
static int run(const char *program, const char *query, struct buf *out, char *err, size_t errlen)
{
    char qarg[512];
    snprintf(qarg, sizeof qarg, "--query-gpu=%s", query);
    char *const argv[] = {(char *)program, qarg, "--format=csv,noheader,nounits", NULL};
    return child_run(argv, SMI_TIMEOUT_MS, out, NULL, NULL, err, errlen);
}

int smi_read(const char *program, bool *with_throttle, struct gpu_sample *out, struct gpu_info *info, int cap,
             char *err, size_t errlen)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    int rc = -1, status = run(program, *with_throttle ? SMI_FIELDS : SMI_FIELDS_BASIC, &b, err, errlen);
    if (status > 0 && *with_throttle) {
        /* an nvidia-smi that does not know the throttle field: ask without it */
        buf_reset(&b);
        if ((status = run(program, SMI_FIELDS_BASIC, &b, err, errlen)) == 0)
            *with_throttle = false;
    }
    if (status == 0)
        rc = smi_parse(b.data ? b.data : "", *with_throttle, out, info, cap, err, errlen);
    else if (status > 0)
        snprintf(err, errlen, "%s exited with status %d", program, status);
    buf_free(&b);
    return rc;
}
