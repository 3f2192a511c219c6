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

#ifndef HTTP_FIELDS_INDEXED
#define HTTP_FIELDS_INDEXED 16   /* ab sends 4 field lines, CalDAV clients 6-12 */
#endif

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
    /* Where each field line starts in head and how long its name is, found
     * by the parse, so that a look-up compares names only: a small GET's
     * precondition checks scanned the whole head twice (bench/README.md).
     * A head of more lines than this is scanned as before. */
    uint8_t fields;                             /* field lines indexed */
    uint8_t fields_all;                         /* ... and they are all of them */
    uint8_t field_name_len[HTTP_FIELDS_INDEXED];
    uint16_t field_at[HTTP_FIELDS_INDEXED];
};

/* Length of the request head (through the empty line) if the buffer holds a
 * complete one, else 0. Accepts CRLF and bare LF line ends. */
size_t http_head_length(const char *buf, size_t len);

/* Where the bytes seen so far stand in a request head: empty lines before the
 * request-line (HTTP_SCAN_LEAD, RFC 9112 section 2.2), inside a line, just
 * after a line's LF (and a CR), or at the LF (CR) LF that ends the head. */
enum http_head_scan_state {
    HTTP_SCAN_LEAD, HTTP_SCAN_LINE, HTTP_SCAN_LF, HTTP_SCAN_LF_CR, HTTP_SCAN_DONE
};

/* Feed buf[0..len) to the head scan in *state (an enum http_head_scan_state).
 * Returns how many bytes it took: all of them, or up to and including the LF
 * that ends the head (*state is then HTTP_SCAN_DONE; 0 if it already was).
 * Lines are found with memchr, so a head costs about one word load per four
 * bytes where memchr goes a word at a time. */
size_t http_head_scan(uint8_t *state, const char *buf, size_t len);

/* Parse a complete head of head_len bytes. Returns 0 on success, otherwise the
 * HTTP status to answer with (400 malformed, 417 unknown expectation, 501
 * unsupported transfer coding, 505 version). req keeps pointers into buf. */
int http_parse_head(const char *buf, size_t head_len, struct http_request *req);

/* Field look-up through the parse's index of field lines (a re-scan of the
 * head when it has more than HTTP_FIELDS_INDEXED). Finds the next field line
 * named `name` (case-insensitive) at or after *pos, which starts at 0 and is
 * advanced past the line found. Returns the value with surrounding whitespace
 * trimmed (not NUL-terminated, length in *value_len), or NULL when there are
 * no more such lines. */
const char *http_header_next(const struct http_request *req, const char *name, size_t *pos,
                             size_t *value_len);

/* The first field line named `name`, or NULL. */
const char *http_header(const struct http_request *req, const char *name, size_t *value_len);

/* Case-insensitive compare of a counted string with a C string. */
int http_token_equals(const char *s, size_t len, const char *lit);

const char *http_reason(int status);

#endif
