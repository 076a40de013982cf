/* testutil.h — helpers shared by unit tests. */
#ifndef ANVIL_TESTS_TESTUTIL_H
#define ANVIL_TESTS_TESTUTIL_H

#include <stddef.h>

/* Reads a whole file (path relative to the repository root). Returns a
 * malloc'd NUL-terminated buffer (caller frees) and its length in *len;
 * aborts the test when the file cannot be read. */
char *tu_read_file(const char *path, size_t *len);

/* Returns a pointer to the body of a recorded HTTP exchange in tests/data/
 * fixtures format: leading '#' comment lines, the status line and headers
 * (CRLF), a blank CRLF line, then the body. *status receives the HTTP status. */
const char *tu_fixture_body(const char *text, int *status);

/* The body of case n (1-based) of a multi-exchange fixture such as
 * error_responses.txt: the exchange after the line "# === CASE <n>:", up to
 * the "\n" before the next case line (or the end). Returns a malloc'd
 * NUL-terminated copy (caller frees); *status receives its HTTP status.
 * Aborts the test when there is no such case. */
char *tu_fixture_case(const char *text, int n, int *status);

#endif
