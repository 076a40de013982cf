/* host.c — host facts for provenance. */
#include "core/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/file.h"

/* The value of the first line "<key><blanks>: value" in text, trimmed. */
static int line_value(const char *text, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, key, klen) != 0)
            continue;
        const char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;   /* a longer key that starts with this one */
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\n");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
            n--;
        snprintf(out, cap, "%.*s", (int)n, p);
        return 0;
    }
    return -1;
}

int host_cpu_model(const char *cpuinfo, char *out, size_t cap)
{
    out[0] = '\0';
    if (line_value(cpuinfo, "model name", out, cap) == 0 || line_value(cpuinfo, "Hardware", out, cap) == 0)
        return 0;
    out[0] = '\0';
    return -1;
}

void host_facts_get(struct host_facts *out)
{
    *out = (struct host_facts){.cpu_cores = -1};
    if (gethostname(out->host, sizeof out->host - 1) != 0)
        out->host[0] = '\0';
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(out->kernel, sizeof out->kernel, "%s", u.release);
    char *cpuinfo = file_read_all("/proc/cpuinfo", NULL);
    if (cpuinfo)
        host_cpu_model(cpuinfo, out->cpu_model, sizeof out->cpu_model);
    free(cpuinfo);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    out->cpu_cores = n > 0 ? n : -1;
}
