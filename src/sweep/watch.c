/* watch.c — a round's progress from its journal. */
#include "sweep/watch.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "core/duration.h"

/* The value of flag in the job's arguments ("--num-prompts 400"), or NULL. */
static const char *arg_of(const struct sweep_job *job, const char *flag)
{
    for (size_t i = 0; i + 1 < job->n_args; i++)
        if (!strcmp(job->args[i], flag))
            return job->args[i + 1];
    return NULL;
}

void round_watch_start(struct round_watch *w, const struct sweep_job *job)
{
    *w = (struct round_watch){.job = job, .since = time(NULL) - 1};
    const char *n = arg_of(job, "--num-prompts"), *d = arg_of(job, "--duration");
    w->planned = n ? strtol(n, NULL, 10) : 0;
    if (!d || duration_parse(d, &w->duration_s) != 0)   /* the round's anvil run checks it */
        w->duration_s = 0;
}

/* Whether the journal at path is the round's: its header names the artifact. */
static bool journal_of(const char *path, const char *artifact)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    bool ours = false;
    if (f && getline(&line, &cap, f) > 0) {
        cJSON *h = cJSON_Parse(line);
        const char *a = cJSON_GetStringValue(cJSON_GetObjectItem(h, "artifact"));
        ours = a && !strcmp(a, artifact);
        cJSON_Delete(h);
    }
    free(line);
    if (f)
        fclose(f);
    return ours;
}

/* Looks in the artifact's directory for a journal of this round written
 * since it started. */
static void find_journal(struct round_watch *w)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", w->job->artifact);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    for (struct dirent *e; d && !w->path[0] && (e = readdir(d));) {
        size_t n = strlen(e->d_name), k = strlen(".requests.jsonl");
        if (n <= k || strcmp(e->d_name + n - k, ".requests.jsonl"))
            continue;
        char p[sizeof w->path];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) == 0 && st.st_mtime >= w->since && journal_of(p, w->job->artifact))
            snprintf(w->path, sizeof w->path, "%s", p);
    }
    if (d)
        closedir(d);
}

long round_watch_poll(struct round_watch *w)
{
    if (!w->path[0])
        find_journal(w);
    FILE *f = w->path[0] ? fopen(w->path, "r") : NULL;
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    if (fseeko(f, w->offset, SEEK_SET) == 0)
        while ((n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n') {  /* whole lines only */
            w->offset += n;
            w->ended += strstr(line, "\"warmup\":false") != NULL;
        }
    free(line);
    fclose(f);
    return w->ended;
}

void round_watch_line(const struct round_watch *w, double elapsed_s, char *out, size_t cap)
{
    char of[32] = "";
    if (w->planned > 0 && w->duration_s <= 0)
        snprintf(of, sizeof of, "/%ld", w->planned);
    if (w->duration_s > 0)
        snprintf(out, cap, "%ld requests ended, %.0f of %g s", w->ended, elapsed_s, w->duration_s);
    else
        snprintf(out, cap, "%ld%s requests ended, %.0f s", w->ended, of, elapsed_s);
}
