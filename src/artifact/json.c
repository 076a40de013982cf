/* json.c — exact numbers, atomic files and the checked reader. */
#include "artifact/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/sha256.h"

/* ---- writing ---- */

void artifact_add_number(cJSON *o, const char *k, double v)
{
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, v);
}

void artifact_add_whole(cJSON *o, const char *k, long v)
{
    if (v == ARTIFACT_NONE)
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, (double)v);
}

void artifact_add_string(cJSON *o, const char *k, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, k, s);
    else
        cJSON_AddNullToObject(o, k);
}

cJSON *artifact_string_array(char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

/* The shortest %.{15,16,17}g text of v that strtod reads back as v. */
static void exact_text(double v, char *out, size_t n)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* Replaces every finite number under j with raw text of exact_text. */
static int exact_numbers(cJSON *j)
{
    for (cJSON *c = j->child; c; c = c->next) {
        if (cJSON_IsNumber(c) && isfinite(c->valuedouble)) {
            char text[40];
            exact_text(c->valuedouble, text, sizeof text);
            cJSON *raw = cJSON_CreateRaw(text);
            /* ReplaceItemViaPointer keeps the position, not the key */
            if (raw && c->string && !(raw->string = strdup(c->string))) {
                cJSON_Delete(raw);
                raw = NULL;
            }
            if (!raw || !cJSON_ReplaceItemViaPointer(j, c, raw))
                return -1;
            c = raw;
        } else if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && exact_numbers(c)) {
            return -1;
        }
    }
    return 0;
}

char *artifact_print(const cJSON *j)
{
    cJSON *copy = cJSON_Duplicate(j, true);
    char *text = copy && exact_numbers(copy) == 0 ? cJSON_Print(copy) : NULL;
    cJSON_Delete(copy);
    return text;
}

/* Whether path exists as something other than a regular file (a device,
 * a pipe, a symlink): written in place, never replaced by a rename. */
static bool special_target(const char *path)
{
    struct stat st;
    /* a directory is no place for it: written beside, the rename fails, and the fallback takes it */
    return lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

static char *tmp_name(const char *path)
{
    size_t n = strlen(path) + 5;
    char *tmp = malloc(n);
    if (tmp)
        snprintf(tmp, n, "%s.tmp", path);
    return tmp;
}

int artifact_check_path(const char *path, char *err, size_t errlen)
{
    if (!path[0]) {
        snprintf(err, errlen, "empty path");
        return -1;
    }
    if (!strcmp(path, "-"))
        return 0;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is a directory (name a file in it, or use --result-dir)", path);
        return -1;
    }
    if (special_target(path))
        return access(path, W_OK) == 0 ? 0 : (snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), -1);
    char *tmp = tmp_name(path);
    FILE *f = NULL;
    if (!tmp || file_mkdir_parents(path) != 0 || !(f = fopen(tmp, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", path, tmp ? strerror(errno) : "out of memory");
        free(tmp);
        return -1;
    }
    fclose(f);
    unlink(tmp);
    free(tmp);
    return 0;
}

/* Writes text and a newline to target, flushed to the disk. Returns 0, or
 * -1 with errno set (the file may be partly written). */
static int write_synced(const char *target, const char *text)
{
    FILE *f = fopen(target, "w");
    if (!f)
        return -1;
    bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF && fflush(f) == 0;
    /* fsync fails with EINVAL on pipes and devices: nothing to sync there */
    ok = ok && (fsync(fileno(f)) == 0 || errno == EINVAL || errno == ENOTSUP);
    int saved = errno;
    ok = fclose(f) == 0 && ok;
    if (!ok && !errno)
        errno = saved;
    return ok ? 0 : -1;
}

void artifact_fallback_path(const char *path, char *out, size_t cap)
{
    const char *dir = getenv("TMPDIR"), *base = strrchr(path, '/');
    char abs[4200], cwd[4096], hex[SHA256_HEX_LEN + 1];
    if (path[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(abs, sizeof abs, "%s/%s", cwd, path);
    else
        snprintf(abs, sizeof abs, "%s", path);
    if (sha256_hex(abs, strlen(abs), hex) != 0)
        snprintf(hex, sizeof hex, "%ld", (long)getpid());
    snprintf(out, cap, "%s/anvil-%.12s-%s", dir && *dir ? dir : "/tmp", hex, base ? base + 1 : path);
}

/* Writes text to a temporary file beside path, fsynced, and renames it
 * over path: a reader never sees half a file, and a failure leaves what was
 * at path as it was. Returns 0, or -1 with why (errno's words). */
static int place_text(const char *path, const char *text, char *why, size_t whylen)
{
    char *tmp = tmp_name(path);
    int rc = -1;
    if (!tmp)
        snprintf(why, whylen, "out of memory");
    else if (file_mkdir_parents(path) != 0 || write_synced(tmp, text) != 0)
        snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno));
    else if (rename(tmp, path) != 0)
        snprintf(why, whylen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    else
        rc = 0;
    if (rc != 0 && tmp)
        unlink(tmp);            /* a partial temporary file must not linger */
    free(tmp);
    return rc;
}

int artifact_place_text(const char *path, const char *text, char *err, size_t errlen)
{
    return place_text(path, text, err, errlen);
}

int artifact_write_file(const char *path, const cJSON *j, char *err, size_t errlen)
{
    char *text = artifact_print(j);
    if (!text) {
        snprintf(err, errlen, "out of memory rendering %s", path);
        return -1;
    }
    int rc = -1;
    char why[600] = "";
    if (!strcmp(path, "-")) {       /* stdout */
        rc = puts(text) >= 0 && fflush(stdout) == 0 ? 0 : -1;
        if (rc)
            snprintf(err, errlen, "cannot write the artifact to stdout: %s", strerror(errno));
    } else if (special_target(path)) {     /* a device, pipe or symlink: written in place */
        if ((rc = write_synced(path, text)) != 0)
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    } else if ((rc = place_text(path, text, why, sizeof why)) != 0) {
        /* the measurements are not lost: put them elsewhere, the same way, so an
         * earlier fallback of this path is replaced whole or left as it was */
        char fb[1200], fbwhy[600];
        artifact_fallback_path(path, fb, sizeof fb);
        if (place_text(fb, text, fbwhy, sizeof fbwhy) == 0)
            snprintf(err, errlen, "%.600s; the artifact was written to %s instead", why, fb);
        else
            snprintf(err, errlen, "%.600s; the fallback %s failed too: %.300s", why, fb, fbwhy);
    }
    free(text);
    return rc;
}

/* ---- checked reading ---- */

void jread_init(struct jread *r, const char *name, char *err, size_t errlen)
{
    *r = (struct jread){.name = name, .err = err, .errlen = errlen};
    err[0] = '\0';
}

int jread_document(struct jread *r, const cJSON *j, const char *name, char *err, size_t errlen)
{
    jread_init(r, name, err, errlen);
    return cJSON_IsObject(j) ? 0 : jread_fail(r, NULL, "not a JSON object");
}

int jread_fail(struct jread *r, const char *key, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    r->failed = true;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *sep = r->path[0] && key ? "." : "";
    const char *k = key ? key : "";
    if (!r->path[0] && !key)
        snprintf(r->err, r->errlen, "%s%s%s", r->name ? r->name : "", r->name ? ": " : "", what);
    else
        snprintf(r->err, r->errlen, "%s%s%s%s%s: %s", r->name ? r->name : "", r->name ? ": " : "",
                 r->path, sep, k, what);
    for (char *c = r->err; *c; c++)     /* keys and values quoted from the file stay on one line */
        if ((unsigned char)*c < 0x20)
            *c = '?';
    return -1;
}

size_t jread_enter(struct jread *r, const char *key)
{
    size_t mark = strlen(r->path);
    snprintf(r->path + mark, sizeof r->path - mark, "%s%s", mark ? "." : "", key);
    return mark;
}

size_t jread_enter_index(struct jread *r, int i)
{
    size_t mark = strlen(r->path);
    snprintf(r->path + mark, sizeof r->path - mark, "[%d]", i);
    return mark;
}

void jread_leave(struct jread *r, size_t mark)
{
    r->path[mark] = '\0';
}

int jread_each(struct jread *r, const char *key, const cJSON *a,
               void (*read_one)(struct jread *r, const cJSON *item, int i, void *ctx), void *ctx)
{
    size_t mark = jread_enter(r, key);
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, a) {
        if (r->failed)
            break;
        size_t m = jread_enter_index(r, i);
        if (!cJSON_IsObject(e))
            jread_fail(r, NULL, "expected an object");
        else
            read_one(r, e, i, ctx);
        jread_leave(r, m);
        i++;
    }
    jread_leave(r, mark);
    return r->failed ? -1 : 0;
}

/* "a string", "null", ...: what an item is, for messages. */
static const char *kind_of(const cJSON *v)
{
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "something else";
}

static int wrong(struct jread *r, const char *key, const char *want, const cJSON *v)
{
    return jread_fail(r, key, "expected %s, got %s", want, kind_of(v));
}

const cJSON *jread_item(struct jread *r, const cJSON *o, const char *key, unsigned flags)
{
    if (r->failed)
        return NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && !(flags & JR_OPTIONAL))
        jread_fail(r, key, "missing");
    return v;
}

/* The item when it holds a value; NULL when it is absent or null and may
 * be, or with an error recorded when it may not. */
static const cJSON *value_of(struct jread *r, const cJSON *o, const char *key, unsigned flags,
                             const char *want)
{
    const cJSON *v = jread_item(r, o, key, flags);
    if (!v)
        return NULL;
    if (cJSON_IsNull(v)) {
        if (!(flags & JR_NULLABLE))
            wrong(r, key, want, v);
        return NULL;
    }
    return v;
}

int jread_string(struct jread *r, const cJSON *o, const char *key, unsigned flags, char **out)
{
    *out = NULL;
    const char *want = flags & JR_NONEMPTY ? "a non-empty string" : "a string";
    const cJSON *v = value_of(r, o, key, flags, want);
    if (!v)
        return r->failed ? -1 : 0;
    if (!cJSON_IsString(v) || ((flags & JR_NONEMPTY) && !v->valuestring[0]))
        return wrong(r, key, want, v);
    if (!(*out = strdup(v->valuestring)))
        return jread_fail(r, key, "out of memory");
    return 0;
}

int jread_schema(struct jread *r, const cJSON *o, unsigned flags, const char *want, char **out)
{
    if (jread_string(r, o, "schema", flags, out) != 0)
        return -1;
    if (*out && strcmp(*out, want) != 0)
        return jread_fail(r, "schema", "expected \"%s\", got \"%s\"", want, *out);
    return 0;
}

int jread_number(struct jread *r, const cJSON *o, const char *key, unsigned flags, double *out)
{
    *out = NAN;
    const cJSON *v = value_of(r, o, key, flags | JR_NULLABLE, "a number");
    if (!v)
        return r->failed ? -1 : 0;
    if ((flags & JR_INF) && cJSON_IsString(v) && !strcmp(v->valuestring, "inf")) {
        *out = INFINITY;
        return 0;
    }
    if (!cJSON_IsNumber(v))
        return wrong(r, key, flags & JR_INF ? "a number or \"inf\"" : "a number", v);
    *out = v->valuedouble;
    return 0;
}

int jread_whole(struct jread *r, const cJSON *o, const char *key, unsigned flags, long min, long *out)
{
    *out = ARTIFACT_NONE;
    char want[48];
    snprintf(want, sizeof want, "a whole number ≥ %ld", min);
    const cJSON *v = value_of(r, o, key, flags, want);
    if (!v)
        return r->failed ? -1 : 0;
    if (!cJSON_IsNumber(v))
        return wrong(r, key, want, v);
    double d = v->valuedouble;
    if (!(d >= (double)min && d <= 9007199254740992.0 && d == floor(d)))
        return jread_fail(r, key, "expected %s, got %.17g", want, d);
    *out = (long)d;
    return 0;
}

int jread_bool(struct jread *r, const cJSON *o, const char *key, unsigned flags, bool *out)
{
    *out = false;
    const cJSON *v = jread_item(r, o, key, flags);
    if (!v)
        return r->failed ? -1 : 0;
    if (!cJSON_IsBool(v))
        return wrong(r, key, "true or false", v);
    *out = cJSON_IsTrue(v);
    return 0;
}

const cJSON *jread_object(struct jread *r, const cJSON *o, const char *key, unsigned flags)
{
    const cJSON *v = value_of(r, o, key, flags, "an object");
    if (v && !cJSON_IsObject(v)) {
        wrong(r, key, "an object", v);
        return NULL;
    }
    return v;
}

const cJSON *jread_array(struct jread *r, const cJSON *o, const char *key, unsigned flags)
{
    const cJSON *v = value_of(r, o, key, flags, "an array");
    if (v && !cJSON_IsArray(v)) {
        wrong(r, key, "an array", v);
        return NULL;
    }
    return v;
}

void artifact_strings_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

int jread_strings(struct jread *r, const cJSON *o, const char *key, unsigned flags, char ***v, size_t *n)
{
    *v = NULL;
    *n = 0;
    const cJSON *a = jread_array(r, o, key, flags);
    if (!a)
        return r->failed ? -1 : 0;
    size_t len = (size_t)cJSON_GetArraySize(a);
    char **s = calloc(len ? len : 1, sizeof *s);
    if (!s)
        return jread_fail(r, key, "out of memory");
    size_t k = 0, mark = jread_enter(r, key);
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        size_t m = jread_enter_index(r, (int)k);
        if (!cJSON_IsString(e))
            wrong(r, NULL, "a string", e);
        else if (!(s[k] = strdup(e->valuestring)))
            jread_fail(r, NULL, "out of memory");
        jread_leave(r, m);
        if (r->failed)
            break;
        k++;
    }
    jread_leave(r, mark);
    if (r->failed) {
        artifact_strings_free(s, k);
        return -1;
    }
    *v = s;
    *n = len;
    return 0;
}

int jread_numbers(struct jread *r, const cJSON *o, const char *key, unsigned flags, double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
    const cJSON *a = jread_array(r, o, key, flags);
    if (!a)
        return r->failed ? -1 : 0;
    if ((size_t)cJSON_GetArraySize(a) != n)
        return jread_fail(r, key, "expected %zu numbers, got %d", n, cJSON_GetArraySize(a));
    size_t k = 0, mark = jread_enter(r, key);
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (cJSON_IsNumber(e)) {
            v[k] = e->valuedouble;
        } else if (!cJSON_IsNull(e)) {
            size_t m = jread_enter_index(r, (int)k);
            wrong(r, NULL, "a number", e);
            jread_leave(r, m);
            break;
        }
        k++;
    }
    jread_leave(r, mark);
    return r->failed ? -1 : 0;
}

int jread_parse(struct jread *r, const char *text, size_t len, cJSON **out)
{
    *out = cJSON_ParseWithLength(text ? text : "", len);
    if (cJSON_IsObject(*out))
        return 0;
    jread_fail(r, NULL, *out ? "not a JSON object" : len ? "not valid JSON" : "empty file");
    cJSON_Delete(*out);
    *out = NULL;
    return -1;
}

cJSON *artifact_parse(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    cJSON *j;
    return jread_parse(&r, text, len, &j) == 0 ? j : NULL;
}
