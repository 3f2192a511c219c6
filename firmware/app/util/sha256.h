/* SHA-256 (FIPS 180-4), for the salted password hashes of auth.c. */
#ifndef LITEDAV_SHA256_H
#define LITEDAV_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32

struct sha256 {
    uint32_t state[8];
    uint64_t length;      /* bytes hashed so far */
    uint8_t block[64];
    size_t fill;
};

void sha256_init(struct sha256 *h);
void sha256_update(struct sha256 *h, const void *data, size_t len);
void sha256_final(struct sha256 *h, uint8_t digest[SHA256_DIGEST_SIZE]);

#endif
