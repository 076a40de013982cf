/* test_run_config.c — a run's settings by feature: each feature's check
 * judges its own settings alone, run_config_check adds how they combine,
 * and a message reads the same whichever check gives it. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "run/run.h"

static char err[1024];

/* The defaults pass every check: `anvil run` with no flags is a valid run. */
Test(run_config, the_defaults_pass_every_check)
{
    struct run_config c;
    run_config_defaults(&c);
    cr_assert_eq(run_workload_check(&c.workload, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_observe_check(&c.observe, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_transport_check(&c.transport, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_load_check(&c.load, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_config_check(&c, err, sizeof err), 0, "%s", err);
}

Test(run_config, each_feature_check_names_its_own_conflict)
{
    struct run_config c;
    run_config_defaults(&c);
    c.workload.multi_turn = true;
    cr_assert_eq(run_workload_check(&c.workload, err, sizeof err), -1);
    cr_assert_str_eq(err, "--multi-turn needs --dataset (conversations come from a file)");
    c.workload.multi_turn = false;
    c.workload.prefix_groups = 4;
    cr_assert_eq(run_workload_check(&c.workload, err, sizeof err), -1);
    cr_assert_str_eq(err, "--prefix-groups goes with --prefix-hit-rate");

    c.observe.gpu_metrics_url = "ftp://dcgm:9400/metrics";
    cr_assert_eq(run_observe_check(&c.observe, err, sizeof err), -1);
    cr_assert_str_eq(err, "--gpu-metrics-url ftp://dcgm:9400/metrics: expected an http://, https:// or file:// URL");

    c.transport.base_url = "ftp://user:secret@h/v1";
    cr_assert_eq(run_transport_check(&c.transport, err, sizeof err), -1);
    cr_assert_str_eq(err, "--base-url (credentials withheld): only http:// and https:// servers are supported");
    cr_assert_null(strstr(err, "secret"));

    c.load.warmup_s = 5;
    cr_assert_eq(run_load_check(&c.load, err, sizeof err), -1);
    cr_assert_str_eq(err, "--warmup-s goes with --duration (use --warmup N otherwise)");
}

/* The workload's check comes first: its message is run_config_check's
 * when the other features are fine. */
Test(run_config, the_whole_check_gives_a_feature_check_message)
{
    struct run_config c;
    run_config_defaults(&c);
    c.workload.tool_choice = "auto";
    cr_assert_eq(run_config_check(&c, err, sizeof err), -1);
    cr_assert_str_eq(err, "--tool-choice needs --tools");
    run_config_defaults(&c);
    c.load.duration_s = 10;
    c.load.window_ready = (bool (*)(void *, const struct driver_gate *))1;  /* never called by a check */
    cr_assert_eq(run_config_check(&c, err, sizeof err), -1);
    cr_assert_str_eq(err, "a readiness gate needs duration mode with a warm-up and one thread");
}

/* Settings each feature accepts alone that rule each other out: only the
 * whole check sees them. */
Test(run_config, conflicts_across_features_are_the_whole_checks)
{
    struct run_config c;
    run_config_defaults(&c);
    c.workload.tools_file = "/dev/null";
    c.transport.endpoint = EP_COMPLETIONS;
    cr_assert_eq(run_workload_check(&c.workload, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_transport_check(&c.transport, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_config_check(&c, err, sizeof err), -1);
    cr_assert_str_eq(err, "--tools goes with the chat endpoint (completions take no tools)");

    run_config_defaults(&c);
    c.workload.agentic_sessions = 8;
    c.shard.count = 2;
    c.load.concurrency = 4;
    cr_assert_eq(run_workload_check(&c.workload, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_config_check(&c, err, sizeof err), -1);
    cr_assert(strstr(err, "agentic sessions are not split over shards or ranks"), "%s", err);

    run_config_defaults(&c);
    c.load.concurrency = 0;     /* the closed loop with no streams */
    cr_assert_eq(run_load_check(&c.load, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_config_check(&c, err, sizeof err), -1);
    cr_assert_str_eq(err, "the closed loop needs --concurrency of at least 1");
}

/* --images-per-request is ruled out by the workload (a dataset) and by the
 * transport (the completions endpoint): one message either way. */
Test(run_config, images_say_the_same_whichever_feature_rules_them_out)
{
    const char *want = "--images-per-request goes with synthetic chat prompts (not completions, --dataset or "
                       "agentic sessions)";
    struct run_config c;
    run_config_defaults(&c);
    c.workload.images_per_request = 2;
    c.transport.endpoint = EP_COMPLETIONS;
    cr_assert_eq(run_workload_check(&c.workload, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_config_check(&c, err, sizeof err), -1);
    cr_assert_str_eq(err, want);
    run_config_defaults(&c);
    c.workload.images_per_request = 2;
    c.workload.agentic_sessions = 3;
    cr_assert_eq(run_workload_check(&c.workload, err, sizeof err), -1);
    cr_assert_str_eq(err, want);
}

/* A refused metrics URL is named without its credentials (they are as
 * secret as an API key). Failed before: the message echoed user:token@. */
Test(run_config, a_refused_metrics_url_is_named_without_its_credentials)
{
    struct run_observe o = {.server_metrics = "ftp://me:s3cret@h:9/metrics"};
    char msg[512];
    cr_assert_eq(run_observe_check(&o, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "--server-metrics ftp://h:9/metrics: expected"), "%s", msg);
    cr_assert_null(strstr(msg, "s3cret"), "%s", msg);
    o = (struct run_observe){.gpu_metrics_url = "gopher://me:s3cret@h/x"};
    cr_assert_eq(run_observe_check(&o, msg, sizeof msg), -1);
    cr_assert_null(strstr(msg, "s3cret"), "%s", msg);
}
