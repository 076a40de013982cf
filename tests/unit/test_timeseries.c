/* test_timeseries.c — the run over time: rows, their closing and merging,
 * from hand-built records whose rows and percentiles are known. */
#include <math.h>
#include <pthread.h>

#include <criterion/criterion.h>

#include "stats/timeseries.h"

#define S(x) ((int64_t)((x) * 1e9))
#define ORIGIN S(1000)

/* A completed request sent at start_s after the origin: first token after
 * ttft_ms, then one token every itl_ms (tokens in all). */
static void completed(struct req_record *r, int idx, double start_s, double ttft_ms, double itl_ms, long tokens)
{
    record_init(r, idx, false, 100, tokens);
    r->t_start = ORIGIN + S(start_s);
    r->t_headers = r->t_first_byte = r->t_first_event = r->t_start;
    for (long i = 0; i < tokens; i++)
        record_add_chunk(r, r->t_start + (int64_t)((ttft_ms + itl_ms * (double)i) * 1e6), 1, 1, true);
    r->t_first_output = r->t_first_content = r->chunks[0].t_ns;
    r->t_end = r->chunks[tokens - 1].t_ns;
    r->completion_tokens = tokens;
    r->done_seen = true;
}

static void failed(struct req_record *r, int idx, double start_s, double end_s)
{
    record_init(r, idx, false, 100, 4);
    r->t_start = ORIGIN + S(start_s);
    r->t_end = ORIGIN + S(end_s);
    record_fail(r, FAIL_HTTP, "HTTP 503");
}

static void add_free(struct ts_acc *a, struct req_record *r)
{
    ts_add(a, r);
    record_free(r);
}

Test(timeseries, rows_counts_in_flight_and_percentiles)
{
    struct ts_acc a;
    cr_assert_eq(ts_init(&a, 1.0, PCT_NEAREST), 0);
    ts_begin(&a, ORIGIN);
    struct req_record r;
    /* row 0: three requests end, TTFT 10, 30, 20 ms; gaps of 5 ms */
    completed(&r, 0, 0.0, 10, 5, 3);
    add_free(&a, &r);
    completed(&r, 1, 0.1, 30, 5, 2);
    add_free(&a, &r);
    completed(&r, 2, 0.2, 20, 5, 4);
    add_free(&a, &r);
    /* started in row 0, ends in row 2 (TTFT 1500 ms); a failure in row 1 */
    completed(&r, 3, 0.5, 1500, 100, 6);
    failed(&r, 4, 0.9, 1.5);
    ts_add(&a, &r);
    record_free(&r);
    completed(&r, 5, 0.5, 1500, 100, 6);
    add_free(&a, &r);
    struct req_record warm;
    completed(&warm, 9, 0.3, 10, 5, 3);     /* warm-ups are not counted */
    warm.warmup = true;
    add_free(&a, &warm);
    struct ts_series s;
    cr_assert_eq(ts_finish(&a, &s), 0);
    cr_assert_eq(s.n_rows, 3);
    cr_assert_eq(s.interval_s, 1.0);
    cr_assert_eq(s.rows[0].started, 5);
    cr_assert_eq(s.rows[0].completed, 3);
    cr_assert_eq(s.rows[0].in_flight, 2);
    cr_assert_eq(s.rows[0].output_tokens, 9);
    cr_assert_eq(s.rows[0].ttft_p50_ms, 20);     /* nearest rank: 2nd of 10, 20, 30 */
    cr_assert_eq(s.rows[0].ttft_p99_ms, 30);
    cr_assert_eq(s.rows[0].itl_samples, 2 + 1 + 3);
    cr_assert_eq(s.rows[0].itl_p50_ms, 5);
    cr_assert_eq(s.rows[1].failed, 1);
    cr_assert_eq(s.rows[1].completed, 0);
    cr_assert(isnan(s.rows[1].ttft_p50_ms));
    cr_assert_eq(s.rows[1].in_flight, 1);
    cr_assert_eq(s.rows[2].completed, 1);
    cr_assert_eq(s.rows[2].in_flight, 0);
    cr_assert_eq(s.rows[2].ttft_p50_ms, 1500);
    cr_assert_eq(s.rows[2].itl_p99_ms, 100);
    cr_assert_eq(s.rows[2].t_s, 2.0);
    cr_assert_eq(s.late, 0);
    ts_series_free(&s);
    ts_free(&a);
}

Test(timeseries, rows_close_two_behind_and_late_values_are_counted_apart)
{
    struct ts_acc a;
    cr_assert_eq(ts_init(&a, 1.0, PCT_NEAREST), 0);
    ts_begin(&a, ORIGIN);
    struct req_record r;
    completed(&r, 0, 0.0, 10, 5, 2);
    add_free(&a, &r);
    completed(&r, 1, 1.0, 10, 5, 2);
    add_free(&a, &r);
    cr_assert_not_null(a.rows[0].open, "row 0 stays open while requests end in row 1");
    completed(&r, 2, 2.0, 10, 5, 2);
    add_free(&a, &r);
    cr_assert_null(a.rows[0].open, "row 0's values are freed once a request ends two rows later");
    cr_assert_not_null(a.rows[1].open);
    completed(&r, 3, 0.2, 700, 5, 2);     /* ends in row 0, already closed */
    add_free(&a, &r);
    struct ts_series s;
    cr_assert_eq(ts_finish(&a, &s), 0);
    cr_assert_eq(s.late, 1);
    cr_assert_eq(s.rows[0].completed, 2, "counted in its row");
    cr_assert_eq(s.rows[0].ttft_samples, 1, "but not in its closed percentiles");
    cr_assert_eq(s.rows[0].ttft_p99_ms, 10);
    ts_series_free(&s);
    ts_free(&a);
}

/* One request a second for n_s seconds, TTFT 1..10 ms in turn, each ending
 * 0.5 s after its start; returns the series. */
static void one_per_second(double interval_s, int n_s, int every, struct ts_series *s)
{
    struct ts_acc a;
    cr_assert_eq(ts_init(&a, interval_s, PCT_NEAREST), 0);
    ts_begin(&a, ORIGIN);
    for (int i = 0; i < n_s; i += every) {
        struct req_record r;
        completed(&r, i, i + 0.1, 1 + (i / every) % 10, 1, 3);
        add_free(&a, &r);
    }
    cr_assert_eq(ts_finish(&a, s), 0);
    ts_free(&a);
}

Test(timeseries, merged_to_10_s_past_10_minutes)
{
    struct ts_series s;
    one_per_second(1.0, 700, 1, &s);
    cr_assert_eq(s.interval_s, 10.0);
    cr_assert_eq(s.exact_from_s, 600.0);
    cr_assert_eq(s.n_rows, 70);
    long started = 0, completed = 0, tokens = 0;
    for (size_t i = 0; i < s.n_rows; i++) {
        cr_assert_eq(s.rows[i].t_s, 10.0 * (double)i);
        cr_assert_eq(s.rows[i].started, 10);
        started += s.rows[i].started;
        completed += s.rows[i].completed;
        tokens += s.rows[i].output_tokens;
        /* merged rows: the median of ten 1-s p50s (1..10 ms) and the largest p99; later rows exact */
        cr_assert_eq(s.rows[i].ttft_p50_ms, 5, "row %zu", i);
        cr_assert_eq(s.rows[i].ttft_p99_ms, 10, "row %zu", i);
        cr_assert_eq(s.rows[i].ttft_samples, 10);
        cr_assert_eq(s.rows[i].in_flight, 0);
    }
    cr_assert_eq(started, 700);
    cr_assert_eq(completed, 700);
    cr_assert_eq(tokens, 2100);
    ts_series_free(&s);
}

Test(timeseries, merge_rule_is_median_of_p50s_and_max_of_p99s)
{
    /* 1-s rows of two requests each (TTFT i and 100 + i ms): p50 i, p99 100 + i */
    struct ts_acc a;
    cr_assert_eq(ts_init(&a, 1.0, PCT_NEAREST), 0);
    ts_begin(&a, ORIGIN);
    for (int i = 0; i < 601; i++) {
        struct req_record r;
        completed(&r, 2 * i, i + 0.1, 1 + i % 10, 1, 2);
        add_free(&a, &r);
        completed(&r, 2 * i + 1, i + 0.2, 101 + i % 10, 1, 2);
        add_free(&a, &r);
    }
    struct ts_series s;
    cr_assert_eq(ts_finish(&a, &s), 0);
    cr_assert_eq(s.n_rows, 61);
    cr_assert_eq(s.rows[0].ttft_p50_ms, 5);      /* 5th of the p50s 1..10 */
    cr_assert_eq(s.rows[0].ttft_p99_ms, 110);    /* the largest p99 */
    cr_assert_eq(s.rows[0].ttft_samples, 20);
    cr_assert_eq(s.rows[60].ttft_p50_ms, 1, "exact: the 1st of {1, 101}");
    cr_assert_eq(s.rows[60].ttft_p99_ms, 101);
    ts_series_free(&s);
    ts_free(&a);
}

Test(timeseries, intervals_not_dividing_10_s_and_the_10_hour_merge)
{
    struct ts_series s;
    one_per_second(3.0, 700, 1, &s);     /* 3 s → 12 s rows past 600 s */
    cr_assert_eq(s.interval_s, 12.0);
    cr_assert_eq(s.exact_from_s, 600.0);
    long started = 0;
    for (size_t i = 0; i < s.n_rows; i++)
        started += s.rows[i].started;
    cr_assert_eq(started, 700);
    ts_series_free(&s);
    one_per_second(1.0, 36100, 10, &s);  /* 10 h: 60 s rows */
    cr_assert_eq(s.interval_s, 60.0);
    cr_assert_eq(s.exact_from_s, 36000.0);
    cr_assert_eq(s.n_rows, 602);
    started = 0;
    for (size_t i = 0; i < s.n_rows; i++)
        started += s.rows[i].started;
    cr_assert_eq(started, 3610);
    ts_series_free(&s);
    one_per_second(20.0, 700, 1, &s);    /* already wider than 10 s: no merge */
    cr_assert_eq(s.interval_s, 20.0);
    cr_assert_eq(s.exact_from_s, 0.0);
    ts_series_free(&s);
}

Test(timeseries, bad_intervals_refused)
{
    struct ts_acc a;
    cr_assert_eq(ts_init(&a, 0, PCT_NEAREST), -1);
    cr_assert_eq(ts_init(&a, -1, PCT_NEAREST), -1);
    cr_assert_eq(ts_init(&a, NAN, PCT_NEAREST), -1);
    ts_free(&a);
}

struct feeder {
    struct ts_acc *a;
    int first;
};

static void *feed(void *arg)
{
    struct feeder *f = arg;
    for (int i = 0; i < 500; i++) {
        struct req_record r;
        completed(&r, f->first + i, i * 0.01, 3, 1, 2);
        add_free(f->a, &r);
    }
    return NULL;
}

Test(timeseries, loops_add_at_once)
{
    struct ts_acc a;
    cr_assert_eq(ts_init(&a, 0.5, PCT_NEAREST), 0);
    ts_begin(&a, ORIGIN);
    pthread_t t[4];
    struct feeder f[4];
    for (int i = 0; i < 4; i++) {
        f[i] = (struct feeder){&a, i * 1000};
        pthread_create(&t[i], NULL, feed, &f[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    struct ts_series s;
    cr_assert_eq(ts_finish(&a, &s), 0);
    long started = 0, completed = 0, tokens = 0, samples = 0;
    for (size_t i = 0; i < s.n_rows; i++) {
        started += s.rows[i].started;
        completed += s.rows[i].completed;
        tokens += s.rows[i].output_tokens;
        samples += s.rows[i].ttft_samples;
    }
    cr_assert_eq(started, 2000);
    cr_assert_eq(completed, 2000);
    cr_assert_eq(tokens, 4000);
    cr_assert_eq(samples + s.late, 2000);
    ts_series_free(&s);
    ts_free(&a);
}
