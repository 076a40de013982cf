/* flags.c — numeric flag values. */
#include "cli/flags.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "core/duration.h"

int flag_long(const char *cmd, const char *flag, const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        fprintf(stderr, "anvil %s: --%s: expected a whole number from %ld to %ld, got '%s'\n",
                cmd, flag, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int flag_double(const char *cmd, const char *flag, const char *s, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < min) {
        fprintf(stderr, "anvil %s: --%s: expected a number ≥ %g, got '%s'\n", cmd, flag, min, s);
        return -1;
    }
    *out = v;
    return 0;
}

int flag_duration(const char *cmd, const char *flag, const char *s, double min, double *out)
{
    double v;
    if (duration_parse(s, &v) != 0 || v < min) {
        fprintf(stderr, "anvil %s: --%s: expected a duration ≥ %g s: seconds, or a number with a unit "
                "(45s, 90m, 2h, 1h30m), got '%s'\n", cmd, flag, min, s);
        return -1;
    }
    *out = v;
    return 0;
}

int flag_rate(const char *cmd, const char *flag, const char *s, double *out)
{
    if (!strcmp(s, "inf")) {
        *out = INFINITY;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (end != s && !*end && isfinite(v) && v > 0) {
        *out = v;
        return 0;
    }
    fprintf(stderr, "anvil %s: --%s: expected a number > 0 or inf, got '%s'\n", cmd, flag, s);
    return -1;
}

/* Whether name is row name pattern: equal, or it starts with the part of
 * a pattern ending in '*' before it. */
static bool name_matches(const char *pattern, const char *name)
{
    size_t n = strlen(pattern);
    if (n && pattern[n - 1] == '*')
        return strlen(name) >= n && !strncmp(pattern, name, n - 1);
    return !strcmp(pattern, name);
}

const struct flag_spec *flags_find(const struct flag_spec *t, const char *name)
{
    for (; t->name; t++)
        if (name_matches(t->name, name) || (t->alias && !strcmp(t->alias, name)))
            return t;
    return NULL;
}

void flag_note(FILE *out, const char *cmd, const struct flag_spec *f, const char *name)
{
    fprintf(out, "anvil %s: note: --%s does not apply to anvil: %s\n", cmd, name, f->help);
}

static int set_choice(const char *cmd, const struct flag_spec *f, const char *v, int *out)
{
    char want[256] = "";
    for (int i = 0; f->choices[i]; i++) {
        if (!strcmp(f->choices[i], v)) {
            *out = i;
            return 0;
        }
        size_t n = strlen(want);
        snprintf(want + n, sizeof want - n, "%s%s", i ? (f->choices[i + 1] ? ", " : " or ") : "",
                 f->choices[i]);
    }
    fprintf(stderr, "anvil %s: --%s: expected %s, got '%s'\n", cmd, f->name, want, v);
    return -1;
}

/* Stores value v of flag f (named as typed: name) into cfg. */
static int set_flag(const char *cmd, const struct flag_spec *f, const char *name, void *cfg,
                    const char *v)
{
    void *p = (char *)cfg + f->offset;
    switch (f->kind) {
    case FLAG_STRING: *(const char **)p = v; return 0;
    case FLAG_LONG: return flag_long(cmd, name, v, (long)f->min, (long)f->max, p);
    case FLAG_DOUBLE:
    case FLAG_DURATION:
        if ((f->kind == FLAG_DURATION ? flag_duration : flag_double)(cmd, name, v, f->min, p) != 0)
            return -1;
        if (f->max > f->min && *(double *)p > f->max) {   /* a row with an upper bound */
            fprintf(stderr, "anvil %s: --%s: expected a number from %g to %g, got '%s'\n", cmd, name, f->min,
                    f->max, v);
            return -1;
        }
        return 0;
    case FLAG_RATE: return flag_rate(cmd, name, v, p);
    case FLAG_ON: *(bool *)p = true; return 0;
    case FLAG_OFF: *(bool *)p = false; return 0;
    case FLAG_CHOICE: return set_choice(cmd, f, v, p);
    case FLAG_CUSTOM: return f->parse(cfg, cmd, name, v);
    case FLAG_NOTE:
        if (f->parse)
            return f->parse(cfg, cmd, name, v);
        flag_note(stderr, cmd, f, name);
        return 0;
    case FLAG_REFUSED:
        fprintf(stderr, "anvil %s: --%s: %s\n", cmd, name, f->help);
        return -1;
    }
    return -1;
}

static bool takes_value(const struct flag_spec *f)
{
    if (f->kind == FLAG_NOTE)
        return f->metavar != NULL;
    return f->kind != FLAG_ON && f->kind != FLAG_OFF && f->kind != FLAG_REFUSED;
}

/* Whether argv[i] is a further value of a many row (not a flag). */
static bool more_value(int i, int argc, char **argv)
{
    return i < argc && argv[i][0] != '-';
}

int flags_defaults(const char *cmd, const struct flag_spec *t, void *cfg)
{
    for (const struct flag_spec *f = t; f->name; f++)
        if (f->def && set_flag(cmd, f, f->name, cfg, f->def) != 0)
            return -1;
    return 0;
}

/* A row given under both its names (--concurrency 4 --max-concurrency 8)
 * is a conflict, not "the last one wins". used[] holds 1 (name) or 2
 * (alias) per row. Returns 0, or -1 after printing both names. */
static int check_alias(const char *cmd, const struct flag_spec *f, const char *name, unsigned char *u)
{
    unsigned char now = f->alias && !strcmp(name, f->alias) ? 2 : 1;
    if (*u && *u != now) {
        fprintf(stderr, "anvil %s: --%s and --%s are the same setting: give one of them\n", cmd,
                f->name, f->alias);
        return -1;
    }
    *u = now;
    return 0;
}

/* Levenshtein distance of a and b (bytes), or a large number for names
 * too long to be flags. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), row[64];
    if (n >= 64 || m >= 64)
        return 64;
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diag = up;
            row[j] = best;
        }
    }
    return row[m];
}

const char *flags_suggest(const struct flag_spec *t, const char *name)
{
    const char *best = NULL;
    size_t best_d = strlen(name) / 3 + 1;  /* a typo or two, not another flag */
    for (; t->name; t++) {
        const char *names[] = {t->name, t->alias};
        for (int k = 0; k < 2; k++) {
            if (!names[k] || strchr(names[k], '*'))
                continue;
            size_t d = edit_distance(name, names[k]);
            if (d < best_d || (d <= best_d && !best)) {
                best_d = d;
                best = names[k];
            }
        }
    }
    return best;
}

int flags_parse(const char *cmd, const struct flag_spec *t, void *cfg, int argc, char **argv,
                int (*positional)(void *cfg, const char *arg), int *rest, bool *seen)
{
    unsigned char used[256] = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strcmp(a, "--")) {
            if (rest) {
                *rest = i + 1;
                return 0;
            }
            for (i++; i < argc; i++)
                if (!positional || positional(cfg, argv[i]) != 0)
                    goto unexpected;
            return 0;
        }
        if (strncmp(a, "--", 2) != 0 || !a[2]) {
            if (positional && positional(cfg, a) == 0)
                continue;
        unexpected:
            fprintf(stderr, "anvil %s: unexpected argument '%s' (see 'anvil %s --help')\n", cmd,
                    argv[i], cmd);
            return -1;
        }
        char name[128];
        const char *eq = strchr(a + 2, '=');
        size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        snprintf(name, sizeof name, "%.*s", (int)len, a + 2);
        const struct flag_spec *f = len < sizeof name ? flags_find(t, name) : NULL;
        if (!f) {
            const char *near = len < sizeof name ? flags_suggest(t, name) : NULL;
            if (near)
                fprintf(stderr, "anvil %s: unknown flag '%s': did you mean '--%s'? (see 'anvil %s --help')\n",
                        cmd, a, near, cmd);
            else
                fprintf(stderr, "anvil %s: unknown flag '%s' (see 'anvil %s --help')\n", cmd, a, cmd);
            return -1;
        }
        const char *v = eq ? eq + 1 : NULL;
        if (f->kind == FLAG_REFUSED)
            return set_flag(cmd, f, name, cfg, v);
        /* a noted row of many values takes none too (vLLM's nargs="*") */
        bool optional = f->kind == FLAG_NOTE && f->many && !more_value(i + 1, argc, argv);
        if (takes_value(f) && !v && !optional) {
            if (i + 1 >= argc) {
                fprintf(stderr, "anvil %s: missing value for '%s' (see 'anvil %s --help')\n", cmd, a, cmd);
                return -1;
            }
            v = argv[++i];
        } else if (!takes_value(f) && v) {
            fprintf(stderr, "anvil %s: --%s takes no value\n", cmd, name);
            return -1;
        }
        if ((size_t)(f - t) < sizeof used && check_alias(cmd, f, name, &used[f - t]) != 0)
            return -1;
        if (set_flag(cmd, f, name, cfg, v) != 0)
            return -1;
        while (f->many && more_value(i + 1, argc, argv)) {
            i++;
            /* a noted row's further values: its one note said it all */
            if (f->kind != FLAG_NOTE && set_flag(cmd, f, name, cfg, argv[i]) != 0)
                return -1;
        }
        if (seen)
            seen[f - t] = true;
    }
    return 0;
}

void flags_help(FILE *out, const struct flag_spec *t)
{
    for (const struct flag_spec *f = t; f->name; f++) {
        if (f->section)
            fprintf(out, "%s\n", f->section);
        char left[96], line[1024];
        snprintf(left, sizeof left, "--%s%s%s", f->name, f->metavar ? " " : "",
                 f->metavar ? f->metavar : "");
        fprintf(out, "  %-28s ", left);
        if (strlen(left) > 28)
            fprintf(out, "\n  %-28s ", "");
        int n = snprintf(line, sizeof line, "%s", f->help);
        if (f->alias)
            n += snprintf(line + n, sizeof line - (size_t)n, " (alias --%s)", f->alias);
        if (f->def)
            snprintf(line + n, sizeof line - (size_t)n, " (default %s)", f->def);
        /* wrap at 78 columns, indented under the help column */
        int col = 0;
        for (const char *w = line; *w;) {
            size_t wl = strcspn(w, " ");
            if (col && col + (int)wl > 48) {
                fprintf(out, "\n  %-28s ", "");
                col = 0;
            }
            fprintf(out, "%s%.*s", col ? " " : "", (int)wl, w);
            col += (int)wl + (col ? 1 : 0);
            w += wl;
            while (*w == ' ')
                w++;
        }
        fputc('\n', out);
    }
}

size_t flags_count(const struct flag_spec *t)
{
    size_t n = 0;
    while (t[n].name)
        n++;
    return n;
}

int flag_header(const char *cmd, const char *flag, const char *v, struct curl_slist **headers)
{
    if (!strchr(v, ':') || v[0] == ':') {
        /* the value may be a secret: never echo it */
        fprintf(stderr, "anvil %s: --%s: expected 'Name: value', got (value withheld)\n", cmd, flag);
        return -1;
    }
    struct curl_slist *l = curl_slist_append(*headers, v);
    if (!l)
        return -1;
    *headers = l;
    return 0;
}
