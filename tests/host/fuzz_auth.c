/* libFuzzer target for HTTP Basic credentials (RFC 7617; firmware/app/http/auth.c).
 *
 * The input is an Authorization field value (or, after a first byte 0x01, a
 * whole request head). For each input:
 *   - auth_base64_decode agrees with an independent RFC 4648 decoder below on
 *     what is valid and on every decoded byte, and never writes past cap;
 *   - auth_check, against a store holding one user ("alice", password
 *     "s3cret:x" with a colon in it), answers only AUTH_OK, AUTH_MISSING or
 *     AUTH_BAD; AUTH_OK exactly when the field is one "Basic" credential
 *     decoding to "alice:s3cret:x" (and then the user is "alice"), so no
 *     malformed, truncated, padded or duplicated credential gets in;
 *   - the user buffer is always NUL-terminated within AUTH_USER_MAX + 1.
 * Any failed invariant aborts, which libFuzzer reports with the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/auth.h"
#include "platform/flash_ram.h"
#include "store/store.h"

#define REQUIRE(cond) \
    do { if (!(cond)) { fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

#define USER_NAME "alice"
#define PASSWORD "s3cret:x"
#define HEAD_MAX 4096

STORE_MEMORY_DEFINE(mem, 64, 4, 8);
static struct store st;
static struct flash_ram fr;
static uint8_t flash_mem[64 * 1024];
static int ready;

static void setup(void)
{
    static const struct store_config cfg = {4096, 16};
    static const uint8_t salt[AUTH_SALT_SIZE] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    REQUIRE(flash_ram_init(&fr, flash_mem, sizeof(flash_mem), 4096, 256) == 0);
    REQUIRE(store_mount(&st, &fr.flash, &cfg, &mem, NULL) == STORE_OK);
    REQUIRE(auth_set_password(&st, USER_NAME, PASSWORD, salt) == STORE_OK);
    ready = 1;
}

static int b64(uint8_t c)
{
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(alphabet, c) : NULL;
    return p ? (int)(p - alphabet) : -1;
}

/* Reference decoder, quantum by quantum (RFC 4648 section 4): "=" only at
 * the end of the last quantum, one or two of them. */
static long reference_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    size_t q, n = 0;
    if (len % 4)
        return -1;
    for (q = 0; q < len; q += 4) {
        int v[4], k, pads = 0;
        uint32_t acc = 0;
        for (k = 0; k < 4; k++) {
            if (in[q + k] == '=') {
                if (q + 4 != len || k < 2)
                    return -1;
                pads++;
                v[k] = 0;
                continue;
            }
            if (pads || (v[k] = b64(in[q + k])) < 0)
                return -1;
        }
        for (k = 0; k < 4; k++)
            acc = acc << 6 | (uint32_t)v[k];
        for (k = 0; k < 3 - pads; k++) {
            if (n >= cap)
                return -1;
            out[n++] = (uint8_t)(acc >> (16 - 8 * k));
        }
    }
    return (long)n;
}

static void fuzz_decode(const uint8_t *data, size_t size)
{
    uint8_t out[200], ref[200];
    size_t cap = size % 2 ? sizeof(out) : (size / 3) % sizeof(out);
    long n, r;
    memset(out, 0xA5, sizeof(out));
    n = auth_base64_decode((const char *)data, size, out, cap);
    r = reference_decode(data, size, ref, cap);
    REQUIRE(n == r);
    if (n >= 0)
        REQUIRE((size_t)n <= cap && memcmp(out, ref, (size_t)n) == 0);
    for (size_t i = n > 0 ? (size_t)n : 0; i < sizeof(out); i++)
        REQUIRE(i < cap || out[i] == 0xA5);
}

/* What auth_check must accept: exactly one Authorization field, "Basic",
 * whitespace, then base64 of the right credentials. */
static int credentials_right(const struct http_request *req)
{
    static const char want[] = USER_NAME ":" PASSWORD;
    uint8_t creds[256];
    size_t vlen, other_len, pos = 0;
    const char *v = http_header_next(req, "Authorization", &pos, &vlen);
    long n;
    if (!v || vlen < 6 || !http_token_equals(v, 5, "Basic") || (v[5] != ' ' && v[5] != '\t'))
        return 0;
    if (http_header_next(req, "Authorization", &pos, &other_len))
        return 0;
    v += 6;
    vlen -= 6;
    while (vlen && (*v == ' ' || *v == '\t')) {
        v++;
        vlen--;
    }
    n = reference_decode((const uint8_t *)v, vlen, creds, sizeof(creds));
    return n == (long)(sizeof(want) - 1) && memcmp(creds, want, sizeof(want) - 1) == 0;
}

static void fuzz_check(const uint8_t *data, size_t size)
{
    static char head[HEAD_MAX + 64];
    char user[AUTH_USER_MAX + 1 + 8];
    struct http_request req;
    size_t len, head_len;
    enum auth_result res;

    if (size && data[0] == 1) {
        len = size - 1 < HEAD_MAX ? size - 1 : HEAD_MAX;
        memcpy(head, data + 1, len);
    } else {
        /* field values are one line: cut at the first line end */
        for (len = 0; len < size && len < HEAD_MAX - 64 && data[len] != '\r' && data[len] != '\n'; len++)
            ;
        memcpy(head, "GET /dav/ HTTP/1.1\r\nAuthorization: ", 35);
        memcpy(head + 35, data, len);
        memcpy(head + 35 + len, "\r\n\r\n", 4);
        len += 39;
    }
    head_len = http_head_length(head, len);
    if (!head_len || http_parse_head(head, head_len, &req) != 0)
        return;
    memset(user, 'Z', sizeof(user));
    res = auth_check(&st, &req, user);
    REQUIRE(res == AUTH_OK || res == AUTH_MISSING || res == AUTH_BAD);
    REQUIRE(user[AUTH_USER_MAX + 1] == 'Z');
    REQUIRE((res == AUTH_OK) == credentials_right(&req));
    if (res == AUTH_OK)
        REQUIRE(strcmp(user, USER_NAME) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready)
        setup();
    fuzz_decode(data, size);
    fuzz_check(data, size);
    return 0;
}
