/* libFuzzer target for the HTTP request parsers (firmware/app/http/http_parse.c,
 * http_chunked.c, http_cond.c): the parsers that see every byte a client sends.
 *
 * For each input:
 *   - as a request head: http_head_length must end inside the input; a parse
 *     must answer 0 or one of its documented statuses, and on success every
 *     pointer it returns (method, target, header values) lies inside the head;
 *   - as a chunked body: decoding it whole and decoding it in pieces (sizes
 *     taken from the input itself) must give the same data and the same end;
 *   - as an If-Match / If-None-Match field: the entity-tag list matcher must
 *     answer one of its three results, strong and weak.
 * Built with clang -fsanitize=fuzzer,address,undefined; a failed invariant
 * aborts, which libFuzzer reports as a crash with the input saved. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_chunked.h"
#include "http/http_cond.h"
#include "http/http_parse.h"

#define REQUIRE(cond) \
    do { if (!(cond)) { fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

#define MAX_BODY (64u * 1024u)

static int inside(const char *p, size_t n, const char *buf, size_t len)
{
    return n == 0 || (p >= buf && p + n <= buf + len);
}

static void fuzz_head(const char *in, size_t len)
{
    static const char *names[] = { "Host", "Content-Length", "If-Match", "Depth", "Authorization" };
    struct http_request req;
    size_t head = http_head_length(in, len), i;
    int status;

    REQUIRE(head <= len);
    if (head == 0)
        return;
    status = http_parse_head(in, head, &req);
    REQUIRE(status == 0 || status == 400 || status == 417 || status == 501 || status == 505);
    if (status != 0)
        return;
    REQUIRE(inside(req.method_str, req.method_len, in, head) && req.method_len > 0);
    REQUIRE(inside(req.target, req.target_len, in, head) && req.target_len > 0);
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t pos = 0, value_len, lines = 0;
        const char *value;
        while ((value = http_header_next(&req, names[i], &pos, &value_len)) != NULL) {
            REQUIRE(inside(value, value_len, in, head));
            REQUIRE(++lines <= head);
        }
    }
}

/* Decode in pieces of at most `piece` bytes (0: all at once); returns the
 * result, the decoded bytes in out[0..*out_len) and the input used. */
static enum http_chunked_result decode(const char *in, size_t len, size_t piece, char *out,
                                       size_t *out_len, size_t *consumed)
{
    struct http_chunked d;
    enum http_chunked_result r = HTTP_CHUNKED_MORE;
    size_t at = 0;

    http_chunked_init(&d, MAX_BODY);
    *out_len = 0;
    while (at < len && r == HTTP_CHUNKED_MORE) {
        size_t n = piece ? (len - at < piece ? len - at : piece) : len - at, off = 0;
        while (off < n && r == HTTP_CHUNKED_MORE) {
            size_t used = 0, data_off = 0, data_len = 0;
            r = http_chunked_feed(&d, in + at + off, n - off, &used, &data_off, &data_len);
            REQUIRE(used <= n - off && data_off + data_len <= used);
            if (data_len) {
                REQUIRE(*out_len + data_len <= len);
                memcpy(out + *out_len, in + at + off + data_off, data_len);
                *out_len += data_len;
            }
            REQUIRE(used > 0 || r != HTTP_CHUNKED_MORE || n - off == 0);
            off += used;
        }
        at += off;
    }
    *consumed = at;
    return r;
}

static void fuzz_chunked(const char *in, size_t len)
{
    static char whole[1 << 16], split[1 << 16];
    size_t whole_len, split_len, whole_used, split_used;
    size_t piece = len ? 1 + (size_t)(unsigned char)in[0] % 7 : 1;
    enum http_chunked_result a, b;

    if (len > sizeof(whole))
        return;
    a = decode(in, len, 0, whole, &whole_len, &whole_used);
    b = decode(in, len, piece, split, &split_len, &split_used);
    REQUIRE(a == b);
    if (a != HTTP_CHUNKED_ERROR && a != HTTP_CHUNKED_TOO_LARGE) {
        REQUIRE(whole_len == split_len && memcmp(whole, split, whole_len) == 0);
        REQUIRE(a != HTTP_CHUNKED_DONE || whole_used == split_used);
    }
}

static void fuzz_etags(const char *in, size_t len)
{
    static const char etag[] = "\"abc\"", weak[] = "W/\"abc\"";
    int strong;
    for (strong = 0; strong <= 1; strong++) {
        enum http_etag_match m = http_etag_list_match(in, len, etag, sizeof(etag) - 1, strong);
        REQUIRE(m == HTTP_ETAG_INVALID || m == HTTP_ETAG_NO_MATCH || m == HTTP_ETAG_MATCH);
        m = http_etag_list_match(in, len, weak, sizeof(weak) - 1, strong);
        REQUIRE(m == HTTP_ETAG_INVALID || m == HTTP_ETAG_NO_MATCH || m == HTTP_ETAG_MATCH);
        m = http_etag_list_match(in, len, NULL, 0, strong);
        REQUIRE(m == HTTP_ETAG_INVALID || m == HTTP_ETAG_NO_MATCH || m == HTTP_ETAG_MATCH);
    }
    (void)http_etag_valid(in, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    fuzz_head(in, size);
    fuzz_chunked(in, size);
    fuzz_etags(in, size);
    return 0;
}
