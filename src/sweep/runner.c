/* runner.c — executes round jobs as child processes. */
#include "sweep/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "artifact/benchmark.h"
#include "artifact/json.h"
#include "core/child.h"
#include "core/clock.h"
#include "core/dirlock.h"
#include "core/file.h"
#include "core/stop.h"
#include "sweep/watch.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t running_child;     /* pid of the round in flight, 0 when none */

/* Only records the signal and passes it to the round in flight, which then
 * writes its own incomplete artifact. */
static void on_signal(int sig)
{
    stop_signal = sig;
    if (running_child > 0)
        kill((pid_t)running_child, sig);
}

bool sweep_round_done(const char *path)
{
    struct benchmark b;
    char err[512];
    bool done = benchmark_read_file(path, &b, NULL, err, sizeof err) == 0 && !b.incomplete;
    benchmark_free(&b);
    return done;
}

/* Words of a launcher command line, split at spaces and tabs into w (cap
 * of them, pointing into buf, a copy). Returns how many. */
static size_t launcher_words(const char *launcher, char *buf, size_t bufcap, char **w, size_t cap)
{
    size_t n = 0;
    snprintf(buf, bufcap, "%s", launcher ? launcher : "");
    for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t && n < cap; t = strtok_r(NULL, " \t", &save))
        w[n++] = t;
    return n;
}

/* argv for one job: [LAUNCHER...] anvil run ARGS --out ARTIFACT. Returns a
 * malloc'd array whose strings point into job and buf (valid while they
 * live), or NULL. */
static char **job_argv(const struct sweep_job *job, const char *anvil_bin, const char *launcher, char *buf,
                       size_t bufcap)
{
    char *pre[64];
    size_t n_pre = launcher_words(launcher, buf, bufcap, pre, 64);
    char **argv = calloc(job->n_args + 5 + n_pre, sizeof *argv);
    if (!argv)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n_pre; i++)
        argv[k++] = pre[i];
    argv[k++] = (char *)anvil_bin;
    argv[k++] = "run";
    for (size_t i = 0; i < job->n_args; i++)
        argv[k++] = job->args[i];
    argv[k++] = "--out";
    argv[k++] = job->artifact;
    return argv;
}

/* Reads the round's journal and redraws its line; *shown: the width drawn
 * last (0: none yet). */
static void draw_round(struct round_watch *w, int64_t t0, int *shown)
{
    if (round_watch_poll(w) < 0)
        return;
    char line[160];
    round_watch_line(w, ns_to_ms(clock_now_ns() - t0) / 1000, line, sizeof line);
    int n = (int)strlen(line);
    fprintf(stderr, "\r  %s%*s", line, *shown > n ? *shown - n : 0, "");
    *shown = n;
}

/* Waits for the round pid, as child_wait does. On a terminal it shows the
 * round's progress meanwhile (sweep/watch.h): one line redrawn each 250 ms,
 * "  120/400 requests ended, 12 s", a last time once the round has ended
 * (so it shows the round's final count), ended with a newline. */
static int wait_round(pid_t pid, const struct sweep_job *job)
{
    if (!isatty(STDERR_FILENO))
        return child_wait(pid);
    struct round_watch w;
    round_watch_start(&w, job);
    int64_t t0 = clock_now_ns();
    int shown = 0, status, st = -1;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            st = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
            draw_round(&w, t0, &shown);
            break;
        }
        if (r < 0 && errno != EINTR)
            break;
        draw_round(&w, t0, &shown);
        struct timespec nap = {0, 250000000};
        nanosleep(&nap, NULL);     /* a signal wakes it: the loop looks again */
    }
    if (shown)
        fputc('\n', stderr);
    return st;
}

/* Runs one job; returns its exit status (0..255, 128+signal) or -1. The
 * round keeps lock_fd (the directory's lock, or -1) open, so the directory
 * stays locked while the round lives, even past the sweep's own end. */
static int run_job(const struct sweep_job *job, const char *anvil_bin, const char *launcher, const char *dir,
                   int lock_fd)
{
    const char *artifact = job->artifact;
    char log[1200], words[4096], err[300];
    snprintf(log, sizeof log, "%s/logs/%s-%s-round-%ld.log", dir, job->target[0] ? job->target : "target",
             job->case_id, job->round);
    char **argv = job_argv(job, anvil_bin, launcher, words, sizeof words);
    if (!argv || file_mkdir_parents(artifact) != 0 || file_mkdir_parents(log) != 0) {
        free(argv);
        return -1;
    }
    unlink(artifact);   /* an incomplete artifact of an earlier attempt */
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    /* a signal between fork and noting the child would be passed to nobody */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    /* its own process group: a terminal's Ctrl-C reaches the sweep only, which passes it on once */
    struct child_opts o = {.in = -1, .out = fd, .err = fd, .keep_fd = lock_fd, .new_group = true};
    pid_t pid = child_spawn(argv, &o, err, sizeof err);
    free(argv);
    if (pid < 0 && fd >= 0)     /* e.g. a launcher not in PATH: the log the error message points to says so */
        dprintf(fd, "anvil sweep: %s\n", err);
    if (fd >= 0)
        close(fd);
    if (pid > 0)
        running_child = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);   /* a pending signal is handled (and passed on) here */
    if (pid < 0)
        return -1;
    dirlock_note(lock_fd, pid, "anvil run (a round of the sweep)");
    int st = wait_round(pid, job);
    running_child = 0;
    dirlock_note(lock_fd, 0, NULL);
    return st;
}

/* A round measured while its directory could not take the artifact (a full
 * disk) left it at its fallback (artifact_fallback_path). Moves it into
 * place when the directory can take it now — only a fallback written since
 * this sweep's plan (DIR/sweep-plan.json), so a leftover of an earlier
 * sweep at the same path is never taken for this one's. The fallback is
 * removed only once the round is in place. Returns 1 moved, 0 none to move,
 * -1 one is there but cannot be moved yet (err says why). */
static int adopt_fallback(const char *artifact, const char *dir, char *err, size_t errlen)
{
    char fb[4400], plan[4200];
    struct stat st, fs, ps;
    artifact_fallback_path(artifact, fb, sizeof fb);
    snprintf(plan, sizeof plan, "%s/sweep-plan.json", dir);
    if (stat(artifact, &st) == 0 || stat(fb, &fs) != 0 || stat(plan, &ps) != 0 || fs.st_mtime < ps.st_mtime)
        return 0;
    char *text = file_read_all(fb, NULL), why[1400] = "cannot read it";
    int rc = text && artifact_place_text(artifact, text, why, sizeof why) == 0 ? 1 : -1;
    free(text);
    if (rc == 1)
        unlink(fb);
    else
        snprintf(err, errlen, "the round measured into %s cannot be put in place at %s yet: %.600s", fb, artifact, why);
    return rc;
}

static void progress(size_t i, size_t n, const struct sweep_job *job, double elapsed_s, size_t ran)
{
    double eta = ran ? elapsed_s / (double)ran * (double)(n - i) : 0;
    fprintf(stderr, "anvil sweep: [%zu/%zu] %s%s%s round %ld", i + 1, n, job->target,
            job->target[0] ? " " : "", job->case_id, job->round);
    if (ran)
        fprintf(stderr, " (ETA %.0f s)", eta);
    fputc('\n', stderr);
}

int sweep_execute(const struct sweep_plan *plan, const char *anvil_bin, const char *dir, bool *interrupted,
                  char *err, size_t errlen)
{
    return sweep_execute_launched(plan, anvil_bin, NULL, dir, -1, interrupted, err, errlen);
}

int sweep_execute_launched(const struct sweep_plan *plan, const char *anvil_bin, const char *launcher,
                           const char *dir, int lock_fd, bool *interrupted, char *err, size_t errlen)
{
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term, old_hup;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    bool hup = !stop_sighup_ignored();  /* a closed terminal or ssh session, unless under nohup */
    if (hup)
        sigaction(SIGHUP, &sa, &old_hup);
    stop_signal = stop_requested();   /* a stop that came while the plan was made */
    size_t n = plan->n_jobs, i = 0, ran = 0;
    int failed = 0;
    int64_t t0 = clock_now_ns();
    for (size_t k = 0; k < n; k++) {
        const struct sweep_job *job = &plan->jobs[k];
        if (stop_signal)
            break;
        const char *artifact = job->artifact;
        if (adopt_fallback(artifact, dir, err, errlen) < 0) {
            failed = -1;
            break;
        }
        if (sweep_round_done(artifact)) {   /* resumed: this round is already measured */
            i++;
            continue;
        }
        progress(i, n, job, ns_to_ms(clock_now_ns() - t0) / 1000, ran);
        int st = run_job(job, anvil_bin, launcher, dir, lock_fd);
        ran++;
        i++;
        if (st < 0 || st == 2 || st == 127) {
            snprintf(err, errlen, "round %s could not run (exit status %d); see %s/logs/",
                     artifact, st, dir);
            failed = -1;
            break;
        }
        if (sweep_round_done(artifact))
            continue;
        char fb[4400];
        struct stat sb;
        artifact_fallback_path(artifact, fb, sizeof fb);
        if (stat(artifact, &sb) != 0 && stat(fb, &sb) == 0) {
            /* measured, but the directory cannot take what follows either: stop now */
            snprintf(err, errlen, "round %s was measured, but its artifact could not be written there (disk "
                     "full?) and went to %s; free space and run anvil sweep --resume %s: the round is taken "
                     "from there, not measured again", artifact, fb, dir);
            failed = -1;
            break;
        }
        failed++;
    }
    *interrupted = stop_signal != 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (hup)
        sigaction(SIGHUP, &old_hup, NULL);
    return failed;
}
