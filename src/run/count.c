/* count.c — the output tokens of streams that reported no usage, counted by
 * the engine's own tokenizer over the text they received (stats/tokens.h's
 * third source), after the load and off the measuring loop. */
#include <stdio.h>
#include <string.h>

#include "load/driver.h"
#include "run/stage.h"

#define COUNT_TIMEOUT_MS 10000
/* After this many failed tokenize calls in a row, the server is not asked again. */
#define COUNT_MAX_FAILURES 3

/* Counts one stream's text; 0 when counted, -1 when the server could not. */
static int count_one(struct run_ctx *x, const struct buf *text, bool stop, long *tokens, char *err, size_t errlen)
{
    long n = server_count_output_tokens(&x->srv, x->headers, text->data, text->len, COUNT_TIMEOUT_MS, err, errlen);
    if (n < 0)
        return -1;
    /* a reply that stopped at EOS generated that token too, and it has no text */
    *tokens = n + stop;
    return 0;
}

/* The streams to count: the records' own (kept records), or the texts kept
 * as records were dropped (run_kept.texts, whose counts the journal's
 * reader applies). */
void run_count_text_tokens(struct run_ctx *x, struct driver_result *dr)
{
    struct run_kept *k = x->res->kept;
    long counted = 0, left = x->drop ? k->texts_left : 0;
    /* a server that stalled or went away would only time each call out */
    bool stopped = dr->server_stalled.stalled || dr->server_gone.gone;
    int failures = 0;
    char err[300] = "";
    size_t n = x->drop ? k->n_texts : (size_t)dr->n_records;
    for (size_t i = 0; i < n; i++) {
        struct req_record *r = x->drop ? NULL : &dr->records[i];
        struct buf *text = r ? &r->text : &k->texts[i].text;
        /* a tool call's fragments are not text: its chunk count is the better (lower) bound */
        bool wanted = !r || (r->t_start && r->completion_tokens < 0 && r->text.len > 0 && !r->tool_call_chunks);
        bool stop = r ? !strcmp(r->finish_reason, "stop") : k->texts[i].stop;
        long *tokens = r ? &r->text_tokens : &k->texts[i].tokens;
        if (wanted && (counted >= COUNT_MAX_STREAMS || failures >= COUNT_MAX_FAILURES ||
                       x->srv.engine_id == ENGINE_UNKNOWN || stopped))
            left++;
        else if (wanted && count_one(x, text, stop, tokens, err, sizeof err) == 0) {
            counted++;
            failures = 0;
        } else if (wanted) {
            failures++;
            left++;
        }
        buf_free(text);     /* counted or not, the text is not kept past here */
    }
    if (x->drop)
        text_counts_sort(k->texts, k->n_texts);
    if (counted)
        run_say(x, "%ld stream%s reported no usage: %s output tokens were counted by the server's "
                "tokenizer over the text received", counted, counted == 1 ? "" : "s", counted == 1 ? "its" : "their");
    if (left)
        run_say(x, "warning: %ld stream%s reported no usage and could not be counted by the server's "
                "tokenizer (%s): %s output tokens are chunk counts, a lower bound", left, left == 1 ? "" : "s",
                x->srv.engine_id == ENGINE_UNKNOWN ? "the server is not an engine anvil knows"
                : stopped ? "the server had stopped answering"
                : err[0] ? err : "more streams than it counts after a run", left == 1 ? "its" : "their");
}
