/* verdict.c — replies anvil refuses and limits of this machine (verdict.h). */
#include "net/verdict.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "core/escape.h"

CURLcode http_judge_head(long status, const char *location, const char *encoding, char *why, size_t cap)
{
    char shown[120];
    if (status >= 300 && status < 400) {
        text_escape(shown, sizeof shown, location, strlen(location));
        snprintf(why, cap, "HTTP %ld: a redirect%s%s, which anvil does not follow (it measures the server it "
                 "is given): give the final address as --base-url", status, location[0] ? " to " : "", shown);
        return CURLE_TOO_MANY_REDIRECTS;
    }
    if (status < 300 && encoding[0] && strcasecmp(encoding, "identity") != 0) {
        text_escape(shown, sizeof shown, encoding, strlen(encoding));
        snprintf(why, cap, "the body is compressed (Content-Encoding: %s), which anvil did not ask for (it "
                 "sends no Accept-Encoding): a server or proxy setting compresses replies; turn it off", shown);
        return CURLE_BAD_CONTENT_ENCODING;
    }
    return CURLE_OK;
}

bool http_limit_reason(int e, char *why, size_t cap)
{
    struct rlimit rl = {0, 0};
    getrlimit(RLIMIT_NOFILE, &rl);
    if (e == EMFILE)
        snprintf(why, cap, "this machine's open-file limit (%llu), not the server: no descriptor "
                 "for a new connection (socket(): %s); raise it (ulimit -n) or run fewer streams at once",
                 (unsigned long long)rl.rlim_cur, strerror(e));
    else if (e == ENFILE)
        snprintf(why, cap, "this machine's system-wide file table is full, not the server "
                 "(socket(): %s); raise fs.file-max or run fewer streams at once", strerror(e));
    else if (e == ENOBUFS || e == ENOMEM)
        snprintf(why, cap, "this machine ran out of memory for a socket, not the server "
                 "(%s); run fewer streams at once", strerror(e));
    else if (e == EADDRNOTAVAIL)
        snprintf(why, cap, "this machine has no free local port, not the server (connect(): %s); "
                 "widen net.ipv4.ip_local_port_range or run fewer streams at once (closed connections hold "
                 "their port for 60 s)", strerror(e));
    return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM || e == EADDRNOTAVAIL;
}
