/* CRC-32 (IEEE 802.3 / zlib polynomial, reflected, init and final xor
 * 0xFFFFFFFF). crc32_update(0, ...) starts a CRC; feeding the result back
 * continues it over more data, so a record can be checked in pieces. */
#ifndef LITEDAV_CRC32_H
#define LITEDAV_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32_update(uint32_t crc, const void *data, size_t len);

#endif
