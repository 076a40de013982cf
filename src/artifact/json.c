/* json.c — exact numbers, atomic files and the checked reader. */
#include "artifact/json.h"

#include <errno.h>
#include <fcntl.h>
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

/* ---- streaming an artifact ----
 * The document goes out a piece at a time through a buffer: each top-level
 * member, or each element of a top-level array, is copied, given exact
 * numbers and printed by cJSON on its own, inside a one-member wrapper that
 * puts it at the depth it has in the whole document, so the text is
 * byte-for-byte artifact_print's while memory holds one piece. */

/* Where the text goes: a file descriptor written through buf. A failure
 * of the temporary file beside path switches to a temporary file beside
 * the fallback, copying what reached the disk, so rows already consumed
 * are not lost. */
struct sink {
    int fd;                 /* -1 when the target could not be opened */
    const char *path;       /* the artifact's path ("-" for stdout) */
    char *tmp;              /* the temporary file written (NULL: written in place) */
    char fb[1200];          /* the fallback, once switched to it */
    char why[600];          /* the first failure: the target's */
    char fbwhy[600];        /* the fallback's failure */
    bool switched;          /* writing the fallback's temporary file */
    bool failed;            /* no target left: nothing more is written */
    off_t done;             /* bytes that reached the file */
    size_t used;            /* bytes waiting in buf */
    char buf[1 << 16];
};

/* Writes the n bytes at p to fd. Returns 0, or -1 with errno set. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copies the first n bytes of the file from to the descriptor fd.
 * Returns 0, or -1 with errno set. */
static int copy_prefix(const char *from, int fd, off_t n)
{
    char b[16384];
    if (n == 0)
        return 0;               /* nothing reached it: it may not even exist */
    int in = open(from, O_RDONLY | O_CLOEXEC), rc = in < 0 ? -1 : 0;
    while (rc == 0 && n > 0) {
        ssize_t r = read(in, b, n < (off_t)sizeof b ? (size_t)n : sizeof b);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            errno = EIO;        /* shorter than what was written to it */
        if (r <= 0 || write_all(fd, b, (size_t)r) != 0)
            rc = -1;
        else
            n -= r;
    }
    int e = errno;
    if (in >= 0)
        close(in);
    errno = e;
    return rc;
}

/* Records why the target failed (errno's words after what), then switches
 * a temporary file's writing to the fallback's, or gives up. */
static void sink_fail(struct sink *s, const char *what, const char *name, int error)
{
    char *why = s->switched ? s->fbwhy : s->why;
    snprintf(why, sizeof s->why, "%s %s: %s", what, name, strerror(error));
    if (s->fd >= 0 && s->fd != STDOUT_FILENO)
        close(s->fd);
    s->fd = -1;
    if (!s->tmp || s->switched) {
        s->failed = true;
        if (s->tmp)
            unlink(s->tmp);     /* a partial temporary file must not linger */
        return;
    }
    /* the measurements are not lost: they go to the fallback instead, the
     * same way, so an earlier fallback of this path is replaced whole or
     * left as it was */
    s->switched = true;
    artifact_fallback_path(s->path, s->fb, sizeof s->fb);
    char *fbtmp = tmp_name(s->fb);
    if (!fbtmp) {
        snprintf(s->fbwhy, sizeof s->fbwhy, "out of memory");
    } else if (file_mkdir_parents(fbtmp) != 0
               || (s->fd = open(fbtmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
        snprintf(s->fbwhy, sizeof s->fbwhy, "cannot write %s: %s", fbtmp, strerror(errno));
    } else if (copy_prefix(s->tmp, s->fd, s->done) != 0) {
        snprintf(s->fbwhy, sizeof s->fbwhy, "cannot copy %s to %s: %s", s->tmp, fbtmp, strerror(errno));
        close(s->fd);
        s->fd = -1;
        unlink(fbtmp);
    }
    unlink(s->tmp);             /* a partial temporary file must not linger */
    free(s->tmp);
    s->tmp = fbtmp;
    s->failed = s->fd < 0;
    if (s->failed) {
        free(s->tmp);
        s->tmp = NULL;
    }
}

/* The file being written now, for messages. */
static const char *sink_name(const struct sink *s)
{
    return s->tmp ? s->tmp : !strcmp(s->path, "-") ? "the artifact to stdout" : s->path;
}

/* Writes what waits in buf. Returns 0, or -1 when no target is left. */
static int sink_drain(struct sink *s)
{
    while (!s->failed && s->used) {
        ssize_t w = write(s->fd, s->buf, s->used);
        if (w > 0) {
            memmove(s->buf, s->buf + w, s->used - (size_t)w);
            s->used -= (size_t)w;
            s->done += w;
        } else if (w == 0 || errno != EINTR) {
            sink_fail(s, "cannot write", sink_name(s), w == 0 ? EIO : errno);
        }
    }
    return s->failed ? -1 : 0;
}

static void sink_put(struct sink *s, const char *p, size_t n)
{
    while (n && !s->failed) {
        if (s->used == sizeof s->buf && sink_drain(s) != 0)
            return;
        size_t k = n < sizeof s->buf - s->used ? n : sizeof s->buf - s->used;
        memcpy(s->buf + s->used, p, k);
        s->used += k;
        p += k;
        n -= k;
    }
}

/* Opens the target of path: stdout for "-", a device, pipe or symlink in
 * place, else the temporary file beside it (a failure to open it switches
 * to the fallback at once). Returns 0, or -1 with why in err. */
static int sink_open(struct sink *s, const char *path, char *err, size_t errlen)
{
    s->fd = -1;
    s->path = path;
    if (!strcmp(path, "-")) {
        fflush(stdout);         /* what stdout holds goes first */
        s->fd = STDOUT_FILENO;
    } else if (special_target(path)) {
        if ((s->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0) {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
            return -1;
        }
    } else if (!(s->tmp = tmp_name(path))) {
        snprintf(err, errlen, "out of memory writing %s", path);
        return -1;
    } else if (file_mkdir_parents(path) != 0
               || (s->fd = open(s->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
        sink_fail(s, "cannot write", s->tmp, errno);
    }
    return 0;
}

/* Writes what is left, flushed to the disk, and renames the temporary file
 * into place; a failure of the target's moves to the fallback and tries
 * again there. Returns 0 when the target took it. */
static int sink_finish(struct sink *s)
{
    while (!s->failed) {
        if (sink_drain(s) != 0 || s->fd == STDOUT_FILENO)
            break;
        /* fsync fails with EINVAL on pipes and devices: nothing to sync there */
        if (fsync(s->fd) != 0 && errno != EINVAL && errno != ENOTSUP) {
            sink_fail(s, "cannot write", sink_name(s), errno);
            continue;
        }
        int fd = s->fd;
        s->fd = -1;
        if (close(fd) != 0) {
            sink_fail(s, "cannot write", sink_name(s), errno);
            continue;
        }
        if (!s->tmp)
            break;
        const char *to = s->switched ? s->fb : s->path;
        if (rename(s->tmp, to) == 0)
            break;
        int error = errno;
        char what[1400];
        snprintf(what, sizeof what, "cannot rename %s to", s->tmp);
        sink_fail(s, what, to, error);
    }
    return s->failed || s->switched ? -1 : 0;
}

/* Abandons a document left unfinished: its temporary file is removed. */
static void sink_abandon(struct sink *s)
{
    if (s->fd >= 0 && s->fd != STDOUT_FILENO)
        close(s->fd);
    if (s->tmp)
        unlink(s->tmp);
    free(s->tmp);
    s->tmp = NULL;
}

/* The failure's words in err: the target's, and where the artifact went. */
static void sink_message(const struct sink *s, char *err, size_t errlen)
{
    if (!s->switched)
        snprintf(err, errlen, "%s", s->why);
    else if (!s->failed)
        snprintf(err, errlen, "%.600s; the artifact was written to %s instead", s->why, s->fb);
    else
        snprintf(err, errlen, "%.600s; the fallback %s failed too: %.300s", s->why, s->fb, s->fbwhy);
}

/* Prints value (owned: deleted here) as the member key of a one-member
 * object, with exact numbers: "{\n\t\"KEY\":\tVALUE\n}". NULL when memory
 * runs out. */
static char *print_wrapped(const char *key, cJSON *value)
{
    cJSON *o = value ? cJSON_CreateObject() : NULL;
    if (!o || !cJSON_AddItemToObject(o, key, value)) {
        cJSON_Delete(o);
        cJSON_Delete(value);
        return NULL;
    }
    char *text = exact_numbers(o) == 0 ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    return text;
}

/* Puts the text of print_wrapped(key, value) less skip bytes in front and
 * cut at the end. Returns 0, or -1 when memory ran out. */
static int put_wrapped(struct sink *s, const char *key, cJSON *value, size_t skip, size_t cut)
{
    char *text = print_wrapped(key, value);
    if (!text)
        return -1;
    size_t n = strlen(text);
    if (n >= skip + cut)
        sink_put(s, text + skip, n - skip - cut);
    free(text);
    return 0;
}

/* An element of a top-level array, owned (deleted here): printed inside
 * {"": [e]}, whose text is `{\n\t"":\t[` (8 bytes), e at the depth of a
 * top-level array's element, then `]\n}` (3). */
static int put_element(struct sink *s, cJSON *e, bool first)
{
    cJSON *a = cJSON_CreateArray();
    if (!a || !cJSON_AddItemToArray(a, e)) {
        cJSON_Delete(a);
        cJSON_Delete(e);
        return -1;
    }
    if (!first)
        sink_put(s, ", ", 2);
    return put_wrapped(s, "", a, 8, 3);
}

/* A top-level array member m, its elements one at a time, then those of
 * rows (NULL: none). Returns 0, or -1 with why in err. */
static int put_array(struct sink *s, const cJSON *m, const struct artifact_rows *rows, char *err, size_t errlen)
{
    /* `{\n` + `\t"KEY":\t[` + `]\n}` */
    if (put_wrapped(s, m->string, cJSON_CreateArray(), 2, 3) != 0)
        goto oom;
    bool first = true;
    for (const cJSON *e = m->child; e && !s->failed; e = e->next, first = false)
        if (put_element(s, cJSON_Duplicate(e, true), first) != 0)
            goto oom;
    for (int error = 0; rows && !s->failed; first = false) {
        cJSON *e = rows->next(rows->ud, &error);
        if (error) {
            cJSON_Delete(e);
            snprintf(err, errlen, "the rows of %s failed: %s", m->string,
                     rows->why && rows->why[0] ? rows->why : "no row could be produced");
            return -1;
        }
        if (!e)
            break;
        if (put_element(s, e, first) != 0)
            goto oom;
    }
    sink_put(s, "]", 1);
    return 0;
oom:
    snprintf(err, errlen, "out of memory rendering %s", s->path);
    return -1;
}

/* The document j as artifact_print renders it, and a newline. Returns 0,
 * or -1 with why in err (out of memory, a failed callback). */
static int put_document(struct sink *s, const cJSON *j, const struct artifact_rows *rows,
                        const cJSON **streamed, int n_rows, char *err, size_t errlen)
{
    if (!cJSON_IsObject(j)) {
        char *text = artifact_print(j);
        if (!text) {
            snprintf(err, errlen, "out of memory rendering %s", s->path);
            return -1;
        }
        sink_put(s, text, strlen(text));
        sink_put(s, "\n", 1);
        free(text);
        return 0;
    }
    sink_put(s, "{\n", 2);
    for (const cJSON *m = j->child; m && !s->failed; m = m->next) {
        const struct artifact_rows *r = NULL;
        for (int i = 0; i < n_rows; i++)
            if (streamed[i] == m)
                r = &rows[i];
        int rc = cJSON_IsArray(m) ? put_array(s, m, r, err, errlen)
               /* `{\n` + `\t"KEY":\tVALUE` + `\n}` */
               : put_wrapped(s, m->string, cJSON_Duplicate(m, true), 2, 2);
        if (rc != 0) {
            if (!cJSON_IsArray(m))
                snprintf(err, errlen, "out of memory rendering %s", s->path);
            return -1;
        }
        sink_put(s, m->next ? ",\n" : "\n", m->next ? 2 : 1);
    }
    sink_put(s, "}\n", 2);
    return 0;
}

/* Finds the member each rows names: an array of j, each named once.
 * Returns 0, or -1 with why in err. */
static int find_streamed(const cJSON *j, const struct artifact_rows *rows, int n_rows,
                         const cJSON **streamed, char *err, size_t errlen)
{
    for (int i = 0; i < n_rows; i++) {
        const cJSON *m = cJSON_IsObject(j) && rows[i].key
                       ? cJSON_GetObjectItemCaseSensitive(j, rows[i].key) : NULL;
        if (!cJSON_IsArray(m) || !rows[i].next) {
            snprintf(err, errlen, "streamed rows: %s is not an array of the document",
                     rows[i].key ? rows[i].key : "(no key)");
            return -1;
        }
        for (int k = 0; k < i; k++)
            if (streamed[k] == m) {
                snprintf(err, errlen, "streamed rows: %s is named twice", rows[i].key);
                return -1;
            }
        streamed[i] = m;
    }
    return 0;
}

int artifact_write_streamed(const char *path, const cJSON *j, const struct artifact_rows *rows,
                            int n_rows, char *err, size_t errlen)
{
    const cJSON **streamed = calloc(n_rows > 0 ? (size_t)n_rows : 1, sizeof *streamed);
    struct sink *s = calloc(1, sizeof *s);
    int rc = -1;
    if (!streamed || !s)
        snprintf(err, errlen, "out of memory writing %s", path);
    else if (find_streamed(j, rows, n_rows, streamed, err, errlen) == 0
             && sink_open(s, path, err, errlen) == 0) {
        if (put_document(s, j, rows, streamed, n_rows, err, errlen) != 0) {
            /* an unfinished document is no artifact: what was at path stays */
            char what[1024];
            snprintf(what, sizeof what, "%s", err);
            snprintf(err, errlen, "cannot write %s: %s", path, what);
            sink_abandon(s);
        } else if ((rc = sink_finish(s)) != 0) {
            sink_message(s, err, errlen);
        }
        free(s->tmp);
    }
    free(streamed);
    free(s);
    return rc;
}

int artifact_write_file(const char *path, const cJSON *j, char *err, size_t errlen)
{
    return artifact_write_streamed(path, j, NULL, 0, err, errlen);
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
