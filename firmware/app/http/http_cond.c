#include "http/http_cond.h"

#include <string.h>

/* RFC 9110 section 8.8.3:
 *   entity-tag = [ weak ] opaque-tag
 *   weak       = %s"W/"
 *   opaque-tag = DQUOTE *etagc DQUOTE
 *   etagc      = %x21 / %x23-7E / obs-text
 * A comma is an etagc, so lists are split by parsing, not at commas. */
static int is_etagc(unsigned char c) { return c == 0x21 || (c >= 0x23 && c != 0x7f); }

/* Parse one entity-tag at s[*i..len): sets its opaque-tag (quotes included)
 * and weakness, advances *i past it. Returns 0, or -1 if malformed. */
static int etag_parse(const char *s, size_t len, size_t *i, const char **opaque,
                      size_t *opaque_len, int *weak)
{
    size_t j = *i, start;
    *weak = 0;
    if (len - j >= 2 && s[j] == 'W' && s[j + 1] == '/') {
        *weak = 1;
        j += 2;
    }
    if (j >= len || s[j] != '"')
        return -1;
    start = j++;
    while (j < len && is_etagc((unsigned char)s[j]))
        j++;
    if (j >= len || s[j] != '"')
        return -1;
    j++;
    *opaque = s + start;
    *opaque_len = j - start;
    *i = j;
    return 0;
}

int http_etag_valid(const char *etag, size_t len)
{
    size_t i = 0, olen;
    const char *o;
    int weak;
    return etag && etag_parse(etag, len, &i, &o, &olen, &weak) == 0 && i == len;
}

static int is_ows(char c) { return c == ' ' || c == '\t'; }

enum http_etag_match http_etag_list_match(const char *field, size_t field_len,
                                          const char *etag, size_t etag_len, int strong)
{
    const char *cur = NULL;
    size_t cur_len = 0, i = 0, b = 0, e = field_len;
    int cur_weak = 0, matched = 0, elements = 0;

    if (etag) {
        size_t k = 0;
        if (etag_parse(etag, etag_len, &k, &cur, &cur_len, &cur_weak) < 0 || k != etag_len)
            cur = NULL; /* not an entity-tag: only "*" can match it */
    }

    while (b < e && is_ows(field[b]))
        b++;
    while (e > b && is_ows(field[e - 1]))
        e--;
    if (e - b == 1 && field[b] == '*')
        return etag ? HTTP_ETAG_MATCH : HTTP_ETAG_NO_MATCH;

    /* #entity-tag (section 5.6.1): empty elements and OWS around commas */
    i = b;
    for (;;) {
        const char *o;
        size_t olen;
        int weak;

        while (i < e && (is_ows(field[i]) || field[i] == ','))
            i++;
        if (i >= e)
            break;
        if (etag_parse(field, e, &i, &o, &olen, &weak) < 0)
            return HTTP_ETAG_INVALID;
        elements++;
        /* section 8.8.3.2: strong comparison needs both strong; weak
         * comparison looks at the opaque-tags only */
        if (cur && olen == cur_len && memcmp(o, cur, olen) == 0 &&
            (!strong || (!weak && !cur_weak)))
            matched = 1;
        while (i < e && is_ows(field[i]))
            i++;
        if (i < e && field[i] != ',')
            return HTTP_ETAG_INVALID;
    }
    if (!elements)
        return HTTP_ETAG_INVALID; /* 1#entity-tag: at least one */
    return matched ? HTTP_ETAG_MATCH : HTTP_ETAG_NO_MATCH;
}

/* All field lines named `name` as one list: MATCH if any matches, INVALID if
 * any is malformed; -2 if there is no such field. */
static int field_match(const struct http_request *req, const char *name, const char *etag,
                       int strong)
{
    size_t pos = 0, len, etag_len = etag ? strlen(etag) : 0;
    const char *v;
    int result = -2;

    while ((v = http_header_next(req, name, &pos, &len)) != NULL) {
        enum http_etag_match m = http_etag_list_match(v, len, etag, etag_len, strong);
        if (m == HTTP_ETAG_INVALID)
            return HTTP_ETAG_INVALID;
        if (result != HTTP_ETAG_MATCH)
            result = m;
    }
    return result;
}

int http_preconditions(const struct http_request *req, const char *etag)
{
    int m;

    /* section 13.2.2 step 1; section 13.1.1: If-Match uses strong comparison */
    m = field_match(req, "If-Match", etag, 1);
    if (m == HTTP_ETAG_INVALID)
        return 400;
    if (m == HTTP_ETAG_NO_MATCH)
        return 412;

    /* step 3; section 13.1.2: If-None-Match uses weak comparison, and a match
     * means "not modified" for GET and HEAD, "precondition failed" otherwise */
    m = field_match(req, "If-None-Match", etag, 0);
    if (m == HTTP_ETAG_INVALID)
        return 400;
    if (m == HTTP_ETAG_MATCH)
        return (req->method == HTTP_GET || req->method == HTTP_HEAD) ? 304 : 412;
    return 0;
}
