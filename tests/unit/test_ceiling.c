/* test_ceiling.c — the ceiling file (run/ceiling.h): where it is, what a
 * reader accepts, and write ∘ read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "run/ceiling.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(ceiling, the_default_place_follows_xdg_then_home)
{
    char path[256];
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    setenv("HOME", "/home/u", 1);
    cr_assert_eq(ceiling_default_path(path, sizeof path), 0);
    cr_assert_str_eq(path, "/x/cache/anvil/ceiling.json");
    /* the XDG spec: a relative path is invalid and ignored */
    setenv("XDG_CACHE_HOME", "rel/cache", 1);
    cr_assert_eq(ceiling_default_path(path, sizeof path), 0);
    cr_assert_str_eq(path, "/home/u/.cache/anvil/ceiling.json");
    unsetenv("XDG_CACHE_HOME");
    cr_assert_eq(ceiling_default_path(path, sizeof path), 0);
    cr_assert_str_eq(path, "/home/u/.cache/anvil/ceiling.json");
    unsetenv("HOME");
    cr_assert_eq(ceiling_default_path(path, sizeof path), -1);
    setenv("HOME", "/home/u", 1);
    cr_assert_eq(ceiling_default_path(path, 10), -1, "a place that does not fit is none");
}

Test(ceiling, a_reader_takes_a_ceiling_file_and_nothing_else)
{
    char dir[] = "/tmp/anvil-ceiling-XXXXXX", path[128], err[600];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ceiling.json", dir);
    struct ceiling c;
    cr_assert_eq(ceiling_read(path, &c, err, sizeof err), 1, "no file: none");
    put(path, "{\"schema\": \"anvil.ceiling/v1\", \"events_per_s\": 12345, \"measured_at\": \"2026-01-02T03:04:05Z\","
              " \"host\": \"h\", \"anvil_version\": \"1.2.3\", \"threads\": 1, \"transport\": null}");
    cr_assert_eq(ceiling_read(path, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.events_per_s, 12345);
    cr_assert_str_eq(c.measured_at, "2026-01-02T03:04:05Z");
    cr_assert_str_eq(c.host, "h");
    cr_assert_str_eq(c.version, "1.2.3");
    cr_assert_eq(c.threads, 1);
    cr_assert_str_eq(c.transport, "");
    static const char *const bad[] = {
        "not json",
        "{\"schema\": \"anvil-serving.benchmark/v1\", \"events_per_s\": 10}",
        "{\"schema\": \"anvil.ceiling/v1\", \"events_per_s\": 0}",
        "{\"schema\": \"anvil.ceiling/v1\", \"events_per_s\": -5}",
        "{\"schema\": \"anvil.ceiling/v1\", \"events_per_s\": null}",
        "{\"schema\": \"anvil.ceiling/v1\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        put(path, bad[i]);
        err[0] = '\0';
        cr_assert_eq(ceiling_read(path, &c, err, sizeof err), -1, "%s", bad[i]);
        cr_assert(strstr(err, path), "the reason names the file: %s", err);
    }
    unlink(path);
    rmdir(dir);
}

Test(ceiling, what_is_written_reads_back)
{
    char dir[] = "/tmp/anvil-ceiling-XXXXXX", path[160], err[600];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sub/dir/ceiling.json", dir);   /* directories made as needed */
    struct ceiling_step steps[] = {
        {.concurrency = 64, .requests = 192, .events_per_s = 6500, .mean_events_per_s = 4900.4,
         .err_p99_ms = 0.02, .err_max_ms = 0.03, .pass = true},
        {.concurrency = 128, .requests = 384, .events_per_s = 13000, .mean_events_per_s = 9800,
         .err_p99_ms = 9.5, .err_max_ms = 12, .late = 7, .pass = false},
    };
    struct ceiling_result r = {.steps = steps, .n_steps = 2, .best = 0,
                               .ceiling = {.events_per_s = 6500, .measured_at = "2026-12-02T12:00:00Z",
                                           .host = "vm", .version = "0.1.0", .threads = 1}};
    snprintf(r.stopped, sizeof r.stopped, "concurrency 128: first-token stamps off by more than 1 ms");
    struct ceiling_cfg cfg;
    ceiling_cfg_defaults(&cfg);
    cr_assert_eq(ceiling_write(path, &r, &cfg, err, sizeof err), 0, "%s", err);
    struct ceiling c;
    cr_assert_eq(ceiling_read(path, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.events_per_s, 6500);
    cr_assert_str_eq(c.measured_at, "2026-12-02T12:00:00Z");
    cr_assert_str_eq(c.host, "vm");
    cr_assert_eq(c.threads, 1);
    /* the steps as the table showed them */
    char *text = NULL;
    FILE *f = fopen(path, "r");
    cr_assert(f);
    size_t cap = 0;
    cr_assert_gt(getdelim(&text, &cap, '\0', f), 0);
    fclose(f);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert(j);
    const cJSON *s = cJSON_GetObjectItem(j, "steps");
    cr_assert_eq(cJSON_GetArraySize(s), 2);
    const cJSON *s1 = cJSON_GetArrayItem(s, 1);
    cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(s1, "concurrency")), 128);
    cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(s1, "late")), 7);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(s1, "within")));
    cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "concurrency")), 64);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "transport")));
    cJSON_Delete(j);
    unlink(path);
    char sub[160];
    snprintf(sub, sizeof sub, "%s/sub/dir", dir);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    rmdir(sub);
    rmdir(dir);
}
