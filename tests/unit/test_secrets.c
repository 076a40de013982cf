/* test_secrets.c — the credentials of one command in every form they come
 * back in (core/redact.h: struct secrets), and their scrubbing from text and
 * from a JSON tree. Encodings are checked against base64 computed here by
 * hand, not by the code under test. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "core/redact.h"

static bool has(const struct secrets *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], v))
            return true;
    return false;
}

Test(secrets, header_values_with_their_bearer_and_basic_forms)
{
    struct secrets s = {0};
    cr_assert_eq(secrets_add_header(&s, "Authorization: Bearer tok-12345"), 0);
    cr_assert(has(&s, "Bearer tok-12345") && has(&s, "tok-12345"));
    /* base64("alice:pw-6789") = YWxpY2U6cHctNjc4OQ== */
    cr_assert_eq(secrets_add_header(&s, "Proxy-Authorization:  Basic YWxpY2U6cHctNjc4OQ==  "), 0);
    cr_assert(has(&s, "Basic YWxpY2U6cHctNjc4OQ==") && has(&s, "YWxpY2U6cHctNjc4OQ=="));
    cr_assert(has(&s, "alice:pw-6789") && has(&s, "pw-6789"), "the decoded user:password and password");
    cr_assert_eq(secrets_add_header(&s, "X-Team: abc"), 0);
    cr_assert(!has(&s, "abc"), "shorter than 4 bytes: not told from text");
    for (size_t i = 1; i < s.n; i++)
        cr_assert_geq(strlen(s.v[i - 1]), strlen(s.v[i]), "longest first");
    secrets_free(&s);
    cr_assert_eq(s.n, 0);
}

Test(secrets, url_userinfo_as_written_decoded_and_as_basic)
{
    struct secrets s = {0};
    cr_assert_eq(secrets_add_url(&s, "http://bob:p%40ss-42@host:8000/v1"), 0);
    cr_assert(has(&s, "bob:p%40ss-42") && has(&s, "p%40ss-42"));
    cr_assert(has(&s, "bob:p@ss-42") && has(&s, "p@ss-42"), "percent-decoded, as sent");
    /* base64("bob:p@ss-42") = Ym9iOnBAc3MtNDI= */
    cr_assert(has(&s, "Ym9iOnBAc3MtNDI="), "the Basic encoding an HTTP client sends");
    size_t n = s.n;
    cr_assert_eq(secrets_add_url(&s, "http://host:8000/v1?next=http://x@y"), 0);
    cr_assert_eq(s.n, n, "an '@' past the authority is no userinfo");
    secrets_free(&s);
}

Test(secrets, scrubs_text_and_every_string_of_a_json_tree)
{
    struct secrets s = {0};
    secrets_add(&s, "sk-key-0001");
    secrets_add_header(&s, "X-Token: hdr-0002");
    char text[200] = "bad key sk-key-0001 and hdr-0002; cut: sk-ke";
    secrets_scrub(&s, text, sizeof text);
    cr_assert_str_eq(text, "bad key [redacted] and [redacted]; cut: [redacted]");
    cJSON *j = cJSON_Parse("{\"sk-key-0001\": 1, \"a\": [\"x hdr-0002 hdr-0002 hdr-0002 y\", {\"b\": \"sk-key-0001\"}]}");
    cr_assert_eq(secrets_scrub_json(&s, j), 0);
    char *out = cJSON_PrintUnformatted(j);
    cr_assert_str_eq(out, "{\"sk-key-0001\":1,\"a\":[\"x [redacted] [redacted] [redacted] y\",{\"b\":\"[redacted]\"}]}",
                     "values scrubbed (keys are anvil's own names): %s", out);
    free(out);
    cJSON_Delete(j);
    cr_assert(!secrets_found(&s, "nothing here") && secrets_found(&s, "..hdr-0002.."));
    secrets_free(&s);
}
