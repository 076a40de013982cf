/* cli.h — entry points of anvil's client commands. */
#ifndef ANVIL_CLI_CLI_H
#define ANVIL_CLI_CLI_H

/* `anvil run`: benchmarks one endpoint. argv[0] is "run". Returns the exit
 * status: 0 ok, 1 the benchmark could not run (server absent, every request
 * failed to start), 2 usage error. */
int run_main(int argc, char **argv);

/* `anvil aggregate`: builds a matrix artifact (docs/MATRIX.md) from round
 * artifacts or an existing matrix's rows. argv[0] is "aggregate". Returns the
 * exit status: 0 written, 1 an input is unreadable or invalid or the output
 * cannot be written, 2 usage error. */
int aggregate_main(int argc, char **argv);

/* `anvil sweep`: runs every case against every target for several rounds
 * (each round one `anvil run` child process), then writes the matrix and,
 * with --slo, the load curve. argv[0] is "sweep". Returns 0 when the matrix
 * status is PASS, 1 when FAIL or INCOMPLETE or nothing could run, 2 on a
 * usage error. */
int sweep_main(int argc, char **argv);

/* `anvil show FILE...`: prints artifacts of any kind as summary tables
 * (--format table|markdown|csv|json). argv[0] is "show". Returns 0 every
 * file shown, 1 a file unreadable or invalid, 2 usage error. */
int show_main(int argc, char **argv);

/* `anvil compare A B`: two sets of rounds metric by metric with verdicts
 * (report/compare.h). argv[0] is "compare". Returns 0 compared, 1 an input
 * unreadable or invalid or the workloads differ (without --force), 2 usage
 * error. */
int compare_main(int argc, char **argv);

/* `anvil graph PLAN`: graph data (seed 000's schema) from a plan whose
 * points name artifact files (artifact/graph.h). argv[0] is "graph".
 * Returns 0 written, 1 the plan, an artifact or a metric is missing or
 * invalid, 2 usage error. */
int graph_main(int argc, char **argv);

/* `anvil report FILE|DIR... -o report.html`: one self-contained HTML file
 * for any mix of artifacts (report/html.h). argv[0] is "report". Returns 0
 * written, 1 an input unreadable or invalid, no chart bundle in this build,
 * or the file cannot be written, 2 usage error. */
int report_main(int argc, char **argv);

/* `anvil recover JOURNAL`: rebuilds a killed run's artifact from its
 * journal. argv[0] is "recover". Returns 0 written, 1 the journal cannot be
 * read or the artifact cannot be written, 2 usage error. */
int recover_main(int argc, char **argv);

/* `anvil decode`: the sustained-decode matrix (decode/matrix.h). argv[0] is
 * "decode". Returns 0 every cell measured, 1 incomplete (resumable) or
 * nothing measured, 2 usage error. */
int decode_main(int argc, char **argv);

/* `anvil merge SHARD_ARTIFACT... --out FILE`: one artifact from the shards
 * of a run (run/merge.h). argv[0] is "merge". Returns 0 written and
 * complete, 1 written but incomplete (a shard missing or cut short) or an
 * input unreadable or not a shard of the others' run, 2 usage error. */
int merge_main(int argc, char **argv);

/* `anvil ceiling`: the SSE events/s one measuring thread sustains with
 * first-token stamps within 1 ms of a local simulator (run/ceiling.h),
 * written to the ceiling file. argv[0] is "ceiling". Returns 0 measured and
 * written, 1 no step within 1 ms or the measurement or file failed, 2
 * usage error. */
int ceiling_main(int argc, char **argv);

struct flag_spec;

/* `anvil run`'s flag table (cli/flags.h): the tables of its features
 * (run_flags.c) joined in --help's order, ended by {0}. Static. Rows store
 * into a struct whose first member is a struct run_config. */
const struct flag_spec *run_flag_table(void);

/* `anvil metrics [--format table|json]`: the metric registry
 * (stats/registry.h). argv[0] is "metrics". Returns 0 printed, 1 the output
 * cannot be written, 2 usage error. */
int metrics_main(int argc, char **argv);

#endif
