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

Test(images, image_tokens_counted_and_calibrated, .timeout = 60)
{
    const char *sim_args[] = {"--enable-prefix-caching", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "6",
                          "--concurrency", "2", "--input-len", "1024", "--output-len", "4",
                          "--images-per-request", "2", "--image-size", "448x420", "--out", art, NULL};
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(art);
    unlink(art);
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
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, NULL), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "3",
                          "--input-len", "600", "--output-len", "4", "--images-per-request", "1",
                          "--image-size", "300x200", "--image-format", "jpeg", "--out", art, NULL};
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(art);
    unlink(art);
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
