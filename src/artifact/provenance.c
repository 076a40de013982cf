/* provenance.c — anvil's version, the redacted command line, host facts. */
#include "artifact/provenance.h"

#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "core/redact.h"
#include "core/version.h"

static char *dup_or_null(const char *s)
{
    return s && s[0] ? strdup(s) : NULL;
}

int provenance_collect(struct provenance *out, int argc, char *const argv[], bool after_dashdash)
{
    *out = (struct provenance){.present = true, .cpu_cores = ARTIFACT_NONE};
    struct host_facts h;
    host_facts_get(&h);
    out->anvil_version = strdup(anvil_version());
    out->host = dup_or_null(h.host);
    out->kernel = dup_or_null(h.kernel);
    out->cpu_model = dup_or_null(h.cpu_model);
    out->cpu_cores = h.cpu_cores > 0 ? h.cpu_cores : ARTIFACT_NONE;
    bool ok = out->anvil_version && (out->host || !h.host[0]) && (out->kernel || !h.kernel[0])
              && (out->cpu_model || !h.cpu_model[0]);
    if (ok && argv && argc > 0) {
        char **red = redact_argv(argc, argv, after_dashdash);
        out->command_line = calloc((size_t)argc + 1, sizeof *out->command_line);
        if (red && out->command_line && (out->command_line[0] = strdup("anvil"))) {
            memcpy(out->command_line + 1, red, (size_t)argc * sizeof *red);
            out->n_command_line = (size_t)argc + 1;
            free(red);      /* its strings now belong to command_line */
        } else {
            redact_argv_free(red, argc);
            ok = false;
        }
    }
    if (!ok)
        provenance_free(out);
    return ok ? 0 : -1;
}

static int copy_string(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

int provenance_copy(struct provenance *dst, const struct provenance *src)
{
    *dst = (struct provenance){.present = src->present, .cpu_cores = src->cpu_cores};
    int rc = copy_string(&dst->anvil_version, src->anvil_version) | copy_string(&dst->host, src->host)
             | copy_string(&dst->kernel, src->kernel) | copy_string(&dst->cpu_model, src->cpu_model);
    if (src->command_line) {
        dst->command_line = calloc(src->n_command_line + 1, sizeof *dst->command_line);
        for (size_t i = 0; dst->command_line && i < src->n_command_line; i++)
            rc |= copy_string(&dst->command_line[i], src->command_line[i]);
        dst->n_command_line = src->n_command_line;
        if (!dst->command_line)
            rc = -1;
    }
    if (rc)
        provenance_free(dst);
    return rc ? -1 : 0;
}

void provenance_write(cJSON *o, const struct provenance *p)
{
    if (!p->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "provenance");
    artifact_add_string(j, "anvil_version", p->anvil_version);
    if (p->command_line)
        cJSON_AddItemToObject(j, "command_line", artifact_string_array(p->command_line, p->n_command_line));
    else
        cJSON_AddNullToObject(j, "command_line");
    artifact_add_string(j, "host", p->host);
    artifact_add_string(j, "kernel", p->kernel);
    artifact_add_string(j, "cpu_model", p->cpu_model);
    artifact_add_whole(j, "cpu_cores", p->cpu_cores);
}

int provenance_read(struct jread *r, const cJSON *o, struct provenance *out)
{
    *out = (struct provenance){.cpu_cores = ARTIFACT_NONE};
    const cJSON *p = jread_object(r, o, "provenance", JR_OPTIONAL);
    if (!p)
        return r->failed ? -1 : 0;
    out->present = true;
    size_t mark = jread_enter(r, "provenance");
    jread_string(r, p, "anvil_version", JR_NULLABLE, &out->anvil_version);
    jread_strings(r, p, "command_line", JR_NULLABLE, &out->command_line, &out->n_command_line);
    jread_string(r, p, "host", JR_NULLABLE, &out->host);
    jread_string(r, p, "kernel", JR_NULLABLE, &out->kernel);
    jread_string(r, p, "cpu_model", JR_NULLABLE, &out->cpu_model);
    jread_whole(r, p, "cpu_cores", JR_NULLABLE, 1, &out->cpu_cores);
    jread_leave(r, mark);
    if (r->failed) {
        provenance_free(out);
        return -1;
    }
    return 0;
}

void provenance_free(struct provenance *p)
{
    free(p->anvil_version);
    artifact_strings_free(p->command_line, p->n_command_line);
    free(p->host);
    free(p->kernel);
    free(p->cpu_model);
    *p = (struct provenance){.cpu_cores = ARTIFACT_NONE};
}
