/* test_images.c — --images-per-request against `anvil sim`: the images
 * travel as base64 PNG image_url parts, the simulator counts their tokens
 * from their size (⌈W/28⌉·⌈H/28⌉ + 2 each), the calibration counts them so
 * every prompt has --input-len tokens, and images unique per request share
 * no cache. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

/* Runs `anvil run --base-url SIM ARGS... --out TMP` against a simulator
 * started with sim_args (NULL = none), asserts exit 0 and returns the
 * artifact (caller deletes). */
static cJSON *run_on_sim(const char *const *sim_args, const char *const *args)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[48] = {harness_anvil_bin(), "run", "--base-url", sim.base_url};
    size_t n = 4;
    for (size_t i = 0; args[i]; i++) {
        cr_assert_lt(n, 45);
        argv[n++] = args[i];
    }
    argv[n++] = "--out";
    argv[n++] = art;
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(art);
    unlink(art);
    return a;
}

Test(images, image_tokens_counted_and_calibrated, .timeout = 60)
{
    const char *sim_args[] = {"--enable-prefix-caching", NULL};
    cJSON *a = run_on_sim(sim_args, (const char *[]){"--num-prompts", "6", "--concurrency", "2", "--input-len", "1024",
                                                      "--output-len", "4", "--images-per-request", "2",
                                                      "--image-size", "448x420", NULL});
    const cJSON *im = harness_json_path(a, "workload.images");
    cr_assert(im);
    cr_assert_eq(harness_num(im, "per_request"), 2);
    cr_assert_eq(harness_num(im, "tokens_per_image"), 16 * 15 + 2, "448x420: 16 x 15 patches and two markers");
    cr_assert_eq(harness_num(a, "completed"), 6);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0, "the calibration counted the images");
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        cr_assert_eq(harness_num(t, "prompt_tokens"), 1024);
        cr_assert_eq(harness_num(t, "cached_tokens"), 0, "each request's images and head are its own");
    }
    cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(a, "calibration.method")), "probe");
    cJSON_Delete(a);
}

Test(images, images_that_cannot_fit_stop_before_sending, .timeout = 60)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, NULL), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "2",
                          "--input-len", "200", "--output-len", "4", "--images-per-request", "1",
                          "--image-size", "1024x1024", "--out", "/tmp/anvil-images-unused.json", NULL};
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert_neq(status, 0, "an image of 1371 tokens (37 x 37 patches and two markers) cannot fit a 200-token prompt");
    cr_assert(strstr(err, "the images and the chat template alone are 1381 tokens"), "%s", err);
    unlink("/tmp/anvil-images-unused.json");
}

/* JPEG images: the simulator reads their size from the frame header and
 * counts them as it counts a PNG of that size. */
Test(images, jpeg_images_counted_like_png, .timeout = 60)
{
    cJSON *a = run_on_sim(NULL, (const char *[]){"--num-prompts", "3", "--input-len", "600", "--output-len", "4",
                                                  "--images-per-request", "1", "--image-size", "300x200",
                                                  "--image-format", "jpeg", NULL});
    const cJSON *im = harness_json_path(a, "workload.images");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(im, "format")), "jpeg");
    cr_assert_eq(harness_num(im, "tokens_per_image"), 11 * 8 + 2, "300x200: 11 x 8 patches and two markers");
    cr_assert_eq(harness_num(a, "completed"), 3);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0);
    cJSON_Delete(a);
}

Test(images, image_format_alone_is_refused)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1", "--image-format",
                          "jpeg", NULL};
    static char out[4096], err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_neq(status, 0);
    cr_assert(strstr(err, "--image-format goes with --images-per-request"), "%s", err);
}

/* --dataset lines naming image files: each image is sent base64 in an
 * image_url part after the line's text, and the server counts it (the sim:
 * tiny.png 56x84 = 2 x 3 patches + 2, tiny.jpg 120x60 = 5 x 3 + 2). */
Test(images, dataset_lines_carry_image_files, .timeout = 60)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, NULL), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "4",
                          "--dataset", "jsonl:tests/data/workloads/images.jsonl", "--out", art, NULL};
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(art);
    unlink(art);
    double prompt[4] = {0};
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        prompt[(int)harness_num(t, "request_index")] = harness_num(t, "prompt_tokens");
    cr_assert_eq(harness_num(a, "completed"), 4);
    cr_assert_eq(prompt[0] - prompt[1], 8 + 17, "%g vs %g: a PNG and a JPEG", prompt[0], prompt[1]);
    cr_assert_eq(prompt[2] - prompt[3], 17, "%g vs %g: \"image\": one JPEG", prompt[2], prompt[3]);
    cJSON_Delete(a);
    /* ShareGPT-style (LLaVA) conversations with an "image" */
    const char *argv2[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "1",
                           "--output-len", "4", "--dataset", "sharegpt:tests/data/workloads/images_sharegpt.json",
                           "--out", art, NULL};
    cr_assert_eq(run_cmd_err(argv2, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", err);
    a = harness_load_json(art);
    unlink(art);
    cr_assert_eq(harness_num(a, "completed"), 1);
    cr_assert_gt(harness_num(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "request_timings"), 0), "prompt_tokens"), 8);
    cJSON_Delete(a);
}

/* A missing or unreadable image stops the run before any request, naming
 * the dataset file, the line and the image. */
Test(images, a_missing_dataset_image_is_named_before_sending, .timeout = 60)
{
    char ds[64], bad[64];
    cr_assert_eq(harness_tmpfile(ds, sizeof ds), 0);
    cr_assert_eq(harness_tmpfile(bad, sizeof bad), 0);
    FILE *f = fopen(bad, "w");
    fputs("not an image", f);
    fclose(f);
    f = fopen(ds, "w");
    fprintf(f, "{\"prompt\": \"fine\"}\n{\"prompt\": \"x\", \"images\": [\"/nonexistent/anvil-missing.png\"]}\n");
    fclose(f);
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, NULL), 0);
    char spec[80];
    snprintf(spec, sizeof spec, "jsonl:%s", ds);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "2",
                          "--dataset", spec, "--out", "/tmp/anvil-images-unused.json", NULL};
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_neq(status, 0);
    cr_assert(strstr(err, "line 2: image /nonexistent/anvil-missing.png cannot be read"), "%s", err);
    cr_assert(strstr(err, ds), "the dataset file is named: %s", err);
    f = fopen(ds, "w");
    fprintf(f, "{\"prompt\": \"x\", \"image\": \"%s\"}\n", bad);
    fclose(f);
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_neq(status, 0);
    cr_assert(strstr(err, "line 1: image") && strstr(err, "is neither a PNG nor a JPEG"), "%s", err);
    /* nothing reached the server: its counters saw no request end */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", sim.port);
    struct http_reply r;
    cr_assert_eq(http_get(url, &r), 0);
    cr_assert(strstr(r.body, "vllm:request_success_total{finished_reason=\"length\",model_name=\"anvil-sim\"} 0.0"),
              "%.600s", r.body);
    http_reply_free(&r);
    sim_stop(&sim);
    unlink(ds);
    unlink(bad);
    unlink("/tmp/anvil-images-unused.json");
}

/* A duration run with images: its bodies are not all built before the
 * first request (the plan's 200,000-request cap, not what the window
 * sends): a prebuilt head, the rest built when sent, each still its own
 * images at the calibrated length. Before, every one of the 200,000 was
 * built first: minutes of image encoding and all of them in memory. */
Test(images, a_duration_run_does_not_build_every_capped_body_first, .timeout = 60)
{
    const char *sim_args[] = {"--enable-prefix-caching", NULL};
    cJSON *a = run_on_sim(sim_args, (const char *[]){"--duration", "0.5", "--concurrency", "2", "--input-len", "300",
                                                      "--output-len", "4", "--images-per-request", "1",
                                                      "--image-size", "256x256", NULL});
    cr_assert_gt(harness_num(a, "completed"), 0);
    cr_assert_eq(harness_num(a, "failed"), 0);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0);
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        cr_assert_eq(harness_num(t, "cached_tokens"), 0, "each request's images are its own");
    cJSON_Delete(a);
}
