/* cli.h — entry points of anvil's client commands. */
#ifndef ANVIL_CLI_CLI_H
#define ANVIL_CLI_CLI_H

/* `anvil run`: benchmarks one endpoint. argv[0] is "run". Returns the exit
 * status: 0 ok, 1 the benchmark could not run (server absent, every request
 * failed to start), 2 usage error. */
int run_main(int argc, char **argv);

#endif
