/* Unit tests for the pure HTTP request-head parser (firmware/app/http/http_parse.c).
 *
 * Built for the host with ASan/UBSan by firmware/ports/host/Makefile. Every
 * input is copied into a malloc'd buffer of exactly its length, so a read past
 * the given length is reported by AddressSanitizer. The last line printed is
 * "N passed, M failed"; the exit status is non-zero if anything failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "http/http_parse.h"

/* ---- helpers ---------------------------------------------------------- */

static char *dup_exact(const char *s, size_t n)
{
    char *b = malloc(n ? n : 1);
    if (!b) {
        perror("malloc");
        exit(2);
    }
    if (n)
        memcpy(b, s, n);
    return b;
}

/* The last parsed buffer and its result; R's pointers point into cur_buf,
 * which stays allocated until the next parse. */
static char *cur_buf;
static struct http_request R;

/* Parse s[0..n) as a complete head. Also checks that http_head_length finds
 * the head ending exactly at n (every test head is complete). */
static int parse_n(const char *s, size_t n, int line)
{
    size_t hl;
    free(cur_buf);
    cur_buf = dup_exact(s, n);
    hl = http_head_length(cur_buf, n);
    if (!check_one(hl == n, "http_head_length(head) == strlen(head)", __FILE__, line))
        fprintf(stderr, "    head_length %zu, expected %zu\n", hl, n);
    return http_parse_head(cur_buf, n, &R);
}
/* lit must be a string literal (sizeof gives its length, NULs included). */
#define PARSE(lit) parse_n((lit), sizeof(lit) - 1, __LINE__)

/* Parse a buffer that is not (necessarily) a complete head. */
static int parse_raw(const char *s, size_t n)
{
    free(cur_buf);
    cur_buf = dup_exact(s, n);
    return http_parse_head(cur_buf, n, &R);
}

static size_t head_length_exact(const char *s, size_t n)
{
    char *b = dup_exact(s, n);
    size_t r = http_head_length(b, n);
    free(b);
    return r;
}

/* http_head_length of a literal (NULs included) */
#define HL(lit) head_length_exact((lit), sizeof(lit) - 1)
#define LEN(lit) (sizeof(lit) - 1)

static int target_is(const char *lit)
{
    return R.target && R.target_len == strlen(lit) && memcmp(R.target, lit, R.target_len) == 0;
}

static int method_str_is(const char *lit)
{
    return R.method_str && R.method_len == strlen(lit) &&
           memcmp(R.method_str, lit, R.method_len) == 0;
}

/* Expect a status (0 = accepted) for a complete head given as a literal. */
#define EXPECT_RC(lit, want)                                                  \
    do {                                                                      \
        int rc_ = PARSE(lit);                                                 \
        CHECKF(rc_ == (want), "head %s: got %d, want %d", #lit, rc_, (want)); \
    } while (0)

/* Replace every "\n" by "\r\n". Caller frees. */
static char *to_crlf(const char *s, size_t n, size_t *out_n)
{
    size_t i, j = 0, lf = 0;
    char *o;
    for (i = 0; i < n; i++)
        lf += s[i] == '\n';
    o = malloc(n + lf + 1);
    if (!o)
        exit(2);
    for (i = 0; i < n; i++) {
        if (s[i] == '\n')
            o[j++] = '\r';
        o[j++] = s[i];
    }
    *out_n = j;
    return o;
}

/* ---- http_head_length -------------------------------------------------- */

static void test_head_length_basic(void)
{
    static const char crlf[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    static const char lf[] = "GET / HTTP/1.1\nHost: a\n\n";

    CHECK(head_length_exact(crlf, strlen(crlf)) == strlen(crlf));
    CHECK(head_length_exact(lf, strlen(lf)) == strlen(lf));
    CHECK(HL("") == 0);
    CHECK(HL("\n") == 0);
    CHECK(HL("\r\n") == 0);
    CHECK(HL("\n\n") == LEN("\n\n"));
    CHECK(HL("\r\n\r\n") == LEN("\r\n\r\n"));
    CHECK(HL("\n\r\n") == LEN("\n\r\n"));
    CHECK(HL("\r\n\n") == LEN("\r\n\n"));
    /* mixed line ends */
    CHECK(HL("GET / HTTP/1.1\r\nA: b\n\r\n") == LEN("GET / HTTP/1.1\r\nA: b\n\r\n"));
    CHECK(HL("GET / HTTP/1.1\nA: b\r\n\n") == LEN("GET / HTTP/1.1\nA: b\r\n\n"));
    /* no blank line yet */
    CHECK(HL("GET / HTTP/1.1\r\nHost: a\r\n") == 0);
    CHECK(HL("GET / HTTP/1.1\r\nHost: a\r\n\r") == 0);
    /* a CR not followed by LF does not end a line */
    CHECK(HL("GET / HTTP/1.1\r\n\rX\r\n\r\n") == LEN("GET / HTTP/1.1\r\n\rX\r\n\r\n"));
    CHECK(HL("GET / HTTP/1.1\r\r\r\n") == 0);
    /* bytes after the head (a body, the next request) are not counted */
    {
        static const char two[] = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
        CHECK(head_length_exact(two, strlen(two)) == 19);
        static const char body[] = "PUT /x HTTP/1.1\nContent-Length: 4\n\n\n\n\n\n";
        CHECK(head_length_exact(body, strlen(body)) == strlen(body) - 4);
    }
    /* NUL bytes are just bytes */
    CHECK(HL("GET / HTTP/1.1\r\nX: \0\r\n\r\n") == LEN("GET / HTTP/1.1\r\nX: \0\r\n\r\n"));
}

/* Every prefix of a stream: 0 until the whole head is there, then its length. */
static void check_prefixes(const char *s, size_t n, size_t head)
{
    size_t k;
    unsigned long bad = 0;
    for (k = 0; k <= n; k++) {
        size_t want = k >= head ? head : 0;
        size_t got = head_length_exact(s, k);
        if (got != want) {
            if (!bad)
                fprintf(stderr, "    prefix %zu of %zu: got %zu, want %zu\n", k, n, got, want);
            bad++;
        }
    }
    CHECKF(bad == 0, "%lu bad prefixes", bad);
}

/* httpd's receive loop in miniature: bytes arrive in pieces of the given
 * sizes (cycled), are appended to an accumulation buffer and the head length
 * is recomputed after every piece; complete heads are cut off and parsed. */
static void feed_stream(const char *stream, size_t n, const size_t *pieces, size_t npieces,
                        const char *const *want_targets, size_t nwant)
{
    char *acc = malloc(n + 1);
    size_t acc_len = 0, pos = 0, pi = 0, found = 0;
    int all_ok = 1;

    if (!acc)
        exit(2);
    while (pos < n) {
        size_t step = pieces[pi++ % npieces];
        size_t head;
        if (step > n - pos)
            step = n - pos;
        memcpy(acc + acc_len, stream + pos, step);
        acc_len += step;
        pos += step;
        /* a piece may complete more than one head */
        while ((head = head_length_exact(acc, acc_len)) != 0) {
            char *h = dup_exact(acc, head);
            struct http_request req;
            int rc = http_parse_head(h, head, &req);
            if (found >= nwant || rc != 0 || req.target_len != strlen(want_targets[found]) ||
                memcmp(req.target, want_targets[found], req.target_len) != 0) {
                all_ok = 0;
                fprintf(stderr, "    stream head %zu (rc %d) unexpected\n", found, rc);
            }
            free(h);
            found++;
            memmove(acc, acc + head, acc_len - head);
            acc_len -= head;
        }
    }
    CHECKF(all_ok && found == nwant && acc_len == 0, "found %zu heads of %zu, %zu bytes left",
           found, nwant, acc_len);
    free(acc);
}

static void test_head_split(void)
{
    static const char *const heads[] = {
        "GET /index.html HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n",
        "GET / HTTP/1.1\nHost: x\n\n",
        "GET / HTTP/1.1\r\nHost: x\n\r\n",
        "OPTIONS * HTTP/1.0\r\n\r\n",
        "\r\n\r\n",
        "\n\n",
    };
    size_t i;

    for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
        size_t n = strlen(heads[i]);
        char *s = malloc(n + 32);
        if (!s)
            exit(2);
        check_prefixes(heads[i], n, n);
        /* with something after the head: prefixes past it still give n */
        memcpy(s, heads[i], n);
        memcpy(s + n, "GET /next HTTP/1.1\r\n\r\n", 22);
        check_prefixes(s, n + 22, n);
        free(s);
    }

    {
        static const char stream[] =
            "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
            "HEAD /b HTTP/1.1\nHost: x\n\n"
            "GET /c?q=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
            "PROPFIND /d/ HTTP/1.1\r\nDepth: 1\n\r\n";
        static const char *const targets[] = {"/a", "/b", "/c?q=1", "/d/"};
        static const size_t one[] = {1}, two[] = {2}, three[] = {3}, odd[] = {7, 1, 13, 2, 5},
                            big[] = {64}, all[] = {sizeof(stream)};
        size_t n = sizeof(stream) - 1, a, b;

        feed_stream(stream, n, one, 1, targets, 4);
        feed_stream(stream, n, two, 1, targets, 4);
        feed_stream(stream, n, three, 1, targets, 4);
        feed_stream(stream, n, odd, 5, targets, 4);
        feed_stream(stream, n, big, 1, targets, 4);
        feed_stream(stream, n, all, 1, targets, 4);
        /* every split into three pieces at positions a < b */
        for (a = 1; a < n; a += 3) {
            for (b = a + 1; b < n; b += 5) {
                size_t p[3];
                p[0] = a;
                p[1] = b - a;
                p[2] = n - b;
                feed_stream(stream, n, p, 3, targets, 4);
            }
        }
    }
}

/* ---- complete heads, line ends ----------------------------------------- */

static void test_complete_heads(void)
{
    static const char h[] =
        "GET /calendars/alice/home/?x=1 HTTP/1.1\r\n"
        "Host: litedav.local\r\n"
        "User-Agent: test\r\n"
        "Accept: */*\r\n"
        "\r\n";
    CHECK(PARSE(h) == 0);
    CHECK(R.method == HTTP_GET);
    CHECK(method_str_is("GET"));
    CHECK(R.method_str == cur_buf);
    CHECK(target_is("/calendars/alice/home/?x=1"));
    CHECK(R.version_minor == 1);
    CHECK(R.keep_alive == 1);
    CHECK(R.has_content_length == 0);
    CHECK(R.content_length == 0);
    CHECK(R.chunked == 0);
    CHECK(R.head_len == sizeof(h) - 1);

    /* no header fields at all */
    CHECK(PARSE("GET / HTTP/1.1\r\n\r\n") == 0);
    CHECK(target_is("/"));
    CHECK(R.head_len == 18);

    /* a field with an empty value, OWS around values */
    CHECK(PARSE("GET / HTTP/1.1\r\nX-Empty:\r\nX-Pad: \t v \t\r\n\r\n") == 0);

    /* obs-text in a value is allowed */
    CHECK(PARSE("GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n") == 0);

    /* the parser stops at the blank line: a body after it is not looked at */
    {
        static const char s[] = "PUT /x HTTP/1.1\r\nContent-Length: 3\r\n\r\n\x01\x02\x03";
        CHECK(parse_raw(s, sizeof(s) - 1) == 0);
        CHECK(R.has_content_length && R.content_length == 3);
    }
}

static void test_line_ends(void)
{
    static const char *const lf_heads[] = {
        "GET / HTTP/1.1\nHost: a\n\n",
        "PUT /cal/x.ics HTTP/1.1\nHost: a\nContent-Length: 700\nConnection: close\n\n",
        "GET /a HTTP/1.0\nConnection: keep-alive\n\n",
        "POST /p HTTP/1.1\nTransfer-Encoding: chunked\n\n",
        "GET / HTTP/2.0\n\n",
        "GET / HTTP/1.1\nBad : x\n\n",
        "GET / HTTP/1.1\nTransfer-Encoding: gzip\n\n",
    };
    size_t i;

    for (i = 0; i < sizeof(lf_heads) / sizeof(lf_heads[0]); i++) {
        const char *lf = lf_heads[i];
        size_t n = strlen(lf), cn;
        char *crlf = to_crlf(lf, n, &cn);
        struct http_request a, b;
        int ra, rb, rm;
        char *mixed;
        size_t j;

        ra = parse_n(lf, n, __LINE__);
        a = R;
        /* keep a's target: R points into cur_buf, which the next parse frees */
        char ta[64];
        size_t tal = a.target_len < sizeof(ta) ? a.target_len : sizeof(ta);
        if (a.target)
            memcpy(ta, a.target, tal);

        rb = parse_n(crlf, cn, __LINE__);
        b = R;
        CHECKF(ra == rb, "LF vs CRLF rc %d vs %d for %s", ra, rb, lf);
        if (ra == 0 && rb == 0) {
            CHECK(a.method == b.method && a.method_len == b.method_len);
            CHECK(a.target_len == b.target_len && memcmp(ta, b.target, tal) == 0);
            CHECK(a.version_minor == b.version_minor);
            CHECK(a.keep_alive == b.keep_alive);
            CHECK(a.has_content_length == b.has_content_length);
            CHECK(a.content_length == b.content_length);
            CHECK(a.chunked == b.chunked);
            CHECK(a.head_len == n && b.head_len == cn);
        }

        /* mixed: CRLF on every other line */
        mixed = malloc(cn);
        if (!mixed)
            exit(2);
        {
            size_t k = 0, line = 0;
            for (j = 0; j < n; j++) {
                if (lf[j] == '\n' && (line++ & 1))
                    mixed[k++] = '\r';
                mixed[k++] = lf[j];
            }
            rm = parse_n(mixed, k, __LINE__);
        }
        CHECKF(rm == ra, "mixed line ends rc %d vs %d for %s", rm, ra, lf);
        free(mixed);
        free(crlf);
    }

    /* a bare CR is not a line end */
    EXPECT_RC("GET / HTTP/1.1\rHost: a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nHost: a\r\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\n\rX: a\r\n\r\n", 400);
}

/* ---- request line ------------------------------------------------------ */

static void test_methods(void)
{
    static const struct { const char *head; enum http_method m; const char *str; } known[] = {
        {"GET / HTTP/1.1\r\n\r\n", HTTP_GET, "GET"},
        {"HEAD / HTTP/1.1\r\n\r\n", HTTP_HEAD, "HEAD"},
        {"POST / HTTP/1.1\r\n\r\n", HTTP_POST, "POST"},
        {"PUT / HTTP/1.1\r\n\r\n", HTTP_PUT, "PUT"},
        {"DELETE / HTTP/1.1\r\n\r\n", HTTP_DELETE, "DELETE"},
        {"OPTIONS * HTTP/1.1\r\n\r\n", HTTP_OPTIONS, "OPTIONS"},
        {"PROPFIND / HTTP/1.1\r\n\r\n", HTTP_PROPFIND, "PROPFIND"},
        {"PROPPATCH / HTTP/1.1\r\n\r\n", HTTP_PROPPATCH, "PROPPATCH"},
        {"MKCOL / HTTP/1.1\r\n\r\n", HTTP_MKCOL, "MKCOL"},
        {"MKCALENDAR / HTTP/1.1\r\n\r\n", HTTP_MKCALENDAR, "MKCALENDAR"},
        {"REPORT / HTTP/1.1\r\n\r\n", HTTP_REPORT, "REPORT"},
        {"COPY / HTTP/1.1\r\n\r\n", HTTP_COPY, "COPY"},
        {"MOVE / HTTP/1.1\r\n\r\n", HTTP_MOVE, "MOVE"},
        /* unknown but well-formed methods parse; the router answers 501 */
        {"BREW / HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "BREW"},
        {"PATCH / HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "PATCH"},
        {"M-SEARCH * HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "M-SEARCH"},
        /* method names are case-sensitive */
        {"get / HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "get"},
        {"Get / HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "Get"},
        /* prefixes and extensions of known names are other methods */
        {"GE / HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "GE"},
        {"GETS / HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "GETS"},
        {"MKCALENDARS / HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "MKCALENDARS"},
        {"X / HTTP/1.1\r\n\r\n", HTTP_METHOD_OTHER, "X"},
    };
    size_t i;

    for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        int rc = parse_n(known[i].head, strlen(known[i].head), __LINE__);
        CHECKF(rc == 0, "%s: rc %d", known[i].str, rc);
        CHECKF(R.method == known[i].m, "%s: method %d", known[i].str, (int)R.method);
        CHECKF(method_str_is(known[i].str), "%s: method_str", known[i].str);
    }

    /* not a token */
    EXPECT_RC(" / HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("G(T / HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GE\"T / HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("G\tT / HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET\t/ HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("G\0T / HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("G\xc3\xa9T / HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET:/ HTTP/1.1\r\n\r\n", 400);
}

static void test_targets(void)
{
    CHECK(PARSE("GET / HTTP/1.1\r\n\r\n") == 0 && target_is("/"));
    CHECK(PARSE("GET /a/b/c.ics HTTP/1.1\r\n\r\n") == 0 && target_is("/a/b/c.ics"));
    CHECK(PARSE("GET /?q=a%20b&r=%2F HTTP/1.1\r\n\r\n") == 0 && target_is("/?q=a%20b&r=%2F"));
    CHECK(PARSE("GET //double HTTP/1.1\r\n\r\n") == 0 && target_is("//double"));
    CHECK(PARSE("GET /~user/!$&'()*+,;=:@ HTTP/1.1\r\n\r\n") == 0 &&
          target_is("/~user/!$&'()*+,;=:@"));
    CHECK(PARSE("OPTIONS * HTTP/1.1\r\n\r\n") == 0 && target_is("*"));

    /* forms that are not served */
    EXPECT_RC("GET http://example.com/ HTTP/1.1\r\n\r\n", 400);   /* absolute-form */
    EXPECT_RC("CONNECT example.com:443 HTTP/1.1\r\n\r\n", 400);  /* authority-form */
    EXPECT_RC("GET ** HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET *a HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET a/b HTTP/1.1\r\n\r\n", 400);

    /* bytes not allowed in a target */
    EXPECT_RC("GET /a\x01 HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET /a\x7f HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET /a\tb HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET /a\0b HTTP/1.1\r\n\r\n", 400);

    /* request-line shape: exactly one SP between the three parts */
    EXPECT_RC("GET  / HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET /  HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1 \r\n\r\n", 400);
    EXPECT_RC(" GET / HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET /a b HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET HTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET /\r\n\r\n", 400);
    EXPECT_RC("GET\r\n\r\n", 400);
    EXPECT_RC("GET /\n\n", 400);
    EXPECT_RC("/ HTTP/1.1\r\n\r\n", 400);
}

static void test_versions(void)
{
    CHECK(PARSE("GET / HTTP/1.1\r\n\r\n") == 0 && R.version_minor == 1);
    CHECK(PARSE("GET / HTTP/1.0\r\n\r\n") == 0 && R.version_minor == 0);
    /* a higher 1.x minor is served as 1.1 would be (RFC 9110 section 2.5) */
    CHECK(PARSE("GET / HTTP/1.9\r\n\r\n") == 0 && R.version_minor == 9 && R.keep_alive == 1);

    EXPECT_RC("GET / HTTP/2.0\r\n\r\n", 505);
    EXPECT_RC("GET / HTTP/3.0\r\n\r\n", 505);
    EXPECT_RC("GET / HTTP/0.9\r\n\r\n", 505);
    EXPECT_RC("GET / HTTP/9.9\r\n\r\n", 505);
    EXPECT_RC("PRI * HTTP/2.0\r\n\r\n", 505);

    EXPECT_RC("GET / HTTP/1\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.10\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/11.1\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/2\r\n\r\n", 400);
    EXPECT_RC("GET / http/1.1\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/a.1\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1,1\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP-1.1\r\n\r\n", 400);
    EXPECT_RC("GET / FTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1x\r\n\r\n", 400);
    EXPECT_RC("GET / xHTTP/1.1\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.\x01\r\n\r\n", 400);
    EXPECT_RC("GET / garbage\r\n\r\n", 400);
    EXPECT_RC("GET / \r\n\r\n", 400);
}

static void test_empty_request_line(void)
{
    /* httpd drops CR/LF before a request line (RFC 9112 section 2.2); what
     * reaches the parser with an empty first line is malformed. */
    EXPECT_RC("\r\n\r\n", 400);
    EXPECT_RC("\n\n", 400);
    EXPECT_RC("\n\r\n", 400);
    CHECK(parse_raw("\r\nGET / HTTP/1.1\r\n\r\n", 20) == 400);
    /* degenerate lengths */
    CHECK(parse_raw("", 0) == 400);
    CHECK(parse_raw("\n", 1) == 400);
    CHECK(parse_raw("GET / HTTP/1.1", 14) == 0); /* no line end at all: still one line */
    CHECK(parse_raw(" ", 1) == 400);
    CHECK(parse_raw("GET ", 4) == 400);
    CHECK(parse_raw("GET /", 5) == 400);
    CHECK(parse_raw("GET / ", 6) == 400);
}

/* ---- header fields ----------------------------------------------------- */

static void test_field_syntax(void)
{
    /* obs-fold (RFC 9112 section 5.2) */
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\nX: a\n  b\n\n", 400);
    /* whitespace between the request line and the first field */
    EXPECT_RC("GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\n\tHost: a\r\n\r\n", 400);

    /* whitespace before the colon (RFC 9112 section 5.1) */
    EXPECT_RC("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nContent-Length : 5\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX Y: a\r\n\r\n", 400);

    /* no colon, empty name, bad name bytes */
    EXPECT_RC("GET / HTTP/1.1\r\nHost\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\n: a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\n:\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX(: a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX\0: a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX\xc3\xa9: a\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX\x7f: a\r\n\r\n", 400);

    /* well-formed names with unusual tchars, colons inside values */
    EXPECT_RC("GET / HTTP/1.1\r\nX-A_b.c!#$%&'*+^`|~9: a\r\n\r\n", 0);
    EXPECT_RC("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", 0);
}

static void test_field_values_ctl(void)
{
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX: \x1f\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX: \0\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\x1b[0m\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\vb\r\n\r\n", 400);
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\fb\r\n\r\n", 400);
    /* HTAB and SP are allowed inside a value */
    EXPECT_RC("GET / HTTP/1.1\r\nX: a\tb c\r\n\r\n", 0);
    /* a control character in an ignored field is still an error */
    EXPECT_RC("GET / HTTP/1.1\r\nUser-Agent: x\x02y\r\n\r\n", 400);
}

static void test_content_length(void)
{
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n") == 0);
    CHECK(R.has_content_length == 1 && R.content_length == 0);
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length: 700\r\n\r\n") == 0);
    CHECK(R.has_content_length == 1 && R.content_length == 700);
    CHECK(PARSE("PUT /x HTTP/1.1\r\ncontent-length: 12\r\n\r\n") == 0 && R.content_length == 12);
    CHECK(PARSE("PUT /x HTTP/1.1\r\nCONTENT-LENGTH: 12\r\n\r\n") == 0 && R.content_length == 12);
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length:12\r\n\r\n") == 0 && R.content_length == 12);
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length: \t12 \t\r\n\r\n") == 0 &&
          R.content_length == 12);
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length: 007\r\n\r\n") == 0 && R.content_length == 7);
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length: 4294967295\r\n\r\n") == 0 &&
          R.content_length == 4294967295u);
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length: 00000000000000000000000001\r\n\r\n") == 0 &&
          R.content_length == 1);
    CHECK(PARSE("GET / HTTP/1.1\r\nContent-Length-X: 5\r\n\r\n") == 0 && !R.has_content_length);

    /* too large: 2^32 and beyond, including values that overflow 64 bits */
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 4294967296\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 10000000000\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 99999999999999999999999999999999\r\n\r\n", 400);

    /* not a 1*DIGIT */
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length:\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: \r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: +1\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 1a\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 1.0\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n", 400);
    /* a list, even of equal values, is refused (RFC 9110 section 8.6 allows either) */
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400);

    /* repeated fields: equal is fine, conflicting is an error (RFC 9112 section 6.3) */
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n") == 0 &&
          R.has_content_length && R.content_length == 5);
    CHECK(PARSE("PUT /x HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 005\r\n\r\n") == 0 &&
          R.content_length == 5);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 4294967296\r\n\r\n", 400);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n"
              "Content-Length: 7\r\n\r\n", 400);
}

static void test_transfer_encoding(void)
{
    CHECK(PARSE("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == 0);
    CHECK(R.chunked == 1 && R.has_content_length == 0);
    CHECK(PARSE("POST /x HTTP/1.1\r\ntransfer-encoding: Chunked\r\n\r\n") == 0 && R.chunked == 1);
    CHECK(PARSE("POST /x HTTP/1.1\r\nTransfer-Encoding:  chunked \t\r\n\r\n") == 0 &&
          R.chunked == 1);
    /* empty list elements are allowed (RFC 9110 section 5.6.1) */
    CHECK(PARSE("POST /x HTTP/1.1\r\nTransfer-Encoding: , chunked,\r\n\r\n") == 0 &&
          R.chunked == 1);
    CHECK(PARSE("GET / HTTP/1.1\r\n\r\n") == 0 && R.chunked == 0);

    /* codings this server does not implement: 501 (RFC 9112 section 6.1) */
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: deflate\r\n\r\n", 501);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n", 501);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: chunkedx\r\n\r\n", 501);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", 501);
    /* gzip under chunked: framing is fine, but gzip is not implemented */
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n"
              "Transfer-Encoding: chunked\r\n\r\n", 501);

    /* chunked not the final coding: length unknowable, 400 (RFC 9112 section 6.3) */
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
              "Transfer-Encoding: gzip\r\n\r\n", 400);
    /* chunked twice (RFC 9112 section 6.1: MUST NOT apply chunked more than once) */
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
              "Transfer-Encoding: chunked\r\n\r\n", 400);
    /* no coding at all */
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", 400);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: ,\r\n\r\n", 400);

    /* with Content-Length: request smuggling guard, either order (section 6.3) */
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400);
    EXPECT_RC("POST /x HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
    EXPECT_RC("POST /x HTTP/1.1\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
    EXPECT_RC("POST /x HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: gzip\r\n\r\n", 400);
    EXPECT_RC("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\n", 400);

    /* Transfer-Encoding in HTTP/1.0: framing is faulty (RFC 9112 section 6.1) */
    EXPECT_RC("POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
}

static void test_connection(void)
{
    /* defaults (RFC 9112 section 9.3) */
    CHECK(PARSE("GET / HTTP/1.1\r\n\r\n") == 0 && R.keep_alive == 1);
    CHECK(PARSE("GET / HTTP/1.0\r\n\r\n") == 0 && R.keep_alive == 0);

    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: close\r\n\r\n") == 0 && R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n") == 0 && R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.1\r\nconnection: CLOSE\r\n\r\n") == 0 && R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n") == 0 && R.keep_alive == 1);
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: te, close\r\n\r\n") == 0 && R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: upgrade ,\tclose ,\r\n\r\n") == 0 &&
          R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n") == 0 &&
          R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n") == 0 &&
          R.keep_alive == 0);
    /* tokens are matched whole */
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: closed\r\n\r\n") == 0 && R.keep_alive == 1);
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection: xclose\r\n\r\n") == 0 && R.keep_alive == 1);
    CHECK(PARSE("GET / HTTP/1.1\r\nX-Connection: close\r\n\r\n") == 0 && R.keep_alive == 1);
    CHECK(PARSE("GET / HTTP/1.1\r\nConnection:\r\n\r\n") == 0 && R.keep_alive == 1);

    CHECK(PARSE("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") == 0 && R.keep_alive == 1);
    CHECK(PARSE("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n") == 0 && R.keep_alive == 1);
    CHECK(PARSE("GET / HTTP/1.0\r\nConnection: close\r\n\r\n") == 0 && R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n") == 0 &&
          R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.0\r\nConnection: keep-alived\r\n\r\n") == 0 && R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.0\r\nKeep-Alive: timeout=5\r\n\r\n") == 0 && R.keep_alive == 0);
    CHECK(PARSE("GET / HTTP/1.0\nConnection: keep-alive\n\n") == 0 && R.keep_alive == 1);
}

/* ---- small helpers exported by http_parse ------------------------------ */

static void test_helpers(void)
{
    CHECK(http_token_equals("chunked", 7, "chunked"));
    CHECK(http_token_equals("ChUnKeD", 7, "chunked"));
    CHECK(!http_token_equals("chunke", 6, "chunked"));
    CHECK(!http_token_equals("chunkedx", 8, "chunked"));
    CHECK(http_token_equals("", 0, ""));
    CHECK(!http_token_equals("", 0, "x"));
    CHECK(!http_token_equals("a\0", 2, "a"));
    /* '@' (0x40) and '`' (0x60) must not fold onto each other or onto letters */
    CHECK(!http_token_equals("@", 1, "`"));
    CHECK(!http_token_equals("[", 1, "{"));

    CHECK(strcmp(http_reason(200), "OK") == 0);
    CHECK(strcmp(http_reason(400), "Bad Request") == 0);
    CHECK(strcmp(http_reason(501), "Not Implemented") == 0);
    CHECK(strcmp(http_reason(505), "HTTP Version Not Supported") == 0);
    CHECK(strcmp(http_reason(431), "Request Header Fields Too Large") == 0);
    CHECK(strcmp(http_reason(799), "Unknown") == 0);
}

/* ---- Expect (RFC 9110 section 10.1.1) ----------------------------------- */

static void test_expect(void)
{
    EXPECT_RC("PUT /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n", 0);
    CHECK(R.expect_continue == 1);
    EXPECT_RC("PUT /x HTTP/1.1\r\nExpect: 100-Continue\r\n\r\n", 0);
    CHECK(R.expect_continue == 1); /* the token is case-insensitive */
    EXPECT_RC("PUT /x HTTP/1.1\r\nExpect:  100-continue , \r\n\r\n", 0);
    CHECK(R.expect_continue == 1);
    EXPECT_RC("PUT /x HTTP/1.1\r\nContent-Length: 3\r\n\r\n", 0);
    CHECK(R.expect_continue == 0);
    EXPECT_RC("PUT /x HTTP/1.1\r\nExpect:\r\n\r\n", 0);
    CHECK(R.expect_continue == 0);
    /* HTTP/1.0: MUST be ignored */
    EXPECT_RC("PUT /x HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", 0);
    CHECK(R.expect_continue == 0);
    /* anything else: 417 */
    EXPECT_RC("PUT /x HTTP/1.1\r\nExpect: 200-ok\r\n\r\n", 417);
    EXPECT_RC("PUT /x HTTP/1.1\r\nExpect: 100-continue, foo\r\n\r\n", 417);
    EXPECT_RC("PUT /x HTTP/1.1\r\nExpect: 100-continuex\r\n\r\n", 417);
    EXPECT_RC("PUT /x HTTP/1.1\r\nExpect: 100-continue=1\r\n\r\n", 417);
    CHECK(strcmp(http_reason(417), "Expectation Failed") == 0);
    CHECK(strcmp(http_reason(100), "Continue") == 0);
    CHECK(strcmp(http_reason(413), "Content Too Large") == 0);
    CHECK(strcmp(http_reason(412), "Precondition Failed") == 0);
}

/* ---- header look-ups ----------------------------------------------------- */

static int value_is(const char *v, size_t len, const char *lit)
{
    return v && len == strlen(lit) && memcmp(v, lit, len) == 0;
}

static void test_header_lookup(void)
{
    const char *v;
    size_t len = 99, pos = 0;

    EXPECT_RC("PROPFIND /cal/ HTTP/1.1\r\n"
              "Host: a\r\n"
              "depth:\t1 \r\n"
              "If-Match: \"a\"\r\n"
              "Content-Type: text/xml\r\n"
              "if-match:  \"b\", W/\"c\"\r\n"
              "Empty:\r\n"
              "\r\n", 0);
    CHECK(R.head == cur_buf);
    v = http_header(&R, "Depth", &len);
    CHECK(value_is(v, len, "1"));
    v = http_header(&R, "CONTENT-TYPE", &len);
    CHECK(value_is(v, len, "text/xml"));
    v = http_header(&R, "Empty", &len);
    CHECK(v != NULL && len == 0);
    CHECK(http_header(&R, "Destination", &len) == NULL);
    CHECK(http_header(&R, "Dept", &len) == NULL);   /* no prefix matches */
    CHECK(http_header(&R, "Depth2", &len) == NULL);
    /* the request-line is not a field, even if it has a colon */
    CHECK(http_header(&R, "PROPFIND /cal/ HTTP/1.1\r\nHost", &len) == NULL);

    v = http_header_next(&R, "If-Match", &pos, &len);
    CHECK(value_is(v, len, "\"a\""));
    v = http_header_next(&R, "If-Match", &pos, &len);
    CHECK(value_is(v, len, "\"b\", W/\"c\""));
    CHECK(http_header_next(&R, "If-Match", &pos, &len) == NULL);
    CHECK(http_header_next(&R, "If-Match", &pos, &len) == NULL); /* stays at the end */

    /* a body after the head is never scanned */
    EXPECT_RC("PUT /x HTTP/1.1\nContent-Length: 9\n\n", 0);
    CHECK(http_header(&R, "Content-Length", &len) != NULL && len == 1);
    CHECK(http_header(&R, "X", &len) == NULL);

    /* the parse indexes every field line of a head it can... */
    EXPECT_RC("GET / HTTP/1.1\r\nA: 1\r\nBb: 2\r\n\r\n", 0);
    CHECK(R.fields_all && R.fields == 2);
    /* ...and a head of more lines than the index holds is looked up by a
     * scan, with the same answers: the first and the last line, and a name
     * on a line before and one after the index's end */
    {
        char head[1024];
        size_t n = 0, i;
        n += (size_t)snprintf(head + n, sizeof(head) - n, "GET / HTTP/1.1\r\nIf-Match: \"1\"\r\n");
        for (i = 0; i < HTTP_FIELDS_INDEXED + 2; i++)
            n += (size_t)snprintf(head + n, sizeof(head) - n, "X-Filler-%u: %u\r\n", (unsigned)i,
                                  (unsigned)i);
        n += (size_t)snprintf(head + n, sizeof(head) - n, "if-match: \"2\"\r\nLast:z\r\n\r\n");
        CHECK(parse_n(head, n, __LINE__) == 0);
        CHECK(!R.fields_all && R.fields == HTTP_FIELDS_INDEXED);
        pos = 0;
        v = http_header_next(&R, "If-Match", &pos, &len);
        CHECK(value_is(v, len, "\"1\""));
        v = http_header_next(&R, "If-Match", &pos, &len);
        CHECK(value_is(v, len, "\"2\""));
        CHECK(http_header_next(&R, "If-Match", &pos, &len) == NULL);
        v = http_header(&R, "last", &len);
        CHECK(value_is(v, len, "z"));
        v = http_header(&R, "X-Filler-17", &len);
        CHECK(value_is(v, len, "17"));
    }
}

int main(void)
{
    test_head_length_basic();
    test_head_split();
    test_complete_heads();
    test_line_ends();
    test_methods();
    test_targets();
    test_versions();
    test_empty_request_line();
    test_field_syntax();
    test_field_values_ctl();
    test_content_length();
    test_transfer_encoding();
    test_connection();
    test_helpers();
    test_expect();
    test_header_lookup();
    free(cur_buf);
    return check_summary();
}
