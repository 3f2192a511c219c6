/* Unit tests for the conditional-request helpers (firmware/app/http/http_cond.c):
 * entity-tag list matching (RFC 9110 section 8.8.3) and the 304/412
 * decisions of If-Match / If-None-Match (sections 13.1.1, 13.1.2, 13.2.2).
 * The last line printed is "N passed, M failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "http/http_cond.h"
#include "http/http_parse.h"

#define LEN(lit) (sizeof(lit) - 1)

/* match with exact-size heap copies, so ASan sees any over-read */
static int list_match(const char *field, size_t flen, const char *etag, int strong)
{
    char *f = malloc(flen ? flen : 1), *e = NULL;
    size_t elen = etag ? strlen(etag) : 0;
    int r;
    if (!f)
        exit(2);
    memcpy(f, field, flen);
    if (etag) {
        e = malloc(elen ? elen : 1);
        if (!e)
            exit(2);
        memcpy(e, etag, elen);
    }
    r = http_etag_list_match(f, flen, e, elen, strong);
    free(f);
    free(e);
    return r;
}

#define STRONG(field, etag) list_match(field, LEN(field), etag, 1)
#define WEAK(field, etag) list_match(field, LEN(field), etag, 0)

static void test_etag_valid(void)
{
    CHECK(http_etag_valid("\"abc\"", 5));
    CHECK(http_etag_valid("W/\"abc\"", 7));
    CHECK(http_etag_valid("\"\"", 2));
    CHECK(http_etag_valid("\"a,b\"", 5));          /* a comma is an etagc */
    CHECK(http_etag_valid("\"\xc3\xa9\"", 4));     /* obs-text */
    CHECK(!http_etag_valid("abc", 3));
    CHECK(!http_etag_valid("\"abc", 4));
    CHECK(!http_etag_valid("\"a\"b", 4));
    CHECK(!http_etag_valid("w/\"abc\"", 7));       /* W/ is case-sensitive */
    CHECK(!http_etag_valid("W/abc", 5));
    CHECK(!http_etag_valid("\"a b\"", 5));         /* SP is not an etagc */
    CHECK(!http_etag_valid("\"a\"b\"", 5));
    CHECK(!http_etag_valid("\"\x7f\"", 3));
    CHECK(!http_etag_valid("", 0));
    CHECK(!http_etag_valid(NULL, 0));
}

/* RFC 9110 section 8.8.3.2, the comparison table */
static void test_comparison(void)
{
    CHECK(STRONG("W/\"1\"", "W/\"1\"") == HTTP_ETAG_NO_MATCH);
    CHECK(WEAK("W/\"1\"", "W/\"1\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG("W/\"1\"", "W/\"2\"") == HTTP_ETAG_NO_MATCH);
    CHECK(WEAK("W/\"1\"", "W/\"2\"") == HTTP_ETAG_NO_MATCH);
    CHECK(STRONG("W/\"1\"", "\"1\"") == HTTP_ETAG_NO_MATCH);
    CHECK(WEAK("W/\"1\"", "\"1\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG("\"1\"", "\"1\"") == HTTP_ETAG_MATCH);
    CHECK(WEAK("\"1\"", "\"1\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG("\"1\"", "W/\"1\"") == HTTP_ETAG_NO_MATCH);
    /* octet-wise, case-sensitive */
    CHECK(STRONG("\"abc\"", "\"ABC\"") == HTTP_ETAG_NO_MATCH);
    CHECK(STRONG("\"abc\"", "\"abcd\"") == HTTP_ETAG_NO_MATCH);
    CHECK(STRONG("\"abcd\"", "\"abc\"") == HTTP_ETAG_NO_MATCH);
}

static void test_lists(void)
{
    CHECK(STRONG("\"a\", \"b\", \"c\"", "\"b\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG("\"a\",\"b\",\"c\"", "\"c\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG("\"a\", \"b\"", "\"d\"") == HTTP_ETAG_NO_MATCH);
    CHECK(WEAK("W/\"a\", W/\"b\"", "\"b\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG(" , \"a\" ,, \"b\" ,", "\"b\"") == HTTP_ETAG_MATCH); /* empty elements */
    CHECK(STRONG("\t\"a\"\t", "\"a\"") == HTTP_ETAG_MATCH);
    /* the comma inside a tag does not split it */
    CHECK(STRONG("\"x,y\"", "\"x,y\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG("\"x,y\"", "\"x\"") == HTTP_ETAG_NO_MATCH);
    CHECK(STRONG("\"x\", \"y\"", "\"x,y\"") == HTTP_ETAG_NO_MATCH);
    /* "*" */
    CHECK(STRONG("*", "\"a\"") == HTTP_ETAG_MATCH);
    CHECK(WEAK("*", "W/\"a\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG(" * ", "\"a\"") == HTTP_ETAG_MATCH);
    CHECK(STRONG("*", NULL) == HTTP_ETAG_NO_MATCH);
    CHECK(STRONG("\"a\"", NULL) == HTTP_ETAG_NO_MATCH);
    /* malformed */
    CHECK(STRONG("", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG(" , ", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG("a", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG("\"a\" \"b\"", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG("\"a\"x", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG("\"a", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG("*, \"a\"", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG("**", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG("w/\"a\"", "\"a\"") == HTTP_ETAG_INVALID);
    CHECK(STRONG("\"a\", \"b", "\"a\"") == HTTP_ETAG_INVALID); /* invalid even after a match */
    /* a current tag that is not an entity-tag matches only "*" */
    CHECK(STRONG("\"a\"", "a") == HTTP_ETAG_NO_MATCH);
    CHECK(STRONG("*", "a") == HTTP_ETAG_MATCH);
}

/* ---- whole requests ------------------------------------------------------- */

static char *head_buf;
static struct http_request R;

static int cond(const char *head, const char *etag)
{
    size_t n = strlen(head);
    int rc;
    free(head_buf);
    head_buf = malloc(n);
    if (!head_buf)
        exit(2);
    memcpy(head_buf, head, n);
    rc = http_parse_head(head_buf, n, &R);
    if (rc) {
        fprintf(stderr, "    head does not parse (%d): %s\n", rc, head);
        return -rc;
    }
    return http_preconditions(&R, etag);
}

static void test_preconditions(void)
{
    /* no conditions */
    CHECK(cond("GET /x HTTP/1.1\r\n\r\n", "\"1\"") == 0);
    CHECK(cond("PUT /x HTTP/1.1\r\n\r\n", NULL) == 0);

    /* If-Match (13.1.1): strong comparison; 412 when false */
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"1\"\r\n\r\n", "\"1\"") == 0);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"2\"\r\n\r\n", "\"1\"") == 412);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: W/\"1\"\r\n\r\n", "\"1\"") == 412);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"1\"\r\n\r\n", "W/\"1\"") == 412);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: *\r\n\r\n", "\"1\"") == 0);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: *\r\n\r\n", NULL) == 412);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"1\"\r\n\r\n", NULL) == 412);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-Match: \"2\"\r\n\r\n", "\"1\"") == 412);
    CHECK(cond("DELETE /x HTTP/1.1\r\nif-match: \"0\", \"1\"\r\n\r\n", "\"1\"") == 0);
    /* several field lines are one list (RFC 9110 section 5.3) */
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"0\"\r\nIf-Match: \"1\"\r\n\r\n", "\"1\"") == 0);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"0\"\r\nIf-Match: \"2\"\r\n\r\n", "\"1\"") == 412);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"1\"\r\nIf-Match: bad\r\n\r\n", "\"1\"") == 400);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: nonsense\r\n\r\n", "\"1\"") == 400);

    /* If-None-Match (13.1.2): weak comparison; 304 for GET/HEAD, else 412 */
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: \"1\"\r\n\r\n", "\"1\"") == 304);
    CHECK(cond("HEAD /x HTTP/1.1\r\nIf-None-Match: W/\"1\"\r\n\r\n", "\"1\"") == 304);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: \"1\"\r\n\r\n", "W/\"1\"") == 304);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: \"2\"\r\n\r\n", "\"1\"") == 0);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: \"2\", \"1\"\r\n\r\n", "\"1\"") == 304);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-None-Match: \"1\"\r\n\r\n", "\"1\"") == 412);
    CHECK(cond("PROPFIND /x HTTP/1.1\r\nIf-None-Match: \"1\"\r\n\r\n", "\"1\"") == 412);
    /* "*": create-only PUT */
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-None-Match: *\r\n\r\n", NULL) == 0);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-None-Match: *\r\n\r\n", "\"1\"") == 412);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: *\r\n\r\n", "\"1\"") == 304);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: *\r\n\r\n", NULL) == 0);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: \"1\r\n\r\n", "\"1\"") == 400);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: \"2\"\r\nIf-None-Match: \"1\"\r\n\r\n",
               "\"1\"") == 304);

    /* precedence (13.2.2): If-Match first */
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"2\"\r\nIf-None-Match: \"1\"\r\n\r\n", "\"1\"") ==
          412);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-None-Match: \"1\"\r\nIf-Match: \"2\"\r\n\r\n", "\"1\"") ==
          412);
    CHECK(cond("GET /x HTTP/1.1\r\nIf-Match: \"1\"\r\nIf-None-Match: \"1\"\r\n\r\n", "\"1\"") ==
          304);
    CHECK(cond("PUT /x HTTP/1.1\r\nIf-Match: \"1\"\r\nIf-None-Match: \"2\"\r\n\r\n", "\"1\"") ==
          0);
}

int main(void)
{
    test_etag_valid();
    test_comparison();
    test_lists();
    test_preconditions();
    free(head_buf);
    return check_summary();
}
