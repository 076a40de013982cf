/* redact.h — keeps a secret (an API key) out of text that will be written
 * anywhere: messages a server echoed it into, possibly cut short. */
#ifndef ANVIL_CORE_REDACT_H
#define ANVIL_CORE_REDACT_H

#include <stddef.h>

/* Replaces every occurrence of secret in the NUL-terminated s (cap bytes of
 * storage) with "[redacted]", and a tail of s that is the start of secret
 * (at least 4 bytes: the text was cut inside it) too. Secrets shorter than
 * 4 bytes are left alone: they cannot be told from ordinary text. */
void redact(char *s, size_t cap, const char *secret);

#endif
