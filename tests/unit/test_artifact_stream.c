/* test_artifact_stream.c — an artifact is written a piece at a time: the
 * text is byte-for-byte artifact_print's, rows produced while writing land
 * in their array as if they had been in the tree, a failed producer leaves
 * no file, and memory does not grow with the number of rows. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/json.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
/* from <sanitizer/allocator_interface.h>, which is not always installed */
size_t __sanitizer_get_current_allocated_bytes(void);
#define UNDER_ASAN 1
#else
#include <malloc.h>
#define UNDER_ASAN 0
#endif

/* A fresh directory's path for name, in a directory of its own. */
static void fresh_path(char *dir, char *path, size_t cap, const char *name)
{
    strcpy(dir, "/tmp/anvil-stream-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(path, cap, "%s/%s", dir, name);
}

/* Writes j (with rows) to a fresh file and returns its text (caller frees). */
static char *written(const cJSON *j, const struct artifact_rows *rows, int n_rows)
{
    char dir[64], path[128], err[1024];
    fresh_path(dir, path, sizeof path, "a.json");
    cr_assert_eq(artifact_write_streamed(path, j, rows, n_rows, err, sizeof err), 0, "%s", err);
    size_t len;
    char *text = tu_read_file(path, &len);
    unlink(path);
    rmdir(dir);
    return text;
}

/* The old writer's text: artifact_print of the whole tree, and a newline. */
static char *printed(const cJSON *j)
{
    char *t = artifact_print(j);
    cr_assert(t);
    size_t n = strlen(t);
    char *s = malloc(n + 2);
    memcpy(s, t, n);
    memcpy(s + n, "\n", 2);
    free(t);
    return s;
}

static void assert_same_text(const cJSON *j, const char *name)
{
    char *want = printed(j), *got = written(j, NULL, 0);
    size_t i = 0;
    while (want[i] && want[i] == got[i])
        i++;
    cr_assert(!want[i] && !got[i], "%s: the texts differ at byte %zu: want \"%.40s\", got \"%.40s\"",
              name, i, want + i, got + i);
    free(want);
    free(got);
}

Test(artifact_stream, the_text_is_artifact_prints_byte_for_byte_on_real_artifacts)
{
    const char *files[] = {
        "tests/data/seed-000.json", "tests/data/seed-001.json", "tests/data/seed-002.json",
        "tests/data/seed-003.json", "tests/data/seed-004.json",
        "tests/data/benchmark/every-field.json", "tests/data/benchmark/run-trace.json",
        "tests/data/benchmark/run-agentic.json",
    };
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        size_t len;
        char *text = tu_read_file(files[f], &len);
        cJSON *j = cJSON_ParseWithLength(text, len);
        cr_assert(j, "%s does not parse", files[f]);
        assert_same_text(j, files[f]);
        cJSON_Delete(j);
        free(text);
    }
}

Test(artifact_stream, the_text_is_artifact_prints_byte_for_byte_on_every_kind_of_value)
{
    const char *doc =
        "{\"s\": \"tab\\t nl\\n quote\\\" back\\\\ \\u0001 é ✓\", \"\": 0.1, \"n\": null,"
        " \"t\": true, \"f\": false, \"big\": 1e300, \"neg\": -0.0, \"third\": 0.333333333333333314829616256247,"
        " \"empty_o\": {}, \"empty_a\": [], \"nums\": [1, 2.5, -3e-9],"
        " \"rows\": [{\"a\": 1, \"b\": [{\"c\": {}}, [], [1, [2]]]}, {}, [], [{\"d\": \"x\"}], 7, \"s\"],"
        " \"deep\": {\"x\": {\"y\": [{\"z\": 1}, {\"w\": []}]}, \"k\\\"ey\": 2},"
        " \"last\": [[]]}";
    cJSON *j = cJSON_Parse(doc);
    cr_assert(j);
    cJSON_AddNumberToObject(j, "nan", NAN);             /* undefined: null */
    cJSON_AddNumberToObject(cJSON_GetObjectItem(j, "deep"), "inf", INFINITY);
    cJSON_AddItemToArray(cJSON_GetObjectItem(j, "nums"), cJSON_CreateNumber(NAN));
    assert_same_text(j, "every kind of value");
    cJSON_Delete(j);

    cJSON *empty = cJSON_CreateObject(), *arr = cJSON_Parse("[{\"a\": 1}, [2]]");
    assert_same_text(empty, "an empty object");
    assert_same_text(arr, "a document that is an array");
    cJSON_Delete(empty);
    cJSON_Delete(arr);
}

/* Rows made on demand: n of them, row i {"i": i, "x": i / 7, "tag": "r<i>"};
 * failing (when fail_at ≥ 0) at the fail_at-th call. */
struct gen {
    int i, n, fail_at;
    char why[64];
    size_t peak_live, base_live;        /* the heap in use, sampled at each row */
};

static cJSON *gen_row(int i)
{
    cJSON *r = cJSON_CreateObject();
    char tag[32];
    snprintf(tag, sizeof tag, "r%d", i);
    cJSON_AddNumberToObject(r, "i", i);
    cJSON_AddNumberToObject(r, "x", i / 7.0);
    cJSON_AddStringToObject(r, "tag", tag);
    cJSON *t = cJSON_AddArrayToObject(r, "itl_ms");
    for (int k = 0; k < 4; k++)
        cJSON_AddItemToArray(t, cJSON_CreateNumber(0.1 * (i + k)));
    return r;
}

static size_t live_heap(void)
{
#if UNDER_ASAN
    return __sanitizer_get_current_allocated_bytes();
#else
    return mallinfo2().uordblks;
#endif
}

static cJSON *gen_next(void *ud, int *error)
{
    struct gen *g = ud;
    size_t live = live_heap();
    if (live > g->peak_live)
        g->peak_live = live;
    if (g->i == g->fail_at) {
        snprintf(g->why, sizeof g->why, "the journal ends at row %d", g->i);
        *error = 1;
        return NULL;
    }
    return g->i < g->n ? gen_row(g->i++) : NULL;
}

/* j with the rows of g appended to key, as a tree (caller deletes). */
static cJSON *with_rows(const cJSON *j, const char *key, int n)
{
    cJSON *c = cJSON_Duplicate(j, true), *a = cJSON_GetObjectItem(c, key);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, gen_row(i));
    return c;
}

/* The written text of j with rows is the old text of the tree holding
 * them, and reads back to that tree. */
static void assert_streamed(const cJSON *j, const struct artifact_rows *rows, int n_rows, const cJSON *whole)
{
    char *got = written(j, rows, n_rows), *want = printed(whole);
    cr_assert_str_eq(got, want);
    cJSON *back = cJSON_Parse(got);
    cr_assert(back && cJSON_Compare(back, whole, true), "the text does not read back to the tree");
    cJSON_Delete(back);
    free(got);
    free(want);
}

Test(artifact_stream, streamed_rows_read_back_as_if_they_were_in_the_array)
{
    cJSON *j = cJSON_Parse("{\"schema\": \"x\", \"records\": [], \"failures\": [{\"e\": 1}], \"end\": {\"a\": 2}}");
    cr_assert(j);
    struct gen none = {.n = 0, .fail_at = -1}, some = {.n = 5, .fail_at = -1}, more = {.n = 3, .fail_at = -1};

    struct artifact_rows r0 = {"records", gen_next, &none, none.why};
    cJSON *w0 = with_rows(j, "records", 0);
    assert_streamed(j, &r0, 1, w0);             /* no rows: the empty array stays */

    struct artifact_rows r1 = {"failures", gen_next, &some, some.why};
    cJSON *w1 = with_rows(j, "failures", 5);
    assert_streamed(j, &r1, 1, w1);             /* after an existing element */

    some.i = 0;
    struct artifact_rows r2[] = {{"failures", gen_next, &some, some.why},
                                 {"records", gen_next, &more, more.why}};
    cJSON *w2 = with_rows(w1, "records", 3);
    assert_streamed(j, r2, 2, w2);              /* two keys, named in another order */

    char err[256];
    struct artifact_rows bad = {"end", gen_next, &none, NULL};
    cr_assert_eq(artifact_write_streamed("/tmp/never-written.json", j, &bad, 1, err, sizeof err), -1);
    cr_assert(strstr(err, "end is not an array"), "%s", err);
    cr_assert_neq(access("/tmp/never-written.json", F_OK), 0);
    cJSON_Delete(w0);
    cJSON_Delete(w1);
    cJSON_Delete(w2);
    cJSON_Delete(j);
}

Test(artifact_stream, a_failed_producer_leaves_no_file_and_the_old_one_untouched)
{
    char dir[64], path[128], tmp[160], fb[1200], err[1024];
    fresh_path(dir, path, sizeof path, "a.json");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    artifact_fallback_path(path, fb, sizeof fb);
    cJSON *j = cJSON_Parse("{\"records\": [], \"n\": 1}");
    struct gen g = {.n = 100000, .fail_at = 20000};    /* past the first buffer's worth */
    struct artifact_rows r = {"records", gen_next, &g, g.why};

    cr_assert_eq(artifact_write_streamed(path, j, &r, 1, err, sizeof err), -1);
    cr_assert(strstr(err, "the journal ends at row 20000"), "%s", err);
    cr_assert_neq(access(path, F_OK), 0, "a half document was left at the path");

    FILE *f = fopen(path, "w");
    fputs("old\n", f);
    fclose(f);
    g.i = 0;
    r.why = NULL;                                       /* no words: a generic message */
    cr_assert_eq(artifact_write_streamed(path, j, &r, 1, err, sizeof err), -1);
    cr_assert(strstr(err, "the rows of records failed"), "%s", err);
    size_t len;
    char *old = tu_read_file(path, &len);
    cr_assert_str_eq(old, "old\n");
    free(old);
    cr_assert_neq(access(tmp, F_OK), 0, "%s was left behind", tmp);
    cr_assert_neq(access(fb, F_OK), 0, "a failed producer is no reason for a fallback");
    unlink(path);
    rmdir(dir);
    cJSON_Delete(j);
}

/* A place that takes the temporary file but not the rename (a directory
 * stands at the path): the fallback gets the whole document, the rows
 * already consumed included. */
Test(artifact_stream, the_fallback_gets_every_row)
{
    char dir[64], path[128], fb[1200], err[1024];
    fresh_path(dir, path, sizeof path, "a.json");
    cr_assert_eq(mkdir(path, 0755), 0);
    artifact_fallback_path(path, fb, sizeof fb);
    cJSON *j = cJSON_Parse("{\"records\": [{\"first\": true}], \"n\": 1}");
    struct gen g = {.n = 30000, .fail_at = -1};
    struct artifact_rows r = {"records", gen_next, &g, g.why};
    cr_assert_eq(artifact_write_streamed(path, j, &r, 1, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot rename") && strstr(err, "written to"), "%s", err);
    size_t len;
    char *got = tu_read_file(fb, &len);
    cJSON *whole = with_rows(j, "records", 30000);
    char *want = printed(whole);
    cr_assert(!strcmp(got, want), "the fallback is not the whole document");
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp", fb);
    cr_assert_neq(access(tmp, F_OK), 0);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cr_assert_neq(access(tmp, F_OK), 0);
    unlink(fb);
    rmdir(path);
    rmdir(dir);
    free(got);
    free(want);
    cJSON_Delete(whole);
    cJSON_Delete(j);
}

/* A disk that fills up part way through the rows: neither temporary file
 * stays (the fallback is on the same "disk" here and fails too). */
Test(artifact_stream, a_disk_full_part_way_leaves_no_temporary_file)
{
    char dir[64], path[128], tmp[160], fb[1200], fbtmp[1300];
    fresh_path(dir, path, sizeof path, "a.json");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    artifact_fallback_path(path, fb, sizeof fb);
    snprintf(fbtmp, sizeof fbtmp, "%s.tmp", fb);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {100000, 100000};
        setrlimit(RLIMIT_FSIZE, &rl);
        cJSON *j = cJSON_Parse("{\"records\": []}");
        struct gen g = {.n = 10000, .fail_at = -1};
        struct artifact_rows r = {"records", gen_next, &g, g.why};
        char err[2048];
        int rc = artifact_write_streamed(path, j, &r, 1, err, sizeof err);
        cJSON_Delete(j);
        _exit(rc == -1 && strstr(err, "cannot write") && strstr(err, "failed too") ? 0 : 1);
    }
    int ws;
    waitpid(pid, &ws, 0);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the write did not fail as expected");
    cr_assert_neq(access(tmp, F_OK), 0, "%s was left behind", tmp);
    cr_assert_neq(access(fbtmp, F_OK), 0, "%s was left behind", fbtmp);
    cr_assert_neq(access(path, F_OK), 0);
    rmdir(dir);
}

/* Peak resident memory (VmHWM) of this process, in KiB. */
static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* The heap in use while writing n rows, above what it was before, sampled
 * at every row; and the peak RSS's growth. */
static void write_rows(int n, size_t *heap_growth, long *rss_growth_kib)
{
    char dir[64], path[128], err[1024];
    fresh_path(dir, path, sizeof path, "big.json");
    cJSON *j = cJSON_Parse("{\"schema\": \"x\", \"records\": [], \"end\": 1}");
    struct gen g = {.n = n, .fail_at = -1};
    struct artifact_rows r = {"records", gen_next, &g, g.why};
    long rss0 = peak_rss_kib();
    g.base_live = live_heap();
    cr_assert_eq(artifact_write_streamed(path, j, &r, 1, err, sizeof err), 0, "%s", err);
    *rss_growth_kib = peak_rss_kib() - rss0;
    *heap_growth = g.peak_live > g.base_live ? g.peak_live - g.base_live : 0;
    cr_assert_eq(g.i, n);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_gt(st.st_size, (off_t)n * 60, "the rows are not all in the file");
    unlink(path);
    rmdir(dir);
    cJSON_Delete(j);
}

/* Memory holds one row, whatever their number: the heap in use does not
 * grow with rows (under ASan too: freed memory waits in its quarantine,
 * which the heap in use leaves out), nor, without ASan, the peak RSS. */
Test(artifact_stream, memory_does_not_grow_with_the_rows, .timeout = 300)
{
    int many = UNDER_ASAN ? 200000 : 1000000;
    size_t heap_few, heap_many;
    long rss_few, rss_many;
    write_rows(10000, &heap_few, &rss_few);
    write_rows(many, &heap_many, &rss_many);
    /* a row's text is ~150 bytes: holding them would take 30 MB or more */
    cr_assert_lt(heap_many, (size_t)1 << 20, "the heap grew by %zu bytes over %d rows", heap_many, many);
    cr_assert_lt(heap_many, heap_few + (64 << 10), "%zu bytes for %d rows, %zu for 10000", heap_many, many, heap_few);
    if (!UNDER_ASAN)
        cr_assert_lt(rss_many, 30 << 10, "the peak RSS grew by %ld KiB over %d rows", rss_many, many);
}

/* Special targets keep their ways: a pipe is written in place with the
 * same text, stdout ("-") takes it after what it already holds, and a
 * device that refuses it (/dev/full) is an error naming it, with no
 * fallback. */
Test(artifact_stream, a_pipe_stdout_and_a_full_device_are_written_in_place)
{
    cJSON *j = cJSON_Parse("{\"records\": [{\"a\": 1}], \"n\": 0.1}");
    struct gen g = {.n = 2000, .fail_at = -1};
    struct artifact_rows r = {"records", gen_next, &g, g.why};
    cJSON *whole = with_rows(j, "records", 2000);
    char *want = printed(whole), err[1024], dir[64], fifo[128], got_path[128];
    fresh_path(dir, fifo, sizeof fifo, "pipe");
    snprintf(got_path, sizeof got_path, "%s/got", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    if (pid == 0) {     /* the pipe's reader copies it to a file */
        FILE *in = fopen(fifo, "r"), *out = fopen(got_path, "w");
        for (int c; in && out && (c = fgetc(in)) != EOF;)
            fputc(c, out);
        _exit(in && out && fclose(out) == 0 ? 0 : 1);
    }
    cr_assert_eq(artifact_write_streamed(fifo, j, &r, 1, err, sizeof err), 0, "%s", err);
    int ws;
    waitpid(pid, &ws, 0);
    size_t len;
    char *got = tu_read_file(got_path, &len);
    cr_assert(!strcmp(got, want), "the pipe got another text");
    free(got);
    unlink(got_path);

    /* stdout, in a child whose stdout is a file */
    pid = fork();
    if (pid == 0) {
        freopen(got_path, "w", stdout);
        fputs("before\n", stdout);     /* still in stdout's buffer */
        g.i = 0;
        int rc = artifact_write_streamed("-", j, &r, 1, err, sizeof err);
        _exit(rc == 0 && fclose(stdout) == 0 ? 0 : 1);
    }
    waitpid(pid, &ws, 0);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    got = tu_read_file(got_path, &len);
    cr_assert(!strncmp(got, "before\n", 7) && !strcmp(got + 7, want), "stdout got another text");
    free(got);
    unlink(got_path);

    g.i = 0;
    char fb[1200];
    artifact_fallback_path("/dev/full", fb, sizeof fb);
    cr_assert_eq(artifact_write_streamed("/dev/full", j, &r, 1, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot write /dev/full: No space left on device"), "%s", err);
    cr_assert_neq(access(fb, F_OK), 0, "a device's failure went to a fallback");
    unlink(fifo);
    rmdir(dir);
    free(want);
    cJSON_Delete(whole);
    cJSON_Delete(j);
}
