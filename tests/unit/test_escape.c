/* test_escape.c — others' text with its control characters made visible. */
#include <string.h>

#include <criterion/criterion.h>

#include "core/escape.h"

static const char *esc(const char *s, size_t n)
{
    static char out[256];
    text_escape(out, sizeof out, s, n);
    return out;
}

#define ESC(lit) esc(lit, sizeof lit - 1)

Test(escape, controls_become_visible)
{
    cr_assert_str_eq(ESC("\x1b[2J\x1b]0;title\x07ok"), "\\x1b[2J\\x1b]0;title\\x07ok");
    cr_assert_str_eq(ESC("a\tb\r\nc\x7f"), "a\\tb\\r\\nc\\x7f");
    cr_assert_str_eq(ESC("nul\0after"), "nul\\x00after", "a NUL does not end the text");
    cr_assert_str_eq(ESC("\xc2\x9b" "31m"), "\\u009b31m", "C1 CSI, UTF-8 encoded");
    cr_assert_str_eq(ESC("\xc2\x85\xc2\xa0"), "\\u0085\xc2\xa0", "NEL is C1, NBSP is not");
}

Test(escape, utf8_stays_and_what_is_not_utf8_is_escaped)
{
    cr_assert_str_eq(ESC("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
    cr_assert_str_eq(ESC("\x9b" "1m"), "\\x9b1m", "a lone 8-bit CSI");
    cr_assert_str_eq(ESC("\xc0\x80"), "\\xc0\\x80", "overlong NUL");
    cr_assert_str_eq(ESC("\xed\xa0\x80"), "\\xed\\xa0\\x80", "a UTF-16 surrogate");
    cr_assert_str_eq(ESC("ab\xe6\x97"), "ab\\xe6\\x97", "a sequence cut at the end");
    cr_assert_str_eq(ESC("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80", "past U+10FFFF");
}

Test(escape, the_cap_cuts_before_an_escape_that_does_not_fit)
{
    char out[6];
    cr_assert_eq(text_escape(out, sizeof out, "ab\x1b" "cd", 5), 2);
    cr_assert_str_eq(out, "ab");
    cr_assert_eq(text_escape(out, sizeof out, "abcdefgh", 8), 5);
    cr_assert_str_eq(out, "abcde");
    cr_assert_eq(text_escape(out, 1, "abc", 3), 0);
    cr_assert_str_eq(out, "");
}
