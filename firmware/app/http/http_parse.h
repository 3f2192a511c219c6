/* HTTP/1.1 request-head parsing (RFC 9112 sections 2-3, 5, 6, 9).
 * Pure functions over a byte buffer: no lwIP, no allocation, so the host
 * build can unit-test and fuzz them. */
#ifndef LITEDAV_HTTP_PARSE_H
#define LITEDAV_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

enum http_method {
    HTTP_GET, HTTP_HEAD, HTTP_POST, HTTP_PUT, HTTP_DELETE, HTTP_OPTIONS,
    HTTP_PROPFIND, HTTP_PROPPATCH, HTTP_MKCOL, HTTP_MKCALENDAR, HTTP_REPORT, HTTP_COPY, HTTP_MOVE,
    HTTP_METHOD_OTHER,
};

struct http_request {
    enum http_method method;
    const char *method_str;  /* points into the buffer, not NUL-terminated */
    size_t method_len;
    const char *target;      /* request-target, points into the buffer */
    size_t target_len;
    int version_minor;       /* HTTP/1.<minor> */
    int keep_alive;          /* after Connection and the version default */
    int has_content_length;
    uint32_t content_length;
    int chunked;             /* Transfer-Encoding: chunked */
    int expect_continue;     /* Expect: 100-continue, in HTTP/1.1 */
    const char *head;        /* the parsed buffer, for header look-ups */
    size_t head_len;         /* bytes of request line + headers + blank line */
};

/* Length of the request head (through the empty line) if the buffer holds a
 * complete one, else 0. Accepts CRLF and bare LF line ends. */
size_t http_head_length(const char *buf, size_t len);

/* Parse a complete head of head_len bytes. Returns 0 on success, otherwise the
 * HTTP status to answer with (400 malformed, 417 unknown expectation, 501
 * unsupported transfer coding, 505 version). req keeps pointers into buf. */
int http_parse_head(const char *buf, size_t head_len, struct http_request *req);

/* Field look-up by re-scanning the parsed head (nothing is stored per field).
 * Finds the next field line named `name` (case-insensitive) at or after
 * *pos, which starts at 0 and is advanced past the line found. Returns the
 * value with surrounding whitespace trimmed (not NUL-terminated, length in
 * *value_len), or NULL when there are no more such lines. */
const char *http_header_next(const struct http_request *req, const char *name, size_t *pos,
                             size_t *value_len);

/* The first field line named `name`, or NULL. */
const char *http_header(const struct http_request *req, const char *name, size_t *value_len);

/* Case-insensitive compare of a counted string with a C string. */
int http_token_equals(const char *s, size_t len, const char *lit);

const char *http_reason(int status);

#endif
