/* tokens.c — counting and dating a stream's output tokens (tokens.h). */
#include "stats/tokens.h"

#include "stats/pass.h"

const char *token_source_name(enum token_source s)
{
    static const char *const names[] = {
        [TOKENS_USAGE] = "usage", [TOKENS_TOKENIZE] = "tokenize", [TOKENS_CHUNKS] = "chunks",
    };
    return (unsigned)s < TOKENS_SOURCES ? names[s] : "unknown";
}

long tokens_of(const struct req_record *r, enum token_source *src)
{
    enum token_source s = TOKENS_CHUNKS;
    long n = (long)r->n_chunks;
    if (r->completion_tokens >= 0) {
        s = TOKENS_USAGE;
        n = r->completion_tokens;
    } else if (r->text_tokens > 0) {     /* 0 or -1: not counted (a record made without record_init) */
        s = TOKENS_TOKENIZE;
        n = r->text_tokens;
    }
    if (src)
        *src = s;
    return n;
}

/* How r's chunks without a count share the tokens no chunk claimed: per
 * byte of their output when their bytes are known, else evenly. */
struct share {
    double rest;            /* tokens_of(r) less the chunks' own counts, >= 0 */
    double per_byte;        /* rest / their bytes; 0 when no byte is known */
    double per_chunk;       /* rest / their number, when no byte is known */
};

static struct share share_of(const struct req_record *r, long total)
{
    long claimed = 0, chunks = 0, bytes = 0;
    for (size_t k = 0; k < r->n_chunks; k++) {
        if (r->chunks[k].tokens >= 0) {
            claimed += r->chunks[k].tokens;
        } else {
            chunks++;
            bytes += r->chunks[k].bytes;
        }
    }
    long rest = total - claimed;
    struct share s = {.rest = rest > 0 ? (double)rest : 0};
    if (bytes > 0)
        s.per_byte = s.rest / (double)bytes;
    else if (chunks > 0)
        s.per_chunk = s.rest / (double)chunks;
    return s;
}

static double chunk_share(const struct share *s, const struct out_chunk *c)
{
    if (c->tokens >= 0)
        return c->tokens;
    return s->per_byte > 0 ? s->per_byte * c->bytes : s->per_chunk;
}

void tokens_of_chunks(const struct req_record *r, double *out)
{
    struct share s = share_of(r, tokens_of(r, NULL));
    for (size_t i = 0; i < r->n_chunks; i++)
        out[i] = chunk_share(&s, &r->chunks[i]);
}

void tokens_window_add(const struct req_record *r, int64_t start, int64_t end, struct token_window *out)
{
    if (!r->t_start || !r->n_chunks)
        return;
    enum token_source src;
    struct share s = share_of(r, tokens_of(r, &src));
    for (size_t k = 0; k < r->n_chunks; k++) {
        const struct out_chunk *c = &r->chunks[k];
        if (c->t_ns < start || c->t_ns > end)
            continue;
        out->tokens += chunk_share(&s, c);
        out->chunks_with_count += c->tokens >= 0;
        out->chunks++;
        out->by_source[src]++;
        if (c->t_ns > out->last_arrival)
            out->last_arrival = c->t_ns;
    }
}

/* One pass. */
int tokens_in_window_iter(struct rec_iter *it, int64_t start, int64_t end, struct token_window *out)
{
    *out = (struct token_window){0};
    if (pass_begin(it) != 0)
        return -1;
    for (const struct req_record *r; (r = it->next(it));)
        tokens_window_add(r, start, end, out);
    return pass_end(it);
}

void tokens_in_window(const struct req_record *recs, int n, int64_t start, int64_t end,
                      struct token_window *out)
{
    struct rec_iter it;
    rec_iter_array(&it, recs, n);
    tokens_in_window_iter(&it, start, end, out);      /* an array has no error */
}

enum token_source window_token_source(const struct token_window *w)
{
    for (int k = TOKENS_SOURCES - 1; k > 0; k--)
        if (w->by_source[k])
            return (enum token_source)k;
    return TOKENS_USAGE;
}
