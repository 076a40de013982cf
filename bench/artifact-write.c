/* artifact-write.c — time and peak memory of writing an artifact: reads
 * IN, then writes it to OUT either streamed (artifact_write_file) or the
 * way it was written before (artifact_print's one string of a copy of the
 * tree, then artifact_place_text). Prints one Markdown row: how, bytes,
 * seconds, RSS before writing and the peak's (VmHWM) growth over it while
 * writing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "artifact/json.h"
#include "core/file.h"

/* VmHWM (peak) or VmRSS (now) of this process, in KiB. */
static long rss_kib(const char *which)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256], fmt[32];
    long kib = -1;
    snprintf(fmt, sizeof fmt, "%s: %%ld", which);
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, fmt, &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "streamed") && strcmp(argv[1], "whole"))) {
        fprintf(stderr, "usage: artifact-write streamed|whole IN OUT\n");
        return 2;
    }
    size_t len;
    char *text = file_read_all(argv[2], &len), err[1024];
    cJSON *j = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    if (!j) {
        fprintf(stderr, "artifact-write: cannot read %s\n", argv[2]);
        return 1;
    }
    /* the peak restarts from now (Linux ≥ 4.0): reading's own peak is not the writer's */
    FILE *clear = fopen("/proc/self/clear_refs", "w");
    if (!clear || fputs("5", clear) < 0 || fclose(clear) != 0) {
        fprintf(stderr, "artifact-write: cannot reset the peak RSS\n");
        return 1;
    }
    long rss0 = rss_kib("VmRSS");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc;
    if (!strcmp(argv[1], "streamed")) {
        rc = artifact_write_file(argv[3], j, err, sizeof err);
    } else {
        /* what artifact_write_file did: the text, then a newline added as it is put */
        char *all = artifact_print(j);
        rc = all ? artifact_place_text(argv[3], all, err, sizeof err) : -1;
        free(all);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != 0) {
        fprintf(stderr, "artifact-write: %s\n", err);
        return 1;
    }
    FILE *f = fopen(argv[3], "r");
    long bytes = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (f)
        fclose(f);
    printf("| %s | %ld | %.3f | %.1f | %.1f |\n", argv[1], bytes,
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
           rss0 / 1024.0, (rss_kib("VmHWM") - rss0) / 1024.0);
    cJSON_Delete(j);
    return 0;
}
