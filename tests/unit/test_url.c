/* test_url.c — URL parts through libcurl's URL API (net/url.h): odd URLs
 * (IPv6 with a zone, user:password@, no path, a trailing '/', a query
 * holding '@', a URL curl refuses) read as curl reads them. */
#include <string.h>

#include <criterion/criterion.h>

#include "net/url.h"

Test(url, origin_is_scheme_userinfo_host_and_port)
{
    static const struct {
        const char *url, *origin;
    } cases[] = {
        {"http://h:8000/v1", "http://h:8000"},
        {"http://h:8000", "http://h:8000"},
        {"http://h:8000/", "http://h:8000"},
        {"https://h/v1/", "https://h"},
        {"http://h:8000?x=1", "http://h:8000"},
        {"http://h:8000#f", "http://h:8000"},
        {"http://[::1]:8000/v1", "http://[::1]:8000"},
        {"http://[fe80::1%25eth0]:8000/v1", "http://[fe80::1%25eth0]:8000"},
        {"http://u:p@h:8000/v1", "http://u:p@h:8000"},
        {"http://u@[::1]:1", "http://u@[::1]:1"},
        {"HTTP://H:8000/metrics", "http://H:8000"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[256];
        cr_assert_eq(url_origin(cases[i].url, out, sizeof out), 0, "%s", cases[i].url);
        cr_assert_str_eq(out, cases[i].origin, "%s", cases[i].url);
    }
}

Test(url, origin_refuses_what_curl_refuses_and_what_does_not_fit)
{
    char out[16] = "x";
    cr_assert_eq(url_origin("h:8000/v1", out, sizeof out), -1);      /* no scheme */
    cr_assert_str_eq(out, "");
    cr_assert_eq(url_origin("http://h:99999999/", out, sizeof out), -1);
    cr_assert_eq(url_origin("http://a-rather-long-host:8000/v1", out, sizeof out), -1);
    cr_assert_str_eq(out, "");
}

Test(url, public_drops_only_the_credentials)
{
    static const struct {
        const char *url, *shown;
    } cases[] = {
        {"http://u:p@h:8000/v1", "http://h:8000/v1"},
        {"http://u@h/", "http://h/"},
        {"http://:p@h/", "http://h/"},
        {"http://u%40x:p%3Ab@[::1]:8000/v1?x=1", "http://[::1]:8000/v1?x=1"},
        {"http://h:8000/v1", "http://h:8000/v1"},
        {"http://h:8000", "http://h:8000"},
        {"http://h/p@q", "http://h/p@q"},
        /* a query holding '@' is no userinfo (read as "http://b" before) */
        {"http://h:8000?x=a@b", "http://h:8000?x=a@b"},
        /* curl connects to this one with u:p (shown in full before) */
        {"http:/u:p@h/v1", "http://h/v1"},
        /* curl refuses it; no part of the password shows ("ss@h/v1" before) */
        {"http://u:p@ss@h/v1", "http://h/v1"},
        {"not a url", "not a url"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[256];
        url_public(cases[i].url, out, sizeof out);
        cr_assert_str_eq(out, cases[i].shown, "%s", cases[i].url);
    }
}

Test(url, has_credentials_as_curl_reads_them)
{
    cr_assert(url_has_credentials("http://u:p@h:8000/v1"));
    cr_assert(url_has_credentials("http://u@[::1]:8000"));
    cr_assert(url_has_credentials("http:/u:p@h/v1"));
    cr_assert(url_has_credentials("http://u:p@ss@h/v1"));      /* refused by curl: counted, to be safe */
    cr_assert_not(url_has_credentials("http://h:8000/v1"));
    cr_assert_not(url_has_credentials("http://h:8000?tag=a@b")); /* counted before */
    cr_assert_not(url_has_credentials("http://h/p@q"));
}

Test(url, path_without_query_or_a_lone_slash)
{
    static const struct {
        const char *url, *path;
    } cases[] = {
        {"http://h:8000/v1", "/v1"},
        {"http://h:8000", ""},
        {"http://h:8000/", ""},
        {"http://h:8000/v1/", "/v1/"},
        {"http://h:8000/v1?x=1#f", "/v1"},
        {"http://h:8000?x=/v1", ""},
        {"http://[::1]:8000/openai/v1", "/openai/v1"},
        {"http://u:p@h/a/../v1", "/a/../v1"},
        {"file:///tmp/m", "/tmp/m"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[256];
        cr_assert_eq(url_path(cases[i].url, out, sizeof out), 0, "%s", cases[i].url);
        cr_assert_str_eq(out, cases[i].path, "%s", cases[i].url);
    }
    char out[8];
    cr_assert_eq(url_path("localhost:8000/v1", out, sizeof out), -1);
    cr_assert_eq(url_path("http://h/a-long-path", out, sizeof out), -1);
    cr_assert_str_eq(out, "");
}
