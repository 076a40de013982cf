/* ceiling.c — `anvil ceiling`: the events/s one measuring thread sustains
 * with every first-token stamp within 1 ms of a local simulator's write
 * (run/ceiling.h), printed step by step and kept in the ceiling file every
 * run compares its peak with. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "core/stop.h"
#include "run/ceiling.h"

struct ceiling_cli {
    struct ceiling_cfg c;
    const char *out;
    bool dry;
};

#define AT(field) offsetof(struct ceiling_cli, field)

static const char *const transports[] = {"auto", "native", "curl", NULL};

static const struct flag_spec flags[] = {
    {"max-seconds", NULL, FLAG_DOUBLE, AT(c.max_s), "S", "60",
     "time budget: no step starts that would end after it (a step at twice the streams is taken to "
     "last twice as long as the last)", .min = 1},
    {"start-concurrency", NULL, FLAG_LONG, AT(c.start_concurrency), "N", "64",
     "closed-loop streams of the first step; each next step doubles them", .min = 1, .max = 1000000},
    {"max-concurrency", NULL, FLAG_LONG, AT(c.max_concurrency), "N", "8192",
     "no step above this many streams", .min = 1, .max = 1000000},
    {"itl-ms", NULL, FLAG_DOUBLE, AT(c.itl_ms), "MS", "10",
     "the simulator's inter-token latency: one SSE event per token per stream, ms", .min = 0.1},
    {"ttft-ms", NULL, FLAG_DOUBLE, AT(c.ttft_ms), "MS", "20", "the simulator's time to first token, ms"},
    {"output-len", NULL, FLAG_LONG, AT(c.output_len), "N", "100", "output tokens per request",
     .min = 1, .max = 100000},
    {"rounds", NULL, FLAG_LONG, AT(c.rounds), "N", "3", "requests per stream in each step", .min = 1,
     .max = 1000},
    {"transport", NULL, FLAG_CHOICE, AT(c.transport), "auto|native|curl", "auto",
     "the transport measured (as anvil run's --transport; auto is native here)", .choices = transports},
    {"sim-bin", NULL, FLAG_STRING, AT(c.sim_bin), "PATH", NULL,
     "the anvil binary whose simulator serves the load (default: this one)"},
    {"out", NULL, FLAG_STRING, AT(out), "FILE", NULL,
     "where the ceiling is kept (default $XDG_CACHE_HOME/anvil/ceiling.json, else "
     "~/.cache/anvil/ceiling.json: where every run looks for it)"},
    {"dry-run", NULL, FLAG_ON, AT(dry), NULL, NULL, "measure and print, but keep the file as it is"},
    {0},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil ceiling [flags]\n"
            "Measures, against a local simulator on this machine, the SSE events/s one measuring thread\n"
            "sustains with every first-token stamp within 1 ms of the simulator's write (its --trace,\n"
            "on the same CLOCK_MONOTONIC): closed-loop steps at doubling concurrency, one thread, until a\n"
            "stamp is late, a request fails, the events/s stop rising, or the time budget ends. The\n"
            "ceiling is the highest peak events/s (fullest 1-second bin) of a step within 1 ms. Every run\n"
            "then records its own peak events/s per thread as a share of it (client.ceiling_share) and\n"
            "warns above 70 %%.\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 measured and written, 1 no step was within 1 ms or "
            "the measurement or the file failed, 2 usage error.\n", "-h, --help");
}

int ceiling_main(int argc, char **argv)
{
    struct ceiling_cli r = {0};
    ceiling_cfg_defaults(&r.c);
    int rc = flags_defaults("ceiling", flags, &r);
    if (rc == 0)
        rc = flags_parse("ceiling", flags, &r, argc, argv, NULL, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc == 0 && r.c.max_concurrency < r.c.start_concurrency) {
        fprintf(stderr, "anvil ceiling: --max-concurrency %ld is below --start-concurrency %ld\n",
                r.c.max_concurrency, r.c.start_concurrency);
        rc = -1;
    }
    char path[4096];
    if (rc == 0 && !r.out && ceiling_default_path(path, sizeof path) != 0) {
        fprintf(stderr, "anvil ceiling: neither XDG_CACHE_HOME nor HOME gives a place for the file: use --out\n");
        rc = -1;
    }
    if (rc != 0)
        return 2;
    if (r.out)
        snprintf(path, sizeof path, "%s", r.out);
    stop_install();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    r.c.log = stdout;
    printf("anvil ceiling: one measuring thread, closed loop, ITL %g ms, %ld tokens a request; the simulator "
           "on this machine\n", r.c.itl_ms, r.c.output_len);
    struct ceiling_result res;
    int status = 1;
    if (ceiling_measure(&r.c, &res) != 0) {
        fprintf(stderr, "anvil ceiling: %s\n", res.error);
        curl_global_cleanup();
        return 1;
    }
    printf("stopped: %s\n", res.stopped);
    if (res.best < 0) {
        fprintf(stderr, "anvil ceiling: no step had every first-token stamp within 1 ms (the first at "
                "concurrency %ld): try a lower --start-concurrency; the file is kept as it was\n",
                r.c.start_concurrency);
    } else {
        const struct ceiling_step *b = &res.steps[res.best];
        printf("ceiling: %.0f SSE events/s per measuring thread (concurrency %ld, every first-token stamp "
               "within 1 ms; max %.3f ms)\n", res.ceiling.events_per_s, b->concurrency, b->err_max_ms);
        char err[1024];
        if (r.dry) {
            status = 0;
        } else if (ceiling_write(path, &res, &r.c, err, sizeof err) != 0) {
            fprintf(stderr, "anvil ceiling: cannot write %s: %s\n", path, err);
        } else {
            printf("written: %s\n", path);
            status = 0;
        }
    }
    ceiling_result_free(&res);
    curl_global_cleanup();
    return status;
}
