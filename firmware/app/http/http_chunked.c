#include "http/http_chunked.h"

#include <string.h>

/* RFC 9112 section 7.1:
 *   chunked-body   = *chunk last-chunk trailer-section CRLF
 *   chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
 *   last-chunk     = 1*("0") [ chunk-ext ] CRLF
 *   chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
 *   chunk-ext-val  = token / quoted-string
 * Line ends are CRLF only: a bare LF inside the framing is an error here (the
 * lenient reading of section 2.2 is where request smuggling lives). */
enum {
    S_SIZE_FIRST,      /* first hex digit of chunk-size */
    S_SIZE,            /* more hex digits, or what follows them */
    S_EXT_BWS_SEMI,    /* BWS that must end in ";" */
    S_EXT_NAME_START,  /* BWS, then the first tchar of chunk-ext-name */
    S_EXT_NAME,        /* in chunk-ext-name */
    S_EXT_BWS_NAME,    /* BWS after a name: "=" or ";" follows */
    S_EXT_VAL_START,   /* BWS, then token or quoted-string */
    S_EXT_TOKEN,       /* in a token value */
    S_EXT_QUOTED,      /* in a quoted-string value */
    S_EXT_QUOTED_PAIR, /* after a backslash in a quoted-string */
    S_EXT_AFTER_VAL,   /* after a value: BWS ";", or CRLF */
    S_SIZE_LF,         /* the LF ending a chunk-size line */
    S_DATA,
    S_DATA_CR,
    S_DATA_LF,
    S_TRAILER_START,   /* a trailer field line, or the final CRLF */
    S_TRAILER_NAME,
    S_TRAILER_VALUE,
    S_TRAILER_LF,
    S_END_LF,
    S_DONE,
    S_ERROR,
    S_TOO_LARGE,
};

/* RFC 9110 section 5.6.2 */
static int is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 1;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int is_ws(unsigned char c) { return c == ' ' || c == '\t'; }

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* field-vchar / SP / HTAB (RFC 9110 section 5.5), including obs-text */
static int is_field_char(unsigned char c) { return c == '\t' || (c >= ' ' && c != 0x7f); }

/* qdtext (RFC 9110 section 5.6.4) */
static int is_qdtext(unsigned char c) { return is_field_char(c) && c != '"' && c != '\\'; }

void http_chunked_init(struct http_chunked *d, uint32_t max_body)
{
    memset(d, 0, sizeof(*d));
    d->state = S_SIZE_FIRST;
    d->max_body = max_body;
}

static enum http_chunked_result result_of(const struct http_chunked *d)
{
    switch (d->state) {
    case S_DONE: return HTTP_CHUNKED_DONE;
    case S_ERROR: return HTTP_CHUNKED_ERROR;
    case S_TOO_LARGE: return HTTP_CHUNKED_TOO_LARGE;
    default: return HTTP_CHUNKED_MORE;
    }
}

/* The chunk-size digits ended: the size is final, judge it against the limit
 * before reading any of its data. */
static void size_complete(struct http_chunked *d)
{
    if (d->chunk_left > d->max_body - d->body_len)
        d->state = S_TOO_LARGE;
    else
        d->body_len += d->chunk_left;
}

/* One byte of a chunk-size line after its digits (extensions and CR). */
static void ext_byte(struct http_chunked *d, unsigned char c)
{
    switch (d->state) {
    case S_EXT_BWS_SEMI:
        if (c == ';')
            d->state = S_EXT_NAME_START;
        else if (!is_ws(c))
            d->state = S_ERROR;
        break;
    case S_EXT_NAME_START:
        if (is_tchar(c))
            d->state = S_EXT_NAME;
        else if (!is_ws(c))
            d->state = S_ERROR;
        break;
    case S_EXT_NAME:
        if (c == '=')
            d->state = S_EXT_VAL_START;
        else if (c == ';')
            d->state = S_EXT_NAME_START;
        else if (c == '\r')
            d->state = S_SIZE_LF;
        else if (is_ws(c))
            d->state = S_EXT_BWS_NAME;
        else if (!is_tchar(c))
            d->state = S_ERROR;
        break;
    case S_EXT_BWS_NAME:
        if (c == '=')
            d->state = S_EXT_VAL_START;
        else if (c == ';')
            d->state = S_EXT_NAME_START;
        else if (!is_ws(c))
            d->state = S_ERROR;
        break;
    case S_EXT_VAL_START:
        if (c == '"')
            d->state = S_EXT_QUOTED;
        else if (is_tchar(c))
            d->state = S_EXT_TOKEN;
        else if (!is_ws(c))
            d->state = S_ERROR;
        break;
    case S_EXT_TOKEN:
        if (c == ';')
            d->state = S_EXT_NAME_START;
        else if (c == '\r')
            d->state = S_SIZE_LF;
        else if (is_ws(c))
            d->state = S_EXT_BWS_SEMI;
        else if (!is_tchar(c))
            d->state = S_ERROR;
        break;
    case S_EXT_QUOTED:
        if (c == '"')
            d->state = S_EXT_AFTER_VAL;
        else if (c == '\\')
            d->state = S_EXT_QUOTED_PAIR;
        else if (!is_qdtext(c))
            d->state = S_ERROR;
        break;
    case S_EXT_QUOTED_PAIR:
        d->state = is_field_char(c) ? S_EXT_QUOTED : S_ERROR;
        break;
    case S_EXT_AFTER_VAL:
        if (c == ';')
            d->state = S_EXT_NAME_START;
        else if (c == '\r')
            d->state = S_SIZE_LF;
        else if (is_ws(c))
            d->state = S_EXT_BWS_SEMI;
        else
            d->state = S_ERROR;
        break;
    default:
        d->state = S_ERROR;
        break;
    }
}

enum http_chunked_result http_chunked_feed(struct http_chunked *d, const char *in, size_t len,
                                           size_t *used, size_t *data_off, size_t *data_len)
{
    size_t i = 0;

    *data_off = 0;
    *data_len = 0;
    while (i < len && d->state < S_DONE) {
        unsigned char c = (unsigned char)in[i];

        if (d->state == S_DATA) {
            size_t n = len - i < d->chunk_left ? len - i : d->chunk_left;
            *data_off = i;
            *data_len = n;
            d->chunk_left -= (uint32_t)n;
            if (d->chunk_left == 0)
                d->state = S_DATA_CR;
            i += n;
            break;
        }
        i++;

        if (d->state <= S_SIZE_LF && ++d->line_len > HTTP_CHUNKED_LINE_MAX) {
            d->state = S_ERROR;
            break;
        }
        if (d->state >= S_TRAILER_START && d->state <= S_END_LF &&
            ++d->trailer_len > HTTP_CHUNKED_TRAILER_MAX) {
            d->state = S_ERROR;
            break;
        }

        switch (d->state) {
        case S_SIZE_FIRST:
        case S_SIZE: {
            int v = hex_value(c);
            if (v >= 0) {
                if (d->size_digits == 8) {
                    d->state = S_TOO_LARGE; /* over 2^32 - 1: beyond any limit */
                    break;
                }
                d->chunk_left = (d->chunk_left << 4) | (uint32_t)v;
                if (d->chunk_left)
                    d->size_digits++; /* leading zeros are free */
                d->state = S_SIZE;
                break;
            }
            if (d->state == S_SIZE_FIRST) {
                d->state = S_ERROR; /* chunk-size = 1*HEXDIG */
                break;
            }
            size_complete(d);
            if (d->state == S_TOO_LARGE)
                break;
            if (c == '\r')
                d->state = S_SIZE_LF;
            else if (c == ';')
                d->state = S_EXT_NAME_START;
            else if (is_ws(c))
                d->state = S_EXT_BWS_SEMI;
            else
                d->state = S_ERROR;
            break;
        }
        case S_SIZE_LF:
            if (c != '\n') {
                d->state = S_ERROR;
                break;
            }
            d->line_len = 0;
            d->size_digits = 0;
            d->state = d->chunk_left ? S_DATA : S_TRAILER_START;
            break;
        case S_DATA_CR:
            d->state = c == '\r' ? S_DATA_LF : S_ERROR;
            break;
        case S_DATA_LF:
            d->state = c == '\n' ? S_SIZE_FIRST : S_ERROR;
            break;
        case S_TRAILER_START:
            if (c == '\r')
                d->state = S_END_LF;
            else if (is_tchar(c))
                d->state = S_TRAILER_NAME;
            else
                d->state = S_ERROR; /* includes obs-fold */
            break;
        case S_TRAILER_NAME:
            if (c == ':')
                d->state = S_TRAILER_VALUE;
            else if (!is_tchar(c))
                d->state = S_ERROR;
            break;
        case S_TRAILER_VALUE:
            if (c == '\r')
                d->state = S_TRAILER_LF;
            else if (!is_field_char(c))
                d->state = S_ERROR;
            break;
        case S_TRAILER_LF:
            d->state = c == '\n' ? S_TRAILER_START : S_ERROR;
            break;
        case S_END_LF:
            d->state = c == '\n' ? S_DONE : S_ERROR;
            break;
        default:
            ext_byte(d, c);
            break;
        }
    }
    *used = i;
    return result_of(d);
}
