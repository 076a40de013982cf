/* shard.c — one shard of a run spread over processes: its part of the
 * plan, its agreed start, its records numbered as the whole plan numbers
 * them, and the `ranks` block of its artifact (docs/ARTIFACTS.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "artifact/ranks.h"
#include "core/clock.h"
#include "load/driver.h"
#include "run/stage.h"

long run_global_seq(const struct run_ctx *x, long seq)
{
    return x->shard.seqs && seq >= 0 && seq < (long)x->shard.warmup + x->shard.num_prompts ? x->shard.seqs[seq]
                                                                                          : seq;
}

int run_record_index(const struct run_ctx *x, const struct req_record *r)
{
    if (!x->shard.seqs)
        return r->index;
    /* closed-loop warm-ups are numbered apart; duration mode's early sends are measured requests */
    if (r->warmup && x->c->load.duration_s <= 0)
        return (int)run_global_seq(x, r->index);
    return (int)(run_global_seq(x, x->shard.warmup + r->index) - x->c->load.warmup);
}

int run_shard_cfg(struct run_ctx *x, struct driver_cfg *cfg)
{
    const struct run_config *c = x->c;
    struct plan_cfg pc = {
        .warmup = cfg->warmup, .num_prompts = cfg->num_prompts, .concurrency = cfg->concurrency,
        .request_rate = cfg->request_rate, .burstiness = cfg->burstiness, .seed = cfg->seed,
        .fixed_span = cfg->duration_s <= 0, .threads = 1, .follows = cfg->follows, .ud = cfg->ud,
        .ramp = cfg->ramp,
    };
    struct plan_shard sh;   /* run_follows maps through x->shard: empty until the split is done */
    char err[300];
    if (plan_shard(&pc, cfg->send_ns, c->shard.index, c->shard.count, &sh, err, sizeof err) != 0) {
        snprintf(x->res->error, sizeof x->res->error, "--shard %d/%d: %s", c->shard.index, c->shard.count, err);
        return -1;
    }
    x->shard = sh;
    cfg->warmup = sh.warmup;
    cfg->num_prompts = sh.num_prompts;
    cfg->concurrency = sh.concurrency;
    if (sh.send_ns)     /* open loop: this shard's entries of the whole schedule */
        cfg->send_ns = sh.send_ns;
    cfg->stream_start_ns = sh.stream_start_ns;  /* closed-loop ramp: its streams' starts of the whole run's */
    cfg->threads = plan_threads((int)c->load.threads, sysconf(_SC_NPROCESSORS_ONLN), sh.concurrency,
                                (long)sh.warmup + sh.num_prompts);
    return 0;
}

/* CLOCK_REALTIME − CLOCK_MONOTONIC (ns), from the closest of a few paired readings. */
static int64_t unix_minus_mono(void)
{
    int64_t best = 0, gap = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        struct timespec rt;
        int64_t m0 = clock_now_ns();
        clock_gettime(CLOCK_REALTIME, &rt);
        int64_t m1 = clock_now_ns();
        if (m1 - m0 < gap) {
            gap = m1 - m0;
            best = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - (m0 + (m1 - m0) / 2);
        }
    }
    return best;
}

/* "waiting until <ISO time> (<N> s) for --start-at": a start far ahead
 * would otherwise look like a hang (warm-ups, if any, run meanwhile). */
static void say_waiting(const struct run_ctx *x, double at_unix, double wait_s)
{
    time_t secs = (time_t)floor(at_unix);
    int ms = (int)((at_unix - (double)secs) * 1000 + 0.5);
    if (ms > 999) {
        secs++;
        ms -= 1000;
    }
    struct tm tm;
    char iso[32] = "?";
    if (gmtime_r(&secs, &tm))
        strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    run_say(x, "waiting until %s.%03dZ (%.1f s) for --start-at", iso, ms, wait_s);
}

int run_agree_start(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    x->unix_minus_mono = unix_minus_mono();
    if (c->shard.start_at_unix > 0) {
        x->measure_at = (int64_t)(c->shard.start_at_unix * 1e9) - x->unix_minus_mono;
        double late_s = (double)(clock_now_ns() - x->measure_at) / 1e9;
        if (late_s > 0)
            run_say(x, "warning: --start-at %.3f was %.3f s ago when the load began: the measured phase "
                    "begins at once (the artifact's ranks block says how late)", c->shard.start_at_unix, late_s);
        else
            say_waiting(x, c->shard.start_at_unix, -late_s);
    }
    char err[512] = "";
    if (c->shard.ready && c->shard.ready(c->shard.ready_ud, &x->measure_at, err, sizeof err) != 0) {
        snprintf(x->res->error, sizeof x->res->error, "%s", err[0] ? err : "the other ranks did not start");
        return -1;
    }
    return 0;
}

void run_shard_records(struct run_ctx *x, struct driver_result *dr)
{
    for (int k = 0; x->shard.seqs && k < dr->n_records; k++)
        dr->records[k].index = (int)(x->shard.seqs[x->shard.warmup + k] - x->c->load.warmup);
}

/* This process's entry of the ranks block (strings borrowed from x and host). */
static struct rank_entry own_entry(const struct run_ctx *x, const struct driver_result *dr, const char *host)
{
    const struct run_result *res = x->res;
    const struct run_summary *s = &res->summary;
    const char *slash = strrchr(res->journal_path, '/');
    bool window = x->c->load.duration_s > 0;
    return (struct rank_entry){
        .rank = x->c->shard.index, .host = (char *)host, .pid = (long)getpid(), .run_id = (char *)res->run_id,
        .journal = res->journal_path[0] ? (char *)(slash ? slash + 1 : res->journal_path) : NULL,
        .threads = dr->threads, .requests = s->requests, .sent = s->sent, .completed = s->completed,
        .failed = s->failed, .cpu_user_s = dr->cpu_user_s, .cpu_sys_s = dr->cpu_sys_s,
        .loop_lag_p50_ms = s->loop_lag.p50, .loop_lag_p99_ms = s->loop_lag.p99, .loop_lag_max_ms = s->loop_lag.max,
        .loop_lag_samples = (long)s->loop_lag.samples, .prewarmed_connections = dr->prewarmed,
        .arrival_stamps_kernel_rx = dr->stamps_kernel, .arrival_stamps_client_clock = dr->stamps_clock,
        .incomplete = res->incomplete, .incomplete_reason = (char *)res->incomplete_reason,
        .measure_start_ns = dr->t_measure, .window_start_ns = window ? dr->window_start : 0,
        .window_end_ns = window ? dr->window_end : 0, .unix_minus_monotonic_ns = x->unix_minus_mono,
        .start_late_ms = x->measure_at && dr->t_measure ? (double)(dr->t_measure - x->measure_at) / 1e6 : NAN,
        /* measured by an MPI run's rank 0 (mpi/clock.c); a shard alone has only its wall clock */
        .clock_offset_ms = NAN, .clock_offset_uncertainty_ms = NAN, .clock_drift_ms = NAN,
    };
}

int run_shard_add_ranks(const struct run_ctx *x, const struct driver_result *dr, cJSON *art)
{
    const struct run_config *c = x->c;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    struct rank_entry e = own_entry(x, dr, host);
    struct ranks_block b = {
        .count = c->shard.count, .alignment = "wall-clock", .max_offset_uncertainty_ms = NAN,
        .plan = {.num_prompts = c->load.num_prompts, .warmup = c->load.warmup, .concurrency = c->load.concurrency},
        .per_rank = &e, .n_per_rank = 1,
    };
    return artifact_add_ranks(art, &b);
}
