/* script.h — `anvil sim --script FILE`: replays an exact HTTP response to
 * every POST, for tests and for reproducing a server's odd behaviour
 * (docs/SCRIPT.md).
 *
 * FILE is JSON Lines. The first line is the response head:
 *   {"status": 200, "headers": {"content-type": "text/event-stream"}}
 * then one step per line, each `after_ms` after the previous one:
 *   {"after_ms": 12.5, "write": "data: {...}\n\n"}     bytes as text
 *   {"after_ms": 1, "write_b64": "w6k="}               arbitrary bytes (base64)
 *   {"after_ms": 5, "close": true}                     drop the connection mid-response
 *   {"after_ms": 0, "hold": true}                      never finish (an idle stream)
 * After the last step the response ends normally. Each write goes out as
 * one HTTP chunk. */
#ifndef ANVIL_SIM_SCRIPT_H
#define ANVIL_SIM_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/http.h>

struct sim_script;
struct sim_trace;

/* Reads and checks FILE. Returns the script, or NULL with a message naming
 * the line and what is wrong in err (errcap bytes). */
struct sim_script *sim_script_load(const char *path, char *err, size_t errcap);

/* Frees the script (every playback must have ended first). NULL-safe. */
void sim_script_free(struct sim_script *sc);

/* Starts replaying sc as the reply to req on base, its steps timed from
 * t0_ns (the request's arrival, CLOCK_MONOTONIC ns). The playback owns its
 * state and frees it when the reply ends, the script closes the connection,
 * or the client goes away; then, when trace is not NULL, it writes the
 * request's trace line: every write's time as a chunk (0 tokens: a script's
 * bytes are not counted), and how late the latest step ran (late_ns), so a
 * test can tell its client's error from the server's own delay. sc and
 * trace must outlive the playback. Returns 0, or -1 when memory runs out
 * (req is then answered 500). */
int sim_script_play(const struct sim_script *sc, struct event_base *base, struct evhttp_request *req,
                    int64_t t0_ns, struct sim_trace *trace);

#endif
