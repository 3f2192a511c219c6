/* Randomized robustness test for the request-body helpers: the chunked
 * decoder (http_chunked.c) and entity-tag list matching (http_cond.c).
 *
 *   fuzz_http_body [seed [iterations]]     (defaults: seed 1, 100000)
 *
 * A failure is reproducible from the seed printed on the first line. Inputs:
 *   - chunked bodies built from the grammar (random data, sizes with leading
 *     zeros and either case, extensions with token and quoted values,
 *     trailers) followed by the next request's bytes: decoding in random
 *     splits must give DONE exactly at the body's end with the data intact,
 *     and TOO_LARGE when the limit is below the data length;
 *   - those bodies after random mutations: whole and in random splits the
 *     decoder must agree (result, bytes consumed, data), never hand out more
 *     data than the limit, never consume past its input, never stall;
 *   - entity-tag lists built from valid tags with known membership, and
 *     random byte soup: results must be -1/0/1, a strong match implies a
 *     weak one, and built lists match exactly when the tag is a member.
 * Every input is fed from malloc'd buffers of exactly its length (ASan).
 * The last line printed is "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "http/http_chunked.h"
#include "http/http_cond.h"

#define MAX_INPUT 16384
#define MAX_DATA 2048

#include "test_rng.h"

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

static void dump(const char *what, const char *s, size_t n)
{
    size_t i;
    fprintf(stderr, "    %s (%zu bytes): \"", what, n);
    for (i = 0; i < n && i < 300; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02x", c);
    }
    fprintf(stderr, "%s\"\n", n > 300 ? "..." : "");
}

/* ---- chunked ------------------------------------------------------------ */

static const char *const ext_names[] = {"a", "name", "x-ext", "Q", "!#$%&'*+-.^_`|~"};
static const char *const ext_tokens[] = {"1", "value", "abc-def", "~"};
static const char *const ext_quoted[] = {"\"\"", "\"quoted\"", "\"a; b=c\"", "\"\\\"\\\\\"",
                                         "\"\xc3\xa9\"", "\"\t \""};
static const char *const trailers[] = {"X-Sum: 1234\r\n", "A:\r\n", "Checksum:\tabc \r\n",
                                       "x-t: \xc3\xa9\r\n"};
static const char *const next_requests[] = {"", "GET / HTTP/1.1\r\n\r\n", "0\r\n\r\n", "x"};

static void put_ext(struct buf *o)
{
    size_t k, n = rnd(3);
    for (k = 0; k < n; k++) {
        if (chance(20))
            puts_(o, chance(50) ? " " : "\t ");
        puts_(o, ";");
        if (chance(20))
            puts_(o, " ");
        puts_(o, PICK(ext_names));
        if (chance(60)) {
            if (chance(20))
                puts_(o, " ");
            puts_(o, "=");
            if (chance(20))
                puts_(o, "\t");
            puts_(o, chance(50) ? PICK(ext_tokens) : PICK(ext_quoted));
        }
    }
}

static void put_size(struct buf *o, size_t size)
{
    char s[32];
    size_t z = chance(10) ? rnd(4) : 0;
    while (z--)
        puts_(o, "0");
    snprintf(s, sizeof(s), chance(50) ? "%zx" : "%zX", size);
    puts_(o, s);
}

/* A valid chunked body of data[0..len); returns the body's length in o
 * (the next request's bytes follow it). */
static size_t gen_chunked(struct buf *o, const char *data, size_t len)
{
    size_t pos = 0, body_len;
    o->n = 0;
    while (pos < len) {
        size_t size = 1 + rnd(chance(70) ? 64 : len - pos);
        if (size > len - pos)
            size = len - pos;
        put_size(o, size);
        put_ext(o);
        puts_(o, "\r\n");
        put(o, data + pos, size);
        puts_(o, "\r\n");
        pos += size;
    }
    put_size(o, 0);
    put_ext(o);
    puts_(o, "\r\n");
    if (chance(30)) {
        size_t k, n = 1 + rnd(3);
        for (k = 0; k < n; k++)
            puts_(o, PICK(trailers));
    }
    puts_(o, "\r\n");
    body_len = o->n;
    puts_(o, PICK(next_requests));
    return body_len;
}

struct outcome {
    int result;
    size_t used, data_len;
    char data[MAX_INPUT];
};

/* Feed in[0..n) in random pieces (maxpiece 0: whole). 0 on a broken
 * contract (over-read, stall, span outside the input). */
static int decode(const char *in, size_t n, size_t maxpiece, uint32_t max_body, struct outcome *o)
{
    struct http_chunked d;
    size_t pos = 0;

    http_chunked_init(&d, max_body);
    o->result = HTTP_CHUNKED_MORE;
    o->data_len = 0;
    while (pos < n && o->result == HTTP_CHUNKED_MORE) {
        size_t step = maxpiece ? 1 + rnd(maxpiece) : n - pos, off = 0;
        char *b;
        if (step > n - pos)
            step = n - pos;
        b = malloc(step);
        if (!b)
            exit(2);
        memcpy(b, in + pos, step);
        while (off < step && o->result == HTTP_CHUNKED_MORE) {
            size_t used, doff, dlen;
            o->result = http_chunked_feed(&d, b + off, step - off, &used, &doff, &dlen);
            if (used > step - off || (dlen && doff + dlen > used) ||
                (used == 0 && o->result == HTTP_CHUNKED_MORE)) {
                free(b);
                return 0;
            }
            memcpy(o->data + o->data_len, b + off + doff, dlen);
            o->data_len += dlen;
            off += used;
        }
        free(b);
        pos += off;
    }
    o->used = pos;
    return 1;
}

static void mutate(struct buf *o)
{
    static const char alphabet[] = "0123456789abcdefABCDEF;= \t\"\\\r\n:xW/";
    size_t k, nmut = 1 + rnd(3);
    for (k = 0; k < nmut; k++) {
        size_t pos = o->n ? rnd(o->n) : 0;
        char c = chance(80) ? alphabet[rnd(sizeof(alphabet) - 1)] : (char)rnd(256);
        switch (rnd(3)) {
        case 0:
            if (o->n)
                o->b[pos] = c;
            break;
        case 1:
            if (o->n < MAX_INPUT) {
                memmove(o->b + pos + 1, o->b + pos, o->n - pos);
                o->b[pos] = c;
                o->n++;
            }
            break;
        default:
            if (o->n) {
                memmove(o->b + pos, o->b + pos + 1, o->n - pos - 1);
                o->n--;
            }
            break;
        }
    }
}

static unsigned long chunked_results[4];

static void fuzz_chunked(unsigned long i)
{
    static struct buf in;
    static struct outcome whole, split;
    static char data[MAX_DATA];
    size_t len = chance(10) ? 0 : rnd(MAX_DATA), k, body_len;
    int ok;

    for (k = 0; k < len; k++)
        data[k] = chance(90) ? (char)('a' + rnd(26)) : (char)rnd(256);
    body_len = gen_chunked(&in, data, len);

    if (i % 2 == 0) {
        /* valid: exact data, DONE at the body's end, in any split */
        ok = decode(in.b, in.n, 1 + rnd(64), MAX_DATA, &split);
        ok = ok && split.result == HTTP_CHUNKED_DONE && split.used == body_len &&
             split.data_len == len && memcmp(split.data, data, len) == 0;
        if (!CHECK(ok))
            dump("valid body", in.b, in.n);
        chunked_results[HTTP_CHUNKED_DONE] += ok;
        if (len) {
            ok = decode(in.b, in.n, 1 + rnd(64), (uint32_t)(len - 1), &split);
            ok = ok && split.result == HTTP_CHUNKED_TOO_LARGE && split.data_len < len;
            if (!CHECK(ok))
                dump("over the limit", in.b, in.n);
        }
        return;
    }

    /* mutated: split-independence and the contract */
    mutate(&in);
    {
        uint32_t limit = chance(20) ? (uint32_t)rnd(MAX_DATA) : MAX_DATA;
        ok = decode(in.b, in.n, 0, limit, &whole);
        ok = ok && decode(in.b, in.n, 1 + rnd(16), limit, &split);
        ok = ok && whole.result == split.result && whole.used == split.used &&
             whole.data_len == split.data_len &&
             memcmp(whole.data, split.data, whole.data_len) == 0 && whole.data_len <= limit &&
             whole.used <= in.n;
        if (!CHECK(ok)) {
            fprintf(stderr, "    whole %d/%zu/%zu, split %d/%zu/%zu\n", whole.result, whole.used,
                    whole.data_len, split.result, split.used, split.data_len);
            dump("mutated body", in.b, in.n);
        }
        if (whole.result >= 0 && whole.result < 4)
            chunked_results[whole.result]++;
    }
}

/* ---- entity-tag lists --------------------------------------------------- */

static const char *const tags[] = {"\"a\"", "W/\"a\"", "\"b\"", "W/\"b\"", "\"a,b\"", "\"\"",
                                   "\"\xc3\xa9\"", "\"A\""};
static const char *const seps[] = {",", ", ", " ,", " , ", ",,", "\t,\t"};

static int call_match(const char *f, size_t n, const char *etag, int strong)
{
    char *b = malloc(n ? n : 1);
    int r;
    if (!b)
        exit(2);
    memcpy(b, f, n);
    r = http_etag_list_match(b, n, etag, etag ? strlen(etag) : 0, strong);
    free(b);
    return r;
}

/* opaque-tag of a tag: without its W/ */
static const char *opaque(const char *t) { return t[0] == 'W' ? t + 2 : t; }

static unsigned long etag_results[3];

static void fuzz_etags(unsigned long i)
{
    static struct buf f;
    const char *cur = chance(10) ? NULL : PICK(tags);
    int strong_want = 0, weak_want = 0, rs, rw, ok = 1;

    f.n = 0;
    if (i % 2 == 0) {
        size_t k, n = 1 + rnd(4);
        if (chance(20))
            puts_(&f, " ");
        for (k = 0; k < n; k++) {
            const char *t = PICK(tags);
            if (k)
                puts_(&f, PICK(seps));
            puts_(&f, t);
            if (cur && strcmp(opaque(t), opaque(cur)) == 0) {
                weak_want = 1;
                if (t[0] != 'W' && cur[0] != 'W')
                    strong_want = 1;
            }
        }
        rs = call_match(f.b, f.n, cur, 1);
        rw = call_match(f.b, f.n, cur, 0);
        ok = rs == strong_want && rw == weak_want;
    } else {
        static const char soup[] = "\"W/,* \taAb\x7f\xc3";
        size_t k, n = rnd(24);
        for (k = 0; k < n; k++)
            f.b[f.n++] = soup[rnd(sizeof(soup) - 1)];
        rs = call_match(f.b, f.n, cur, 1);
        rw = call_match(f.b, f.n, cur, 0);
        ok = rs >= -1 && rs <= 1 && rw >= -1 && rw <= 1 && (rs == -1) == (rw == -1) &&
             !(rs == 1 && rw != 1) && !(cur == NULL && (rs == 1 || rw == 1));
    }
    if (!CHECK(ok)) {
        fprintf(stderr, "    current %s: strong %d (want %d), weak %d (want %d)\n",
                cur ? cur : "(none)", rs, strong_want, rw, weak_want);
        dump("list", f.b, f.n);
    }
    etag_results[rw + 1]++;
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;
    unsigned long i;
    clock_t t0 = clock();

    printf("fuzz_http_body: seed %llu, %lu iterations\n", (unsigned long long)seed, iters);
    rng_seed(seed);
    for (i = 0; i < iters; i++) {
        if (i % 4 < 2)
            fuzz_chunked(i);
        else
            fuzz_etags(i);
    }
    printf("chunked: more %lu, done %lu, error %lu, too large %lu; etag lists: invalid %lu, "
           "no match %lu, match %lu (%.2f s)\n",
           chunked_results[0], chunked_results[1], chunked_results[2], chunked_results[3],
           etag_results[0], etag_results[1], etag_results[2],
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    /* every outcome must be reached, or the test proves little */
    if (iters >= 1000) {
        CHECK(chunked_results[HTTP_CHUNKED_MORE] > 0);
        CHECK(chunked_results[HTTP_CHUNKED_DONE] > iters / 10);
        CHECK(chunked_results[HTTP_CHUNKED_ERROR] > iters / 100);
        CHECK(chunked_results[HTTP_CHUNKED_TOO_LARGE] > 0);
        CHECK(etag_results[0] > 0 && etag_results[1] > 0 && etag_results[2] > 0);
    }
    return check_summary();
}
