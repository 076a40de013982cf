/* flags.h — strict parsing of numeric flag values, with errors that name the flag. */
#ifndef ANVIL_CLI_FLAGS_H
#define ANVIL_CLI_FLAGS_H

/* Parses an integer in [min, max] from the whole of s. On error prints
 * "anvil CMD: --FLAG: ..." to stderr and returns -1; else stores it and returns 0. */
int flag_long(const char *cmd, const char *flag, const char *s, long min, long max, long *out);

/* Parses a finite number ≥ min from the whole of s; errors as flag_long. */
int flag_double(const char *cmd, const char *flag, const char *s, double min, double *out);

/* Parses a rate-like value > 0: a finite number or "inf" (INFINITY); errors
 * as flag_long. */
int flag_rate(const char *cmd, const char *flag, const char *s, double *out);

#endif
