/* Unit tests for the incremental chunked decoder (firmware/app/http/http_chunked.c).
 *
 * Every input is fed from malloc'd pieces of exactly their length, so a read
 * past what was given is reported by AddressSanitizer. Each case runs whole,
 * byte by byte and in a few other splits: the outcome, the decoded data and
 * the number of bytes consumed must not depend on the split. The last line
 * printed is "N passed, M failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "http/http_chunked.h"

#define LEN(lit) (sizeof(lit) - 1)
#define OUT_MAX 8192

struct outcome {
    enum http_chunked_result result;
    size_t used;            /* input consumed when the result was reached */
    char data[OUT_MAX];
    size_t data_len;
};

/* Feed s[0..n) in pieces of the given sizes (cycled); 0 = all at once.
 * Stops at the first result other than MORE. */
static void decode(const char *s, size_t n, size_t piece, uint32_t max_body, struct outcome *o)
{
    struct http_chunked d;
    size_t pos = 0;

    http_chunked_init(&d, max_body);
    memset(o, 0, sizeof(*o));
    o->result = HTTP_CHUNKED_MORE;
    while (pos < n && o->result == HTTP_CHUNKED_MORE) {
        size_t step = piece && piece < n - pos ? piece : n - pos, off = 0;
        char *b = malloc(step);
        if (!b)
            exit(2);
        memcpy(b, s + pos, step);
        /* a piece may hold framing, data and more framing: feed until used */
        while (off < step && o->result == HTTP_CHUNKED_MORE) {
            size_t used, doff, dlen;
            o->result = http_chunked_feed(&d, b + off, step - off, &used, &doff, &dlen);
            if (used > step - off || (dlen && doff + dlen > used)) {
                fprintf(stderr, "    feed overran: used %zu of %zu\n", used, step - off);
                o->result = (enum http_chunked_result)-1;
                break;
            }
            if (dlen && o->data_len + dlen <= OUT_MAX) {
                memcpy(o->data + o->data_len, b + off + doff, dlen);
                o->data_len += dlen;
            }
            if (used == 0 && o->result == HTTP_CHUNKED_MORE) {
                fprintf(stderr, "    no progress on %zu bytes\n", step - off);
                o->result = (enum http_chunked_result)-1;
                break;
            }
            off += used;
        }
        free(b);
        pos += off;
    }
    o->used = pos;
}

static const size_t splits[] = {0, 1, 2, 3, 5, 7, 64};

/* Expect the same outcome for every split. want_used: where the message ends
 * (for DONE), or 0 for "don't care". */
static void expect_case(const char *s, size_t n, uint32_t max_body,
                        enum http_chunked_result want, const char *want_data, size_t want_data_len,
                        size_t want_used, int line)
{
    size_t k;
    static struct outcome o;
    for (k = 0; k < sizeof(splits) / sizeof(splits[0]); k++) {
        int ok;
        decode(s, n, splits[k], max_body, &o);
        ok = o.result == want;
        if (want == HTTP_CHUNKED_DONE || want == HTTP_CHUNKED_MORE)
            ok &= o.data_len == want_data_len && memcmp(o.data, want_data, want_data_len) == 0;
        if (want_used)
            ok &= o.used == want_used;
        if (!check_one(ok, "chunked case", __FILE__, line)) {
            fprintf(stderr, "    split %zu: result %d (want %d), data %zu bytes (want %zu), "
                    "used %zu (want %zu)\n", splits[k], (int)o.result, (int)want, o.data_len,
                    want_data_len, o.used, want_used);
            return;
        }
    }
}

#define DONE(lit, data) \
    expect_case(lit, LEN(lit), 1u << 20, HTTP_CHUNKED_DONE, data, LEN(data), LEN(lit), __LINE__)
/* the message ends before the last `extra` bytes of lit (they belong to the next) */
#define DONE_AT(lit, data, extra) \
    expect_case(lit, LEN(lit), 1u << 20, HTTP_CHUNKED_DONE, data, LEN(data), LEN(lit) - (extra), \
                __LINE__)
#define ERROR(lit) expect_case(lit, LEN(lit), 1u << 20, HTTP_CHUNKED_ERROR, "", 0, 0, __LINE__)
#define MORE(lit, data) \
    expect_case(lit, LEN(lit), 1u << 20, HTTP_CHUNKED_MORE, data, LEN(data), LEN(lit), __LINE__)

static void test_valid(void)
{
    DONE("0\r\n\r\n", "");
    DONE("5\r\nhello\r\n0\r\n\r\n", "hello");
    DONE("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world");
    DONE("000\r\n\r\n", "");                          /* last-chunk = 1*"0" */
    DONE("0005\r\nhello\r\n0\r\n\r\n", "hello");      /* leading zeros */
    DONE("a\r\n0123456789\r\n0\r\n\r\n", "0123456789");
    DONE("A\r\n0123456789\r\n0\r\n\r\n", "0123456789");
    DONE("1\r\n\0\r\n0\r\n\r\n", "\0");               /* data is opaque */
    DONE("2\r\n\r\n\r\n0\r\n\r\n", "\r\n");           /* even CRLF in the data */
    DONE("3\r\n0\r\n\r\n0\r\n\r\n", "0\r\n");
    /* chunk extensions (section 7.1.1): ignored */
    DONE("5;name\r\nhello\r\n0\r\n\r\n", "hello");
    DONE("5;name=value\r\nhello\r\n0\r\n\r\n", "hello");
    DONE("5;a=1;b=2;c\r\nhello\r\n0;last\r\n\r\n", "hello");
    DONE("5 ; a = 1 ;\tb\r\nhello\r\n0\r\n\r\n", "hello");   /* BWS */
    DONE("5;a=\"quoted; \\\"value\\\"\"\r\nhello\r\n0\r\n\r\n", "hello");
    DONE("5;a=\"\"\r\nhello\r\n0\r\n\r\n", "hello");
    DONE("5;a=\"\xc3\xa9\"\r\nhello\r\n0\r\n\r\n", "hello"); /* obs-text */
    /* trailers (section 7.1.2): read and ignored */
    DONE("5\r\nhello\r\n0\r\nX-Sum: abc\r\n\r\n", "hello");
    DONE("0\r\nA: 1\r\nB:\r\nC:\t x \r\n\r\n", "");
    /* what follows the message is not consumed (pipelining) */
    DONE_AT("5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n", "hello", LEN("GET / HTTP/1.1\r\n\r\n"));
    DONE_AT("0\r\n\r\n0\r\n\r\n", "", 5);
}

static void test_incomplete(void)
{
    MORE("", "");
    MORE("5", "");
    MORE("5\r", "");
    MORE("5\r\n", "");
    MORE("5\r\nhel", "hel");
    MORE("5\r\nhello", "hello");
    MORE("5\r\nhello\r\n", "hello");
    MORE("5\r\nhello\r\n0\r\n", "hello");
    MORE("5\r\nhello\r\n0\r\nX: y\r\n", "hello");
    MORE("5\r\nhello\r\n0\r\n\r", "hello");
    MORE("5;a=\"unterminated", "");
}

static void test_invalid(void)
{
    ERROR("\r\n");                     /* no size */
    ERROR("x\r\n");
    ERROR("-1\r\n");
    ERROR("+1\r\n");
    ERROR("0x5\r\nhello\r\n0\r\n\r\n");
    ERROR(" 5\r\nhello\r\n0\r\n\r\n");   /* whitespace before the size */
    ERROR("5 \r\nhello\r\n0\r\n\r\n");   /* BWS must lead to ';' */
    ERROR("5\nhello\r\n0\r\n\r\n");      /* bare LF */
    ERROR("5\rhello\r\n0\r\n\r\n");      /* bare CR */
    ERROR("5\r\nhelloX\r\n0\r\n\r\n");   /* data longer than its size */
    ERROR("5\r\nhello\n0\r\n\r\n");
    ERROR("5\r\nhell\r\n0\r\n\r\n");     /* shorter: the size counts the CRLF as data */
    ERROR("5;\r\nhello\r\n0\r\n\r\n");   /* empty extension name */
    ERROR("5;=x\r\nhello\r\n0\r\n\r\n");
    ERROR("5;a=\r\nhello\r\n0\r\n\r\n"); /* empty value */
    ERROR("5;a b\r\nhello\r\n0\r\n\r\n");
    ERROR("5;a=b c\r\nhello\r\n0\r\n\r\n");
    ERROR("5;a=\"x\"y\r\nhello\r\n0\r\n\r\n");
    ERROR("5;a=\"\x01\"\r\nhello\r\n0\r\n\r\n");
    ERROR("5;a(\r\nhello\r\n0\r\n\r\n");
    ERROR("5;a=\"x\" \r\nhello\r\n0\r\n\r\n");
    ERROR("0\r\nX-Bad\r\n\r\n");          /* trailer without colon */
    ERROR("0\r\n X: folded\r\n\r\n");     /* obs-fold */
    ERROR("0\r\n: novalue\r\n\r\n");
    ERROR("0\r\nX: a\x01\r\n\r\n");
    ERROR("0\r\nX: a\n\r\n");
    ERROR("0\r\n\n");
    ERROR("0\r\n\rX");
}

#define TAIL "\r\nhello\r\n0\r\n\r\n"

static void test_limits(void)
{
    static char buf[HTTP_CHUNKED_TRAILER_MAX + 200];
    size_t n;

    /* a size that overflows 32 bits is too large, not wrapped */
    expect_case("100000000\r\n", LEN("100000000\r\n"), 0xffffffffu, HTTP_CHUNKED_TOO_LARGE, "",
                0, 0, __LINE__);
    expect_case("FFFFFFFFFFFFFFFFF\r\n", LEN("FFFFFFFFFFFFFFFFF\r\n"), 0xffffffffu,
                HTTP_CHUNKED_TOO_LARGE, "", 0, 0, __LINE__);
    expect_case("00000000000000000001\r\nx\r\n0\r\n\r\n",
                LEN("00000000000000000001\r\nx\r\n0\r\n\r\n"), 10, HTTP_CHUNKED_DONE, "x", 1,
                0, __LINE__);
    /* the body limit counts announced sizes: refused before the data arrives */
    expect_case("5\r\nhello\r\n", LEN("5\r\nhello\r\n"), 5, HTTP_CHUNKED_MORE, "hello", 5, 0,
                __LINE__);
    expect_case("5\r\nhello\r\n1\r\n", LEN("5\r\nhello\r\n1\r\n"), 5, HTTP_CHUNKED_TOO_LARGE,
                "", 0, 0, __LINE__);
    expect_case("6\r\n", LEN("6\r\n"), 5, HTTP_CHUNKED_TOO_LARGE, "", 0, 0, __LINE__);
    expect_case("6", LEN("6"), 5, HTTP_CHUNKED_MORE, "", 0, 0, __LINE__); /* more digits may come */
    expect_case("6;", LEN("6;"), 5, HTTP_CHUNKED_TOO_LARGE, "", 0, 0, __LINE__);
    expect_case("0\r\n\r\n", LEN("0\r\n\r\n"), 0, HTTP_CHUNKED_DONE, "", 0, 0, __LINE__);

    /* long chunk-size lines and trailer sections are errors */
    memset(buf, 0, sizeof(buf));
    n = (size_t)snprintf(buf, sizeof(buf), "5;");
    while (n < HTTP_CHUNKED_LINE_MAX - 10)
        buf[n++] = 'a';
    memcpy(buf + n, TAIL, LEN(TAIL));
    expect_case(buf, n + LEN(TAIL), 100, HTTP_CHUNKED_DONE, "hello", 5, n + LEN(TAIL), __LINE__);
    while (n < HTTP_CHUNKED_LINE_MAX + 10)
        buf[n++] = 'a';
    memcpy(buf + n, TAIL, LEN(TAIL));
    expect_case(buf, n + LEN(TAIL), 100, HTTP_CHUNKED_ERROR, "", 0, 0, __LINE__);
    /* zeros count against the line too: no endless size line */
    memset(buf, '0', HTTP_CHUNKED_LINE_MAX + 5);
    expect_case(buf, HTTP_CHUNKED_LINE_MAX + 5, 100, HTTP_CHUNKED_ERROR, "", 0, 0, __LINE__);

    n = (size_t)snprintf(buf, sizeof(buf), "0\r\n");
    while (n < HTTP_CHUNKED_TRAILER_MAX + 100) {
        memcpy(buf + n, "X-Pad: 0123456789\r\n", 19);
        n += 19;
    }
    memcpy(buf + n, "\r\n", 2);
    expect_case(buf, n + 2, 100, HTTP_CHUNKED_ERROR, "", 0, 0, __LINE__);
}

/* After DONE, ERROR or TOO_LARGE the decoder stays put and reads nothing. */
static void test_sticky(void)
{
    struct http_chunked d;
    size_t used, off, len;
    http_chunked_init(&d, 100);
    CHECK(http_chunked_feed(&d, "0\r\n\r\n", 5, &used, &off, &len) == HTTP_CHUNKED_DONE);
    CHECK(used == 5 && len == 0);
    CHECK(http_chunked_feed(&d, "5\r\nhello", 8, &used, &off, &len) == HTTP_CHUNKED_DONE);
    CHECK(used == 0 && len == 0);
    http_chunked_init(&d, 100);
    CHECK(http_chunked_feed(&d, "z", 1, &used, &off, &len) == HTTP_CHUNKED_ERROR);
    CHECK(http_chunked_feed(&d, "0\r\n\r\n", 5, &used, &off, &len) == HTTP_CHUNKED_ERROR);
    CHECK(used == 0);
    http_chunked_init(&d, 1);
    CHECK(http_chunked_feed(&d, "2\r\n", 3, &used, &off, &len) == HTTP_CHUNKED_TOO_LARGE);
    CHECK(http_chunked_feed(&d, "0\r\n\r\n", 5, &used, &off, &len) == HTTP_CHUNKED_TOO_LARGE);
    /* one data span per call, pointing into the input */
    http_chunked_init(&d, 100);
    CHECK(http_chunked_feed(&d, "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", 22, &used, &off, &len) ==
          HTTP_CHUNKED_MORE);
    CHECK(off == 3 && len == 3 && used == 6);
    CHECK(d.body_len == 3);
}

/* A large body through many chunks, sizes in hex of every width. */
static void test_many_chunks(void)
{
    static char in[OUT_MAX * 2], want[OUT_MAX];
    size_t n = 0, w = 0, size = 1;
    while (w + size < OUT_MAX - 1) {
        size_t k;
        n += (size_t)sprintf(in + n, size % 2 ? "%zx\r\n" : "%zX;i=%zu\r\n", size, size);
        for (k = 0; k < size; k++) {
            char c = (char)('a' + (w + k) % 26);
            in[n++] = c;
            want[w + k] = c;
        }
        w += size;
        in[n++] = '\r';
        in[n++] = '\n';
        size = size * 3 + 1;
        if (size > 3000)
            size = 17;
    }
    memcpy(in + n, "0\r\n\r\n", 5);
    n += 5;
    expect_case(in, n, OUT_MAX, HTTP_CHUNKED_DONE, want, w, n, __LINE__);
    expect_case(in, n, (uint32_t)w - 1, HTTP_CHUNKED_TOO_LARGE, "", 0, 0, __LINE__);
}

int main(void)
{
    test_valid();
    test_incomplete();
    test_invalid();
    test_limits();
    test_sticky();
    test_many_chunks();
    return check_summary();
}
