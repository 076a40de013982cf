/* image.c — seeded PNG images through libpng, base64 through libcrypto. */
#include "workload/image.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/rand.h"

#define TILE 16

int image_parse_size(const char *s, int *w, int *h)
{
    char x;
    char rest;
    if (sscanf(s, "%d%c%d%c", w, &x, h, &rest) != 3 || (x != 'x' && x != 'X'))
        return -1;
    return *w >= 1 && *h >= 1 && *w <= IMAGE_MAX_SIDE && *h <= IMAGE_MAX_SIDE ? 0 : -1;
}

/* libpng writes the file through this: bytes into a buf. */
static void write_cb(png_structp png, png_bytep data, png_size_t n)
{
    struct buf *b = png_get_io_ptr(png);
    if (buf_append(b, data, n) != 0)
        png_error(png, "out of memory");
}

static void flush_cb(png_structp png)
{
    (void)png;
}

/* Encodes the image into png_out. Returns 0 or -1. */
static int encode(uint64_t seed, int w, int h, unsigned char *row, struct buf *png_out)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_set_write_fn(png, png_out, write_cb, flush_cb);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) {
        if (y % TILE == 0) {    /* a new band of tiles: its colours */
            uint64_t s = seed ^ ((uint64_t)(y / TILE) * 0x9e3779b97f4a7c15ull);
            for (int x = 0; x < w; x += TILE) {
                uint64_t c = splitmix64_next(&s);
                for (int k = x; k < w && k < x + TILE; k++)
                    memcpy(row + 3 * k, &c, 3);
            }
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

int image_png_data_url(uint64_t seed, int w, int h, struct buf *out)
{
    static const char prefix[] = "data:image/png;base64,";
    unsigned char *row = malloc((size_t)w * 3);
    struct buf png;
    buf_init(&png, 512u << 20);
    int rc = row ? encode(seed, w, h, row, &png) : -1;
    free(row);
    unsigned char *b64 = rc == 0 ? malloc(4 * ((png.len + 2) / 3) + 1) : NULL;
    if (!b64)
        rc = -1;
    if (rc == 0) {
        int n = EVP_EncodeBlock(b64, (const unsigned char *)png.data, (int)png.len);
        if (buf_append(out, prefix, sizeof prefix - 1) != 0 || buf_append(out, b64, (size_t)n) != 0)
            rc = -1;
    }
    free(b64);
    buf_free(&png);
    return rc;
}
