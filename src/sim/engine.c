/* engine.c — scheduler and step loop of the engine model (see engine.h). */
#include "sim/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "core/vec.h"
#include "sim/kvcache.h"
#include "sim/spec.h"

const int64_t sim_step_token_le[SIM_STEP_TOKEN_BUCKETS] = {1, 8, 16, 32, 64, 128, 256, 512,
                                                             1024, 2048, 4096, 8192, 16384};

TAILQ_HEAD(seq_queue, sim_seq);

struct seq_list {
    struct seq_queue q;
    int64_t n;
};

/* One sequence's share of the planned step. */
struct slot {
    struct sim_seq *seq;    /* NULL when aborted during the step */
    int64_t tokens;         /* scheduled: prefill chunk, or 1 + drafts */
    int64_t drafts;         /* draft tokens among them */
    bool prefill;
};

struct sim_engine {
    struct sim_engine_params p;
    struct sim_engine_hooks hooks;
    struct sim_kv kv;
    struct seq_list waiting, running;
    struct slot *step;          /* the planned step */
    size_t n_step, cap_step;
    bool planned;
    int64_t step_start_ns;
    struct sim_engine_stats stats;
};

/* ---- lists ---------------------------------------------------------------- */

static void list_push_tail(struct seq_list *l, struct sim_seq *s)
{
    TAILQ_INSERT_TAIL(&l->q, s, link);
    l->n++;
}

static void list_push_head(struct seq_list *l, struct sim_seq *s)
{
    TAILQ_INSERT_HEAD(&l->q, s, link);
    l->n++;
}

static void list_remove(struct seq_list *l, struct sim_seq *s)
{
    TAILQ_REMOVE(&l->q, s, link);
    l->n--;
}

/* ---- per-sequence bookkeeping --------------------------------------------- */

static int64_t total_tokens(const struct sim_seq *s)
{
    return s->prompt_tokens + s->generated;
}

/* Out of memory only loses the event from the trace. */
static void note_event(struct sim_seq *s, int64_t start, int64_t end, int64_t tokens, bool preempt)
{
    if (VEC_RESERVE(s->events, s->cap_events, s->n_events + 1, 4) != 0)
        return;
    s->events[s->n_events++] = (struct sim_seq_event){start, end, tokens, preempt};
}

static void free_blocks(struct sim_engine *e, struct sim_seq *s)
{
    /* Reverse order: a sequence's last blocks are the least likely to be
     * shared, so they are reused first (vLLM frees in reverse too). */
    for (int64_t i = s->n_blocks; i-- > 0;)
        sim_kv_release(&e->kv, s->blocks[i]);
    s->n_blocks = 0;
    s->published = 0;
}

static int push_block(struct sim_seq *s, int32_t id)
{
    if (VEC_RESERVE(s->blocks, s->cap_blocks, (size_t)s->n_blocks + 1, 8) != 0)
        return -1;
    s->blocks[s->n_blocks++] = id;
    return 0;
}

/* Gives s blocks for tokens tokens when the pool has them. Returns 0 or -1
 * (nothing allocated then). */
static int grow_to(struct sim_engine *e, struct sim_seq *s, int64_t tokens)
{
    int64_t need = sim_kv_blocks_for(&e->kv, tokens) - s->n_blocks;
    if (need <= 0)
        return 0;
    if (need > e->kv.free_blocks)
        return -1;
    while (need-- > 0) {
        int32_t id = sim_kv_alloc(&e->kv);
        if (push_block(s, id) != 0) {
            sim_kv_release(&e->kv, id);
            return -1;
        }
    }
    return 0;
}

/* Registers the full prompt blocks computed so far in the prefix table. */
static void publish_blocks(struct sim_engine *e, struct sim_seq *s)
{
    if (!e->p.enable_prefix_caching || !s->block_hashes)
        return;
    int64_t full = s->computed < s->prompt_tokens ? s->computed : s->prompt_tokens;
    full /= e->p.block_size;
    if (full > s->n_block_hashes)
        full = s->n_block_hashes;
    for (; s->published < full; s->published++)
        sim_kv_publish(&e->kv, s->blocks[s->published], s->block_hashes[s->published]);
}

/* Prefix-cache hit at admission: takes the cached blocks of the longest
 * matching prompt prefix. At least one prompt token is always computed
 * (vLLM's cap: the last token must run to produce logits). */
static void take_prefix_hits(struct sim_engine *e, struct sim_seq *s)
{
    if (!e->p.enable_prefix_caching || !s->block_hashes)
        return;
    int64_t max_blocks = (total_tokens(s) - 1) / e->p.block_size;
    for (int64_t i = 0; i < s->n_block_hashes && i < max_blocks; i++) {
        int32_t id = sim_kv_lookup(&e->kv, s->block_hashes[i]);
        if (id < 0 || push_block(s, id) != 0)
            break;
        sim_kv_acquire(&e->kv, id);
    }
    s->computed = s->n_blocks * e->p.block_size;
    s->published = s->n_blocks;
}

static void preempt(struct sim_engine *e, struct sim_seq *s, int64_t now)
{
    list_remove(&e->running, s);
    free_blocks(e, s);
    s->computed = 0;   /* recompute: prompt and generated tokens prefill again */
    s->state = SIM_SEQ_WAITING;
    s->preemptions++;
    e->stats.preemptions++;
    note_event(s, now, now, 0, true);
    list_push_head(&e->waiting, s);
}

/* ---- planning --------------------------------------------------------------- */

static int add_slot(struct sim_engine *e, struct sim_seq *s, int64_t tokens, int64_t drafts,
                    bool prefill)
{
    if (VEC_RESERVE(e->step, e->cap_step, e->n_step + 1, 64) != 0)
        return -1;
    e->step[e->n_step++] = (struct slot){s, tokens, drafts, prefill};
    return 0;
}

/* Tokens s asks for in a step with budget left: the rest of its prefill
 * (chunked), or one token plus the drafts still useful. */
static int64_t want_tokens(const struct sim_engine *e, const struct sim_seq *s, int64_t budget,
                           int64_t *drafts, bool *prefill)
{
    int64_t remaining = total_tokens(s) - s->computed;
    *prefill = s->generated == 0 || remaining > 1;
    *drafts = 0;
    if (*prefill)
        return remaining < budget ? remaining : budget;
    int64_t k = e->p.num_speculative_tokens;
    int64_t useful = s->output_tokens - s->generated - 1;   /* no drafts past the end */
    k = k < useful ? k : useful;
    k = k < budget - 1 ? k : budget - 1;
    *drafts = k > 0 ? k : 0;
    return 1 + *drafts;
}

/* Makes room for s to hold tokens tokens, preempting the newest running
 * sequences. Returns 0, or -1 when s itself had to be preempted. */
static int reserve(struct sim_engine *e, struct sim_seq *s, int64_t tokens, int64_t now)
{
    while (grow_to(e, s, tokens) != 0) {
        struct sim_seq *victim = TAILQ_LAST(&e->running.q, seq_queue);
        preempt(e, victim, now);
        if (victim == s)
            return -1;
    }
    return 0;
}

/* Running sequences, oldest first. Returns the budget left, or -1 when a
 * preemption happened (no admissions then, as in vLLM). */
static int64_t schedule_running(struct sim_engine *e, int64_t budget, int64_t now)
{
    bool preempted = false;
    for (struct sim_seq *s = TAILQ_FIRST(&e->running.q); s && budget > 0;) {
        if (s->paused_until_ns > now) {
            s = TAILQ_NEXT(s, link);
            continue;
        }
        int64_t drafts;
        bool prefill;
        int64_t n = want_tokens(e, s, budget, &drafts, &prefill);
        uint64_t before = e->stats.preemptions;
        if (reserve(e, s, s->computed + n, now) != 0)
            return -1;   /* s and everything after it were preempted */
        preempted |= e->stats.preemptions != before;
        if (add_slot(e, s, n, drafts, prefill) != 0)
            break;
        budget -= n;
        s = TAILQ_NEXT(s, link);
    }
    return preempted ? -1 : budget;
}

/* Waiting sequences, first come first served, while they fit. */
static void admit_waiting(struct sim_engine *e, int64_t budget, int64_t now)
{
    while (!TAILQ_EMPTY(&e->waiting.q) && budget > 0 && e->running.n < e->p.max_num_seqs) {
        struct sim_seq *s = TAILQ_FIRST(&e->waiting.q);
        bool first = s->admitted_ns == 0;
        take_prefix_hits(e, s);
        int64_t hits = s->computed;
        int64_t drafts;
        bool prefill;
        int64_t n = want_tokens(e, s, budget, &drafts, &prefill);
        if (grow_to(e, s, s->computed + n) != 0 || add_slot(e, s, n, drafts, prefill) != 0) {
            free_blocks(e, s);   /* head-of-line: nothing behind it may pass */
            s->computed = 0;
            return;
        }
        list_remove(&e->waiting, s);
        list_push_tail(&e->running, s);
        s->state = SIM_SEQ_RUNNING;
        e->stats.prefix_queries += e->p.enable_prefix_caching ? (uint64_t)total_tokens(s) : 0;
        e->stats.prefix_hits += (uint64_t)hits;
        if (first) {
            s->admitted_ns = now;
            s->cached_tokens = hits;
        }
        budget -= n;
    }
}

int64_t sim_engine_step_ns(const struct sim_engine_params *p, int64_t seqs, int64_t context_tokens,
                           int64_t prefill_tokens, int64_t draft_tokens)
{
    double ms = p->decode_base_ms + p->decode_ms_per_seq * (double)seqs +
                p->attn_ms_per_ktok * (double)context_tokens / 1000.0 +
                p->draft_ms_per_token * (double)draft_tokens;
    if (prefill_tokens > 0)
        ms += p->prefill_base_ms +
              (p->prefill_tok_s > 0 ? 1000.0 * (double)prefill_tokens / p->prefill_tok_s : 0);
    return llround(ms * 1e6);
}

static int64_t step_cost(const struct sim_engine *e)
{
    int64_t seqs = 0, ctx = 0, prefill = 0, drafts = 0;
    for (size_t i = 0; i < e->n_step; i++) {
        const struct slot *sl = &e->step[i];
        seqs++;
        ctx += sl->seq->computed + sl->tokens;
        prefill += sl->prefill ? sl->tokens : 0;
        drafts += sl->drafts;
    }
    return sim_engine_step_ns(&e->p, seqs, ctx, prefill, drafts);
}

/* The earliest time a paused running sequence resumes, or 0. */
static int64_t next_wake(const struct sim_engine *e, int64_t now)
{
    int64_t wake = 0;
    for (const struct sim_seq *s = TAILQ_FIRST(&e->running.q); s; s = TAILQ_NEXT(s, link))
        if (s->paused_until_ns > now && (wake == 0 || s->paused_until_ns < wake))
            wake = s->paused_until_ns;
    return wake;
}

int64_t sim_engine_plan(struct sim_engine *e, int64_t now_ns, int64_t *wake_ns)
{
    e->n_step = 0;
    e->planned = false;
    *wake_ns = 0;
    int64_t budget = schedule_running(e, e->p.max_num_batched_tokens, now_ns);
    if (budget > 0)
        admit_waiting(e, budget, now_ns);
    if (e->n_step == 0) {
        *wake_ns = next_wake(e, now_ns);
        return -1;
    }
    e->planned = true;
    e->step_start_ns = now_ns;
    return step_cost(e);
}

/* ---- completing a step ------------------------------------------------------- */

static void count_step_tokens(struct sim_engine *e, int64_t tokens)
{
    size_t b = 0;
    while (b < SIM_STEP_TOKEN_BUCKETS && tokens > sim_step_token_le[b])
        b++;
    e->stats.step_tokens_hist[b]++;
}

/* Draft tokens accepted for s's decode slot, counted per position. */
static int64_t accept_drafts(struct sim_engine *e, struct sim_seq *s, int64_t drafts)
{
    if (drafts <= 0)
        return 0;
    int a = sim_spec_accepted(e->p.spec_acceptance, (int)drafts, s->key, s->decode_steps);
    e->stats.spec_drafts++;
    e->stats.spec_draft_tokens += (uint64_t)drafts;
    e->stats.spec_accepted += (uint64_t)a;
    s->spec_drafts++;
    s->spec_draft_tokens += (uint64_t)drafts;
    s->spec_accepted += (uint64_t)a;
    for (int i = 0; i < a; i++) {
        e->stats.spec_accepted_pos[i]++;
        s->spec_accepted_pos[i]++;
    }
    return a;
}

static void finish(struct sim_engine *e, struct sim_seq *s)
{
    list_remove(&e->running, s);
    free_blocks(e, s);
    s->state = SIM_SEQ_DONE;
}

/* Advances one slot; returns the tokens sampled (0 for a partial prefill). */
static int64_t advance(struct sim_engine *e, const struct slot *sl, int64_t now)
{
    struct sim_seq *s = sl->seq;
    if (sl->prefill) {
        s->computed += sl->tokens;
        e->stats.prefill_tokens += (uint64_t)sl->tokens;
        note_event(s, e->step_start_ns, now, sl->tokens, false);
        publish_blocks(e, s);
        return s->computed == total_tokens(s) ? 1 : 0;
    }
    int64_t a = accept_drafts(e, s, sl->drafts);
    s->decode_steps++;
    s->computed += 1 + a;   /* rejected drafts' KV slots are discarded */
    return 1 + a;
}

void sim_engine_complete(struct sim_engine *e, int64_t now_ns)
{
    if (!e->planned)
        return;
    e->planned = false;
    e->stats.steps++;
    int64_t step_tokens = 0;
    for (size_t i = 0; i < e->n_step; i++) {
        const struct slot sl = e->step[i];
        if (!sl.seq)
            continue;
        step_tokens += sl.tokens;
        e->stats.step_seqs++;
        struct sim_seq *s = sl.seq;
        int64_t n = advance(e, &sl, now_ns);
        if (n == 0)
            continue;
        int64_t first = s->generated;
        s->generated += n;
        e->stats.generation_tokens += (uint64_t)n;
        bool done = s->generated >= s->output_tokens;
        if (done)
            finish(e, s);
        else if (s->stall_after > 0 && first < s->stall_after && s->generated >= s->stall_after)
            s->paused_until_ns = now_ns + s->stall_ns;
        e->hooks.on_tokens(e->hooks.ctx, s, first, n, done, now_ns);
    }
    count_step_tokens(e, step_tokens);
    e->n_step = 0;
}

/* ---- lifecycle and gauges ------------------------------------------------------ */

struct sim_engine *sim_engine_new(const struct sim_engine_params *p,
                                  const struct sim_engine_hooks *hooks)
{
    struct sim_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->p = *p;
    e->hooks = *hooks;
    TAILQ_INIT(&e->waiting.q);
    TAILQ_INIT(&e->running.q);
    if (sim_kv_init(&e->kv, p->kv_cache_tokens / p->block_size, p->block_size) != 0) {
        free(e);
        return NULL;
    }
    return e;
}

void sim_engine_free(struct sim_engine *e)
{
    if (!e)
        return;
    sim_kv_free(&e->kv);
    free(e->step);
    free(e);
}

void sim_engine_submit(struct sim_engine *e, struct sim_seq *s)
{
    s->state = SIM_SEQ_WAITING;
    list_push_tail(&e->waiting, s);
}

void sim_engine_abort(struct sim_engine *e, struct sim_seq *s)
{
    if (s->state == SIM_SEQ_WAITING)
        list_remove(&e->waiting, s);
    else if (s->state == SIM_SEQ_RUNNING)
        list_remove(&e->running, s);
    for (size_t i = 0; i < e->n_step; i++)
        if (e->step[i].seq == s)
            e->step[i].seq = NULL;
    free_blocks(e, s);
    s->state = SIM_SEQ_DONE;
}

void sim_seq_release(struct sim_seq *s)
{
    free(s->blocks);
    free(s->events);
    s->blocks = NULL;
    s->events = NULL;
    s->n_blocks = s->cap_blocks = 0;
    s->n_events = s->cap_events = 0;
}

int64_t sim_engine_running(const struct sim_engine *e) { return e->running.n; }
int64_t sim_engine_waiting(const struct sim_engine *e) { return e->waiting.n; }
int64_t sim_engine_kv_blocks(const struct sim_engine *e) { return e->kv.num_blocks; }

int64_t sim_engine_reset_prefix_cache(struct sim_engine *e)
{
    return sim_kv_reset_prefix(&e->kv);
}

int64_t sim_engine_kv_used_blocks(const struct sim_engine *e)
{
    return e->kv.num_blocks - e->kv.free_blocks;
}

int64_t sim_engine_kv_used_tokens(const struct sim_engine *e)
{
    int64_t n = 0;
    for (const struct sim_seq *s = TAILQ_FIRST(&e->running.q); s; s = TAILQ_NEXT(s, link))
        n += s->computed;
    return n;
}

const struct sim_engine_stats *sim_engine_stats(const struct sim_engine *e) { return &e->stats; }
const struct sim_engine_params *sim_engine_params(const struct sim_engine *e) { return &e->p; }
