/* journal_iter.c — a run's records read back from its journal one line at
 * a time (stats/record.h's rec_iter), so that what is computed over them
 * after the load never holds them all (docs/ARTIFACTS.md, "The journal").
 *
 * The lines come from the file, then from the lines a failed write kept in
 * memory (the spill, records_log.c). A record seen twice (a write that
 * failed after placing part of its lines) is yielded once; a damaged line
 * (cut by a kill or a full disk) is skipped and counted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/journal.h"
#include "run/stage.h"

static int cmp_count(const void *a, const void *b)
{
    int x = ((const struct text_count *)a)->index, y = ((const struct text_count *)b)->index;
    return (x > y) - (x < y);
}

/* The next line (without its newline) into j->line, and where it was;
 * 0 at the end. */
static int read_line(struct jiter *j, int64_t *pos)
{
    if (!j->in_spill) {
        *pos = ftello(j->f);
        ssize_t n = getline(&j->line, &j->cap, j->f);
        j->lineno += n > 0;
        if (n > 0) {
            if (j->line[n - 1] == '\n')
                j->line[n - 1] = '\0';
            return 1;
        }
        j->in_spill = true;
    }
    if (!j->spill || j->spill_at >= j->spill->len)
        return 0;
    const char *s = j->spill->data + j->spill_at, *nl = memchr(s, '\n', j->spill->len - j->spill_at);
    size_t len = nl ? (size_t)(nl - s) : j->spill->len - j->spill_at;
    if (len + 1 > j->cap) {
        char *p = realloc(j->line, len + 1);
        if (!p)
            return -1;
        j->line = p;
        j->cap = len + 1;
    }
    memcpy(j->line, s, len);
    j->line[len] = '\0';
    *pos = -(int64_t)j->spill_at - 1;
    j->spill_at += len + 1;
    return 1;
}

/* Parses j->line into j->rec. Returns 0, or -1 for a damaged line (the
 * first one's reason kept). */
static int parse(struct jiter *j)
{
    cJSON *c = cJSON_Parse(j->line);
    char name[4300], why[600];
    if (j->in_spill)
        snprintf(name, sizeof name, "%s (a line kept in memory)", j->path);
    else
        snprintf(name, sizeof name, "%s:%ld", j->path, j->lineno);
    int rc = c ? journal_record_read(c, name, j->t0, &j->rec, why, sizeof why) : -1;
    if (!c)
        snprintf(why, sizeof why, "%.500s: not JSON", name);
    cJSON_Delete(c);
    if (rc != 0) {
        if (!j->damaged)
            snprintf(j->first_damaged, sizeof j->first_damaged, "%s", why);
        return -1;
    }
    j->have = true;
    /* a count warm-up's index is not a measured one's; duration mode's warm-ups are numbered as
     * measured requests (dedupe_warmups), and their tokens in the window count */
    bool counted = !j->rec.warmup || j->dedupe_warmups;
    struct text_count key = {.index = j->rec.index}, *hit =
        j->n_counts && counted ? bsearch(&key, j->counts, j->n_counts, sizeof key, cmp_count) : NULL;
    if (hit)
        j->rec.text_tokens = hit->tokens;
    return 0;
}

static void drop_current(struct jiter *j)
{
    if (j->have)
        record_free(&j->rec);
    j->have = false;
}

/* Whether j->rec was yielded before (marks it yielded). */
static bool seen_before(struct jiter *j)
{
    long i = j->rec.index;
    if (!j->seen || i < 0 || i >= j->n_index || (j->rec.warmup && !j->dedupe_warmups))
        return false;
    bool was = j->seen[i / 8] & (1u << (i % 8));
    j->seen[i / 8] |= (unsigned char)(1u << (i % 8));
    return was;
}

static const struct req_record *jiter_next(struct rec_iter *it)
{
    struct jiter *j = it->ud;
    for (;;) {
        drop_current(j);
        int64_t pos;
        int got = read_line(j, &pos);
        if (got < 0)
            snprintf(it->err, sizeof it->err, "out of memory reading %.400s", j->path);
        if (got <= 0)
            return NULL;
        if (parse(j) != 0) {
            j->damaged++;
            continue;
        }
        j->pos = pos;
        if ((j->skip_warmup && j->rec.warmup) || seen_before(j))
            continue;
        return &j->rec;
    }
}

static int jiter_rewind(struct rec_iter *it)
{
    struct jiter *j = it->ud;
    drop_current(j);
    j->in_spill = false;
    j->spill_at = 0;
    j->damaged = 0;
    j->lineno = 1;
    if (j->seen)
        memset(j->seen, 0, (size_t)(j->n_index + 7) / 8);
    if (fseeko(j->f, j->data_at, SEEK_SET) != 0) {
        snprintf(it->err, sizeof it->err, "cannot read %.400s again: %s", j->path, strerror(errno));
        return -1;
    }
    return 0;
}

int jiter_open(struct jiter *j, struct rec_iter *it, const char *path, const struct jiter_opts *o,
               char *err, size_t errlen)
{
    *j = (struct jiter){.spill = o->spill, .counts = o->counts, .n_counts = o->n_counts,
                        .skip_warmup = o->skip_warmup, .dedupe_warmups = o->dedupe_warmups,
                        .n_index = o->n_index > 0 ? o->n_index : 0, .lineno = 1};
    snprintf(j->path, sizeof j->path, "%s", path);
    *it = (struct rec_iter){.next = jiter_next, .rewind = jiter_rewind, .ud = j};
    if (!(j->f = fopen(path, "r"))) {
        snprintf(err, errlen, "cannot read the journal %.600s: %s", path, strerror(errno));
        return -1;
    }
    ssize_t n = getline(&j->line, &j->cap, j->f);
    cJSON *h = n > 0 ? cJSON_Parse(j->line) : NULL;     /* line 1: the header */
    struct journal_opts jo;
    const cJSON *settings;
    const char *run_id, *artifact;
    char why[600] = "no header line";
    int rc = h ? journal_header_read(h, path, &j->t0, &jo, &settings, &run_id, &artifact, why, sizeof why) : -1;
    cJSON_Delete(h);
    if (rc != 0 || (j->n_index && !(j->seen = calloc((size_t)(j->n_index + 7) / 8, 1)))) {
        snprintf(err, errlen, "%.900s", rc != 0 ? why : "out of memory");
        jiter_close(j);
        return -1;
    }
    j->data_at = ftello(j->f);
    return 0;
}

const struct req_record *jiter_at(struct jiter *j, int64_t pos)
{
    drop_current(j);
    if (pos >= 0) {
        j->in_spill = false;
        if (fseeko(j->f, pos, SEEK_SET) != 0)
            return NULL;
    } else {
        j->in_spill = true;
        j->spill_at = (size_t)(-pos - 1);
    }
    int64_t at;
    if (read_line(j, &at) <= 0 || parse(j) != 0)
        return NULL;
    return &j->rec;
}

void jiter_close(struct jiter *j)
{
    drop_current(j);
    if (j->f)
        fclose(j->f);
    free(j->line);
    free(j->seen);
    j->f = NULL;
    j->line = NULL;
    j->seen = NULL;
}

void text_counts_sort(struct text_count *c, size_t n)
{
    if (n)
        qsort(c, n, sizeof *c, cmp_count);
}
