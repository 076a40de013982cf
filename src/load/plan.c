/* plan.c — the load plan, computed before sending. */
#include "load/plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/arrivals.h"

static int fail(struct load_plan *p, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct load_plan *p, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    plan_free(p);
    return -1;
}

/* The requests s waits for, into out (PLAN_MAX_WAITS): follows' one or
 * waits_for's. Returns their count, which set_follows refuses above
 * PLAN_MAX_WAITS (out then holds the first PLAN_MAX_WAITS). */
static int waits_of(const struct plan_cfg *c, long s, long *out)
{
    if (c->waits_for) {
        int n = c->waits_for(c->ud, s, out, PLAN_MAX_WAITS);
        return n < 0 ? 0 : n;
    }
    long f = c->follows ? c->follows(c->ud, s) : -1;
    out[0] = f;
    return f >= 0;
}

/* The waiters lists (CSR) from each entry's waits: a second pass over the
 * caller's callback, as the plan keeps only counts per entry. */
static int set_waiters(const struct plan_cfg *c, struct load_plan *p, long *w)
{
    long total = 0;
    for (long s = 0; s < p->n; s++)
        total += p->entries[s].n_waits;
    p->waiters_at = calloc((size_t)p->n + 2, sizeof *p->waiters_at);
    p->waiters = malloc((size_t)(total ? total : 1) * sizeof *p->waiters);
    if (!p->waiters_at || !p->waiters)
        return -1;
    for (long s = 0; s < p->n; s++) {
        int k = waits_of(c, s, w);
        for (int i = 0; i < k; i++)
            p->waiters_at[w[i] + 2]++;
    }
    for (long s = 0; s <= p->n; s++)
        p->waiters_at[s + 1] += p->waiters_at[s];
    /* waiters_at[s + 1] is the fill position of s's list, then its end */
    for (long s = 0; s < p->n; s++) {
        int k = waits_of(c, s, w);
        for (int i = 0; i < k; i++)
            p->waiters[p->waiters_at[w[i] + 1]++] = s;
    }
    return 0;
}

/* Multi-turn and agent order: each request waits for earlier ones; with
 * follows, no request has two followers (a conversation is a chain). */
static int set_follows(const struct plan_cfg *c, struct load_plan *p, char *err, size_t errlen)
{
    char *taken = calloc((size_t)p->n + 1, 1);
    long *w = malloc(PLAN_MAX_WAITS * sizeof *w);
    if (!taken || !w) {
        free(taken);
        free(w);
        return fail(p, err, errlen, "out of memory for a plan of %ld requests", p->n);
    }
    const char *bad = NULL;
    long s = 0, f = -1;
    for (; s < p->n && !bad; s++) {
        int k = waits_of(c, s, w);
        if (k > PLAN_MAX_WAITS) {
            bad = "many";
            f = k;
            s++;
            break;
        }
        struct plan_entry *e = &p->entries[s];
        e->follows = k ? w[0] : -1;
        e->n_waits = k;
        e->think_ns = k && c->think_ns ? c->think_ns(c->ud, s) : 0;
        for (int i = 0; i < k && !bad; i++) {
            f = w[i];
            if (f < 0 || f >= s)
                bad = "not before it";
            else if (!c->waits_for && taken[f]++)
                bad = "second";
        }
        if (!bad && e->think_ns < 0)
            bad = "think";
        p->any_follows |= k > 0;
    }
    free(taken);
    int rc = !bad && p->any_follows ? set_waiters(c, p, w) : 0;
    free(w);
    if (bad && !strcmp(bad, "second"))
        return fail(p, err, errlen, "request %ld is the second to follow request %ld", s - 1, f);
    if (bad && !strcmp(bad, "many"))
        return fail(p, err, errlen, "request %ld waits for %ld requests, more than the %d a plan allows", s - 1, f,
                    PLAN_MAX_WAITS);
    if (bad && !strcmp(bad, "think"))
        return fail(p, err, errlen, "request %ld has a negative think time", s - 1);
    if (bad)
        return fail(p, err, errlen, "request %ld follows request %ld, which is not before it", s - 1, f);
    return rc == 0 ? 0 : fail(p, err, errlen, "out of memory for a plan of %ld requests", p->n);
}

static int set_slots(const struct plan_cfg *c, struct load_plan *p)
{
    if (!(p->slots = calloc((size_t)p->threads, sizeof *p->slots)))
        return -1;
    for (int t = 0; t < p->threads; t++) {
        if (!p->open_loop)
            p->slots[t] = c->concurrency / p->threads + (t < c->concurrency % p->threads);
        else
            p->slots[t] = c->concurrency > 0 ? c->concurrency : (int)(p->n > 0 ? p->n : 1);
    }
    return 0;
}

int64_t plan_stream_start_ns(double ramp_up_s, int k, int streams)
{
    return streams > 1 ? (int64_t)llround(ramp_up_s * 1e9 * k / (streams - 1)) : 0;
}

double plan_ramp_end_s(const struct load_ramp *r, double burstiness, uint64_t seed, int num_prompts)
{
    if (r->strategy == RAMP_NONE)
        return r->ramp_up_s > 0 ? r->ramp_up_s : NAN;
    int64_t *t = num_prompts > 0 ? malloc((size_t)num_prompts * sizeof *t) : NULL;
    double end = t && arrivals_ramp_schedule(r, burstiness, seed, t, (size_t)num_prompts) == 0
                 ? (double)t[num_prompts - 1] / 1e9 : NAN;
    free(t);
    return end;
}

/* Closed loop with a ramp: each stream's start, the caller's or
 * plan_stream_start_ns's. Returns 0 or -1 (memory). */
static int set_stream_starts(const struct plan_cfg *c, struct load_plan *p)
{
    if (p->open_loop || (!c->stream_start_ns && !(c->ramp.ramp_up_s > 0)))
        return 0;
    if (!(p->stream_start_ns = calloc((size_t)c->concurrency, sizeof *p->stream_start_ns)))
        return -1;
    for (int k = 0; k < c->concurrency; k++)
        p->stream_start_ns[k] = c->stream_start_ns ? c->stream_start_ns[k]
                                                   : plan_stream_start_ns(c->ramp.ramp_up_s, k, c->concurrency);
    return 0;
}

/* The measured requests' send times into due (num_prompts of them): the
 * rate ramp's, or request_rate's. Returns 0 or -1. */
static int schedule(const struct plan_cfg *c, int64_t *due)
{
    if (c->ramp.strategy != RAMP_NONE)
        return arrivals_ramp_schedule(&c->ramp, c->burstiness, c->seed, due, (size_t)c->num_prompts);
    return arrivals_schedule(c->request_rate, c->burstiness, c->seed, c->fixed_span, due, (size_t)c->num_prompts);
}

int plan_build(const struct plan_cfg *c, struct load_plan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->open_loop = !isinf(c->request_rate) || c->ramp.strategy != RAMP_NONE;
    if (c->ramp.ramp_up_s < 0 || (p->open_loop && c->ramp.ramp_up_s > 0))
        return fail(p, err, errlen, "a stream ramp (%g s) goes with the closed loop, for at least 0 s",
                    c->ramp.ramp_up_s);
    if (c->threads < 1)
        return fail(p, err, errlen, "threads must be at least 1 (got %d)", c->threads);
    if (!p->open_loop && c->concurrency < c->threads)
        return fail(p, err, errlen, "the closed loop needs a concurrency of at least the threads "
                    "(concurrency %d, threads %d)", c->concurrency, c->threads);
    if (c->warmup < 0 || c->num_prompts < 0)
        return fail(p, err, errlen, "negative request counts (warmup %d, num_prompts %d)", c->warmup,
                    c->num_prompts);
    p->warmup = c->warmup;
    p->num_prompts = c->num_prompts;
    p->n = (long)c->warmup + c->num_prompts;
    p->threads = c->threads;
    p->concurrency = c->concurrency;
    if (!(p->entries = calloc((size_t)(p->n ? p->n : 1), sizeof *p->entries)) || set_slots(c, p) != 0 ||
        set_stream_starts(c, p) != 0)
        return fail(p, err, errlen, "out of memory for a plan of %ld requests", p->n);
    int64_t *due = p->entries && c->num_prompts ? calloc((size_t)c->num_prompts, sizeof *due) : NULL;
    if (p->open_loop && c->num_prompts && !due)
        return fail(p, err, errlen, "out of memory for %d arrival times", c->num_prompts);
    if (p->open_loop && schedule(c, due) != 0) {
        free(due);
        if (c->ramp.strategy != RAMP_NONE)
            return fail(p, err, errlen, "no ramp schedule: the ramp's rates (%g to %g req/s; exponential from "
                        "above 0) and burstiness (%g) must be above 0", c->ramp.start_rps, c->ramp.end_rps,
                        c->burstiness);
        return fail(p, err, errlen, "no arrival schedule: the rate (%g) and burstiness (%g) must be above 0",
                    c->request_rate, c->burstiness);
    }
    for (long s = 0; s < p->n; s++) {
        struct plan_entry *e = &p->entries[s];
        bool measured = s >= c->warmup;
        e->send_ns = p->open_loop && measured ? due[s - c->warmup] : 0;
        e->thread = p->open_loop && measured ? (int)((s - c->warmup) % c->threads) : -1;
    }
    free(due);
    return set_follows(c, p, err, errlen);
}

int plan_set_send_times(struct load_plan *p, const int64_t *offsets_ns)
{
    for (long i = 0; i < p->num_prompts; i++)
        if (offsets_ns[i] < 0 || (i && offsets_ns[i] < offsets_ns[i - 1]))
            return -1;
    for (long i = 0; i < p->num_prompts; i++) {
        struct plan_entry *e = &p->entries[p->warmup + i];
        e->send_ns = offsets_ns[i];
        e->thread = (int)(i % p->threads);
    }
    if (!p->open_loop) {    /* the closed loop's slots become a cap */
        p->open_loop = true;
        free(p->stream_start_ns);
        p->stream_start_ns = NULL;
        for (int t = 0; t < p->threads; t++)
            p->slots[t] = p->concurrency > 0 ? p->concurrency : (int)(p->n > 0 ? p->n : 1);
    }
    return 0;
}

int plan_threads(int requested, long online, int concurrency, long requests)
{
    long n = requested;
    if (n <= 0) {
        long streams = concurrency > 0 ? concurrency : requests;
        n = online < 1 ? 1 : online;
        if (n > streams / PLAN_STREAMS_PER_THREAD)
            n = streams / PLAN_STREAMS_PER_THREAD;
    }
    if (concurrency > 0 && n > concurrency)
        n = concurrency;
    if (n > requests)
        n = requests;
    return n < 1 ? 1 : (int)n;
}

/* The shard a request of the whole plan p goes to: a turn goes with the
 * one it follows; a warm-up by its number; a measured request by its slot
 * (closed loop) or its number (open loop). owner[] holds the answers so far. */
static int shard_of(const struct load_plan *p, const int *owner, long seq, int count, int conc)
{
    long f = p->entries[seq].follows;
    if (f >= 0)
        return owner[f];
    if (seq < p->warmup)
        return (int)(seq % count);
    long i = seq - p->warmup;
    if (p->open_loop)
        return (int)(i % count);
    /* slot k belongs to the shard whose contiguous share of the slots holds it */
    long k = i % conc, base = conc / count, extra = conc % count;
    long big = extra * (base + 1);
    return (int)(k < big ? k / (base + 1) : extra + (k - big) / base);
}

/* Fills s's arrays from the whole plan p. Returns 0 or -1 (memory). */
static int take_shard(const struct load_plan *p, int index, int count, int conc, struct plan_shard *s)
{
    int *owner = calloc((size_t)(p->n ? p->n : 1), sizeof *owner);
    s->seqs = calloc((size_t)(p->n ? p->n : 1), sizeof *s->seqs);
    s->local = calloc((size_t)(p->n ? p->n : 1), sizeof *s->local);
    if (p->open_loop)
        s->send_ns = calloc((size_t)(p->num_prompts ? p->num_prompts : 1), sizeof *s->send_ns);
    if (!owner || !s->seqs || !s->local || (p->open_loop && !s->send_ns)) {
        free(owner);
        return -1;
    }
    long k = 0;
    for (long seq = 0; seq < p->n; seq++) {
        owner[seq] = shard_of(p, owner, seq, count, conc);
        s->local[seq] = -1;
        if (owner[seq] != index)
            continue;
        s->local[seq] = k;
        s->seqs[k++] = seq;
        if (seq < p->warmup)
            s->warmup++;
        else if (p->open_loop)
            s->send_ns[s->num_prompts++] = p->entries[seq].send_ns;
        else
            s->num_prompts++;
    }
    free(owner);
    return 0;
}

/* Closed loop with a ramp: the starts of shard index's streams, its
 * contiguous share of the whole run's (shard_of's). Returns 0 or -1. */
static int take_stream_starts(const struct load_plan *p, int index, int count, struct plan_shard *s)
{
    int base = p->concurrency / count, extra = p->concurrency % count;
    int lo = index < extra ? index * (base + 1) : extra * (base + 1) + (index - extra) * base;
    if (!(s->stream_start_ns = calloc((size_t)(s->concurrency ? s->concurrency : 1), sizeof *s->stream_start_ns)))
        return -1;
    memcpy(s->stream_start_ns, p->stream_start_ns + lo, (size_t)s->concurrency * sizeof *s->stream_start_ns);
    return 0;
}

int plan_shard(const struct plan_cfg *c, const int64_t *send_ns, int index, int count,
               struct plan_shard *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    bool open = send_ns || !isinf(c->request_rate) || c->ramp.strategy != RAMP_NONE;
    if (count < 1 || index < 0 || index >= count) {
        snprintf(err, errlen, "shard %d of %d: expected 0 ≤ I < N", index, count);
        return -1;
    }
    if ((!open || c->concurrency > 0) && c->concurrency < count) {
        snprintf(err, errlen, "%d shards need a %s of at least %d (got %d): each takes a share",
                 count, open ? "--concurrency cap" : "concurrency", count, c->concurrency);
        return -1;
    }
    struct plan_cfg whole = *c;
    whole.threads = 1;
    if (send_ns)
        whole.request_rate = whole.burstiness = 1;
    struct load_plan p;
    if (plan_build(&whole, &p, err, errlen) != 0)
        return -1;
    if (send_ns && plan_set_send_times(&p, send_ns) != 0) {
        plan_free(&p);
        snprintf(err, errlen, "send times must be ≥ 0 and never decrease");
        return -1;
    }
    int rc = take_shard(&p, index, count, c->concurrency, s);
    s->n_total = p.n;
    if (c->concurrency > 0)
        s->concurrency = c->concurrency / count + (index < c->concurrency % count);
    if (rc == 0 && p.stream_start_ns)
        rc = take_stream_starts(&p, index, count, s);
    plan_free(&p);
    if (rc != 0) {
        plan_shard_free(s);
        snprintf(err, errlen, "out of memory for shard %d of %d", index, count);
    }
    return rc;
}

void plan_shard_free(struct plan_shard *s)
{
    free(s->seqs);
    free(s->send_ns);
    free(s->stream_start_ns);
    free(s->local);
    memset(s, 0, sizeof *s);
}

void plan_free(struct load_plan *p)
{
    free(p->entries);
    free(p->slots);
    free(p->waiters);
    free(p->waiters_at);
    free(p->stream_start_ns);
    p->stream_start_ns = NULL;
    p->entries = NULL;
    p->slots = NULL;
    p->waiters = p->waiters_at = NULL;
}
