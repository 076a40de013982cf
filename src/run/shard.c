/* shard.c — one shard of a run spread over processes: its part of the
 * plan, its agreed start, its records numbered as the whole plan numbers
 * them, and the `ranks` block of its artifact (docs/ARTIFACTS.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "artifact/json.h"
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

/* A CLOCK_MONOTONIC or other int64 instant as a decimal string (exact, as the
 * journal's t0_ns), or null when 0. */
static void add_ns(cJSON *o, const char *k, int64_t ns)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)ns);
    if (ns)
        cJSON_AddStringToObject(o, k, b);
    else
        cJSON_AddNullToObject(o, k);
}

/* This process's entry of the ranks block. */
static cJSON *own_entry(const struct run_ctx *x, const struct driver_result *dr)
{
    const struct run_result *res = x->res;
    const struct run_summary *s = &res->summary;
    cJSON *e = cJSON_CreateObject();
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *slash = strrchr(res->journal_path, '/');
    cJSON_AddNumberToObject(e, "rank", x->c->shard.index);
    cJSON_AddStringToObject(e, "host", host);
    cJSON_AddNumberToObject(e, "pid", (double)getpid());
    cJSON_AddStringToObject(e, "run_id", res->run_id);
    artifact_add_string(e, "journal", res->journal_path[0] ? (slash ? slash + 1 : res->journal_path) : NULL);
    cJSON_AddNumberToObject(e, "threads", dr->threads);
    cJSON_AddNumberToObject(e, "requests", s->requests);
    cJSON_AddNumberToObject(e, "sent", s->sent);
    cJSON_AddNumberToObject(e, "completed", s->completed);
    cJSON_AddNumberToObject(e, "failed", s->failed);
    artifact_add_number(e, "cpu_user_s", dr->cpu_user_s);
    artifact_add_number(e, "cpu_sys_s", dr->cpu_sys_s);
    artifact_add_number(e, "loop_lag_p50_ms", s->loop_lag.p50);
    artifact_add_number(e, "loop_lag_p99_ms", s->loop_lag.p99);
    artifact_add_number(e, "loop_lag_max_ms", s->loop_lag.max);
    cJSON_AddNumberToObject(e, "loop_lag_samples", (double)s->loop_lag.samples);
    cJSON_AddNumberToObject(e, "prewarmed_connections", dr->prewarmed);
    cJSON_AddNumberToObject(e, "arrival_stamps_kernel_rx", (double)dr->stamps_kernel);
    cJSON_AddNumberToObject(e, "arrival_stamps_client_clock", (double)dr->stamps_clock);
    cJSON_AddBoolToObject(e, "incomplete", res->incomplete);
    artifact_add_string(e, "incomplete_reason", res->incomplete_reason);
    add_ns(e, "measure_start_ns", dr->t_measure);
    add_ns(e, "window_start_ns", x->c->load.duration_s > 0 ? dr->window_start : 0);
    add_ns(e, "window_end_ns", x->c->load.duration_s > 0 ? dr->window_end : 0);
    add_ns(e, "unix_minus_monotonic_ns", x->unix_minus_mono);
    artifact_add_number(e, "start_late_ms", x->measure_at && dr->t_measure
                                                 ? (double)(dr->t_measure - x->measure_at) / 1e6 : NAN);
    /* measured by an MPI run's rank 0 (mpi/clock.c); a shard alone has only its wall clock */
    cJSON_AddNullToObject(e, "clock_offset_ms");
    cJSON_AddNullToObject(e, "clock_offset_uncertainty_ms");
    cJSON_AddNullToObject(e, "clock_drift_ms");
    return e;
}

cJSON *run_shard_ranks(const struct run_ctx *x, const struct driver_result *dr)
{
    const struct run_config *c = x->c;
    cJSON *r = cJSON_CreateObject(), *plan = cJSON_CreateObject(), *per = cJSON_CreateArray();
    cJSON *e = own_entry(x, dr);
    if (!r || !plan || !per || !e) {
        cJSON_Delete(r);
        cJSON_Delete(plan);
        cJSON_Delete(per);
        cJSON_Delete(e);
        return NULL;
    }
    cJSON_AddNumberToObject(r, "count", c->shard.count);
    cJSON_AddStringToObject(r, "alignment", "wall-clock");
    cJSON_AddNullToObject(r, "max_offset_uncertainty_ms");
    cJSON_AddItemToObject(r, "missing", cJSON_CreateArray());
    cJSON_AddNumberToObject(plan, "num_prompts", (double)c->load.num_prompts);
    cJSON_AddNumberToObject(plan, "warmup", (double)c->load.warmup);
    cJSON_AddNumberToObject(plan, "concurrency", (double)c->load.concurrency);
    cJSON_AddItemToObject(r, "plan", plan);
    cJSON_AddItemToArray(per, e);
    cJSON_AddItemToObject(r, "per_rank", per);
    return r;
}
