/* test_prompt.c — prompt heads (src/workload/prompt.h): unique per request
 * from the very first word, never the calibration's, and the calibration
 * cache file (src/workload/calcache.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "core/buf.h"
#include "workload/calcache.h"
#include "workload/prompt.h"
#include "workload/workload.h"

static void first_word(const char *head, char *out, size_t cap)
{
    snprintf(out, cap, "%.*s", (int)strcspn(head, " "), head);
}

Test(prompt, heads_differ_from_the_first_word_and_never_start_like_calibration)
{
    uint64_t salts[] = {0, 1, 0xdeadbeefcafef00dull};
    for (size_t s = 0; s < 3; s++) {
        char cal[PROMPT_HEAD_MAX + 1], cal_first[16];
        cr_assert_gt(prompt_head(cal, sizeof cal, salts[s], PROMPT_CALIBRATION, 0), 0);
        first_word(cal, cal_first, sizeof cal_first);
        char prev[16] = "";
        for (long i = 0; i < 200; i++) {
            char h[PROMPT_HEAD_MAX + 1], w[16];
            size_t n = prompt_head(h, sizeof h, salts[s], PROMPT_MEASURED, i);
            cr_assert_eq(n, strlen(h));
            cr_assert_leq(n, PROMPT_HEAD_MAX);
            int spaces = 0;
            for (const char *p = h; *p; p++)
                spaces += *p == ' ';
            cr_assert_eq(spaces, PROMPT_HEAD_WORDS - 1, "'%s'", h);
            first_word(h, w, sizeof w);
            cr_assert_str_neq(w, cal_first, "request %ld starts like a calibration prompt", i);
            cr_assert_str_neq(w, prev, "requests %ld and %ld share their first word", i - 1, i);
            snprintf(prev, sizeof prev, "%s", w);
            /* 63 first words: i and i + 63 share it, and differ in the second */
            char later[PROMPT_HEAD_MAX + 1];
            prompt_head(later, sizeof later, salts[s], PROMPT_MEASURED, i + 63);
            cr_assert_str_neq(h, later);
        }
    }
    char a[PROMPT_HEAD_MAX + 1], b[PROMPT_HEAD_MAX + 1];
    prompt_head(a, sizeof a, 1, PROMPT_MEASURED, 5);
    prompt_head(b, sizeof b, 2, PROMPT_MEASURED, 5);
    cr_assert_str_neq(a, b, "another run's request 5 has another head");
    cr_assert_eq(prompt_head(a, 8, 1, PROMPT_MEASURED, 5), 0, "too small a buffer");
}

/* The text after a prompt's head: its filler, from the space before it. */
static const char *after_head(const char *s)
{
    for (int k = 0; k < PROMPT_HEAD_WORDS - 1; k++)
        s = strchr(s, ' ') + 1;
    return strchr(s, ' ');
}

Test(prompt, measured_and_calibration_prompts_have_one_length)
{
    struct workload_cfg cfg = {.ro = {.endpoint = EP_CHAT, .model = "m"}, .salt = 7, .seed = 3,
                               .input_len = 64, .output_len = 4};
    struct workload *w = workload_new(&cfg);
    cr_assert(w);
    cr_assert_eq(workload_fit(w, 50, 1), 0);
    struct buf m, c;
    buf_init(&m, 1 << 20);
    buf_init(&c, 1 << 20);
    cr_assert_eq(workload_prompt(w, 3, 50, &m), 0);
    cr_assert_eq(workload_calib_prompt(w, 0, 50, &c), 0);
    int wm = 0, wc = 0;
    for (size_t i = 0; i < m.len; i++)
        wm += m.data[i] == ' ';
    for (size_t i = 0; i < c.len; i++)
        wc += c.data[i] == ' ';
    cr_assert_eq(wm, PROMPT_HEAD_WORDS - 1 + 50);
    cr_assert_eq(wc, wm);
    cr_assert_str_eq(after_head(m.data), after_head(c.data), "the same filler after other heads");
    cr_assert_str_neq(m.data, c.data);
    /* the body sends workload_prompt's text */
    long planned, max_tokens;
    char *body = workload_body(w, 3, &planned, &max_tokens);
    cr_assert(body && strstr(body, m.data), "%s", body);
    cr_assert_eq(planned, 64);
    free(body);
    buf_free(&m);
    buf_free(&c);
    workload_free(w);
}

/* --input-len 0: the request's head alone, no filler, and no planned count
 * to hold usage.prompt_tokens to (the template decides it). */
Test(prompt, input_len_0_is_the_head_alone)
{
    struct workload_cfg cfg = {.ro = {.endpoint = EP_CHAT, .model = "m"}, .salt = 7, .seed = 3,
                               .input_len = 0, .output_len = 4};
    struct workload *w = workload_new(&cfg);
    cr_assert(w);
    cr_assert_eq(workload_fit(w, 0, 1), 0);
    struct buf m;
    buf_init(&m, 1 << 20);
    cr_assert_eq(workload_prompt(w, 3, 0, &m), 0);
    char head[PROMPT_HEAD_MAX + 1];
    prompt_head(head, sizeof head, 7, PROMPT_MEASURED, 3);
    cr_assert_str_eq(m.data, head);
    long planned = 0, max_tokens = 0;
    char *body = workload_body(w, 3, &planned, &max_tokens);
    cr_assert(body);
    cJSON *j = cJSON_Parse(body);
    const cJSON *msg = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "messages"), 0);
    cr_assert_str_eq(cJSON_GetObjectItem(msg, "content")->valuestring, head);
    cr_assert_eq(planned, -1);
    cr_assert_eq(max_tokens, 4);
    cJSON_Delete(j);
    free(body);
    buf_free(&m);
    workload_free(w);
}

Test(calcache, stores_finds_and_keeps_other_entries)
{
    char path[64] = "/tmp/anvil-calcache-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    unlink(path);
    struct calcache_key k = {.server = "http://h:8000", .model = "m", .endpoint = "chat", .engine = "vllm",
                             .engine_version = "0.21.0", .input_len = 1024, .seed = 0};
    char key[1024], key2[1024], err[512];
    calcache_key_text(&k, key, sizeof key);
    cr_assert(strstr(key, "http://h:8000") && strstr(key, "input_len=1024") && strstr(key, PROMPT_SCHEME));
    k.input_len = 128;
    calcache_key_text(&k, key2, sizeof key2);
    struct calcache_entry e = {.cal = {.target_tokens = 1024, .tolerance_tokens = 10, .words = 900,
                                       .tokens = 1022, .tokens_per_word = 1.12, .n_steps = 2, .converged = 1,
                                       .steps = {{0, 10, false}, {900, 1022, false}}},
                               .method = "probe", .shared_prefix_tokens = 3,
                               .shared_prefix_method = "tokenize", .run_id = "r1"};
    struct calcache_entry got;
    cr_assert_eq(calcache_lookup(path, key, &got, err, sizeof err), 0, "no file: no entry");
    cr_assert_eq(calcache_store(path, key, &e, err, sizeof err), 0, "%s", err);
    e.cal.target_tokens = 128;
    e.cal.words = 100;
    e.shared_prefix_tokens = -1;
    cr_assert_eq(calcache_store(path, key2, &e, err, sizeof err), 0, "%s", err);
    cr_assert_eq(calcache_lookup(path, key, &got, err, sizeof err), 1, "%s", err);
    cr_assert_eq(got.cal.words, 900);
    cr_assert_eq(got.cal.tokens, 1022);
    cr_assert_float_eq(got.cal.tokens_per_word, 1.12, 1e-12);
    cr_assert_eq(got.cal.n_steps, 2);
    cr_assert_eq(got.cal.steps[1].tokens, 1022);
    cr_assert_str_eq(got.method, "probe");
    cr_assert_eq(got.shared_prefix_tokens, 3);
    cr_assert_str_eq(got.run_id, "r1");
    cr_assert_eq(calcache_lookup(path, key2, &got, err, sizeof err), 1);
    cr_assert_eq(got.cal.words, 100);
    cr_assert_eq(got.shared_prefix_tokens, -1);
    k.input_len = 4096;
    calcache_key_text(&k, key2, sizeof key2);
    cr_assert_eq(calcache_lookup(path, key2, &got, err, sizeof err), 0);

    FILE *f = fopen(path, "w");
    fputs("[1, 2]", f);
    fclose(f);
    cr_assert_eq(calcache_lookup(path, key, &got, err, sizeof err), -1);
    cr_assert(strstr(err, path) && strstr(err, "not a calibration cache"), "%s", err);
    cr_assert_eq(calcache_store(path, key, &e, err, sizeof err), -1, "never overwrites another file");
    unlink(path);
}
