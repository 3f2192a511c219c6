/* libFuzzer target for sync tokens (RFC 6578; firmware/app/caldav/sync.c).
 *
 * The first 4 input bytes choose the collection id the token must name, the
 * rest is the token as a client sends it in a sync-collection REPORT. For
 * each input:
 *   - sync_token_parse may only accept "urn:litedav:sync:<id>:<seq>" with
 *     <id> the collection's and both numbers plain decimal (1..10 digits,
 *     no sign, space or other byte) that fit 32 bits; an independent reader
 *     below decides what must be accepted, and the parsed sequence must be
 *     its value;
 *   - a token formatted for the accepted (collection, sequence) parses back
 *     to the same sequence, and is refused for any other collection;
 *   - the parser never reads outside the input (ASan: the token is copied
 *     into a buffer of exactly its length).
 * Any failed invariant aborts, which libFuzzer reports with the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caldav/sync.h"

#define REQUIRE(cond) \
    do { if (!(cond)) { fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

static const char prefix[] = "urn:litedav:sync:";

/* Reference: a decimal field of 1..10 digits below 2^32. */
static int decimal(const uint8_t *p, size_t len, uint64_t *v)
{
    size_t i;
    *v = 0;
    if (len < 1 || len > 10)
        return 0;
    for (i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        *v = *v * 10 + (uint64_t)(p[i] - '0');
    }
    return *v <= 0xFFFFFFFFu;
}

static int reference(const uint8_t *t, size_t len, uint32_t coll, uint32_t *seq)
{
    size_t plen = sizeof(prefix) - 1, i;
    uint64_t id, s;
    if (len <= plen || memcmp(t, prefix, plen) != 0)
        return -1;
    for (i = plen; i < len && t[i] != ':'; i++)
        ;
    if (i == len || !decimal(t + plen, i - plen, &id) || id != coll || !decimal(t + i + 1, len - i - 1, &s))
        return -1;
    *seq = (uint32_t)s;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t coll, seq = 0, ref_seq = 0, again = 0;
    char *token, formatted[64];
    int rc, ref;

    if (size < 4)
        return 0;
    coll = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    /* small ids are what a store hands out; keep them likely */
    if (data[3] & 0x80)
        coll &= 0xFF;
    token = malloc(size - 4 ? size - 4 : 1);
    REQUIRE(token);
    memcpy(token, data + 4, size - 4);
    rc = sync_token_parse(token, size - 4, coll, &seq);
    ref = reference((const uint8_t *)token, size - 4, coll, &ref_seq);
    REQUIRE(rc == 0 || rc == -1);
    REQUIRE(rc == ref);
    if (rc == 0) {
        REQUIRE(seq == ref_seq);
        sync_token_format(coll, seq, formatted, sizeof(formatted));
        REQUIRE(sync_token_parse(formatted, strlen(formatted), coll, &again) == 0 && again == seq);
        REQUIRE(sync_token_parse(formatted, strlen(formatted), coll + 1, &again) == -1);
        /* a truncated formatted token is another sequence or nothing */
        REQUIRE(sync_token_parse(formatted, strlen(formatted) - 1, coll, &again) == -1 ||
                (seq >= 10 && again == seq / 10));
    }
    free(token);
    return 0;
}
