/* Incremental decoder of the chunked transfer coding (RFC 9112 section 7.1).
 *
 * Pure and allocation-free: the decoder is a small struct fed with whatever
 * bytes have arrived, in any split, and it hands back spans of chunk data
 * that point into the caller's input (no copy). Chunk extensions (7.1.1) and
 * trailer fields (7.1.2) are checked for syntax, bounded in length and
 * otherwise ignored. */
#ifndef LITEDAV_HTTP_CHUNKED_H
#define LITEDAV_HTTP_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

/* Longest chunk-size line (size + extensions) and longest trailer section
 * accepted; longer is an error, so a peer cannot keep us parsing forever. */
#define HTTP_CHUNKED_LINE_MAX 1024
#define HTTP_CHUNKED_TRAILER_MAX 4096

enum http_chunked_result {
    HTTP_CHUNKED_MORE,      /* all input used (or a data span returned): feed more */
    HTTP_CHUNKED_DONE,      /* last-chunk and trailers read; *used ends the message */
    HTTP_CHUNKED_ERROR,     /* malformed framing: answer 400 and close */
    HTTP_CHUNKED_TOO_LARGE, /* announced chunk sizes exceed max_body: 413 and close */
};

struct http_chunked {
    uint8_t state;
    uint8_t size_digits;     /* significant hex digits of the current chunk-size */
    uint16_t line_len;       /* bytes of the current chunk-size line */
    uint16_t trailer_len;    /* bytes of trailer section so far */
    uint32_t chunk_left;     /* data bytes of the current chunk not yet returned */
    uint32_t max_body;       /* limit on the sum of chunk sizes */
    uint32_t body_len;       /* sum of chunk sizes announced so far */
};

void http_chunked_init(struct http_chunked *d, uint32_t max_body);

/* Decode from in[0..len). Stops at the first span of chunk data, which is
 * returned as in[*data_off .. *data_off + *data_len) and counted in *used;
 * otherwise *data_len is 0. *used is how many input bytes were consumed: the
 * caller passes the rest (in + *used) in the next call. After DONE, ERROR or
 * TOO_LARGE the decoder stays in that result. */
enum http_chunked_result http_chunked_feed(struct http_chunked *d, const char *in, size_t len,
                                           size_t *used, size_t *data_off, size_t *data_len);

#endif
