/* sha256.c — SHA-256 hex digests via EVP_Digest (no hand-written SHA). */
#include "core/sha256.h"

#include <stdio.h>

#include <openssl/evp.h>

int sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    static const unsigned char empty[1];
    out[0] = '\0';
    /* EVP_Digest wants a valid pointer even for zero bytes */
    if (!EVP_Digest(data ? data : empty, len, md, &md_len, EVP_sha256(), NULL) || md_len != 32)
        return -1;
    for (unsigned int i = 0; i < md_len; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return 0;
}
