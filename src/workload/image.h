/* image.h — synthetic images for vision-language requests: a seeded PNG
 * (libpng) of a given size, as a base64 data: URL for chat image_url parts. */
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

#endif
