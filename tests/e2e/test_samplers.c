/* test_samplers.c — samplers on the driver's measuring loop, end to end:
 * the driver (linked in) against the reference simulator. A blocking
 * sampler that takes 300 ms per sample leaves every token stamp within the
 * truth tests' 1 ms of the server's write and the loop's lag small; an
 * inline sampler sees every phase once, in order, at the driver's own
 * window times, in duration mode and in a closed loop with warm-ups. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <curl/curl.h>

#include "core/clock.h"
#include "harness.h"
#include "load/driver.h"
#include "load/sampler.h"
#include "openai/request.h"

#define MS 1000000LL
#define MAX_REQ 256
#define MAX_CALLS 4096

struct call {
    int hook;               /* 0 start, 1 sample, 2 stop */
    struct sampler_tick t;
};

/* A test sampler: records its calls; a blocking one sleeps each sample
 * and returns a result. */
struct probe {
    pthread_mutex_t mu;
    struct call calls[MAX_CALLS];
    int n;
    int sleep_ms;
    int collected;
};

static void note(struct probe *p, int hook, const struct sampler_tick *t)
{
    pthread_mutex_lock(&p->mu);
    if (p->n < MAX_CALLS)
        p->calls[p->n++] = (struct call){hook, *t};
    pthread_mutex_unlock(&p->mu);
}

static int p_start(void *ud, const struct sampler_tick *t)
{
    note(ud, 0, t);
    return 0;
}

static void *p_sample(void *ud, const struct sampler_tick *t)
{
    struct probe *p = ud;
    note(p, 1, t);
    if (!p->sleep_ms)
        return NULL;
    harness_sleep_ms(p->sleep_ms);
    int64_t *r = malloc(sizeof *r);
    cr_assert(r);
    *r = t->t_due;
    return r;
}

static void p_stop(void *ud, const struct sampler_tick *t)
{
    note(ud, 2, t);
}

static void p_collect(void *ud, const struct sampler_tick *t, void *result)
{
    struct probe *p = ud;
    cr_assert_eq(*(int64_t *)result, t->t_due);
    p->collected++;
    free(result);
}

static struct sampler probe_sampler(struct probe *p, int64_t period_ns, bool may_block)
{
    pthread_mutex_init(&p->mu, NULL);
    return (struct sampler){.name = may_block ? "slow" : "inline", .period_ns = period_ns,
                            .may_block = may_block, .start = p_start, .sample = p_sample, .stop = p_stop,
                            .collect = p_collect, .ud = p};
}

/* The driver's callbacks: the same short chat request every time (16
 * output tokens unless said); warm-up records' latest end. */
struct plan {
    long max_tokens;
    int64_t warm_end;
};

static char *make_body(void *ud, long seq, long *planned, long *max_tokens)
{
    struct plan *p = ud;
    (void)seq;
    *planned = -1;
    *max_tokens = p->max_tokens ? p->max_tokens : 16;
    struct request_opts o = {.endpoint = EP_CHAT, .model = "anvil-sim", .max_tokens = *max_tokens, .stream = true};
    return request_body(&o, "one two three four five six seven eight");
}

static void on_record(void *ud, int loop, const struct req_record *r)
{
    struct plan *p = ud;
    (void)loop;
    if (r->warmup && r->t_end > p->warm_end)
        p->warm_end = r->t_end;
}

static void run_driver(const struct sim_proc *sim, struct driver_cfg *cfg, struct plan *plan,
                       struct driver_result *out)
{
    static char url[256], models[256];
    snprintf(url, sizeof url, "%s/chat/completions", sim->base_url);
    snprintf(models, sizeof models, "%s/models", sim->base_url);
    cfg->url = url;
    cfg->prewarm_url = models;
    cfg->request_rate = INFINITY;
    cfg->burstiness = 1;
    cfg->timeout_ms = 60000;
    cfg->grace_s = 5;
    cfg->make_body = make_body;
    cfg->on_record = on_record;
    cfg->ud = plan;
    cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), 0);
    cr_assert_eq(driver_run(cfg, out), 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* nearest-rank p99 of the driver's lag samples, ms */
static double lag_p99(const struct driver_result *r)
{
    cr_assert_gt(r->n_loop_lag, 10);
    double *v = malloc(r->n_loop_lag * sizeof *v);
    cr_assert(v);
    memcpy(v, r->loop_lag_ms, r->n_loop_lag * sizeof *v);
    qsort(v, r->n_loop_lag, sizeof *v, cmp_double);
    double p = v[(size_t)ceil(0.99 * (double)r->n_loop_lag) - 1];
    free(v);
    return p;
}

/* Checks the calls a probe saw: start first, stop last, each boundary once
 * in order at the driver's instants and taken no more than max_late_ns
 * after them, t_taken never decreasing. */
static void check_phases(const struct probe *p, const struct driver_result *r, int64_t max_late_ns)
{
    cr_assert_gt(p->n, 2);
    cr_assert_eq(p->calls[0].hook, 0);
    cr_assert_eq(p->calls[p->n - 1].hook, 2);
    cr_assert_eq(p->calls[p->n - 1].t.t_due, r->phase_ns[SAMPLER_AFTER_LAST]);
    int next = 0;
    for (int i = 0; i < p->n; i++) {
        const struct call *c = &p->calls[i];
        if (i)
            cr_assert_geq(c->t.t_taken, p->calls[i - 1].t.t_taken, "call %d taken before call %d", i, i - 1);
        if (c->hook != 1 || c->t.phase == SAMPLER_PERIODIC)
            continue;
        cr_assert_eq(c->t.phase, next, "%s where %s was due", sampler_phase_name(c->t.phase),
                     sampler_phase_name(next));
        cr_assert_eq(c->t.t_due, r->phase_ns[next], "%s at %lld, the driver's is %lld", sampler_phase_name(next),
                     (long long)c->t.t_due, (long long)r->phase_ns[next]);
        cr_assert_geq(c->t.t_taken, c->t.t_due, "%s taken before its instant", sampler_phase_name(next));
        cr_assert_leq(c->t.t_taken - c->t.t_due, max_late_ns, "%s taken %.3f ms after its instant",
                      sampler_phase_name(next), (double)(c->t.t_taken - c->t.t_due) / 1e6);
        if (next)
            cr_assert_geq(c->t.t_due, r->phase_ns[next - 1]);
        next++;
    }
    cr_assert_eq(next, SAMPLER_N_BOUNDARIES);
}

Test(samplers_e2e, a_blocking_sampler_does_not_delay_token_stamps, .timeout = 120)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *args[] = {"--trace", trace, "--ttft-ms", "30", "--itl-ms", "10", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, args), 0);
    harness_split_cpus(sim.pid);
    static struct probe slow;
    slow.sleep_ms = 300;
    struct sampler s = probe_sampler(&slow, 100 * MS, true);
    struct sampler *list[] = {&s};
    struct driver_cfg cfg = {.concurrency = 64, .num_prompts = 192, .samplers = list, .n_samplers = 1};
    struct plan plan = {.max_tokens = 32};     /* 350 ms a request, three waves: several samples */
    struct driver_result r;
    run_driver(&sim, &cfg, &plan, &r);
    cr_assert_eq(sim_stop(&sim), 0);
    static struct harness_traced tr[MAX_REQ];
    harness_read_trace(trace, tr, MAX_REQ);
    cr_assert_leq(r.n_records, MAX_REQ);
    int merged = 0;
    for (int i = 0; i < r.n_records; i++) {
        const struct req_record *q = &r.records[i];
        cr_assert_eq(q->fail, FAIL_NONE, "request %d failed: %s", i, q->fail_msg);
        double end_err = ((double)q->t_end - tr[i].finished) / 1e6;
        char what[32];
        snprintf(what, sizeof what, "request %d", i);
        int shared = 0;
        while ((size_t)shared < q->n_chunks && q->chunks[shared].t_ns == q->chunks[0].t_ns)
            shared++;
        merged += harness_check_first_stamp(&tr[i], (double)q->t_first_content, shared, q->first_output_merged,
                                            what);
        cr_assert(fabs(end_err) <= 1.0, "request %d: end of stream stamped %.3f ms from the server's write", i,
                  end_err);
    }
    cr_assert_leq(merged, r.n_records / 4, "%d of %d first tokens read with the second", merged, r.n_records);
    /* a 300 ms sample on the loop would make the lag p99 about 300 ms */
    double p99 = lag_p99(&r);
    cr_log_info("loop lag p99 %.3f ms over %zu samples; the sampler's %ld samples, latest %.1f ms late",
                p99, r.n_loop_lag, r.sampler_reports ? r.sampler_reports[0].samples : 0,
                r.sampler_reports ? (double)r.sampler_reports[0].max_late_ns / 1e6 : 0);
    cr_assert_lt(p99, 50, "loop lag p99 %.2f ms with a blocking sampler", p99);
    /* it did sample, off the loop, and every result came back */
    cr_assert_eq(r.n_sampler_reports, 1);
    const struct sampler_report *rep = &r.sampler_reports[0];
    cr_assert_eq(rep->state, SAMPLER_STOPPED);
    cr_assert_gt(rep->samples, SAMPLER_N_BOUNDARIES, "periodic samples too");
    cr_assert_eq(rep->collected, rep->samples);
    cr_assert_eq(slow.collected, rep->samples);
    cr_assert_gt(rep->max_late_ns, 0, "a boundary came while a 300 ms sample ran: taken late");
    check_phases(&slow, &r, 5000 * MS);     /* queued behind 300 ms samples */
    driver_result_free(&r);
    unlink(trace);
}

Test(samplers_e2e, an_inline_sampler_sees_the_duration_windows_phases_in_order, .timeout = 60)
{
    const char *args[] = {"--ttft-ms", "20", "--itl-ms", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, args), 0);
    static struct probe p;
    struct sampler s = probe_sampler(&p, 50 * MS, false);
    struct sampler *list[] = {&s};
    struct driver_cfg cfg = {.concurrency = 4, .num_prompts = 10000, .duration_s = 1.0, .warmup_s = 0.3,
                             .samplers = list, .n_samplers = 1};
    struct plan plan = {0};
    struct driver_result r;
    run_driver(&sim, &cfg, &plan, &r);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(r.phase_ns[SAMPLER_WINDOW_START], r.window_start);
    cr_assert_eq(r.phase_ns[SAMPLER_WINDOW_END], r.window_end);
    double window_s = (double)(r.window_end - r.window_start) / 1e9;
    cr_assert(fabs(window_s - 1.0) < 0.05, "window of %.3f s", window_s);
    check_phases(&p, &r, 100 * MS);         /* on the loop: at once, give or take the machine */
    int periodic = 0;
    for (int i = 0; i < p.n; i++)
        periodic += p.calls[i].hook == 1 && p.calls[i].t.phase == SAMPLER_PERIODIC;
    /* 1.3 s at 50 ms: 26 slots; generous for a loaded machine */
    cr_assert(periodic >= 13 && periodic <= 27, "%d periodic samples", periodic);
    cr_assert_eq(r.n_sampler_reports, 1);
    cr_assert_eq(r.sampler_reports[0].state, SAMPLER_STOPPED);
    driver_result_free(&r);
}

Test(samplers_e2e, an_inline_sampler_sees_a_closed_loops_window_from_first_send_to_last_end, .timeout = 60)
{
    const char *args[] = {"--ttft-ms", "10", "--itl-ms", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, args), 0);
    static struct probe p;
    struct sampler s = probe_sampler(&p, 20 * MS, false);
    struct sampler *list[] = {&s};
    struct driver_cfg cfg = {.concurrency = 4, .num_prompts = 16, .warmup = 4, .samplers = list,
                             .n_samplers = 1};
    struct plan plan = {0};
    struct driver_result r;
    run_driver(&sim, &cfg, &plan, &r);
    cr_assert_eq(sim_stop(&sim), 0);
    int64_t first_send = 0, last_end = 0;
    for (int i = 0; i < r.n_records; i++) {
        const struct req_record *q = &r.records[i];
        cr_assert_eq(q->fail, FAIL_NONE, "request %d failed: %s", i, q->fail_msg);
        if (!first_send || q->t_start < first_send)
            first_send = q->t_start;
        if (q->t_end > last_end)
            last_end = q->t_end;
    }
    cr_assert_eq(r.phase_ns[SAMPLER_WINDOW_START], first_send);
    cr_assert_eq(r.phase_ns[SAMPLER_WINDOW_END], last_end);
    cr_assert_geq(first_send, plan.warm_end, "the window opens after every warm-up ended");
    cr_assert_eq(r.window_start, 0, "no duration window in the result");
    cr_assert_eq(r.window_end, 0);
    check_phases(&p, &r, 100 * MS);         /* on the loop: at once, give or take the machine */
    driver_result_free(&r);
}
