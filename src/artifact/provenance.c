/* provenance.c — anvil's version, the redacted command line, host facts. */
#include "artifact/provenance.h"

#include <stdlib.h>
#include <string.h>

#include "artifact/fields.h"
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

static const struct field provenance_rows[] = {
    F_STR(struct provenance, anvil_version, JR_NULLABLE),
    F_STRS_W(struct provenance, command_line, n_command_line, JR_NULLABLE, FW_NULL_STRS),
    F_STR(struct provenance, host, JR_NULLABLE),
    F_STR(struct provenance, kernel, JR_NULLABLE),
    F_STR(struct provenance, cpu_model, JR_NULLABLE),
    F_WHOLE_MIN(struct provenance, cpu_cores, JR_NULLABLE, 0, "CPUs", 1),
};
const struct field_table provenance_table = FIELD_TABLE("provenance", struct provenance, provenance_rows, present);

/* The key every artifact kind carries it under. */
static const char provenance_key[] = "provenance";

void provenance_write(cJSON *o, const struct provenance *p)
{
    if (p->present)
        fields_write(cJSON_AddObjectToObject(o, provenance_key), &provenance_table, p);
}

int provenance_read(struct jread *r, const cJSON *o, struct provenance *out)
{
    if (fields_read_object(r, o, provenance_key, JR_OPTIONAL, &provenance_table, out) == 0)
        return 0;
    fields_free(&provenance_table, out);
    return -1;
}

void provenance_free(struct provenance *p)
{
    fields_free(&provenance_table, p);
}
