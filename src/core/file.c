/* file.c — whole-file reads, parent directories. */
#include "core/file.h"

#include "core/vec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *file_read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *data = NULL;
    size_t n = 0, cap = 0, got;
    char chunk[65536];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (VEC_RESERVE(data, cap, n + got + 1, 2 * sizeof chunk) != 0) {
            free(data);
            fclose(f);
            return NULL;
        }
        memcpy(data + n, chunk, got);
        n += got;
    }
    if (ferror(f) || (!data && !(data = malloc(1)))) {
        free(data);
        fclose(f);
        return NULL;
    }
    fclose(f);
    data[n] = '\0';
    if (len)
        *len = n;
    return data;
}

int file_mkdir_parents(const char *path)
{
    char *dir = strdup(path);
    if (!dir)
        return -1;
    int rc = 0;
    for (char *p = dir + 1; *p && rc == 0; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            rc = -1;
        *p = '/';
    }
    free(dir);
    return rc;
}
