/* Randomized robustness test for the HTTP request-head parser.
 *
 *   fuzz_http_parse [seed [iterations]]     (defaults: seed 1, 200000)
 *
 * Inputs come from a seeded PRNG, so a failure is reproducible from the seed
 * printed on the first line. Three kinds of input, in turn:
 *   - heads built from a grammar of plausible and hostile pieces,
 *   - such heads after a few random mutations (byte flips, inserts, deletes,
 *     duplicated or truncated spans),
 *   - short runs of bytes from an alphabet rich in HTTP delimiters.
 * Every input is parsed from a malloc'd buffer of exactly its length (built
 * with ASan, a read past the end is caught), both as the head that
 * http_head_length finds and as a raw buffer. Checked invariants:
 *   - http_head_length is 0 or ends on LF inside the buffer, and the length
 *     found is the first point at which a prefix of the stream completes
 *     (so feeding bytes in any split gives the same head);
 *   - http_parse_head returns 0, 400, 417, 501 or 505;
 *   - on 0: method is a non-empty token at the start of the buffer, the
 *     target lies in the buffer and starts with '/' or is "*", version minor
 *     is a digit, flags are 0/1, chunked excludes Content-Length and
 *     HTTP/1.0, the method enum matches the method string, 100-continue
 *     only in HTTP/1.1, header look-ups return trimmed values inside the
 *     head and always move forward;
 *   - a head without CR parses to the same result after LF -> CRLF;
 *   - http_head_scan fed the input in two pieces ends where http_head_length
 *     does, and header look-ups through the parse's index of field lines give
 *     what a scan of the head gives.
 * The last line printed is "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "http/http_parse.h"

#define MAX_INPUT 1024

#include "test_rng.h"

/* ---- input construction ------------------------------------------------ */

struct buf {
    char b[MAX_INPUT];
    size_t n;
};

static void put(struct buf *o, const char *s, size_t n)
{
    if (n > MAX_INPUT - o->n)
        n = MAX_INPUT - o->n;
    memcpy(o->b + o->n, s, n);
    o->n += n;
}
static void puts_(struct buf *o, const char *s) { put(o, s, strlen(s)); }
static void putc_(struct buf *o, char c) { put(o, &c, 1); }

static const char *const g_methods[] = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PROPFIND", "PROPPATCH", "MKCOL",
    "MKCALENDAR", "REPORT", "BREW", "get", "G", "M-SEARCH", "GE(T", "", "GET ", "\tGET",
};
static const char *const g_targets[] = {
    "/", "/index.html", "/calendars/alice/home/", "/?q=1&r=%20", "*", "**", "/a b",
    "http://example.com/", "example.com:443", "", "/\x7f", "/caf\xc3\xa9", "//x", "/\t",
    "/a\x1a" "b",
};
static const char *const g_versions[] = {
    "HTTP/1.1", "HTTP/1.0", "HTTP/1.9", "HTTP/2.0", "HTTP/0.9", "HTTP/1", "HTTP/1.10",
    "http/1.1", "HTTP/a.b", "", "HTTP/1.1 ", "XTTP/1.1",
};
static const char *const g_names[] = {
    "Host", "Content-Length", "content-length", "CONTENT-LENGTH", "Transfer-Encoding",
    "transfer-encoding", "Connection", "connection", "Keep-Alive", "Depth", "User-Agent",
    "X-Empty", "Host ", " Host", "Content-Length ", "", "X(", "Transfer-Encoding\t",
    "Expect", "expect", "If-Match",
};
static const char *const g_expect_values[] = {
    "100-continue", "100-Continue", "", " , 100-continue", "100-continue, x", "200-ok", ",",
};
static const char *const g_cl_values[] = {
    "0", "5", "700", "4294967295", "4294967296", "18446744073709551616",
    "99999999999999999999999", "-1", "+1", "", " 5 ", "5, 5", "5,6", "0x10", "1e3", "007",
};
static const char *const g_te_values[] = {
    "chunked", "Chunked", "gzip", "gzip, chunked", "chunked, gzip", "chunked, chunked",
    "", ",", " , chunked ,", "identity", "chunked;q=1", "deflate,chunked", "xchunked",
};
static const char *const g_conn_values[] = {
    "close", "keep-alive", "Keep-Alive", "keep-alive, close", "upgrade", "closed", "",
    "te, close", " , close , ",
};
static const char *const g_other_values[] = {
    "x", "", "litedav.local", "[::1]:8080", "a\tb", "a\x01" "b", "a\x7f", "caf\xc3\xa9",
    "a\rb", "\x1a", "1", "timeout=5",
};
static const char *const g_eols[] = {"\r\n", "\r\n", "\r\n", "\n", "\n", "\r", "\r\r\n", "\n\r"};

static void put_eol(struct buf *o, int lf_only)
{
    puts_(o, lf_only ? "\n" : (chance(90) ? (chance(60) ? "\r\n" : "\n") : PICK(g_eols)));
}

/* put a table string; its \x1a bytes stand for NUL */
static void put_tbl(struct buf *o, const char *s)
{
    for (; *s; s++)
        putc_(o, *s == '\x1a' ? '\0' : *s);
}

/* A head from the grammar; lf_only: only LF line ends, no CR anywhere in
 * the pieces used (so the LF -> CRLF comparison applies). */
static void gen_head(struct buf *o, int lf_only)
{
    size_t i, nfields = rnd(7);

    o->n = 0;
    if (chance(3))
        put_eol(o, lf_only);
    put_tbl(o, chance(85) ? g_methods[rnd(11)] : PICK(g_methods));
    putc_(o, ' ');
    put_tbl(o, chance(80) ? g_targets[rnd(5)] : PICK(g_targets));
    putc_(o, ' ');
    puts_(o, chance(85) ? g_versions[rnd(3)] : PICK(g_versions));
    put_eol(o, lf_only);

    for (i = 0; i < nfields; i++) {
        const char *name = chance(90) ? g_names[rnd(10)] : PICK(g_names);
        const char *value;
        if (chance(3))
            putc_(o, chance(50) ? ' ' : '\t'); /* obs-fold or leading whitespace */
        puts_(o, name);
        putc_(o, ':');
        if (chance(80))
            putc_(o, ' ');
        if (http_token_equals(name, strlen(name), "Content-Length"))
            value = PICK(g_cl_values);
        else if (http_token_equals(name, strlen(name), "Transfer-Encoding"))
            value = PICK(g_te_values);
        else if (http_token_equals(name, strlen(name), "Connection"))
            value = PICK(g_conn_values);
        else if (http_token_equals(name, strlen(name), "Expect"))
            value = PICK(g_expect_values);
        else
            value = PICK(g_other_values);
        if (lf_only && strchr(value, '\r'))
            value = "x";
        put_tbl(o, value);
        if (chance(5))
            putc_(o, ' ');
        put_eol(o, lf_only);
    }
    put_eol(o, lf_only);
    if (chance(10))
        puts_(o, chance(50) ? "GET /next HTTP/1.1\r\n\r\n" : "body");
}

static const char alphabet[] = "GETHPOS /*:,;-.0123456789chunkedlosCL\r\n\r\n\t HTTP/1.1\x01\x7f\xff";

static char rnd_byte(void)
{
    if (chance(80))
        return alphabet[rnd(sizeof(alphabet) - 1)];
    return (char)rnd(256);
}

static void mutate(struct buf *o)
{
    size_t k, nmut = 1 + rnd(4);
    for (k = 0; k < nmut; k++) {
        size_t pos = o->n ? rnd(o->n) : 0;
        switch (rnd(6)) {
        case 0: /* overwrite */
            if (o->n)
                o->b[pos] = rnd_byte();
            break;
        case 1: /* insert */
            if (o->n < MAX_INPUT) {
                memmove(o->b + pos + 1, o->b + pos, o->n - pos);
                o->b[pos] = rnd_byte();
                o->n++;
            }
            break;
        case 2: /* delete a span */
            if (o->n) {
                size_t len = 1 + rnd(o->n - pos < 8 ? o->n - pos : 8);
                memmove(o->b + pos, o->b + pos + len, o->n - pos - len);
                o->n -= len;
            }
            break;
        case 3: /* duplicate a span */
            if (o->n) {
                size_t len = 1 + rnd(o->n - pos < 32 ? o->n - pos : 32);
                if (o->n + len <= MAX_INPUT) {
                    memmove(o->b + pos + len, o->b + pos, o->n - pos);
                    o->n += len;
                }
            }
            break;
        case 4: /* truncate */
            o->n = pos;
            break;
        default: /* flip a bit */
            if (o->n)
                o->b[pos] ^= (char)(1u << rnd(8));
            break;
        }
    }
}

static void gen_random(struct buf *o)
{
    size_t i, n = rnd(chance(50) ? 24 : 200);
    o->n = 0;
    for (i = 0; i < n; i++)
        putc_(o, rnd_byte());
}

/* ---- checks ------------------------------------------------------------ */

static unsigned long fail_reports;

static void dump(const char *what, const char *s, size_t n)
{
    size_t i;
    if (fail_reports++ > 20)
        return;
    fprintf(stderr, "    %s (%zu bytes): \"", what, n);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\r')
            fputs("\\r", stderr);
        else if (c == '\n')
            fputs("\\n", stderr);
        else if (c == '\\' || c == '"')
            fprintf(stderr, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(stderr, "\\x%02x", c);
        else
            fputc(c, stderr);
    }
    fputs("\"\n", stderr);
}

static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *const method_names[] = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PROPFIND", "PROPPATCH", "MKCOL",
    "MKCALENDAR", "REPORT",
};

/* Invariants of one parse of buf[0..len). Returns 1 if all hold. */
static int check_result(const char *buf, size_t len, int rc, const struct http_request *r)
{
    size_t i;
    int ok = 1;

#define INV(cond)                                                              \
    do {                                                                       \
        if (!(cond)) {                                                         \
            if (fail_reports < 20)                                             \
                fprintf(stderr, "invariant failed: %s (rc %d)\n", #cond, rc); \
            ok = 0;                                                            \
        }                                                                      \
    } while (0)

    INV(rc == 0 || rc == 400 || rc == 417 || rc == 501 || rc == 505);
    INV(r->head_len == len);
    if (rc != 0)
        return ok;

    INV(r->method_str == buf);
    INV(r->method_len > 0 && r->method_len < len);
    if (r->method_str == buf && r->method_len < len) {
        for (i = 0; i < r->method_len; i++)
            INV(is_tchar((unsigned char)buf[i]));
        if (r->method == HTTP_METHOD_OTHER) {
            for (i = 0; i < sizeof(method_names) / sizeof(method_names[0]); i++)
                INV(!(strlen(method_names[i]) == r->method_len &&
                      memcmp(method_names[i], buf, r->method_len) == 0));
        } else {
            INV((unsigned)r->method < sizeof(method_names) / sizeof(method_names[0]));
            if ((unsigned)r->method < sizeof(method_names) / sizeof(method_names[0]))
                INV(strlen(method_names[r->method]) == r->method_len &&
                    memcmp(method_names[r->method], buf, r->method_len) == 0);
        }
    }

    INV(r->target > buf && r->target_len > 0);
    INV(r->target && r->target >= buf && r->target + r->target_len <= buf + len);
    if (r->target && r->target >= buf && r->target_len > 0 &&
        r->target + r->target_len <= buf + len) {
        INV(r->target[0] == '/' || (r->target_len == 1 && r->target[0] == '*'));
        for (i = 0; i < r->target_len; i++)
            INV((unsigned char)r->target[i] > ' ' && (unsigned char)r->target[i] < 0x7f);
    }

    INV(r->version_minor >= 0 && r->version_minor <= 9);
    INV(r->keep_alive == 0 || r->keep_alive == 1);
    INV(r->has_content_length == 0 || r->has_content_length == 1);
    INV(r->has_content_length || r->content_length == 0);
    INV(r->chunked == 0 || r->chunked == 1);
    INV(!(r->chunked && r->has_content_length));
    INV(!(r->chunked && r->version_minor == 0));
    INV(r->expect_continue == 0 || r->expect_continue == 1);
    INV(!(r->expect_continue && r->version_minor == 0));
    INV(r->head == buf);

    /* header look-ups stay inside the head and move forward */
    {
        static const char *const names[] = {"Host", "Content-Length", "Expect", "X-Empty", "If-Match"};
        size_t k;
        for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            size_t pos = 0, last = 0, vlen, found = 0;
            const char *v;
            while ((v = http_header_next(r, names[k], &pos, &vlen)) != NULL) {
                INV(v >= buf && v + vlen <= buf + len);
                INV(pos > last && pos <= len);
                INV(vlen == 0 || (v[0] != ' ' && v[0] != '\t' && v[vlen - 1] != ' '));
                last = pos;
                if (++found > len)
                    break;
            }
            INV(found <= len);
        }
    }

    /* the parse's index of field lines answers as a scan of the head does: the same values
     * in the same order, for names the head has (its first and last field lines') and not */
    {
        struct http_request scan = *r;
        const char *names[4] = {"Host", "If-Match", NULL, NULL};
        char first[64], last[64];
        size_t k;
        scan.fields_all = 0;
        if (r->fields_all && r->fields) {
            size_t i0 = r->field_name_len[0], i1 = r->field_name_len[r->fields - 1];
            if (i0 < sizeof(first) && i1 < sizeof(last)) {
                memcpy(first, buf + r->field_at[0], i0);
                first[i0] = 0;
                memcpy(last, buf + r->field_at[r->fields - 1], i1);
                last[i1] = 0;
                names[2] = first;
                names[3] = last;
            }
        }
        for (k = 0; k < 4; k++) {
            size_t pa = 0, pb = 0, la = 0, lb = 0, n = 0;
            const char *va, *vb;
            if (!names[k])
                continue;
            do {
                va = http_header_next(r, names[k], &pa, &la);
                vb = http_header_next(&scan, names[k], &pb, &lb);
                INV(va == vb && (!va || la == lb));
            } while (va && vb && va == vb && ++n <= len);
        }
    }
#undef INV
    return ok;
}

/* Parse s[0..n) from an exact-size heap copy; check invariants. */
static int parse_exact(const char *s, size_t n, struct http_request *r, int *rc)
{
    char *b = malloc(n ? n : 1);
    int ok;
    if (!b)
        exit(2);
    memcpy(b, s, n);
    *rc = http_parse_head(b, n, r);
    ok = check_result(b, n, *rc, r);
    /* the request points into b: make the caller's copy point into s */
    if (r->method_str)
        r->method_str = s + (r->method_str - b);
    if (r->target)
        r->target = s + (r->target - b);
    free(b);
    return ok;
}

static size_t head_length_exact(const char *s, size_t n)
{
    char *b = malloc(n ? n : 1);
    size_t r;
    if (!b)
        exit(2);
    memcpy(b, s, n);
    r = http_head_length(b, n);
    free(b);
    return r;
}

static int same_request(const struct http_request *a, const struct http_request *b)
{
    return a->method == b->method && a->method_len == b->method_len &&
           memcmp(a->method_str, b->method_str, a->method_len) == 0 &&
           a->target_len == b->target_len &&
           memcmp(a->target, b->target, a->target_len) == 0 &&
           a->version_minor == b->version_minor && a->keep_alive == b->keep_alive &&
           a->has_content_length == b->has_content_length &&
           a->content_length == b->content_length && a->chunked == b->chunked;
}

static struct buf crlf_buf;

static void check_input(const struct buf *in)
{
    size_t head = head_length_exact(in->b, in->n);
    struct http_request r;
    int rc, ok = 1;

    /* the head scan fed in two pieces, split anywhere, ends where head_length does */
    {
        uint8_t state = HTTP_SCAN_LINE;
        size_t split = in->n ? rnd(in->n + 1) : 0, took = http_head_scan(&state, in->b, split);
        if (state != HTTP_SCAN_DONE)
            took += http_head_scan(&state, in->b + split, in->n - split);
        ok &= state == HTTP_SCAN_DONE ? took == head : head == 0;
    }
    /* head_length: 0 or an end on LF, and the first prefix that completes */
    if (head) {
        ok &= head >= 2 && head <= in->n && in->b[head - 1] == '\n';
        ok &= http_head_length(in->b, head) == head;
        ok &= head_length_exact(in->b, head - 1) == 0;
        if (head > 2)
            ok &= head_length_exact(in->b, rnd(head - 1)) == 0;
    } else if (in->n) {
        ok &= head_length_exact(in->b, rnd(in->n)) == 0;
    }
    if (!CHECK(ok))
        dump("head_length", in->b, in->n);

    /* the raw buffer, whatever it holds */
    ok = parse_exact(in->b, in->n, &r, &rc);
    if (!CHECK(ok))
        dump("raw input", in->b, in->n);

    if (head) {
        ok = parse_exact(in->b, head, &r, &rc);
        if (!CHECK(ok))
            dump("head", in->b, head);

        /* no CR at all: LF -> CRLF must not change the outcome */
        if (!memchr(in->b, '\r', head)) {
            struct http_request r2;
            size_t i, n2 = 0, head2;
            int rc2;
            for (i = 0; i < head && n2 + 2 <= MAX_INPUT; i++) {
                if (in->b[i] == '\n')
                    crlf_buf.b[n2++] = '\r';
                crlf_buf.b[n2++] = in->b[i];
            }
            crlf_buf.n = n2;
            if (i == head) {
                head2 = head_length_exact(crlf_buf.b, n2);
                ok = head2 == n2;
                ok &= parse_exact(crlf_buf.b, n2, &r2, &rc2);
                ok &= rc2 == rc;
                if (ok && rc == 0)
                    ok &= same_request(&r, &r2);
                if (!CHECK(ok)) {
                    fprintf(stderr, "    LF rc %d, CRLF rc %d\n", rc, rc2);
                    dump("LF head", in->b, head);
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 0) : 200000;
    unsigned long i, heads = 0;
    unsigned long status[5] = {0, 0, 0, 0, 0}; /* 0, 400, 501, 505, 417 */
    static struct buf in;
    clock_t t0 = clock();

    printf("fuzz_http_parse: seed %llu, %lu iterations\n", (unsigned long long)seed, iters);
    rng_seed(seed);
    for (i = 0; i < iters; i++) {
        struct http_request r;
        int rc;
        size_t head;

        switch (i % 4) {
        case 0:
            gen_head(&in, 0);
            break;
        case 1:
            gen_head(&in, 1);
            break;
        case 2:
            gen_head(&in, (int)rnd(2));
            mutate(&in);
            break;
        default:
            if (chance(50)) {
                gen_random(&in);
            } else {
                gen_head(&in, 0);
                mutate(&in);
                mutate(&in);
            }
            break;
        }
        check_input(&in);

        /* statistics, so a generator that stops producing valid heads shows */
        head = http_head_length(in.b, in.n);
        if (head) {
            heads++;
            rc = http_parse_head(in.b, head, &r);
            status[rc == 0 ? 0 : rc == 400 ? 1 : rc == 501 ? 2 : rc == 505 ? 3 : 4]++;
        }
    }
    printf("heads %lu: accepted %lu, 400 %lu, 501 %lu, 505 %lu, 417 %lu (%.2f s)\n", heads,
           status[0], status[1], status[2], status[3], status[4],
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    /* the generator must reach every outcome, or the test proves little */
    CHECK(status[0] > iters / 20);
    CHECK(status[1] > iters / 20);
    CHECK(status[2] > 0);
    CHECK(status[3] > 0);
    CHECK(status[4] > 0);
    return check_summary();
}
