/* test_artifact_write.c — an artifact write that fails loses nothing: the
 * temporary file is removed and the artifact goes to a fallback the
 * message names. */
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

static cJSON *big_doc(void)
{
    cJSON *j = cJSON_CreateObject();
    char *s = malloc(100000);
    memset(s, 'x', 99999);
    s[99999] = '\0';
    cJSON_AddStringToObject(j, "payload", s);
    free(s);
    return j;
}

Test(artifact_write, a_failed_write_leaves_no_temporary_file)
{
    char dir[] = "/tmp/anvil-write-XXXXXX", path[128], tmp[160];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    pid_t pid = fork();
    if (pid == 0) {
        /* the disk "fills up" after 4 KiB: every larger write fails (EFBIG) */
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        cJSON *j = big_doc();
        char err[2048];
        int rc = artifact_write_file(path, j, err, sizeof err);
        cJSON_Delete(j);
        _exit(rc == -1 && strstr(err, "cannot write") && strstr(err, "fallback") ? 0 : 1);
    }
    int ws;
    waitpid(pid, &ws, 0);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the write did not fail as expected");
    cr_assert_neq(access(tmp, F_OK), 0, "%s was left behind", tmp);
    cr_assert_neq(access(path, F_OK), 0);
    rmdir(dir);
}

Test(artifact_write, an_unwritable_place_puts_the_artifact_in_a_named_fallback)
{
    cJSON *j = big_doc();
    char err[2048];
    /* a regular file cannot hold a directory */
    char file[] = "/tmp/anvil-write-XXXXXX", path[128];
    int fd = mkstemp(file);
    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(path, sizeof path, "%s/sub/r.json", file);
    cr_assert_eq(artifact_write_file(path, j, err, sizeof err), -1);
    unlink(file);
    const char *at = strstr(err, "written to ");
    cr_assert(at, "%s", err);
    char fb[512];
    snprintf(fb, sizeof fb, "%.*s", (int)strcspn(at + 11, " "), at + 11);
    FILE *f = fopen(fb, "r");
    cr_assert(f, "no fallback at %s (%s)", fb, err);
    fclose(f);
    unlink(fb);
    cJSON_Delete(j);
}

Test(artifact_write, dash_is_stdout_and_a_directory_is_refused_up_front)
{
    char err[512];
    cr_assert_eq(artifact_check_path("-", err, sizeof err), 0);
    cr_assert_eq(artifact_check_path("/tmp", err, sizeof err), -1);
    cr_assert(strstr(err, "is a directory"), "%s", err);
}

/* Moving an artifact back from its fallback: placed whole, or on failure
 * nothing touched — never a second fallback, never a half file. */
Test(artifact_write, placing_text_has_no_fallback_and_leaves_the_place_as_it_was)
{
    char err[1024], dir[] = "/tmp/anvil-place-XXXXXX", path[128], fb[1200];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/r.json", dir);
    cr_assert_eq(artifact_place_text(path, "{\"a\": 1}\n", err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "r");
    char got[32] = "";
    cr_assert(f && fgets(got, sizeof got, f));
    fclose(f);
    cr_assert_str_eq(got, "{\"a\": 1}\n");
    /* a place that cannot take it: under a regular file */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/sub/r.json", path);
    cr_assert_eq(artifact_place_text(bad, "{}\n", err, sizeof err), -1);
    artifact_fallback_path(bad, fb, sizeof fb);
    cr_assert_neq(access(fb, F_OK), 0, "no fallback was written: %s", err);
    unlink(path);
    rmdir(dir);
}
