/* test_image.c — synthetic images: a valid PNG of the size asked for (read
 * back through libpng), the same for a seed, different across seeds, and
 * "WxH" parsing. */
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <openssl/evp.h>

#include "workload/image.h"

static const char prefix[] = "data:image/png;base64,";

/* Decodes the data: URL and reads the PNG's size back with libpng. */
static void read_back(const char *url, unsigned *w, unsigned *h)
{
    cr_assert(!strncmp(url, prefix, sizeof prefix - 1), "%.40s", url);
    const char *b64 = url + sizeof prefix - 1;
    size_t n = strlen(b64);
    unsigned char *bytes = malloc(n);
    int len = EVP_DecodeBlock(bytes, (const unsigned char *)b64, (int)n);
    cr_assert_gt(len, 0);
    while (n && b64[n - 1] == '=') {     /* EVP_DecodeBlock counts the padding as bytes */
        n--;
        len--;
    }
    png_image img = {.version = PNG_IMAGE_VERSION};
    cr_assert(png_image_begin_read_from_memory(&img, bytes, (size_t)len), "%s", img.message);
    *w = img.width;
    *h = img.height;
    img.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    cr_assert(png_image_finish_read(&img, NULL, px, 0, NULL), "%s", img.message);
    free(px);
    free(bytes);
}

Test(image, png_of_the_size_asked_for_seeded)
{
    struct buf a, b, c;
    buf_init(&a, 1u << 28);
    buf_init(&b, 1u << 28);
    buf_init(&c, 1u << 28);
    cr_assert_eq(image_png_data_url(7, 448, 300, &a), 0);
    cr_assert_eq(image_png_data_url(7, 448, 300, &b), 0);
    cr_assert_eq(image_png_data_url(8, 448, 300, &c), 0);
    unsigned w, h;
    read_back(a.data, &w, &h);
    cr_assert_eq(w, 448);
    cr_assert_eq(h, 300);
    cr_assert_str_eq(a.data, b.data, "the same seed gives the same image");
    cr_assert(strcmp(a.data, c.data) != 0, "another seed gives another image");
    cr_assert_lt(a.len, 448 * 300 * 3 / 4, "tiles compress: %zu bytes", a.len);
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
    buf_init(&a, 1u << 28);
    cr_assert_eq(image_png_data_url(1, 1, 1, &a), 0);
    read_back(a.data, &w, &h);
    cr_assert_eq(w * h, 1);
    buf_free(&a);
}

Test(image, sizes_parse)
{
    int w, h;
    cr_assert_eq(image_parse_size("512x384", &w, &h), 0);
    cr_assert_eq(w * 1000 + h, 512384);
    cr_assert_eq(image_parse_size("64X64", &w, &h), 0);
    cr_assert_eq(image_parse_size("0x5", &w, &h), -1);
    cr_assert_eq(image_parse_size("5x", &w, &h), -1);
    cr_assert_eq(image_parse_size("5x5z", &w, &h), -1);
    cr_assert_eq(image_parse_size("9000x5", &w, &h), -1);
}
