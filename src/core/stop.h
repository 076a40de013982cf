/* stop.h — the process's stop request. SIGINT (Ctrl-C), SIGTERM and SIGHUP
 * (a closed terminal or ssh session) all mean the same: stop, keep what was
 * measured, end. A command installs the handlers once; every wait that is
 * not on an event loop (set-up fetches, readiness naps, child processes)
 * polls stop_requested() at least every STOP_POLL_MS, so a stop ends it
 * within that time. The event loops of the load take the same three signals
 * themselves (load/driver.c) while they run. */
#ifndef ANVIL_CORE_STOP_H
#define ANVIL_CORE_STOP_H

#include <stdbool.h>
#include <stdint.h>

/* The longest a stoppable wait sleeps before it looks at the flag again (ms). */
#define STOP_POLL_MS 50

/* Installs handlers for SIGINT, SIGTERM and SIGHUP that record the first
 * signal (without SA_RESTART, so a blocking call returns EINTR). SIGHUP is
 * left alone when it is ignored (stop_sighup_ignored). Called again, it
 * keeps the handlers and clears the flag. */
void stop_install(void);

/* Whether SIGHUP is ignored now (`nohup anvil ...`): whoever takes the
 * stop signals then leaves SIGHUP ignored. */
bool stop_sighup_ignored(void);

/* The signal that asked the process to stop since stop_install (SIGINT,
 * SIGTERM or SIGHUP), or 0. Async-signal-safe. */
int stop_requested(void);

/* Records sig as a stop request, as the handler does (for callers that
 * learn of a stop another way, and for tests). */
void stop_request(int sig);

/* Sleeps ns nanoseconds (≤ 0: not at all) on CLOCK_MONOTONIC, waking
 * within STOP_POLL_MS of a stop request. Returns true when it was cut short
 * by one (or one was pending), false after the whole sleep. */
bool stop_sleep_ns(int64_t ns);

/* The signal's name for messages: "SIGINT", "SIGTERM", "SIGHUP", else
 * "signal N" (into a static buffer for other numbers: not thread-safe). */
const char *stop_signal_name(int sig);

#endif
