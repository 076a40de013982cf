/* records_log.c — the journal's and --requests-out's line per ended request,
 * off the measuring loops' shared lock and their hot path.
 *
 * Each line is built on the measuring thread whose request ended (the
 * driver calls on_record outside its lock) and appended to that loop's own
 * buffer: a memcpy under a mutex only that loop and the flusher take. A
 * flusher thread writes every loop's buffered lines (fwrite + fflush) every
 * RUN_LOG_FLUSH_NS, and once more when the run ends, before the artifact is
 * written. Before, every request's lines were printed and flushed (a write
 * per request) under the lock every loop takes to claim and end requests.
 * What a kill -9 can lose is what ended in the last flush interval — never
 * more than RUN_LOG_FLUSH_NS of ended requests (docs/ARTIFACTS.md). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "artifact/journal.h"
#include "artifact/requests_log.h"
#include "run/stage.h"
#include "stats/tokens.h"

/* The most one loop's unwritten lines may hold before an append fails
 * (counted as a log error): far above what 100 ms of requests write. */
#define LOOP_BUF_MAX ((size_t)1 << 30)

struct log_loop {
    pthread_mutex_t mu;
    struct buf journal, requests;   /* lines not yet handed to the files */
    long errors;                    /* lines that could not be built or kept */
    double warmup_tokens;           /* output tokens of this loop's warm-ups */
};

struct run_log {
    struct run_ctx *x;
    struct log_loop *loops;
    int n;
    struct buf out;                 /* the flusher's: lines being written (swapped in) */
    long write_errors;              /* --requests-out writes that failed */
    long spill_errors;              /* refused journal writes the spill could not keep (memory) */
    long journal_lost;              /* journal lines in writes that failed (a full disk) */
    bool journal_broken;            /* a journal write failed: later lines go to the spill */
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;             /* stop and cv */
    pthread_cond_t cv;
    bool stop;
};

/* line (a JSON object, consumed) printed on one line, every credential of
 * x scrubbed; NULL when out of memory. */
static char *line_of(const struct run_ctx *x, cJSON *line)
{
    char *s = line && secrets_scrub_json(&x->secrets, line) == 0 ? cJSON_PrintUnformatted(line) : NULL;
    cJSON_Delete(line);
    return s;
}

/* Appends s and a newline to b, whole or not at all. Returns 0 or 1 (not kept). */
static int keep(struct buf *b, const char *s)
{
    size_t mark = b->len;
    if (buf_append(b, s, strlen(s)) == 0 && buf_append(b, "\n", 1) == 0)
        return 0;
    b->len = mark;
    return 1;
}

/* Dropped records: what the run needs of rec after the load and cannot
 * read back from its journal line (stage.h, run_ctx.drop): the text of a
 * stream without usage, for the tokenizer; the first failure, for the
 * command's last line. */
static void keep_of_dropped(struct run_ctx *x, const struct req_record *r)
{
    if (r->warmup && !x->c->load.duration_s)
        return;
    bool wanted = r->t_start && r->completion_tokens < 0 && r->text.len > 0 && !r->tool_call_chunks;
    bool failed = r->t_start && r->fail != FAIL_NONE && !r->warmup;
    if (!wanted && !failed)
        return;
    struct run_kept *k = x->res->kept;
    pthread_mutex_lock(&k->mu);
    if (failed && (k->first_fail_index < 0 || r->index < k->first_fail_index)) {
        k->first_fail_index = r->index;
        k->first_fail = r->fail;
        snprintf(k->first_fail_msg, sizeof k->first_fail_msg, "%s", r->fail_msg);
    }
    if (wanted && k->n_texts < COUNT_MAX_STREAMS &&
        (k->texts || (k->texts = calloc(COUNT_MAX_STREAMS, sizeof *k->texts)))) {
        struct text_count *t = &k->texts[k->n_texts];
        *t = (struct text_count){.index = r->index, .tokens = -1, .stop = !strcmp(r->finish_reason, "stop")};
        buf_init(&t->text, RECORD_TEXT_MAX);
        if (buf_append(&t->text, r->text.data, r->text.len) == 0)
            k->n_texts++;
        else
            buf_free(&t->text);
    } else if (wanted) {
        k->texts_left++;
    }
    pthread_mutex_unlock(&k->mu);
}

void run_log_record(void *ud, int loop, const struct req_record *rec)
{
    struct run_ctx *x = ud;
    if (x->ts_on)
        ts_add(&x->ts, rec);
    if (x->drop)
        keep_of_dropped(x, rec);
    /* a shard logs the whole plan's request_index (a copy: the driver places its records by its own) */
    struct req_record shown = *rec;
    const struct req_record *r = &shown;
    shown.index = run_record_index(x, rec);
    struct run_log *g = x->log;
    /* the driver never runs more loops than run_log_start was told; if it
     * did, the mutex still keeps a shared buffer whole */
    struct log_loop *l = &g->loops[loop >= 0 && loop < g->n ? loop : 0];
    /* printed outside the loop's mutex; only the copy is under it */
    char *j = x->journal ? line_of(x, journal_record(r, x->journal_t0)) : NULL;
    char *q = x->requests_log ? line_of(x, artifact_requests_line(r, x->res->run_id)) : NULL;
    int bad = (x->journal && !j) + (x->requests_log && !q);
    pthread_mutex_lock(&l->mu);
    if (r->warmup)
        l->warmup_tokens += (double)tokens_of(r, NULL);
    if (j)
        bad += keep(&l->journal, j);
    if (q)
        bad += keep(&l->requests, q);
    l->errors += bad;
    pthread_mutex_unlock(&l->mu);
    free(j);
    free(q);
}

/* The journal's lines in g->out could not be written (a full disk): they
 * are counted lost to the journal, and with dropped records kept in the
 * spill, the only copy of those requests, which the artifact reads back.
 * Once a write failed, later lines go to the spill too: the file keeps a
 * prefix of whole lines (and at most one cut line), which stays readable. */
static void journal_refused(struct run_log *g)
{
    g->journal_broken = true;
    for (size_t k = 0; k < g->out.len; k++)
        g->journal_lost += g->out.data[k] == '\n';
    if (g->x->drop && buf_append(&g->x->res->kept->spill, g->out.data, g->out.len) != 0)
        g->spill_errors++;
}

/* Writes the lines of every loop's buffer `which` to f: each loop's are
 * swapped out under its mutex and written outside it. */
static void flush_to(struct run_log *g, FILE *f, size_t which)
{
    for (int i = 0; i < g->n; i++) {
        struct log_loop *l = &g->loops[i];
        struct buf *b = which ? &l->requests : &l->journal;
        pthread_mutex_lock(&l->mu);
        struct buf t = *b;
        *b = g->out;
        g->out = t;
        pthread_mutex_unlock(&l->mu);
        bool broken = !which && g->journal_broken;
        if (g->out.len && (broken || fwrite(g->out.data, 1, g->out.len, f) != g->out.len || fflush(f) != 0)) {
            if (which)
                g->write_errors++;
            else
                journal_refused(g);
        }
        buf_reset(&g->out);
    }
}

static void flush_all(struct run_log *g)
{
    if (g->x->journal)
        flush_to(g, g->x->journal, 0);
    if (g->x->requests_log)
        flush_to(g, g->x->requests_log, 1);
}

static void *flusher(void *arg)
{
    struct run_log *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long ns = ts.tv_nsec + RUN_LOG_FLUSH_NS % 1000000000L;
        ts.tv_sec += RUN_LOG_FLUSH_NS / 1000000000L + ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        if (g->stop)
            break;
        pthread_mutex_unlock(&g->mu);
        flush_all(g);
        pthread_mutex_lock(&g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static void log_free(struct run_log *g)
{
    for (int i = 0; i < g->n; i++) {
        pthread_mutex_destroy(&g->loops[i].mu);
        buf_free(&g->loops[i].journal);
        buf_free(&g->loops[i].requests);
    }
    free(g->loops);
    buf_free(&g->out);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

int run_log_start(struct run_ctx *x, int loops)
{
    struct run_log *g = calloc(1, sizeof *g);
    if (!g || !(g->loops = calloc(loops > 0 ? (size_t)loops : 1, sizeof *g->loops))) {
        free(g);
        return -1;
    }
    g->x = x;
    g->n = loops;
    buf_init(&g->out, LOOP_BUF_MAX);
    for (int i = 0; i < loops; i++) {
        pthread_mutex_init(&g->loops[i].mu, NULL);
        buf_init(&g->loops[i].journal, LOOP_BUF_MAX);
        buf_init(&g->loops[i].requests, LOOP_BUF_MAX);
    }
    pthread_mutex_init(&g->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->cv, &ca);
    pthread_condattr_destroy(&ca);
    x->log = g;
    if (!x->journal && !x->requests_log)
        return 0;       /* nothing to write: the buffers only count warm-up tokens */
    /* signals are the measuring loop's (thread 0's), as for the driver's threads */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = pthread_create(&g->thread, NULL, flusher, g);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        x->log = NULL;
        log_free(g);
        errno = rc;
        return -1;
    }
    g->started = true;
    return 0;
}

void run_log_finish(struct run_ctx *x)
{
    struct run_log *g = x->log;
    if (!g)
        return;
    if (g->started) {
        pthread_mutex_lock(&g->mu);
        g->stop = true;
        pthread_cond_signal(&g->cv);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->thread, NULL);
    }
    flush_all(g);
    x->res->log_errors += g->write_errors + g->spill_errors;
    x->res->journal_lines_lost += g->journal_lost;
    for (int i = 0; i < g->n; i++) {
        x->res->log_errors += g->loops[i].errors;
        x->warmup_output_tokens += g->loops[i].warmup_tokens;
    }
    x->log = NULL;
    log_free(g);
}
