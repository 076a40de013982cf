/* file.h — whole-file reads and directory creation, for the inputs and
 * outputs that are not on the hot path (plans, datasets, scripts,
 * artifacts). */
#ifndef ANVIL_CORE_FILE_H
#define ANVIL_CORE_FILE_H

#include <stddef.h>

/* Reads the whole file at path. Returns a malloc'd buffer with a NUL after
 * the last byte (the caller frees), its length in *len when len is not
 * NULL; NULL when the file cannot be read (errno says why) or memory runs
 * out. */
char *file_read_all(const char *path, size_t *len);

/* Creates every missing directory above the last '/' of path (like
 * mkdir -p of its dirname). Returns 0, or -1 with errno set. */
int file_mkdir_parents(const char *path);

#endif
