/* run.c — one run over the ranks of an MPI job (run.h). */
#include "mpi/run.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "core/clock.h"
#include "core/file.h"
#include "mpi/clock.h"

/* Set-up (discovery, calibration from rank 0's cache) may take this long
 * beyond --ready-check-timeout-sec before rank 0 names a rank missing. */
#define SETUP_TIMEOUT_S 60.0
/* From rank 0's go to the measured phase: time for every rank to hear it
 * and open its connections (the pre-warm runs before the phase begins). */
#define START_MARGIN_NS 500000000

/* What the ready hook shares with mpi_run. */
struct job {
    int rank, size;
    const struct run_config *c;
    struct mpi_offset *before;  /* rank 0: each rank's clock before the load */
    bool *ready;                /* rank 0: the rank reported ready */
    bool *failed_setup;         /* rank 0: the rank said its set-up failed */
    bool hook_called;
    char merged[4096];          /* the merged artifact's path */
    int64_t load_began;         /* CLOCK_MONOTONIC, when the hook returned */
};

bool mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

static double rank_timeout(const struct run_config *c)
{
    return c->shard.rank_timeout_s > 0 ? c->shard.rank_timeout_s : 60;
}

/* Sends n bytes to peer under tag, waited for up to timeout_s. Returns 0 or -1. */
static int send_bytes(const void *p, int n, int peer, int tag, double timeout_s)
{
    MPI_Request q;
    if (MPI_Isend(p, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q) != MPI_SUCCESS)
        return -1;
    return mpi_wait_for(&q, timeout_s, false);
}

static int recv_bytes(void *p, int n, int peer, int tag, double timeout_s)
{
    MPI_Request q;
    if (MPI_Irecv(p, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q) != MPI_SUCCESS)
        return -1;
    return mpi_wait_for(&q, timeout_s, false);
}

/* The ready hook, rank 0: waits for every rank's set-up (a rank whose set-up
 * failed says so), then names the start: START_MARGIN_NS from now on its
 * clock, sent to each ready rank in that rank's clock (its offset added). */
static int ready_rank0(struct job *j, int64_t *measure_at)
{
    double wait = SETUP_TIMEOUT_S + j->c->load.ready_timeout_s;
    int64_t deadline = clock_now_ns() + (int64_t)(wait * 1e9);
    for (int k = 1; k < j->size; k++) {
        int32_t ok = 0;
        double left = (double)(deadline - clock_now_ns()) / 1e9;
        if (recv_bytes(&ok, sizeof ok, k, TAG_READY, left > 0 ? left : 0.001) == 0) {
            j->ready[k] = ok == 1;
            j->failed_setup[k] = ok != 1;
        }
    }
    int64_t start = clock_now_ns() + START_MARGIN_NS;
    for (int k = 1; k < j->size; k++) {
        if (!j->ready[k])
            continue;
        int64_t theirs = start + (int64_t)llround(j->before[k].offset_ns);
        if (send_bytes(&theirs, sizeof theirs, k, TAG_START, rank_timeout(j->c)) != 0)
            j->ready[k] = false;
    }
    *measure_at = start;
    return 0;
}

/* The ready hook, any other rank: says it is ready and takes the start. */
static int ready_rank(struct job *j, int64_t *measure_at, char *err, size_t errlen)
{
    int32_t ok = 1;
    int64_t start = 0;
    double wait = SETUP_TIMEOUT_S + j->c->load.ready_timeout_s;
    if (send_bytes(&ok, sizeof ok, 0, TAG_READY, wait) != 0 ||
        recv_bytes(&start, sizeof start, 0, TAG_START, wait + rank_timeout(j->c)) != 0) {
        snprintf(err, errlen, "rank %d: rank 0 named no start within %.0f s", j->rank, wait);
        return -1;
    }
    if (start == 0) {
        snprintf(err, errlen, "rank %d: rank 0 could not set up the run", j->rank);
        return -1;
    }
    *measure_at = start;
    return 0;
}

static int ready_hook(void *ud, int64_t *measure_at, char *err, size_t errlen)
{
    struct job *j = ud;
    j->hook_called = true;
    int rc = j->rank == 0 ? ready_rank0(j, measure_at) : ready_rank(j, measure_at, err, errlen);
    j->load_began = clock_now_ns();
    return rc;
}

/* A hook never called (this rank's set-up failed): tell the other side so
 * nobody waits for it. */
static void not_ready(struct job *j)
{
    if (j->rank != 0) {
        int32_t ok = 0;
        send_bytes(&ok, sizeof ok, 0, TAG_READY, 5);
        return;
    }
    for (int k = 1; k < j->size; k++) {
        int32_t ok;
        if (recv_bytes(&ok, sizeof ok, k, TAG_READY, SETUP_TIMEOUT_S) == 0 && ok == 1) {
            int64_t none = 0;
            send_bytes(&none, sizeof none, k, TAG_START, 5);
        }
    }
}

/* Rank 0 → all: a length, then that many bytes (a negative length: rank 0
 * failed; the bytes are its reason). Every rank gets a malloc'd copy. */
static char *bcast_text(int rank, const char *text, long *len)
{
    int64_t n = rank == 0 ? *len : 0;
    if (MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return NULL;
    *len = (long)n;
    size_t sz = (size_t)(n < 0 ? -n : n);
    char *buf = malloc(sz + 1);
    if (!buf)
        return NULL;
    if (rank == 0)
        memcpy(buf, text, sz);
    if (sz && MPI_Bcast(buf, (int)sz, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(buf);
        return NULL;
    }
    buf[sz] = '\0';
    return buf;
}

/* Rank 0's set-up before any rank runs: the merged artifact's path, then
 * (unless --calibration none) discovery and calibration into a cache file
 * whose text goes to every rank. The text sent: PATH '\n' CACHE. */
static char *setup_rank0(const struct run_config *c, long *len, bool *refused)
{
    char path[4096], cache[4200], *msg = NULL;
    if (c->out.path) {
        snprintf(path, sizeof path, "%s", c->out.path);
    } else {
        char t[17];
        clock_utc_compact(t);
        snprintf(path, sizeof path, "%s/anvil-mpi-%s-%x.json", c->out.dir ? c->out.dir : "results", t,
                 (unsigned)getpid());
    }
    snprintf(cache, sizeof cache, "%s", c->workload.calibration_cache ? c->workload.calibration_cache : "");
    if (!c->workload.calibration_cache && c->workload.calib != CALIB_NONE)
        snprintf(cache, sizeof cache, "%s/anvil-calib-%d.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                 (int)getpid());
    char *cached = NULL;
    if (cache[0]) {
        struct run_config prep = *c;
        prep.prepare_only = true;
        prep.workload.calibration_cache = cache;
        prep.out.requests_out = NULL;
        prep.out.path = path;
        struct run_result r;
        if (run_execute(&prep, &r) != RUN_OK) {
            *refused = r.refused;
            size_t n = strlen(r.error) + 40;
            if ((msg = malloc(n)))
                *len = -(long)snprintf(msg, n, "rank 0's set-up: %s", r.error);
            run_result_free(&r);
            return msg;
        }
        run_result_free(&r);
        cached = file_read_all(cache, NULL);
        if (!c->workload.calibration_cache)
            unlink(cache);
    }
    size_t n = strlen(path) + 2 + (cached ? strlen(cached) : 0);
    if ((msg = malloc(n)))
        *len = snprintf(msg, n, "%s\n%s", path, cached ? cached : "");
    free(cached);
    return msg;
}

/* The shard artifact's path: DIR/.STEM.ranks/rank<K>.json for the merged
 * DIR/STEM.json. A hidden folder: whatever reads a folder of artifacts
 * (a sweep's rounds, anvil report DIR) skips dot entries, so only the
 * merged artifact counts as the run, while the shards stay for anvil merge. */
static void shard_path(const char *merged, int rank, char *out, size_t cap)
{
    const char *slash = strrchr(merged, '/'), *base = slash ? slash + 1 : merged;
    size_t n = strlen(base);
    int stem = n > 5 && !strcmp(base + n - 5, ".json") ? (int)(n - 5) : (int)n;
    snprintf(out, cap, "%.*s.%.*s.ranks/rank%d.json", (int)(base - merged), merged, stem, base, rank);
}

/* Any rank but 0, after its load: its artifact and journal to rank 0, the
 * clock's second measurement, the verdict. */
static void deliver(struct job *j, const struct run_result *res, struct mpi_outcome *o)
{
    const struct run_config *c = j->c;
    double wait = rank_timeout(c) + (double)(clock_now_ns() - (j->load_began ? j->load_began : clock_now_ns())) / 1e9;
    char *art = res->status != RUN_FAILED ? file_read_all(res->artifact_path, NULL) : NULL;
    char *jr = res->journal_path[0] ? file_read_all(res->journal_path, NULL) : NULL;
    const char *a = art ? art : res->error;
    int64_t head[3] = {art ? 1 : 0, (int64_t)strlen(a), jr ? (int64_t)strlen(jr) : -1};
    if (head[1] > INT32_MAX || head[2] > INT32_MAX) {   /* one MPI message holds at most 2 GiB */
        a = "its artifact or journal is over 2 GiB: merge its files with anvil merge";
        head[0] = 0;
        head[1] = (int64_t)strlen(a);
        head[2] = -1;
    }
    bool sent = send_bytes(head, sizeof head, 0, TAG_HEAD, wait) == 0 &&
                send_bytes(a, (int)head[1], 0, TAG_ARTIFACT, wait) == 0 &&
                (head[2] < 0 || send_bytes(jr, (int)head[2], 0, TAG_JOURNAL, wait) == 0);
    free(art);
    free(jr);
    int32_t verdict = 0;
    if (!sent)
        snprintf(o->error, sizeof o->error, "rank %d: rank 0 took no records within %.0f s (its shard "
                 "artifact %.600s is kept: anvil merge takes it)", j->rank, wait, res->artifact_path);
    else if (mpi_clock_answer(MPI_CLOCK_EXCHANGES, rank_timeout(c)) != 0 ||
             recv_bytes(&verdict, sizeof verdict, 0, TAG_VERDICT, rank_timeout(c)) != 0)
        snprintf(o->error, sizeof o->error, "rank %d: rank 0 did not finish the exchange", j->rank);
    o->all_present = verdict == 1;
}

/* What rank 0 gathered of one rank. */
struct gathered {
    int64_t head[3];
    char *artifact, *journal;
    bool have;
    MPI_Request q;
    bool posted, head_done;
    const char *missing;
    char why[1100];
};

/* Rank 0: every other rank's head, then its texts, until the deadline. */
static void gather(struct job *j, struct gathered *g)
{
    int64_t deadline = clock_now_ns() + (int64_t)(rank_timeout(j->c) * 1e9);
    for (int k = 1; k < j->size; k++) {
        if (!j->ready[k] && !j->failed_setup[k]) {
            g[k].missing = "did not finish its set-up in time";
            continue;
        }
        g[k].posted = MPI_Irecv(g[k].head, 3, MPI_INT64_T, k, TAG_HEAD, MPI_COMM_WORLD, &g[k].q) == MPI_SUCCESS;
    }
    for (int left = 1; left && clock_now_ns() < deadline;) {
        left = 0;
        for (int k = 1; k < j->size; k++) {
            int done = 0;
            if (!g[k].posted || g[k].head_done)
                continue;
            if (MPI_Test(&g[k].q, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                g[k].posted = false;
            else if (done)
                g[k].head_done = true;
            else
                left = 1;
        }
        struct timespec ms = {0, 1000000};
        if (left)
            nanosleep(&ms, NULL);
    }
    for (int k = 1; k < j->size; k++) {
        if (g[k].missing)
            continue;
        if (!g[k].head_done) {
            snprintf(g[k].why, sizeof g[k].why, "no records within %.0f s of rank 0's end (killed, or its "
                     "host gone?)", rank_timeout(j->c));
            g[k].missing = g[k].why;
            continue;
        }
        g[k].artifact = calloc((size_t)g[k].head[1] + 1, 1);
        g[k].journal = g[k].head[2] >= 0 ? calloc((size_t)g[k].head[2] + 1, 1) : NULL;
        bool ok = g[k].artifact && (g[k].head[2] < 0 || g[k].journal) &&
                  recv_bytes(g[k].artifact, (int)g[k].head[1], k, TAG_ARTIFACT, rank_timeout(j->c)) == 0 &&
                  (g[k].head[2] < 0 || recv_bytes(g[k].journal, (int)g[k].head[2], k, TAG_JOURNAL,
                                                  rank_timeout(j->c)) == 0);
        g[k].have = ok && g[k].head[0] == 1;
        if (!ok) {
            g[k].missing = "its records did not arrive whole";
        } else if (!g[k].have) {
            snprintf(g[k].why, sizeof g[k].why, "its run failed: %.1000s", g[k].artifact);
            g[k].missing = g[k].why;
        }
    }
}

/* Rank 0, after its load: gathers, measures the clocks again, tells each
 * rank the verdict, merges. */
static int finish_rank0(struct job *j, const struct run_result *own, struct mpi_outcome *o)
{
    struct gathered *g = calloc((size_t)j->size, sizeof *g);
    struct merge_part *parts = calloc((size_t)j->size, sizeof *parts);
    char (*names)[32] = calloc((size_t)j->size, sizeof *names);
    int rc = -1;
    if (!g || !parts || !names) {
        snprintf(o->error, sizeof o->error, "out of memory");
        goto done;
    }
    gather(j, g);
    g[0].artifact = own->status != RUN_FAILED ? file_read_all(own->artifact_path, NULL) : NULL;
    g[0].journal = own->journal_path[0] ? file_read_all(own->journal_path, NULL) : NULL;
    g[0].have = g[0].artifact != NULL;
    bool all = true;
    for (int k = 0; k < j->size; k++) {
        struct mpi_offset after = {0};
        if (k > 0 && g[k].head_done)
            mpi_clock_measure(k, MPI_CLOCK_EXCHANGES, rank_timeout(j->c), &after);
        all &= g[k].have;
        snprintf(names[k], sizeof names[k], "rank %d", k);
        const struct mpi_offset *b = &j->before[k];
        parts[k] = (struct merge_part){
            .name = names[k], .artifact = g[k].have ? g[k].artifact : NULL, .journal = g[k].journal,
            .missing_reason = g[k].missing, .offset_measured = true, .offset_ns = b->offset_ns,
            .uncertainty_ns = b->uncertainty_ns, .drift_ns = NAN,
        };
        if (k > 0 && after.measured) {   /* the mean of before and after, widened by half the drift */
            parts[k].drift_ns = after.offset_ns - b->offset_ns;
            parts[k].offset_ns = (after.offset_ns + b->offset_ns) / 2;
            parts[k].uncertainty_ns = fmax(after.uncertainty_ns, b->uncertainty_ns) + fabs(parts[k].drift_ns) / 2;
        }
        if (k == 0)
            parts[k].drift_ns = 0;
    }
    for (int k = 1; k < j->size; k++) {
        int32_t verdict = all;
        if (g[k].head_done)
            send_bytes(&verdict, sizeof verdict, k, TAG_VERDICT, rank_timeout(j->c));
    }
    o->all_present = all;
    if (!g[0].have)
        snprintf(o->error, sizeof o->error, "rank 0's own run: %.900s", own->error);
    else if (run_merge(parts, j->size, "mpi-ping-pong", j->merged, &o->m) != 0)
        snprintf(o->error, sizeof o->error, "%s", o->m.error);
    else
        rc = 0, o->merged = true;
done:
    for (int k = 0; g && k < j->size; k++) {
        free(g[k].artifact);
        free(g[k].journal);
    }
    free(g);
    free(parts);
    free(names);
    return rc;
}

/* Rank 0 measures every rank's clock; the others answer. */
static void clocks_before(struct job *j)
{
    if (j->rank != 0) {
        mpi_clock_answer(MPI_CLOCK_EXCHANGES, SETUP_TIMEOUT_S);
        return;
    }
    j->before[0] = (struct mpi_offset){.measured = true};
    for (int k = 1; k < j->size; k++)
        mpi_clock_measure(k, MPI_CLOCK_EXCHANGES, SETUP_TIMEOUT_S, &j->before[k]);
}

/* This rank's config: its shard, its artifact next to the merged one, rank
 * 0's calibration (cache file `cache`, written here). */
static void rank_config(struct job *j, const char *setup, struct run_config *c, char *out, size_t outcap,
                        char *cache, size_t cachecap, char *name, size_t namecap)
{
    const char *nl = strchr(setup, '\n');
    snprintf(j->merged, sizeof j->merged, "%.*s", nl ? (int)(nl - setup) : 0, setup);
    shard_path(j->merged, j->rank, out, outcap);
    cache[0] = '\0';
    if (nl && nl[1]) {
        snprintf(cache, cachecap, "%s/anvil-calib-%d-rank%d.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                 (int)getpid(), j->rank);
        FILE *f = fopen(cache, "w");
        if (!f || fputs(nl + 1, f) < 0)
            cache[0] = '\0';
        if (f)
            fclose(f);
    }
    snprintf(name, namecap, "%s [rank %d/%d]", j->c->name ? j->c->name : "anvil run", j->rank, j->size);
    c->shard.index = j->rank;
    c->shard.count = j->size;
    c->out.path = out;
    if (cache[0])
        c->workload.calibration_cache = cache;
    c->out.progress = j->c->out.progress && j->rank == 0;
    c->name = name;
}

int mpi_run(const struct run_config *c0, struct mpi_outcome *o)
{
    *o = (struct mpi_outcome){.own = RUN_FAILED};
    int provided, rc = -1;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(o->error, sizeof o->error, "MPI_Init failed");
        return -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o->size);
    /* the split's own checks, before anything is sent (every rank sees the same) */
    struct run_config whole = *c0;
    whole.shard.count = o->size;
    if (run_config_check(&whole, o->error, sizeof o->error) != 0) {
        o->all_present = true;
        o->usage = true;
        return -1;
    }
    struct job j = {.rank = o->rank, .size = o->size, .c = c0};
    j.before = calloc((size_t)o->size, sizeof *j.before);
    j.ready = calloc((size_t)o->size, sizeof *j.ready);
    j.failed_setup = calloc((size_t)o->size, sizeof *j.failed_setup);
    if (!j.before || !j.ready || !j.failed_setup) {
        snprintf(o->error, sizeof o->error, "out of memory");
        goto done;
    }
    clocks_before(&j);
    long len = 0;
    char *mine = o->rank == 0 ? setup_rank0(c0, &len, &o->usage) : NULL;
    char *setup = bcast_text(o->rank, mine ? mine : "", &len);
    free(mine);
    if (!setup || len < 0) {
        snprintf(o->error, sizeof o->error, "%s", setup ? setup : "MPI_Bcast of the set-up failed");
        free(setup);
        o->all_present = setup != NULL;     /* every rank got the same news: all can finalize */
        goto done;
    }
    struct run_config c = *c0;
    char out[4200], cache[4200], name[256];
    rank_config(&j, setup, &c, out, sizeof out, cache, sizeof cache, name, sizeof name);
    free(setup);
    c.shard.ready = ready_hook;
    c.shard.ready_ud = &j;
    struct run_result res;
    o->own = run_execute(&c, &res);
    if (cache[0])
        unlink(cache);
    snprintf(o->own_artifact, sizeof o->own_artifact, "%s", o->own != RUN_FAILED ? res.artifact_path : "");
    if (!j.hook_called)
        not_ready(&j);
    if (o->rank == 0) {
        rc = finish_rank0(&j, &res, o);
    } else {
        deliver(&j, &res, o);
        if (o->own == RUN_FAILED)
            snprintf(o->error, sizeof o->error, "rank %d: %.900s", o->rank, res.error);
        rc = o->own == RUN_FAILED || o->error[0] ? -1 : 0;
    }
    run_result_free(&res);
done:
    free(j.before);
    free(j.ready);
    free(j.failed_setup);
    return rc;
}

void mpi_end(const struct mpi_outcome *o)
{
    if (o->all_present)
        MPI_Finalize();
}
