#include "http/http_parse.h"

#include <string.h>

static int lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

int http_token_equals(const char *s, size_t len, const char *lit)
{
    size_t i;
    for (i = 0; i < len; i++) {
        if (!lit[i] || lower((unsigned char)s[i]) != lower((unsigned char)lit[i]))
            return 0;
    }
    return lit[len] == '\0';
}

/* RFC 9110 section 5.6.2: tchar */
static int is_tchar(int c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')
        return 1;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

size_t http_head_scan(uint8_t *state, const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    uint8_t s = *state;

    while (p < end && s != HTTP_SCAN_DONE) {
        switch (s) {
        case HTTP_SCAN_LEAD:
            if (*p == '\r' || *p == '\n') {
                p++;
                break;
            }
            s = HTTP_SCAN_LINE;
            /* fall through - the request-line starts here */
        case HTTP_SCAN_LINE: {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) {
                p = end;
            } else {
                p = nl + 1;
                s = HTTP_SCAN_LF;
            }
            break;
        }
        case HTTP_SCAN_LF:
            s = *p == '\n' ? HTTP_SCAN_DONE : *p == '\r' ? HTTP_SCAN_LF_CR : HTTP_SCAN_LINE;
            p++;
            break;
        default: /* HTTP_SCAN_LF_CR */
            s = *p == '\n' ? HTTP_SCAN_DONE : HTTP_SCAN_LINE;
            p++;
            break;
        }
    }
    *state = s;
    return (size_t)(p - buf);
}

size_t http_head_length(const char *buf, size_t len)
{
    uint8_t state = HTTP_SCAN_LINE;
    size_t n = http_head_scan(&state, buf, len);
    return state == HTTP_SCAN_DONE ? n : 0;
}

static const struct { const char *name; enum http_method m; } methods[] = {
    {"GET", HTTP_GET}, {"HEAD", HTTP_HEAD}, {"POST", HTTP_POST}, {"PUT", HTTP_PUT},
    {"DELETE", HTTP_DELETE}, {"OPTIONS", HTTP_OPTIONS}, {"PROPFIND", HTTP_PROPFIND},
    {"PROPPATCH", HTTP_PROPPATCH}, {"MKCOL", HTTP_MKCOL}, {"MKCALENDAR", HTTP_MKCALENDAR},
    {"REPORT", HTTP_REPORT}, {"COPY", HTTP_COPY}, {"MOVE", HTTP_MOVE},
};

static enum http_method method_lookup(const char *s, size_t len)
{
    size_t i;
    for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        /* methods are case-sensitive (RFC 9110 section 9.1) */
        if (strlen(methods[i].name) == len && memcmp(methods[i].name, s, len) == 0)
            return methods[i].m;
    }
    return HTTP_METHOD_OTHER;
}

/* Next line in [p, end): returns its length without the line end, sets *next. */
static size_t line_at(const char *p, const char *end, const char **next)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n;
    if (!nl) {
        *next = end;
        return (size_t)(end - p);
    }
    *next = nl + 1;
    n = (size_t)(nl - p);
    if (n && p[n - 1] == '\r')
        n--;
    return n;
}

static const char *trim(const char *s, size_t *len)
{
    while (*len && (*s == ' ' || *s == '\t')) { s++; (*len)--; }
    while (*len && (s[*len - 1] == ' ' || s[*len - 1] == '\t')) (*len)--;
    return s;
}

/* Does a comma-separated header value list contain the token? */
static int list_has_token(const char *v, size_t len, const char *token)
{
    while (len) {
        const char *comma = memchr(v, ',', len);
        size_t item = comma ? (size_t)(comma - v) : len;
        size_t tl = item;
        const char *t = trim(v, &tl);
        if (http_token_equals(t, tl, token))
            return 1;
        if (!comma)
            break;
        len -= item + 1;
        v = comma + 1;
    }
    return 0;
}

/* Transfer-Encoding field lines, folded in order (RFC 9112 section 6.1). */
struct te_state {
    int seen;               /* a Transfer-Encoding field was present */
    int codings;            /* non-empty list elements */
    int chunked_last;       /* the last coding so far is chunked */
    int chunked_not_final;  /* some coding follows chunked (incl. chunked again) */
    int unknown;            /* a coding other than chunked */
};

static void te_scan(const char *v, size_t len, struct te_state *te)
{
    te->seen = 1;
    for (;;) {
        const char *comma = memchr(v, ',', len);
        size_t item = comma ? (size_t)(comma - v) : len;
        size_t tl = item;
        const char *t = trim(v, &tl);
        if (tl) { /* empty list elements are allowed, RFC 9110 section 5.6.1 */
            if (te->chunked_last)
                te->chunked_not_final = 1;
            te->codings++;
            te->chunked_last = http_token_equals(t, tl, "chunked");
            if (!te->chunked_last)
                te->unknown = 1;
        }
        if (!comma)
            break;
        len -= item + 1;
        v = comma + 1;
    }
}

/* RFC 9110 section 10.1.1: Expect = #expectation. 100-continue is the only
 * expectation defined; any other is answered 417 (Expectation Failed). */
static int expect_scan(const char *v, size_t len, struct http_request *req)
{
    for (;;) {
        const char *comma = memchr(v, ',', len);
        size_t item = comma ? (size_t)(comma - v) : len;
        size_t tl = item;
        const char *t = trim(v, &tl);
        if (http_token_equals(t, tl, "100-continue"))
            req->expect_continue = 1;
        else if (tl)
            return 417;
        if (!comma)
            return 0;
        len -= item + 1;
        v = comma + 1;
    }
}

/* RFC 9112 section 3: request-line = method SP request-target SP HTTP-version */
static int parse_request_line(const char *p, size_t n, struct http_request *req)
{
    const char *sp1, *sp2, *ver;
    size_t i, ver_len;

    sp1 = memchr(p, ' ', n);
    if (!sp1 || sp1 == p)
        return 400;
    for (i = 0; p + i < sp1; i++) {
        if (!is_tchar((unsigned char)p[i]))
            return 400;
    }
    req->method_str = p;
    req->method_len = (size_t)(sp1 - p);
    req->method = method_lookup(p, req->method_len);

    sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - p));
    if (!sp2 || sp2 == sp1 + 1)
        return 400;
    req->target = sp1 + 1;
    req->target_len = (size_t)(sp2 - req->target);
    for (i = 0; i < req->target_len; i++) {
        unsigned char c = (unsigned char)req->target[i];
        if (c <= ' ' || c >= 0x7f)
            return 400;
    }
    if (req->target[0] != '/' && !(req->target_len == 1 && req->target[0] == '*'))
        return 400; /* absolute-form and authority-form are not served */

    ver = sp2 + 1;
    ver_len = n - (size_t)(ver - p);
    if (ver_len != 8 || memcmp(ver, "HTTP/", 5) != 0 || ver[6] != '.' ||
        ver[5] < '0' || ver[5] > '9' || ver[7] < '0' || ver[7] > '9')
        return 400;
    if (ver[5] != '1')
        return 505;
    req->version_minor = ver[7] - '0';
    return 0;
}

static int parse_uint32(const char *s, size_t len, uint32_t *out)
{
    uint64_t v = 0;
    size_t i;
    if (!len)
        return -1;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > 0xffffffffu)
            return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int http_parse_head(const char *buf, size_t head_len, struct http_request *req)
{
    const char *p = buf, *end = buf + head_len, *next;
    size_t n;
    int rc, conn_close = 0, conn_keep = 0, lines_over = head_len > 0xFFFF;
    struct te_state te = {0, 0, 0, 0, 0};

    memset(req, 0, sizeof(*req));
    req->head = buf;
    req->head_len = head_len;

    n = line_at(p, end, &next);
    rc = parse_request_line(p, n, req);
    if (rc)
        return rc;

    for (p = next; p < end; p = next) {
        const char *colon, *name, *value;
        size_t name_len, value_len, i;

        n = line_at(p, end, &next);
        if (n == 0)
            break; /* the empty line ending the head */
        if (p[0] == ' ' || p[0] == '\t')
            return 400; /* obs-fold, RFC 9112 section 5.2 */
        colon = memchr(p, ':', n);
        if (!colon || colon == p)
            return 400;
        name = p;
        name_len = (size_t)(colon - p);
        for (i = 0; i < name_len; i++) {
            if (!is_tchar((unsigned char)name[i]))
                return 400; /* includes whitespace before the colon, section 5.1 */
        }
        value_len = n - name_len - 1;
        value = trim(colon + 1, &value_len);
        for (i = 0; i < value_len; i++) {
            unsigned char c = (unsigned char)value[i];
            if ((c < ' ' && c != '\t') || c == 0x7f)
                return 400;
        }
        if (req->fields < HTTP_FIELDS_INDEXED && name_len <= 0xFF) {
            req->field_at[req->fields] = (uint16_t)(p - buf);
            req->field_name_len[req->fields++] = (uint8_t)name_len;
        } else {
            lines_over = 1;
        }

        switch (name[0] | 0x20) { /* the names below by their first letter */
        case 'c': case 'e': case 't':
            break;
        default:
            continue;
        }
        if (http_token_equals(name, name_len, "Content-Length")) {
            uint32_t cl;
            if (parse_uint32(value, value_len, &cl) < 0)
                return 400;
            if (req->has_content_length && cl != req->content_length)
                return 400; /* section 6.3: conflicting lengths */
            req->has_content_length = 1;
            req->content_length = cl;
        } else if (http_token_equals(name, name_len, "Transfer-Encoding")) {
            te_scan(value, value_len, &te); /* judged once all lines are in */
        } else if (http_token_equals(name, name_len, "Expect")) {
            rc = expect_scan(value, value_len, req);
            if (rc)
                return rc;
        } else if (http_token_equals(name, name_len, "Connection")) {
            if (list_has_token(value, value_len, "close"))
                conn_close = 1;
            if (list_has_token(value, value_len, "keep-alive"))
                conn_keep = 1;
        }
    }
    req->fields_all = !lines_over;
    if (te.seen) {
        /* section 6.3: with Content-Length, a smuggling guard; chunked not the
         * final coding (or applied twice), the length is unknowable. Section
         * 6.1: in HTTP/1.0 the framing is faulty. */
        if (req->has_content_length || req->version_minor == 0 || !te.codings ||
            te.chunked_not_final)
            return 400;
        if (te.unknown)
            return 501; /* section 6.1: a coding we do not implement */
        req->chunked = 1;
    }

    /* RFC 9110 section 10.1.1: a 100-continue expectation in an HTTP/1.0
     * request MUST be ignored (no 1xx can be sent to such a client). */
    if (req->version_minor == 0)
        req->expect_continue = 0;

    /* RFC 9112 section 9.3: persistence */
    if (conn_close)
        req->keep_alive = 0;
    else if (req->version_minor >= 1)
        req->keep_alive = 1;
    else
        req->keep_alive = conn_keep;
    return 0;
}

/* The value of the field line at line (n bytes without its line end) whose
 * name is name_len bytes, trimmed. */
static const char *field_value(const char *line, size_t n, size_t name_len, size_t *value_len)
{
    size_t vl = n - name_len - 1;
    const char *v = trim(line + name_len + 1, &vl);
    *value_len = vl;
    return v;
}

const char *http_header_next(const struct http_request *req, const char *name, size_t *pos,
                             size_t *value_len)
{
    const char *end = req->head + req->head_len, *p, *next;

    if (!req->head)
        return NULL;
    if (req->fields_all) {
        /* *pos: the index of the next field line to look at */
        size_t name_len = strlen(name), i;
        for (i = *pos; i < req->fields; i++) {
            const char *line = req->head + req->field_at[i];
            if (req->field_name_len[i] != name_len || !http_token_equals(line, name_len, name))
                continue;
            *pos = i + 1;
            return field_value(line, line_at(line, end, &next), name_len, value_len);
        }
        *pos = req->fields;
        return NULL;
    }
    p = req->head + *pos;
    if (*pos == 0)
        line_at(p, end, &p); /* skip the request-line */
    for (; p < end; p = next) {
        const char *colon;
        size_t n = line_at(p, end, &next);
        if (n == 0)
            break;
        colon = memchr(p, ':', n);
        if (!colon || !http_token_equals(p, (size_t)(colon - p), name))
            continue;
        *pos = (size_t)(next - req->head);
        return field_value(p, n, (size_t)(colon - p), value_len);
    }
    *pos = req->head_len;
    return NULL;
}

const char *http_header(const struct http_request *req, const char *name, size_t *value_len)
{
    size_t pos = 0;
    return http_header_next(req, name, &pos, value_len);
}

const char *http_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 207: return "Multi-Status";
    case 301: return "Moved Permanently";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 424: return "Failed Dependency";      /* RFC 4918 section 11.4 */
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";            /* RFC 4918 sections 9.8.5, 9.9.4 */
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    case 507: return "Insufficient Storage";   /* RFC 4918 section 11.5 */
    default: return "Unknown";
    }
}
