/* sim.h — `anvil sim`, the built-in OpenAI-compatible server. */
#ifndef ANVIL_SIM_SIM_H
#define ANVIL_SIM_SIM_H

/* Entry point of `anvil sim`: parses flags (argv[0] is "sim"), serves until
 * SIGINT, SIGTERM or SIGHUP (SIGHUP unless ignored: nohup). Returns the
 * process exit status (0 ok, 1 runtime error, 2 usage error). */
int sim_main(int argc, char **argv);

#endif
