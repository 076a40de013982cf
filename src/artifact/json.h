/* json.h — what every artifact's writer and reader share: numbers written
 * exactly (or null when undefined), files replaced atomically, and a
 * checked reader whose lookups name the file and the key path of the first
 * missing or mistyped field ("results/x.json: metrics.ttft_p50_ms: expected
 * a number, got a string"). */
#ifndef ANVIL_ARTIFACT_JSON_H
#define ANVIL_ARTIFACT_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* A whole number that is absent or null in an artifact (counts are ≥ 0). */
#define ARTIFACT_NONE (-1L)

/* ---- writing ---- */

/* Adds k: v to o, with NaN or ±inf (undefined) written as null, never 0. */
void artifact_add_number(cJSON *o, const char *k, double v);

/* Adds k: v (a whole number), or null when v is ARTIFACT_NONE. */
void artifact_add_whole(cJSON *o, const char *k, long v);

/* Adds k: s, or null when s is NULL. */
void artifact_add_string(cJSON *o, const char *k, const char *s);

/* An array of the n strings v (NULL v with n 0: an empty array). Caller
 * deletes; NULL when memory runs out. */
cJSON *artifact_string_array(char *const *v, size_t n);

/* Renders j pretty-printed with every number in the fewest digits (15 to 17
 * significant) that read back to the same double: cJSON 1.7.15's own printer
 * stops at 15 digits whenever they are within a relative DBL_EPSILON, which
 * can lose the last bit. Returns a malloc'd string, or NULL. */
char *artifact_print(const cJSON *j);

/* Checks, before a run, that an artifact can be written at path (creating
 * its parent directories): not a directory, writable; "-" (stdout) always
 * can. Returns 0, or -1 with why in err. */
int artifact_check_path(const char *path, char *err, size_t errlen);

/* Where the artifact meant for path goes when path cannot take it:
 * $TMPDIR (else /tmp)/anvil-<12 hex digits of the SHA-256 of path made
 * absolute>-<its file name>, so a later process (a resumed sweep) finds the
 * fallback of the same path. */
void artifact_fallback_path(const char *path, char *out, size_t cap);

/* Puts text at path (creating its parent directory) through a temporary
 * file beside it, fsynced and renamed into place, with no fallback: on
 * failure what was at path is left as it was. For moving an artifact from
 * its fallback back into place. Returns 0, or -1 with why in err. */
int artifact_place_text(const char *path, const char *text, char *err, size_t errlen);

/* Writes j (pretty-printed by artifact_print, then a newline) to path,
 * creating the parent directory, through a temporary file in the same
 * directory, fsynced and renamed into place, so a reader never sees half a
 * file — unless path is a device, pipe or symlink, which is written in
 * place, or "-", stdout. When the write fails (disk full, ...) the
 * temporary file is removed and the artifact is written to
 * artifact_fallback_path(path) instead; the message names it.
 * The text is streamed: memory holds one top-level member (or one element
 * of a top-level array) at a time, never the whole text or a copy of j.
 * Returns 0, or -1 with a message in err (also when the fallback took it). */
int artifact_write_file(const char *path, const cJSON *j, char *err, size_t errlen);

/* Further elements of a top-level array of a document, produced one at a
 * time while it is written (a run's records, read back from where they
 * were kept), so that memory holds one of them, whatever their number. */
struct artifact_rows {
    const char *key;    /* the top-level key of the document whose value (an
                           array) the rows are appended to */
    /* The next element, owned by the writer from then on (it deletes it
     * once printed), or NULL at the end; on a failure, NULL with *error set
     * to 1 (the writer deletes anything returned with it). Called until
     * NULL, or fewer times when the write fails first. */
    cJSON *(*next)(void *ud, int *error);
    void *ud;           /* passed to next */
    const char *why;    /* may be NULL: the words of next's failure, read
                           after it sets *error (a buffer in ud) */
};

/* artifact_write_file of j with each rows[i]'s elements appended, after
 * the existing ones, to the array j[rows[i].key] in the text (j itself is
 * not changed): the text is the one artifact_write_file would give j holding
 * them all. n_rows ≥ 0 (0: rows may be NULL). Each key names a distinct
 * array of j, else -1 before anything is written. A failed next leaves no
 * document: the temporary file is removed and what was at path stays (a
 * device or stdout keeps what it was sent), -1 with "cannot write PATH: the
 * rows of KEY failed: WHY". Other failures are artifact_write_file's, the
 * fallback included (it gets the rows written so far and the rest).
 * Returns 0 or -1 with a message in err. */
int artifact_write_streamed(const char *path, const cJSON *j, const struct artifact_rows *rows,
                            int n_rows, char *err, size_t errlen);

/* ---- checked reading ---- */

/* Flags of the jread_* lookups. */
#define JR_OPTIONAL 1u  /* the key may be absent: the value reads as none (NULL, NaN,
                           ARTIFACT_NONE, false) */
#define JR_NULLABLE 2u  /* null is allowed and reads as none (numbers always allow null) */
#define JR_NONEMPTY 4u  /* strings: "" is an error */
#define JR_INF      8u  /* numbers: the string "inf" reads as INFINITY */

/* One document being read. Every lookup is checked; the first error is
 * kept in err as "NAME: PATH: what" (NAME omitted when NULL) and makes every
 * later lookup do nothing (a sticky error: read a whole object, then look
 * at failed once). */
struct jread {
    const char *name;       /* the file (or what the document is) for messages; may be NULL */
    char *err;              /* the caller's buffer, errlen bytes */
    size_t errlen;
    bool failed;
    char path[512];         /* key path of the object being read: "", "metrics", "rows[3]" */
};

/* Starts reading: no error, path at the top. err must hold errlen ≥ 1 bytes. */
void jread_init(struct jread *r, const char *name, char *err, size_t errlen);

/* jread_init for the document j, which must be a JSON object: else the
 * error "NAME: not a JSON object" is recorded. Every artifact's reader
 * starts here. Returns 0 or -1. */
int jread_document(struct jread *r, const cJSON *j, const char *name, char *err, size_t errlen);

/* Records an error about key (NULL: the current object itself) unless one
 * is recorded already; the message is printf-formatted. Returns -1. */
int jread_fail(struct jread *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Descends into key (an object member) or index i (an array element) of
 * the current path; returns a mark for jread_leave, which restores the
 * path. */
size_t jread_enter(struct jread *r, const char *key);
size_t jread_enter_index(struct jread *r, int i);
void jread_leave(struct jread *r, size_t mark);

/* Reads the array a, the value of key in the current object (NULL: nothing
 * to read), one element at a time until an error is recorded: each is
 * entered as key[i], must be an object (else the error "expected an object"
 * there) and is passed to read_one with its index i and ctx, which stores it
 * wherever the caller allocated room. Returns 0, or -1 when an error is
 * recorded (by now or before). */
int jread_each(struct jread *r, const char *key, const cJSON *a,
               void (*read_one)(struct jread *r, const cJSON *item, int i, void *ctx), void *ctx);

/* o[key]: the item, or NULL when it is absent (an error unless
 * JR_OPTIONAL) or after an error. */
const cJSON *jread_item(struct jread *r, const cJSON *o, const char *key, unsigned flags);

/* o[key] as a string, copied into *out (malloc'd; the caller frees);
 * *out = NULL when absent (JR_OPTIONAL) or null (JR_NULLABLE). Returns 0, or
 * -1 (recorded; *out = NULL) when missing, mistyped or out of memory. */
int jread_string(struct jread *r, const cJSON *o, const char *key, unsigned flags, char **out);

/* o["schema"] as a string into *out (as jread_string with flags), which
 * must be want when present: else the error
 * "schema: expected \"WANT\", got \"GOT\"" (*out is kept; the caller frees).
 * Returns 0 or -1 (recorded). */
int jread_schema(struct jread *r, const cJSON *o, unsigned flags, const char *want, char **out);

/* o[key] as a number; null (always allowed), or absent with JR_OPTIONAL,
 * reads as NaN. Returns 0 or -1 (recorded; *out = NaN). */
int jread_number(struct jread *r, const cJSON *o, const char *key, unsigned flags, double *out);

/* o[key] as a whole number ≥ min (min ≥ 0); absent (JR_OPTIONAL) or null
 * (JR_NULLABLE) reads as ARTIFACT_NONE. Returns 0 or -1 (recorded; *out =
 * ARTIFACT_NONE). */
int jread_whole(struct jread *r, const cJSON *o, const char *key, unsigned flags, long min, long *out);

/* o[key] as true or false; absent (JR_OPTIONAL) reads as false. Returns 0
 * or -1 (recorded). */
int jread_bool(struct jread *r, const cJSON *o, const char *key, unsigned flags, bool *out);

/* o[key] as an object (or array): the item, or NULL when absent
 * (JR_OPTIONAL), null (JR_NULLABLE) or on an error (then recorded). */
const cJSON *jread_object(struct jread *r, const cJSON *o, const char *key, unsigned flags);
const cJSON *jread_array(struct jread *r, const cJSON *o, const char *key, unsigned flags);

/* o[key] as an array of strings, copied into *v (malloc'd array of malloc'd
 * strings, *n of them; free with artifact_strings_free). Absent
 * (JR_OPTIONAL) or null (JR_NULLABLE) reads as *v = NULL, *n = 0. Returns 0
 * or -1 (recorded). */
int jread_strings(struct jread *r, const cJSON *o, const char *key, unsigned flags, char ***v, size_t *n);

/* o[key] as an array of exactly n numbers (null reads as NaN) into v.
 * Returns 0 or -1 (recorded). */
int jread_numbers(struct jread *r, const cJSON *o, const char *key, unsigned flags, double *v, size_t n);

/* Frees n strings of v and v. */
void artifact_strings_free(char **v, size_t n);

/* Parses text (len bytes; need not be NUL-terminated) into *out (caller
 * deletes): a JSON object. Returns 0, or -1 with "NAME: not valid JSON" (or
 * "not a JSON object") in r. */
int jread_parse(struct jread *r, const char *text, size_t len, cJSON **out);

/* jread_init then jread_parse: text (len bytes) of the document name (may
 * be NULL) as a JSON object. Returns it (the caller deletes), or NULL with
 * jread_parse's message in err (errlen ≥ 1 bytes). */
cJSON *artifact_parse(const char *text, size_t len, const char *name, char *err, size_t errlen);

#endif
