/* redact.h — keeps a secret (an API key) out of text that will be written
 * anywhere: messages a server echoed it into, possibly cut short. */
#ifndef ANVIL_CORE_REDACT_H
#define ANVIL_CORE_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#define REDACTED "[redacted]"

/* Replaces every occurrence of secret in the NUL-terminated s (cap bytes of
 * storage) with "[redacted]", and a tail of s that is the start of secret
 * (at least 4 bytes: the text was cut inside it) too. Secrets shorter than
 * 4 bytes are left alone: they cannot be told from ordinary text. */
void redact(char *s, size_t cap, const char *secret);

/* Copies a command line (argv[0..argc)) for writing into a file, with
 * secrets replaced by REDACTED: the value of --header and of every
 * --api-key* flag (the next argument, or the text after '='; also when the
 * flag is abbreviated, as getopt_long accepts), the user:password@ (any
 * userinfo) of every scheme://user:password@host URL in any argument, and,
 * when after_dashdash, every argument after the first "--" (flags handed on
 * to other commands, which record their own redacted command lines).
 * Returns a malloc'd array of argc malloc'd strings (release with
 * redact_argv_free), or NULL when memory runs out. */
char **redact_argv(int argc, char *const argv[], bool after_dashdash);

/* Frees what redact_argv returned (v may be NULL). */
void redact_argv_free(char **v, int argc);

#endif
