/* image.c — seeded PNG (libpng) and JPEG (libjpeg-turbo) images, base64
 * through libcrypto. */
#include "workload/image.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jpeglib.h>

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

/* Row y's pixels (RGB, w of them): the colours of its band of tiles, drawn
 * once per band (y % TILE == 0) into row, which keeps them for the band. */
static void tile_row(uint64_t seed, int w, int y, unsigned char *row)
{
    if (y % TILE != 0)
        return;
    uint64_t s = seed ^ ((uint64_t)(y / TILE) * 0x9e3779b97f4a7c15ull);
    for (int x = 0; x < w; x += TILE) {
        uint64_t c = splitmix64_next(&s);
        for (int k = x; k < w && k < x + TILE; k++)
            memcpy(row + 3 * k, &c, 3);
    }
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
        tile_row(seed, w, y, row);
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

/* libjpeg's error exit: back to the encoder's setjmp (the default exits
 * the process). */
struct jpeg_fail {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
};

static void jpeg_error_cb(j_common_ptr cinfo)
{
    longjmp(((struct jpeg_fail *)cinfo->err)->jump, 1);
}

/* Encodes the image into *jpg (malloc'd by libjpeg, caller frees) of *n
 * bytes. Returns 0 or -1. */
static int encode_jpeg(uint64_t seed, int w, int h, unsigned char *row, unsigned char **jpg, unsigned long *n)
{
    struct jpeg_compress_struct c;
    struct jpeg_fail fail;
    c.err = jpeg_std_error(&fail.mgr);
    fail.mgr.error_exit = jpeg_error_cb;
    if (setjmp(fail.jump)) {
        jpeg_destroy_compress(&c);
        return -1;
    }
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, jpg, n);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    jpeg_start_compress(&c, TRUE);
    for (int y = 0; y < h; y++) {
        tile_row(seed, w, y, row);
        JSAMPROW r = row;
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return 0;
}

/* Appends "data:<mime>;base64," and the base64 of n bytes to out. */
static int append_data_url(const char *mime, const unsigned char *bytes, size_t n, struct buf *out)
{
    unsigned char *b64 = n <= INT32_MAX / 2 ? malloc(4 * ((n + 2) / 3) + 1) : NULL;
    if (!b64)
        return -1;
    int len = EVP_EncodeBlock(b64, bytes, (int)n);
    int rc = buf_printf(out, "data:%s;base64,", mime) == 0 && buf_append(out, b64, (size_t)len) == 0 ? 0 : -1;
    free(b64);
    return rc;
}

int image_png_data_url(uint64_t seed, int w, int h, struct buf *out)
{
    unsigned char *row = malloc((size_t)w * 3);
    struct buf png;
    buf_init(&png, 512u << 20);
    int rc = row ? encode(seed, w, h, row, &png) : -1;
    free(row);
    if (rc == 0)
        rc = append_data_url("image/png", (const unsigned char *)png.data, png.len, out);
    buf_free(&png);
    return rc;
}

int image_jpeg_data_url(uint64_t seed, int w, int h, struct buf *out)
{
    unsigned char *row = malloc((size_t)w * 3), *jpg = NULL;
    unsigned long n = 0;
    int rc = row ? encode_jpeg(seed, w, h, row, &jpg, &n) : -1;
    free(row);
    if (rc == 0)
        rc = append_data_url("image/jpeg", jpg, n, out);
    free(jpg);
    return rc;
}

/* Reads at most IMAGE_MAX_FILE_BYTES + 1 bytes of path into a malloc'd
 * buffer (caller frees), *n of them: a regular file over the limit is not
 * read (*n its size, the buffer empty), and a device that never ends
 * (/dev/zero) stops at the first byte past the limit (*n = SIZE_MAX)
 * instead of being read until memory runs out. The buffer is allocated at
 * the limit; its untouched pages cost no memory. NULL with errno when the
 * file cannot be read. */
static unsigned char *read_bounded(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = (size_t)IMAGE_MAX_FILE_BYTES + 1;
    struct stat st;
    bool regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (regular && (uintmax_t)st.st_size >= cap) {
        fclose(f);
        *n = (size_t)st.st_size;        /* over the limit: the caller refuses it by *n */
        return malloc(1);
    }
    unsigned char *b = malloc(cap);
    size_t got = 0, k;
    while (b && got < cap && (k = fread(b + got, 1, cap - got, f)) > 0)
        got += k;
    int saved = b ? errno : ENOMEM;
    bool bad = !b || ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        errno = saved;
        return NULL;
    }
    /* a regular file that grew, or a device, past the limit: size unknown */
    *n = got == cap && cap > (size_t)IMAGE_MAX_FILE_BYTES ? SIZE_MAX : got;
    return b;
}

int image_file_data_url(const char *path, struct buf *out, char *err, size_t errlen)
{
    size_t n = 0;
    unsigned char *bytes = read_bounded(path, &n);
    const char *mime = NULL;
    if (!bytes)
        snprintf(err, errlen, "image %s cannot be read: %s", path, strerror(errno));
    else if (n == SIZE_MAX)
        snprintf(err, errlen, "image %s is more than the %ld bytes accepted", path, IMAGE_MAX_FILE_BYTES);
    else if (n > (size_t)IMAGE_MAX_FILE_BYTES)
        snprintf(err, errlen, "image %s is %zu bytes, more than the %ld accepted", path, n, IMAGE_MAX_FILE_BYTES);
    else if (n >= 8 && !memcmp(bytes, "\x89PNG\r\n\x1a\n", 8))
        mime = "image/png";
    else if (n >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff)
        mime = "image/jpeg";
    else
        snprintf(err, errlen, "image %s is neither a PNG nor a JPEG", path);
    int rc = mime ? append_data_url(mime, bytes, n, out) : -1;
    if (mime && rc != 0)
        snprintf(err, errlen, "image %s: out of memory", path);
    free(bytes);
    return rc;
}

int image_parse_format(const char *s, enum image_format *f)
{
    if (!strcmp(s, "png"))
        *f = IMAGE_PNG;
    else if (!strcmp(s, "jpeg") || !strcmp(s, "jpg"))
        *f = IMAGE_JPEG;
    else
        return -1;
    return 0;
}

const char *image_format_name(enum image_format f)
{
    return f == IMAGE_JPEG ? "jpeg" : "png";
}

int image_data_url(enum image_format f, uint64_t seed, int w, int h, struct buf *out)
{
    return f == IMAGE_JPEG ? image_jpeg_data_url(seed, w, h, out) : image_png_data_url(seed, w, h, out);
}
