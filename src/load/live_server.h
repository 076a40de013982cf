/* live_server.h — the `--metrics-listen HOST:PORT` endpoint: libevent's
 * evhttp on its own event base in its own thread, serving GET /metrics
 * (live.h's text) while a run goes on. It never runs on a measuring loop:
 * a scrape costs the loops nothing but the atomic reads of live_render. */
#ifndef ANVIL_LOAD_LIVE_SERVER_H
#define ANVIL_LOAD_LIVE_SERVER_H

#include <stddef.h>

#include "load/live.h"

/* Splits "HOST:PORT" ("127.0.0.1:9400", "[::1]:9400", "localhost:9400",
 * ":9400" = every interface) into host (hostcap bytes; "" for every
 * interface) and port (1..65535). Returns 0, or -1 with what is wrong in
 * err. */
int live_listen_parse(const char *spec, char *host, size_t hostcap, int *port, char *err, size_t errlen);

struct live_server;

/* Listens on spec (live_listen_parse) and starts the endpoint's thread,
 * serving m (not owned; must outlive the server). Returns the server, or
 * NULL with the reason in err ("cannot listen on 127.0.0.1:9400: Address
 * already in use"). */
struct live_server *live_server_start(const char *spec, const struct live_metrics *m, char *err,
                                      size_t errlen);

/* The port it listens on. */
int live_server_port(const struct live_server *s);

/* Stops the thread (a scrape in progress is finished first), closes the
 * socket and frees s. NULL-safe. */
void live_server_stop(struct live_server *s);

#endif
