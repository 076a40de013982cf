/* observe.h — what the server and the hardware say during one run: the
 * server's Prometheus /metrics and the GPUs' and host's telemetry, each
 * read by a blocking sampler on its own thread (load/sampler.h) at the run's
 * phase boundaries and every interval between, plus one reading of each
 * before the load starts and one after it has ended, taken on the caller's
 * thread. The run then summarizes them over its measurement window.
 *
 * Use: observe_new → observe_prepare (before driver_run: first readings,
 * decides what is on) → observe_samplers into the driver's samplers →
 * driver_run → observe_finish (last readings) → observe_summarize →
 * observe_free. A scrape or read that fails (a huge, malformed, slow or
 * absent /metrics, a GPU that stops answering) is only recorded: nothing
 * here fails the run, and nothing runs on the loop that stamps tokens but
 * the collect hook appending a finished reading. */
#ifndef ANVIL_OBSERVE_OBSERVE_H
#define ANVIL_OBSERVE_OBSERVE_H

#include <stdbool.h>

#include <curl/curl.h>

#include "load/sampler.h"
#include "observe/hardware.h"
#include "observe/host.h"
#include "observe/server.h"
#include "observe/timeline.h"

/* --telemetry: auto (on when a GPU is found), on (the host even without a
 * GPU), off. */
enum obs_mode { OBS_MODE_AUTO, OBS_MODE_ON, OBS_MODE_OFF };

struct observe_cfg {
    const char *server_metrics;         /* "auto", "off" or a URL (http, https, file); NULL = off */
    double scrape_interval_ms;          /* periodic scrapes, > 0 */
    const char *base_url;               /* the OpenAI base URL: auto scrapes its root's /metrics */
    const struct curl_slist *headers;   /* the run's request headers: sent to a /metrics of the base
                                           URL's origin only (never to another host); not owned */
    enum obs_mode telemetry;
    double telemetry_interval_ms;       /* periodic readings, > 0 */
    const char *gpu_metrics_url;        /* a Prometheus GPU exporter (DCGM names), or NULL */
    const char *nvml_library;           /* NULL = $ANVIL_NVML_LIBRARY, else libnvidia-ml.so.1 */
    const char *smi_program;            /* NULL = "nvidia-smi" (looked up in PATH) */
    struct host_paths host;             /* {NULL, NULL} = /proc and /sys */
    /* Notes worth a line on the terminal (an explicit URL that does not
     * answer, telemetry asked for without a GPU); NULL = silent. */
    void (*say)(void *ud, const char *msg);
    void *say_ud;
};

/* What was read and what it says over the window. */
struct observe_report {
    bool server_enabled;                /* /metrics was scraped */
    char server_url[1024];
    char server_note[600];              /* why it is off ("" when on) */
    char server_info_url[1100];         /* SGLang's /server_info that answered, or "" */
    double scrape_interval_ms;
    struct srv_summary server;          /* when server_enabled */
    bool hardware_enabled;              /* telemetry was read */
    const char *gpu_source;             /* "nvml", "nvidia-smi", "prometheus", NULL = host only */
    char gpu_source_detail[1100];       /* the library, program or URL */
    char hardware_note[600];            /* why there is no GPU data ("" when there is) */
    double telemetry_interval_ms;
    struct hw_summary hardware;         /* when hardware_enabled */
    /* The readings over time (bounded, observe/timeline.h): every usable
     * reading of the run, not only the window's; n 0 when off. Owned. */
    struct obs_timeline server_series, hardware_series;
};

/* The client's figures over the window, for both summaries. */
struct observe_client {
    int64_t window_start, window_end;   /* CLOCK_MONOTONIC ns (driver_result.phase_ns) */
    bool duration_mode;                 /* the load runs through both boundaries: interpolate */
    double output_tokens;               /* output tokens the client received in the window */
    double ttft_mean_ms;
    long concurrency;                   /* closed loop's; 0 = open loop */
    long tokens_per_request;            /* planned prompt + output; 0 = unknown */
    double prompt_tokens, prompt_requests;  /* the window's prompts (srv_client's); 0 = unknown */
};

struct observe;

/* A session for cfg (strings copied). NULL when memory runs out. */
struct observe *observe_new(const struct observe_cfg *cfg);

/* Before the load: resolves the /metrics URL, takes the first scrape
 * (auto: a server without Prometheus /metrics turns scraping off, silently),
 * SGLang's server info, finds the GPUs (the exporter URL, else NVML, else
 * nvidia-smi) and takes the first telemetry reading. Blocks for at most a
 * few seconds. Never fails the run. */
void observe_prepare(struct observe *o);

/* The samplers to add to the driver's (0, 1 or 2), in *out (cap ≥ 2); they
 * live as long as o (or longer: see observe_free). */
int observe_samplers(struct observe *o, struct sampler **out, int cap);

/* After driver_run: takes the last readings. reports are the driver's
 * sampler reports and samplers the list they are in order of (n each); a
 * sampler reported SAMPLER_STOP_TIMED_OUT is abandoned (its thread may
 * still run: what it uses is never touched or freed again). */
void observe_finish(struct observe *o, struct sampler *const *samplers, const struct sampler_report *reports,
                    int n);

/* The report over c's window into *out (observe_report_free releases it).
 * Returns 0, or -1 when memory runs out. */
int observe_summarize(const struct observe *o, const struct observe_client *c, struct observe_report *out);

void observe_report_free(struct observe_report *r);

/* Frees o, except what an abandoned sampler's thread may still use. NULL-safe. */
void observe_free(struct observe *o);

#endif
