/* redact.h — keeps a secret (an API key) out of text that will be written
 * anywhere: messages a server echoed it into, possibly cut short. */
#ifndef ANVIL_CORE_REDACT_H
#define ANVIL_CORE_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#define REDACTED "[redacted]"

struct cJSON;

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

/* Every credential one command was given, in each form it may come back
 * in: owned copies, longest first (so "user:pw" is scrubbed whole before
 * "pw"). Empty = {0}. Read-only once the load starts (threads share it). */
struct secrets {
    char **v;
    size_t n, cap;
};

/* Adds value (copied). Values shorter than 4 bytes and repeats are left
 * out (redact's rule). Returns 0, or -1 when memory runs out. */
int secrets_add(struct secrets *s, const char *value);

/* Adds the value of a header line "Name: value" (a line without ':' is
 * taken whole), and, when the value is an auth scheme and a credential
 * ("Bearer TOKEN", "Basic B64"), the credential alone; for Basic also its
 * base64 decoding ("user:password") and the password. Returns 0 or -1. */
int secrets_add_header(struct secrets *s, const char *line);

/* Adds the userinfo of url (scheme://user:password@host...): as written,
 * percent-decoded, the password alone, and base64("user:password") as an
 * HTTP client sends it in "Authorization: Basic". Nothing for a URL
 * without userinfo. Returns 0 or -1. */
int secrets_add_url(struct secrets *s, const char *url);

/* Replaces every secret of s in the NUL-terminated text (cap bytes of
 * storage), as redact does for one. s may be NULL. */
void secrets_scrub(const struct secrets *s, char *text, size_t cap);

/* Scrubs every string value in the tree j (object keys are names anvil
 * chose, left alone). s may be NULL. Returns 0, or -1 when memory ran out
 * (a string then left as it was is replaced by the mark whole). */
int secrets_scrub_json(const struct secrets *s, struct cJSON *j);

/* Whether text holds a secret of s (s may be NULL). */
bool secrets_found(const struct secrets *s, const char *text);

/* Frees the copies; s is {0} again. */
void secrets_free(struct secrets *s);

#endif
