/* test_image.c — synthetic images: a valid PNG or JPEG of the size asked
 * for (read back through libpng, libjpeg), the same for a seed, different
 * across seeds, and "WxH" parsing. */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <openssl/evp.h>

#include <jpeglib.h>

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

/* The bytes of a base64 data: URL after prefix (malloc'd), *n of them. */
static unsigned char *decode_url(const char *url, const char *pre, size_t *n)
{
    cr_assert(!strncmp(url, pre, strlen(pre)), "%.40s", url);
    const char *b64 = url + strlen(pre);
    size_t len = strlen(b64);
    unsigned char *bytes = malloc(len);
    int got = EVP_DecodeBlock(bytes, (const unsigned char *)b64, (int)len);
    cr_assert_gt(got, 0);
    while (len && b64[len - 1] == '=') {
        len--;
        got--;
    }
    *n = (size_t)got;
    return bytes;
}

struct jfail {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
};

static void jfail_exit(j_common_ptr c)
{
    longjmp(((struct jfail *)c->err)->jump, 1);
}

/* Decodes the JPEG with libjpeg: its size, and the pixel at (x, y). */
static void jpeg_read_back(const char *url, unsigned *w, unsigned *h, int x, int y, unsigned char px[3])
{
    size_t n;
    unsigned char *bytes = decode_url(url, "data:image/jpeg;base64,", &n);
    struct jpeg_decompress_struct d;
    struct jfail f;
    d.err = jpeg_std_error(&f.mgr);
    f.mgr.error_exit = jfail_exit;
    if (setjmp(f.jump))
        cr_assert_fail("libjpeg cannot read the image back");
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, bytes, (unsigned long)n);
    cr_assert_eq(jpeg_read_header(&d, TRUE), JPEG_HEADER_OK);
    jpeg_start_decompress(&d);
    *w = d.output_width;
    *h = d.output_height;
    cr_assert_eq(d.output_components, 3);
    unsigned char *row = malloc((size_t)d.output_width * 3);
    while (d.output_scanline < d.output_height) {
        int at = (int)d.output_scanline;
        jpeg_read_scanlines(&d, &row, 1);
        if (at == y)
            memcpy(px, row + 3 * x, 3);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    free(row);
    free(bytes);
}

Test(image, jpeg_of_the_size_asked_for_seeded_with_the_png_tiles)
{
    struct buf a, b, c, p;
    buf_init(&a, 1u << 28);
    buf_init(&b, 1u << 28);
    buf_init(&c, 1u << 28);
    buf_init(&p, 1u << 28);
    cr_assert_eq(image_jpeg_data_url(7, 448, 300, &a), 0);
    cr_assert_eq(image_data_url(IMAGE_JPEG, 7, 448, 300, &b), 0);
    cr_assert_eq(image_jpeg_data_url(8, 448, 300, &c), 0);
    cr_assert_eq(image_png_data_url(7, 448, 300, &p), 0);
    unsigned w, h;
    unsigned char px[3];
    jpeg_read_back(a.data, &w, &h, 40, 40, px);
    cr_assert_eq(w, 448);
    cr_assert_eq(h, 300);
    cr_assert_str_eq(a.data, b.data, "the same seed gives the same image");
    cr_assert(strcmp(a.data, c.data) != 0, "another seed gives another image");
    /* the PNG's pixel (40, 40): the middle of a 16x16 tile, lossless */
    size_t n;
    unsigned char *png_bytes = decode_url(p.data, prefix, &n);
    png_image img = {.version = PNG_IMAGE_VERSION};
    cr_assert(png_image_begin_read_from_memory(&img, png_bytes, n));
    img.format = PNG_FORMAT_RGB;
    unsigned char *rgb = malloc(PNG_IMAGE_SIZE(img));
    cr_assert(png_image_finish_read(&img, NULL, rgb, 0, NULL));
    for (int k = 0; k < 3; k++)
        cr_assert_lt(abs((int)px[k] - (int)rgb[3 * (40 * 448 + 40) + k]), 24,
                     "channel %d: JPEG %d, PNG %d (one tile colour, quality 90)", k, px[k], rgb[3 * (40 * 448 + 40) + k]);
    free(rgb);
    free(png_bytes);
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
    buf_free(&p);
    buf_init(&a, 1u << 28);
    cr_assert_eq(image_jpeg_data_url(1, 1, 1, &a), 0);
    jpeg_read_back(a.data, &w, &h, 0, 0, px);
    cr_assert_eq(w * h, 1);
    buf_free(&a);
}

Test(image, formats_parse)
{
    enum image_format f;
    cr_assert_eq(image_parse_format("jpeg", &f), 0);
    cr_assert_eq(f, IMAGE_JPEG);
    cr_assert_eq(image_parse_format("jpg", &f), 0);
    cr_assert_eq(f, IMAGE_JPEG);
    cr_assert_eq(image_parse_format("png", &f), 0);
    cr_assert_eq(f, IMAGE_PNG);
    cr_assert_eq(image_parse_format("gif", &f), -1);
    cr_assert_str_eq(image_format_name(IMAGE_JPEG), "jpeg");
}

/* A dataset's image that is a device never ending (/dev/zero) or a file
 * over the limit is refused by its size, not read until memory runs out
 * (before: /dev/zero was read until the allocator failed). */
Test(image, an_endless_or_oversized_file_is_refused_without_reading_it_all, .timeout = 20)
{
    struct buf url;
    buf_init(&url, 1u << 30);
    char err[512];
    cr_assert_eq(image_file_data_url("/dev/zero", &url, err, sizeof err), -1);
    cr_assert(strstr(err, "/dev/zero") && strstr(err, "more than"), "%s", err);
    char path[] = "/tmp/anvil-test-image-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, IMAGE_MAX_FILE_BYTES + 1), 0);     /* sparse: no disk used */
    close(fd);
    cr_assert_eq(image_file_data_url(path, &url, err, sizeof err), -1);
    cr_assert(strstr(err, "67108865 bytes, more than"), "%s", err);
    unlink(path);
    cr_assert_eq(url.len, 0);
    buf_free(&url);
}
