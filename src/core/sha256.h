/* sha256.h — SHA-256 as lowercase hex, through libcrypto's EVP API (artifacts
 * name the files they were built from by the digest of their bytes). */
#ifndef ANVIL_CORE_SHA256_H
#define ANVIL_CORE_SHA256_H

#include <stddef.h>

#define SHA256_HEX_LEN 64   /* hex digits, excluding the terminating NUL */

/* Writes the SHA-256 of len bytes at data (data may be NULL when len is 0)
 * into out as 64 lowercase hex digits plus a NUL. Allocates nothing the
 * caller keeps. Returns 0, or -1 when libcrypto fails (out is then "").
 */
int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
