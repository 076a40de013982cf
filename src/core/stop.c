/* stop.c — the stop flag and the waits that watch it. */
#include "core/stop.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"

static volatile sig_atomic_t requested;

static void on_stop(int sig)
{
    if (!requested)
        requested = sig;
}

void stop_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;    /* no SA_RESTART: a blocking read or poll returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (!stop_sighup_ignored())   /* nohup: the user asked to outlive the terminal */
        sigaction(SIGHUP, &sa, NULL);
    requested = 0;
}

bool stop_sighup_ignored(void)
{
    struct sigaction cur;
    return sigaction(SIGHUP, NULL, &cur) == 0 && cur.sa_handler == SIG_IGN;
}

int stop_requested(void)
{
    return requested;
}

void stop_request(int sig)
{
    on_stop(sig);
}

bool stop_sleep_ns(int64_t ns)
{
    int64_t end = clock_now_ns() + (ns > 0 ? ns : 0);
    for (;;) {
        if (requested)
            return true;
        int64_t left = end - clock_now_ns();
        if (left <= 0)
            return false;
        int64_t nap = left < (int64_t)STOP_POLL_MS * 1000000 ? left : (int64_t)STOP_POLL_MS * 1000000;
        struct timespec t = {(time_t)(nap / 1000000000), (long)(nap % 1000000000)};
        nanosleep(&t, NULL);    /* EINTR: a signal, looked at above */
    }
}

const char *stop_signal_name(int sig)
{
    static char other[32];
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: snprintf(other, sizeof other, "signal %d", sig); return other;
    }
}
