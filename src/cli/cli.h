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

/* `anvil recover JOURNAL`: rebuilds a killed run's artifact from its
 * journal. argv[0] is "recover". Returns 0 written, 1 the journal cannot be
 * read or the artifact cannot be written, 2 usage error. */
int recover_main(int argc, char **argv);

struct flag_spec;

/* `anvil run`'s flag table (cli/flags.h), for tests that hold it to the
 * library's defaults. Rows store into a struct whose first member is a
 * struct run_config. */
const struct flag_spec *run_flag_table(void);

#endif
