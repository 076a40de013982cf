/* progress.h — the progress line of a run on a terminal: how far, how
 * fast, how long still (ETA), and in duration mode the phase and the
 * window's time left. Plain ASCII, no colour, cut to the terminal's width,
 * so a dumb or narrow terminal still reads it. */
#ifndef ANVIL_LOAD_PROGRESS_H
#define ANVIL_LOAD_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

/* What the line shows, sampled by the driver. */
struct progress_view {
    double elapsed_s;           /* since the run started, s */
    long done, total;           /* requests ended and planned (warm-ups included); total 0 = unknown */
    long failed, in_flight;
    double tok_per_s;           /* output tokens per second as they stream (last interval); NaN = none yet */
    double duration_s;          /* duration mode: the window's length, s; 0 = a request-count run */
    double warmup_s;            /* duration mode: the warm-up before the window, s */
    double window_s;            /* duration mode: s since the window opened; < 0 = still warming up */
};

/* Writes the line for v into buf (cap bytes, NUL-terminated, no newline
 * or carriage return), at most columns − 1 characters when columns > 0 (so
 * the cursor never wraps). A request-count run shows a bar of done/total
 * and an ETA from the rate so far ("ETA 38 s"; "ETA ?" before the first
 * request ends); duration mode shows "warm-up" with the warm-up's time,
 * then "window" with the window's time and "N s left". Returns the length. */
size_t progress_line(char *buf, size_t cap, const struct progress_view *v, int columns);

/* s as a short duration: "4.2 s", "38 s", "12m05s", "2h03m". Writes into buf (cap
 * bytes). */
void progress_duration(char *buf, size_t cap, double s);

#endif
