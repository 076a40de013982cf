/* test_metrics_url.c — the server's metrics URL and the headers a scrape
 * of it may carry (observe/metrics_url.h), one rule for run and decode. */
#include <string.h>

#include <criterion/criterion.h>

#include "observe/metrics_url.h"

Test(metrics_url, auto_is_the_base_urls_root_and_a_url_is_itself)
{
    char u[256];
    cr_assert(obs_server_metrics_url("auto", "http://h:8000/v1", u, sizeof u));
    cr_assert_str_eq(u, "http://h:8000/metrics");
    cr_assert(obs_server_metrics_url("http://other:9400/metrics", "http://h:8000/v1", u, sizeof u));
    cr_assert_str_eq(u, "http://other:9400/metrics");
    cr_assert_not(obs_server_metrics_url("off", "http://h:8000/v1", u, sizeof u));
    cr_assert_str_eq(u, "");
    cr_assert_not(obs_server_metrics_url(NULL, "http://h:8000/v1", u, sizeof u));
}

Test(metrics_url, the_key_goes_only_to_the_base_urls_origin)
{
    struct curl_slist *h = curl_slist_append(NULL, "Authorization: Bearer sk-x");
    cr_assert_eq(obs_metrics_headers("http://h:8000/metrics", "http://h:8000/v1", h), h);
    cr_assert_null(obs_metrics_headers("http://h:9400/metrics", "http://h:8000/v1", h), "another port");
    cr_assert_null(obs_metrics_headers("https://h:8000/metrics", "http://h:8000/v1", h), "another scheme");
    cr_assert_null(obs_metrics_headers("http://evil/metrics", "http://h:8000/v1", h), "another host");
    cr_assert_null(obs_metrics_headers("file:///tmp/m.txt", "http://h:8000/v1", h));
    cr_assert_null(obs_metrics_headers("http://h:8000/metrics", NULL, h), "no base URL: no origin to match");
    curl_slist_free_all(h);
}

Test(metrics_url, only_http_https_and_file_urls_are_read)
{
    cr_assert(obs_metrics_url_ok("http://h/metrics"));
    cr_assert(obs_metrics_url_ok("https://h/metrics"));
    cr_assert(obs_metrics_url_ok("file:///tmp/m"));
    cr_assert_not(obs_metrics_url_ok("ftp://h/metrics"));
    cr_assert_not(obs_metrics_url_ok("h:8000/metrics"));
}
