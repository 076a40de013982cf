/* escape.h — text that came from elsewhere (a server's error body, a
 * message in a stream) made safe to print and to write: nothing in it can
 * move a terminal's cursor, change its colours or its title. */
#ifndef ANVIL_CORE_ESCAPE_H
#define ANVIL_CORE_ESCAPE_H

#include <stddef.h>

/* Copies text (len bytes, may hold NULs) into out (cap bytes, always
 * NUL-terminated when cap > 0, cut before an escape that does not fit),
 * with C0 controls and DEL as \xNN (tab, newline and carriage return as \t,
 * \n, \r), C1 controls (U+0080..U+009F, what an ESC [ can also be spelled
 * as) as \u00NN, and bytes that are not well-formed UTF-8 as \xNN; every
 * other character, ASCII or UTF-8, as it is. A backslash stays one
 * backslash: the result is for reading, not for unescaping. Returns
 * strlen(out). */
size_t text_escape(char *out, size_t cap, const char *text, size_t len);

#endif
