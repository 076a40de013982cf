/* workload.c — request bodies of a run. */
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rand.h"
#include "workload/image.h"
#include "workload/prompt.h"

/* Synthetic bodies are spliced from pieces rendered once — JSON head, the
 * shared prefix, the request's unique head (prompt_head, no allocation), the
 * first k filler words, JSON tail — so a launch costs a few memcpy calls
 * rather than building and rendering a prompt while other streams are being
 * timed. */
struct workload {
    struct workload_cfg cfg;
    long words;                 /* filler words for input_len tokens (calibrated) */
    double tokens_per_word;
    long shared_words;          /* words of the shared prefix */
    struct buf *shared;         /* n_shared prefixes: each its text and a space, or empty */
    long n_shared;
    struct buf filler;          /* " w1 w2 ..." (max_words words) */
    size_t *ends;               /* ends[k]: bytes of the first k filler words */
    long max_words;
    char *head, *tail;          /* the body around the prompt (tail for output_len) */
    long block_words;           /* trace: words of one TRACE_BLOCK_TOKENS block */
    long template_tokens;       /* tokens a prompt has beyond its words (chat template, BOS) */
    long template_lead;         /* of them, before the user's text; -1 = unknown (take all) */
};

/* Salts of trace blocks named by hash_ids and of blocks unique to a request. */
#define TRACE_BLOCK_SALT 0x7472616365626c6bull
#define TRACE_OWN_SALT 0x6f776e626c6f636bull
/* Index space of a request's own blocks: request seq's are seq·this + k. */
#define TRACE_OWN_BLOCKS 4096
/* Salt of --prefix-groups' prefixes. */
#define PREFIX_GROUP_SALT 0x67726f7570707266ull

#define PLACEHOLDER "\x01"          /* cJSON writes it as \u0001 */
#define PLACEHOLDER_JSON "\\u0001"

/* A reproducible draw in [0, 1) for (seed, request, stream): independent
 * streams for prompt and output lengths. */
static double uniform01(uint64_t seed, long seq, uint64_t stream)
{
    uint64_t state = seed ^ ((uint64_t)seq * 0x9e3779b97f4a7c15ull) ^ (stream << 56);
    return (double)(splitmix64_next(&state) >> 11) / 9007199254740992.0;   /* 53 bits / 2^53 */
}

static long draw_len(long base, double ratio, uint64_t seed, long seq, uint64_t stream)
{
    if (ratio <= 0)
        return base;
    long lo = (long)ceil((double)base * (1 - ratio)), hi = (long)floor((double)base * (1 + ratio));
    if (lo < 1)
        lo = 1;
    if (hi < lo)
        return lo;
    long v = lo + (long)floor((double)(hi - lo + 1) * uniform01(seed, seq, stream));
    return v > hi ? hi : v;     /* whole numbers in [N(1−r), N(1+r)] */
}

struct workload *workload_new(const struct workload_cfg *cfg)
{
    struct workload *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cfg = *cfg;
    w->words = cfg->input_len;
    w->tokens_per_word = 1;
    w->template_lead = -1;
    w->n_shared = cfg->prefix_groups >= 1 ? cfg->prefix_groups : 1;
    if (!(w->shared = calloc((size_t)w->n_shared, sizeof *w->shared))) {
        free(w);
        return NULL;
    }
    for (long g = 0; g < w->n_shared; g++)
        buf_init(&w->shared[g], 1u << 30);
    buf_init(&w->filler, 1u << 30);
    return w;
}

/* The shared prefix, the head of prompt index in space, then filler words. */
static int build_prompt(const struct workload *w, enum prompt_space space, long index,
                        long filler_words, struct buf *out)
{
    char head[PROMPT_HEAD_MAX + 1];
    size_t n = prompt_head(head, sizeof head, w->cfg.salt, space, index);
    const struct buf *sh = &w->shared[space == PROMPT_MEASURED && index >= 0 ? index % w->n_shared : 0];
    if (sh->len && buf_append(out, sh->data, sh->len) != 0)
        return -1;
    if (buf_append(out, head, n) != 0)
        return -1;
    return prompt_filler(out, filler_words, w->cfg.seed);
}

int workload_prompt(const struct workload *w, long seq, long filler_words, struct buf *out)
{
    return build_prompt(w, PROMPT_MEASURED, seq, filler_words, out);
}

int workload_calib_prompt(const struct workload *w, long k, long filler_words, struct buf *out)
{
    return build_prompt(w, PROMPT_CALIBRATION, k, filler_words, out);
}

/* Renders the JSON around the prompt for max_tokens: head into *head (if
 * head is not NULL) and the tail into *tail. Returns 0 or -1. */
static int frame(const struct workload *w, long max_tokens, char **head, char **tail)
{
    struct request_opts ro = w->cfg.ro;
    ro.max_tokens = max_tokens;
    char *body = request_body(&ro, PLACEHOLDER);
    char *at = body ? strstr(body, PLACEHOLDER_JSON) : NULL;
    if (!at) {
        free(body);
        return -1;
    }
    *tail = strdup(at + strlen(PLACEHOLDER_JSON));
    if (head) {
        *at = '\0';
        *head = strdup(body);
    }
    free(body);
    return *tail && (!head || *head) ? 0 : -1;
}

void workload_set_template_lead(struct workload *w, long tokens)
{
    w->template_lead = tokens;
}

int workload_fit(struct workload *w, long words, double tokens_per_word)
{
    w->words = words;
    w->tokens_per_word = tokens_per_word > 0 ? tokens_per_word : 1;
    /* input_len tokens are the head's and the filler's words plus what the
     * template adds; a trace prompt has only words and the template */
    long tmpl = (long)llround((double)w->cfg.input_len - (double)(words + PROMPT_HEAD_WORDS) * w->tokens_per_word);
    w->template_tokens = tmpl > 0 ? tmpl : 0;
    w->block_words = (long)llround(TRACE_BLOCK_TOKENS / w->tokens_per_word);
    if (w->block_words < PROMPT_HEAD_WORDS)
        w->block_words = PROMPT_HEAD_WORDS;
    bool groups = w->cfg.prefix_groups >= 1;
    long lead = w->template_lead >= 0 ? w->template_lead : w->template_tokens;
    long prefix = w->cfg.shared_prefix_len - (groups && w->cfg.shared_prefix_len > 0 ? lead : 0);
    long shared = prefix > 0 ? (long)llround((double)prefix / w->tokens_per_word) : 0;
    w->shared_words = shared;
    w->words = words > shared ? words - shared : 0;     /* the shared words count toward input_len */
    /* one prefix: its words have their own seed; groups: a block of text per
     * group and run (prompt_block), so groups share nothing. "w1 ... wn "
     * (the leading space moves to the end, before the head) */
    for (long g = 0; g < w->n_shared; g++) {
        struct buf *sh = &w->shared[g];
        buf_reset(sh);
        if (shared <= 0)
            continue;
        int rc = groups ? prompt_block(sh, w->cfg.salt ^ PREFIX_GROUP_SALT, g, shared)
                        : prompt_filler(sh, shared, w->cfg.seed + 1);
        if (rc != 0 || buf_append(sh, " ", 1) != 0)
            return -1;
        memmove(sh->data, sh->data + 1, sh->len);     /* with the NUL */
        sh->len--;
    }
    /* enough filler for the longest prompt a range can ask for */
    double extra = (double)w->cfg.input_len * w->cfg.input_range / w->tokens_per_word;
    w->max_words = w->words + (long)ceil(extra) + 1;
    free(w->ends);
    buf_reset(&w->filler);
    w->ends = malloc(((size_t)w->max_words + 1) * sizeof *w->ends);
    if (!w->ends || prompt_filler(&w->filler, w->max_words, w->cfg.seed) != 0)
        return -1;
    long k = 0;
    w->ends[0] = 0;
    for (size_t i = 1; i <= w->filler.len && k < w->max_words; i++)
        if (i == w->filler.len || w->filler.data[i] == ' ')
            w->ends[++k] = i;
    return frame(w, w->cfg.output_len, &w->head, &w->tail);
}

/* A dataset entry's messages with a head unique to its conversation and pass
 * over the dataset (cycle) before the first message's text. Returns a new
 * array (caller deletes) or NULL. */
static cJSON *salted(const struct workload *w, const struct dataset_entry *e, long cycle)
{
    cJSON *msgs = cJSON_Duplicate(e->messages, 1);
    cJSON *first = cJSON_GetArrayItem(msgs, 0);
    cJSON *content = cJSON_GetObjectItemCaseSensitive(first, "content");
    const char *key = "content";
    if (cJSON_IsArray(content)) {   /* parts (images): the head goes before the first text part's text */
        cJSON *p;
        cJSON_ArrayForEach(p, content)
            if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "text")))
                break;
        first = p;
        key = "text";
    }
    const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, key));
    char head[PROMPT_HEAD_MAX + 1];
    /* conversation ids are below the entry count: one index per (conversation, pass) */
    prompt_head(head, sizeof head, w->cfg.salt, PROMPT_MEASURED,
                cycle * (long)w->cfg.ds->n + e->conversation);
    struct buf b;
    buf_init(&b, 1u << 30);
    if (msgs && text && buf_printf(&b, "%s %s", head, text) == 0)
        cJSON_ReplaceItemInObjectCaseSensitive(first, key, cJSON_CreateString(b.data));
    buf_free(&b);
    return msgs;
}

/* Copies n bytes (src may be NULL when n is 0) and returns the end. */
static char *append(char *dst, const char *src, size_t n)
{
    if (n)
        memcpy(dst, src, n);
    return dst + n;
}

long workload_follows(const struct workload *w, long seq)
{
    const struct dataset *ds = w->cfg.ds;
    if (!ds || seq < 1 || (size_t)seq % ds->n == 0)
        return -1;
    size_t i = (size_t)seq % ds->n;
    return ds->entries[i].conversation == ds->entries[i - 1].conversation ? seq - 1 : -1;
}

int workload_waits(const struct workload *w, long seq, long *out, int cap)
{
    const struct dataset *ds = w->cfg.ds;
    if (!ds || seq < 1 || cap < 1)
        return 0;
    long i = (long)((size_t)seq % ds->n), base = seq - i, n = 0;
    const struct dataset_entry *e = ds->entries;
    for (long j = i - 1; j >= 0 && e[j].conversation == e[i].conversation; j--) {
        if (e[i].agent > 0 && e[j].agent > 0)
            continue;           /* a sub-agent waits for its parent turn only */
        if (n < cap)
            out[n] = base + j;
        n++;                    /* counted past cap: the plan refuses rather than drops a wait */
        if (e[j].agent == 0)
            break;              /* the previous turn: what came before it ended before it */
    }
    return (int)n;
}

int64_t workload_think_ns(const struct workload *w, long seq)
{
    const struct dataset *ds = w->cfg.ds;
    return ds ? (int64_t)llround(ds->entries[(size_t)seq % ds->n].think_s * 1e9) : 0;
}

/* The words of a trace request's prompt, block by block, into text. */
static int trace_text(const struct workload *w, const struct trace_req *t, long seq, struct buf *text)
{
    long words = (long)llround((double)(t->input_len - w->template_tokens) / w->tokens_per_word);
    long done = 0;
    for (size_t j = 0; done < (words > 1 ? words : 1); j++) {
        long n = w->block_words < words - done ? w->block_words : words - done;
        int rc = j < t->n_hash
            ? prompt_block(text, w->cfg.salt ^ TRACE_BLOCK_SALT, (long)t->hash_ids[j], n)
            : prompt_block(text, w->cfg.salt ^ TRACE_OWN_SALT, seq * TRACE_OWN_BLOCKS + (long)(j - t->n_hash), n);
        if (rc != 0)
            return -1;
        done += n > PROMPT_HEAD_WORDS ? n : PROMPT_HEAD_WORDS;
    }
    return 0;
}

static char *trace_body(const struct workload *w, long seq, long *planned, long *max_tokens)
{
    const struct trace_req *t = &w->cfg.trace->reqs[(size_t)seq % w->cfg.trace->n];
    *planned = t->input_len;
    *max_tokens = t->output_len;
    struct buf text;
    buf_init(&text, 1u << 30);
    char *head = NULL, *tail = NULL, *body = NULL;
    if (trace_text(w, t, seq, &text) == 0 && frame(w, t->output_len, &head, &tail) == 0) {
        size_t hl = strlen(head), tl = strlen(tail);
        /* block text is lower-case words and spaces: nothing to escape */
        if ((body = malloc(hl + text.len + tl + 1))) {
            char *p = append(body, head, hl);
            p = append(p, text.data + 1, text.len - 1);     /* without the first block's leading space */
            memcpy(p, tail, tl + 1);
        }
    }
    free(head);
    free(tail);
    buf_free(&text);
    return body;
}

/* Filler words of request seq for its drawn length. */
static long request_words(const struct workload *w, long seq, long *tokens)
{
    *tokens = draw_len(w->cfg.input_len, w->cfg.input_range, w->cfg.seed, seq, 1);
    long words = w->words + (long)llround((double)(*tokens - w->cfg.input_len) / w->tokens_per_word);
    return words < 0 ? 0 : words > w->max_words ? w->max_words : words;
}

/* Request seq with images: its text as workload_body splices it, then its
 * images, rendered through request_body (the content becomes parts). */
static char *image_body(const struct workload *w, long seq, long *planned, long *max_tokens)
{
    long tokens, words = request_words(w, seq, &tokens);
    struct request_opts ro = w->cfg.ro;
    ro.max_tokens = *max_tokens = draw_len(w->cfg.output_len, w->cfg.output_range, w->cfg.seed, seq, 2);
    *planned = w->cfg.input_len == 0 ? -1 : tokens;    /* a minimal prompt has no target */
    struct buf text, *img = calloc((size_t)w->cfg.images, sizeof *img);
    const char **urls = calloc((size_t)w->cfg.images, sizeof *urls);
    buf_init(&text, 1u << 30);
    char *body = NULL;
    int rc = img && urls ? build_prompt(w, PROMPT_MEASURED, seq, 0, &text) : -1;
    if (rc == 0 && words)
        rc = buf_append(&text, w->filler.data, w->ends[words]);
    for (int k = 0; rc == 0 && k < w->cfg.images; k++) {
        buf_init(&img[k], 1u << 30);
        uint64_t s = w->cfg.salt ^ ((uint64_t)seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)k << 48);
        rc = image_data_url(w->cfg.image_format, splitmix64_next(&s), w->cfg.image_w, w->cfg.image_h, &img[k]);
        urls[k] = img[k].data;
    }
    if (rc == 0) {
        ro.image_urls = urls;
        ro.n_images = w->cfg.images;
        body = request_body(&ro, text.data);
    }
    for (int k = 0; img && k < w->cfg.images; k++)
        buf_free(&img[k]);
    free(img);
    free(urls);
    buf_free(&text);
    return body;
}

char *workload_body(const struct workload *w, long seq, long *planned, long *max_tokens)
{
    struct request_opts ro = w->cfg.ro;
    if (w->cfg.trace)
        return trace_body(w, seq, planned, max_tokens);
    if (w->cfg.ds) {
        const struct dataset_entry *e = &w->cfg.ds->entries[(size_t)seq % w->cfg.ds->n];
        ro.max_tokens = *max_tokens = e->max_tokens > 0 ? e->max_tokens : w->cfg.output_len;
        *planned = -1;
        /* each pass over the dataset gets its own prefixes; turns of one
         * conversation within a pass share theirs */
        cJSON *msgs = salted(w, e, seq / (long)w->cfg.ds->n);
        char *body = msgs ? request_body_messages(&ro, msgs) : NULL;
        cJSON_Delete(msgs);
        return body;
    }
    if (w->cfg.images > 0)
        return image_body(w, seq, planned, max_tokens);
    long tokens = draw_len(w->cfg.input_len, w->cfg.input_range, w->cfg.seed, seq, 1);
    long words = w->words + (long)llround((double)(tokens - w->cfg.input_len) / w->tokens_per_word);
    words = words < 0 ? 0 : words > w->max_words ? w->max_words : words;
    *max_tokens = draw_len(w->cfg.output_len, w->cfg.output_range, w->cfg.seed, seq, 2);
    *planned = w->cfg.input_len == 0 ? -1 : tokens;    /* a minimal prompt has no target */
    char *tail = w->tail, *own_tail = NULL;
    if (*max_tokens != w->cfg.output_len && frame(w, *max_tokens, NULL, &own_tail) == 0)
        tail = own_tail;
    char id[PROMPT_HEAD_MAX + 1];
    size_t id_len = prompt_head(id, sizeof id, w->cfg.salt, PROMPT_MEASURED, seq);
    size_t hl = strlen(w->head), tl = strlen(tail), fl = w->ends[words];
    const struct buf *sh = &w->shared[seq % w->n_shared];
    char *body = malloc(hl + sh->len + id_len + fl + tl + 1);
    if (body) {
        char *p = body;
        p = append(p, w->head, hl);
        p = append(p, sh->data, sh->len);
        p = append(p, id, id_len);
        p = append(p, w->filler.data, fl);
        memcpy(p, tail, tl + 1);
    }
    free(own_tail);
    return body;
}

void workload_free(struct workload *w)
{
    if (!w)
        return;
    for (long g = 0; g < w->n_shared; g++)
        buf_free(&w->shared[g]);
    free(w->shared);
    buf_free(&w->filler);
    free(w->ends);
    free(w->head);
    free(w->tail);
    free(w);
}
