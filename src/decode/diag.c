/* diag.c — startup diagnostics read from the host. */
#include "decode/diag.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/child.h"
#include "core/clock.h"
#include "core/file.h"
#include "core/version.h"


/* The RegistryDwords the P2P override tuning sets (what "expected" holds:
 * the setting being checked for, not a reading). */
static const char *const expected[][2] = {
    {"ForceP2P", "0x11"}, {"RMForceP2PType", "1"}, {"RMPcieP2PType", "2"},
    {"GrdmaPciTopoCheckOverride", "1"}, {"EnableResizableBar", "1"},
};
#define N_EXPECTED (sizeof expected / sizeof *expected)

/* Parses "K=V;K=V" (a RegistryDwords value, quotes and blanks around it
 * dropped) into m. Returns 0, or -1 out of memory. */
static int parse_dwords(const char *s, struct decode_strmap *m)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ";\" \t\n", &save); tok; tok = strtok_r(NULL, ";\" \t\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok)
            continue;
        *eq = 0;
        if (decode_strmap_set(m, tok, eq + 1) != 0)
            return -1;
    }
    return 0;
}

/* The value after "key" in text (up to the end of its line), into out. */
static bool find_after(const char *text, const char *key, char *out, size_t cap)
{
    const char *p = text ? strstr(text, key) : NULL;
    if (!p)
        return false;
    p += strlen(key);
    while (*p == ':' || *p == '=' || *p == ' ' || *p == '\t' || *p == '"')
        p++;
    size_t n = strcspn(p, "\n");
    snprintf(out, cap, "%.*s", (int)n, p);
    return true;
}

/* Adds name to o's missing list. */
static int add_missing(struct decode_p2p *o, const char *name)
{
    char **v = realloc(o->missing, (o->n_missing + 1) * sizeof *v);
    if (!v)
        return -1;
    o->missing = v;
    if (!(v[o->n_missing] = strdup(name)))
        return -1;
    o->n_missing++;
    return 0;
}

/* Adds name's runtime and expected values to o's mismatched list. */
static int add_mismatch(struct decode_p2p *o, const char *name, const char *runtime, const char *want)
{
    struct decode_mismatch *v = realloc(o->mismatched.v, (o->mismatched.n + 1) * sizeof *v);
    if (!v)
        return -1;
    o->mismatched.v = v;
    struct decode_mismatch *m = &v[o->mismatched.n++];
    *m = (struct decode_mismatch){strdup(name), strdup(runtime), strdup(want)};
    return m->name && m->runtime && m->expected ? 0 : -1;
}

int decode_p2p_override(const struct decode_diag_paths *dp, struct decode_p2p *o)
{
    const char *params = dp && dp->params ? dp->params : "/proc/driver/nvidia/params";
    const char *modprobe = dp && dp->modprobe ? dp->modprobe : "/etc/modprobe.d/nvidia-p2p-override.conf";
    char *ptext = file_read_all(params, NULL), *mtext = file_read_all(modprobe, NULL);
    *o = (struct decode_p2p){.present = true};
    char dwords[2048] = "", line[2048];
    int rc = 0;
    if (ptext && find_after(ptext, "RegistryDwords", line, sizeof line))
        rc |= parse_dwords(line, &o->runtime);
    bool configured = mtext && find_after(mtext, "NVreg_RegistryDwords", line, sizeof line) &&
                      strstr(line, "ForceP2P");
    size_t used = 0;
    bool all = ptext != NULL;
    for (size_t i = 0; i < N_EXPECTED; i++) {
        rc |= decode_strmap_set(&o->expected, expected[i][0], expected[i][1]);
        used += (size_t)snprintf(dwords + used, sizeof dwords - used, "%s%s=%s", i ? ";" : "", expected[i][0],
                                 expected[i][1]);
        const char *got = decode_strmap_get(&o->runtime, expected[i][0]);
        if (got && strcmp(got, expected[i][1]) != 0)
            rc |= add_mismatch(o, expected[i][0], got, expected[i][1]);
        if (!got || strcmp(got, expected[i][1]) != 0) {
            rc |= add_missing(o, expected[i][0]);
            all = false;
        }
    }
    char suggest[2200];
    snprintf(suggest, sizeof suggest, "options nvidia NVreg_RegistryDwords=\"%s\"", dwords);
    o->effective = all;
    o->configured = configured;
    o->params_path = decode_text(params);
    o->params_available = ptext != NULL;
    o->modprobe_path = decode_text(modprobe);
    o->modprobe_available = mtext != NULL;
    o->registry_dwords = decode_text(dwords);
    o->suggested_modprobe_line = decode_text(suggest);
    o->suggested_reload = decode_text("stop GPU workloads, then reload NVIDIA modules or reboot; the modprobe file "
                                      "alone does not change the running driver");
    free(ptext);
    free(mtext);
    return rc || !o->suggested_reload ? -1 : 0;
}

int decode_run_capture(const char *const argv[], struct decode_capture *o)
{
    *o = (struct decode_capture){.present = true};
    int argc = 0;
    while (argv[argc])
        argc++;
    if (!(o->cmd = calloc((size_t)argc + 1, sizeof *o->cmd)))
        return -1;
    for (; (int)o->n_cmd < argc; o->n_cmd++)
        if (!(o->cmd[o->n_cmd] = strdup(argv[o->n_cmd])))
            return -1;
    struct buf out, err;
    buf_init(&out, (size_t)1 << 20);
    buf_init(&err, (size_t)1 << 20);
    bool late = false;
    char why[300] = "";
    /* dies with anvil, given up after 10 s (core/child.h) */
    int st = child_run((char *const *)argv, 10000, &out, &err, &late, why, sizeof why);
    if (st < 0)
        buf_printf(&err, "%s%s", err.len ? "\n" : "", late ? "timed out after 10 s" : why);
    /* as the seed's writer has it: the exit status, -1 when the program did not exit by itself */
    o->returncode = st >= 0 && st < 128 ? st : -1;
    o->out = decode_text(out.data ? out.data : "");
    o->err = decode_text(err.data ? err.data : "");
    buf_free(&out);
    buf_free(&err);
    return o->out && o->err ? 0 : -1;
}

static struct decode_not_run not_run(const char *why)
{
    return (struct decode_not_run){true, decode_text("not_run"), decode_text(why)};
}

int decode_startup_diagnostics(const struct decode_diag_paths *p, const char *server_url, struct decode_args *args,
                               struct decode_diag *o)
{
    const char *smi = p && p->smi ? p->smi : "nvidia-smi";
    *o = (struct decode_diag){.present = true, .args = *args};
    *args = (struct decode_args){0};
    o->version = decode_text(anvil_version());
    o->server_url = decode_text(server_url);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    o->hostname = decode_text(host);
    struct utsname u;
    char un[1400] = "";
    if (uname(&u) == 0)
        snprintf(un, sizeof un, "%s %s %s %s %s", u.sysname, u.nodename, u.release, u.version, u.machine);
    o->uname = decode_text(un);
    /* the variables that change which GPUs and links a server uses (never secrets) */
    static const char *const vars[] = {"CUDA_VISIBLE_DEVICES", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL",
                                       "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE", "HIP_VISIBLE_DEVICES",
                                       "ROCR_VISIBLE_DEVICES"};
    int rc = 0;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            rc |= decode_strmap_set(&o->env, vars[i], getenv(vars[i]));
    rc |= decode_p2p_override(p, &o->nvidia_p2p_override);
    o->p2pmark = not_run("anvil has no p2pmark runner");
    o->amd_fabric = not_run("anvil has no AMD fabric check");
    const char *q[] = {smi, "--query-gpu=index,name,driver_version,pci.bus_id,pcie.link.gen.current,"
                       "pcie.link.width.current,power.limit", "--format=csv,noheader,nounits", NULL};
    const char *topo[] = {smi, "topo", "-m", NULL};
    rc |= decode_run_capture(q, &o->nvidia_smi_query);
    rc |= decode_run_capture(topo, &o->nvidia_smi_topo);
    return rc || !o->uname || !o->p2pmark.reason || !o->amd_fabric.reason ? -1 : 0;
}
