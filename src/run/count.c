/* count.c — the output tokens of streams that reported no usage, counted by
 * the engine's own tokenizer over the text they received (stats/tokens.h's
 * third source), after the load and off the measuring loop. */
#include <stdio.h>
#include <string.h>

#include "load/driver.h"
#include "run/stage.h"

/* At most this many streams are counted one by one; later ones keep their
 * chunk count, and the run says so. */
#define COUNT_MAX_STREAMS 4096
#define COUNT_TIMEOUT_MS 10000
/* After this many failed tokenize calls in a row, the server is not asked again. */
#define COUNT_MAX_FAILURES 3

void run_count_text_tokens(struct run_ctx *x, struct driver_result *dr)
{
    long counted = 0, left = 0;
    /* a server that stalled or went away would only time each call out */
    bool stopped = dr->server_stalled.stalled || dr->server_gone.gone;
    int failures = 0;
    char err[300] = "";
    for (int i = 0; i < dr->n_records; i++) {
        struct req_record *r = &dr->records[i];
        /* a tool call's fragments are not text: its chunk count is the better (lower) bound */
        bool wanted = r->t_start && r->completion_tokens < 0 && r->text.len > 0 && !r->tool_call_chunks;
        if (wanted && (counted >= COUNT_MAX_STREAMS || failures >= COUNT_MAX_FAILURES ||
                       x->srv.engine_id == ENGINE_UNKNOWN || stopped))
            left++;
        else if (wanted) {
            long n = server_count_output_tokens(&x->srv, x->headers, r->text.data, r->text.len,
                                                COUNT_TIMEOUT_MS, err, sizeof err);
            if (n >= 0) {
                /* a reply that stopped at EOS generated that token too, and it has no text */
                r->text_tokens = n + !strcmp(r->finish_reason, "stop");
                counted++;
                failures = 0;
            } else {
                failures++;
                left++;
            }
        }
        buf_free(&r->text);     /* counted or not, the text is not kept past here */
    }
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
