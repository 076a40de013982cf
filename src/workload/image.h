/* image.h — synthetic images for vision-language requests: a seeded PNG
 * (libpng) or JPEG (libjpeg-turbo) of a given size, as a base64 data: URL
 * for chat image_url parts. */
#ifndef ANVIL_WORKLOAD_IMAGE_H
#define ANVIL_WORKLOAD_IMAGE_H

#include <stdint.h>

#include "core/buf.h"

/* Largest side accepted, pixels. */
#define IMAGE_MAX_SIDE 8192

/* Parses "WxH" (1..IMAGE_MAX_SIDE each). Returns 0 or -1. */
int image_parse_size(const char *s, int *w, int *h);

/* Appends "data:image/png;base64,..." of a w×h RGB PNG to out: 16×16-pixel
 * tiles of colours drawn from seed, so different seeds give different
 * images (no cache serves one for another) while the file stays small
 * enough to send (rows repeat within a tile; PNG's Up filter and deflate
 * make them nearly free). Deterministic for (seed, w, h). Returns 0, or -1
 * when libpng fails or out is full. */
int image_png_data_url(uint64_t seed, int w, int h, struct buf *out);

/* Appends "data:image/jpeg;base64,..." of a w×h baseline JPEG (quality 90,
 * 4:2:0) of the same tiles as image_png_data_url for that seed.
 * Deterministic for (seed, w, h): libjpeg-turbo's encoder has no clock or
 * random input. Returns 0, or -1 when libjpeg fails or out is full. */
int image_jpeg_data_url(uint64_t seed, int w, int h, struct buf *out);

enum image_format { IMAGE_PNG, IMAGE_JPEG };

/* Parses "png" or "jpeg" (also "jpg"). Returns 0 or -1. */
int image_parse_format(const char *s, enum image_format *f);

/* "png" or "jpeg". */
const char *image_format_name(enum image_format f);

/* Appends "data:image/png;base64,..." or "data:image/jpeg;base64,..." of
 * the file at path (a dataset's image), its type from its first bytes.
 * Returns 0, or -1 with err naming the file and the reason (cannot read,
 * not a PNG or JPEG, too large, memory). */
int image_file_data_url(const char *path, struct buf *out, char *err, size_t errlen);

/* Largest image file accepted, bytes. */
#define IMAGE_MAX_FILE_BYTES (64L << 20)

/* image_png_data_url or image_jpeg_data_url, as f says. */
int image_data_url(enum image_format f, uint64_t seed, int w, int h, struct buf *out);

#endif
