/* Responses: store statuses as HTTP statuses, errors and preconditions,
 * and the pieces of a multistatus streamed from a context's buffer. */
#include "dav/dav_private.h"

#include <stdio.h>
#include <string.h>

#include "http/router.h"

/* ---- responses -------------------------------------------------------------- */

int dav_store_http_status(int rc)
{
    switch (rc) {
    case STORE_OK: return 200;
    case STORE_ERR_NOT_FOUND: return 404;
    case STORE_ERR_PRECONDITION: return 412;
    case STORE_ERR_EXISTS: return 405;
    case STORE_ERR_TOO_LARGE: return 413;
    case STORE_ERR_COLL_FULL:
    case STORE_ERR_INDEX_FULL:
    case STORE_ERR_NO_SPACE:
    case STORE_ERR_TOO_MANY_COLLECTIONS:
    case STORE_ERR_TOO_MANY_USERS: return 507;
    case STORE_ERR_SYNC_TOKEN: return 403;
    case STORE_ERR_INVALID: return 400;
    case STORE_ERR_BUSY: return 503;
    default: return 500;
    }
}

void dav_respond_store_error(struct dav_ctx *c, int rc)
{
    dav_respond_status(c, dav_store_http_status(rc), store_strerror(rc));
}

void dav_respond_status(struct dav_ctx *c, int status, const char *detail)
{
    struct http_exchange *x = c->x;
    const char *headers = NULL;
    char allow[160];
    if (status == 401)
        headers = AUTH_CHALLENGE;
    if (status == 405 && x->route) {
        http_allow_header(x->allow, allow, sizeof(allow));
        headers = allow;
    }
    httpd_respond_error(x, status, detail, headers);
}

/* Appends s to buf[0..*n) if it fits in cap; false when it does not. */
static bool append(char *buf, size_t cap, size_t *n, const char *s)
{
    size_t len = strlen(s);
    if (*n + len >= cap)
        return false;
    memcpy(buf + *n, s, len);
    *n += len;
    return true;
}

void dav_respond_precondition(struct dav_ctx *c, int status, const char *prefix, const char *name)
{
    struct http_exchange *x = c->x;
    const char *const tail[] = {"><", prefix, ":", name, "/></D:error>\n"};
    const struct dav_extension *ext;
    struct http_response resp;
    size_t n = 0;
    unsigned i;
    bool fits = append(x->scratch, x->scratch_size, &n,
                       "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error xmlns:D=\"DAV:\"");
    for (i = 0; (ext = dav_extensions[i]) != NULL; i++)
        if (ext->error_xmlns)
            fits = fits && append(x->scratch, x->scratch_size, &n, ext->error_xmlns);
    for (i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
        fits = fits && append(x->scratch, x->scratch_size, &n, tail[i]);
    memset(&resp, 0, sizeof(resp));
    resp.status = status;
    resp.content_type = "application/xml; charset=utf-8";
    resp.body = (const uint8_t *)x->scratch;
    resp.body_len = fits ? (uint32_t)n : 0;
    httpd_respond(x, &resp);
}

void dav_respond_empty(struct dav_ctx *c, int status, const char *headers)
{
    struct http_response resp;
    memset(&resp, 0, sizeof(resp));
    resp.status = status;
    resp.headers = headers;
    httpd_respond(c->x, &resp);
}

/* 413 naming this build's limit (app_config.h: ports set their own) */
void dav_respond_too_large(struct http_exchange *x, const char *what, unsigned long limit)
{
    char detail[48];
    snprintf(detail, sizeof(detail), "%s %lu bytes.", what, limit);
    httpd_respond_error(x, 413, detail, NULL);
}

/* ---- multistatus pieces ----------------------------------------------------- */

/* RFC 3986 section 2: everything but unreserved characters and '/' is
 * percent-encoded. */
void dav_write_href(struct xml_writer *w, const char *path, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    char buf[3 * DAV_PATH_MAX + 4];
    size_t i, n = 0;
    for (i = 0; i < len && n + 3 < sizeof(buf); i++) {
        unsigned char ch = (unsigned char)path[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/') {
            buf[n++] = (char)ch;
        } else {
            buf[n++] = '%';
            buf[n++] = hex[ch >> 4];
            buf[n++] = hex[ch & 15];
        }
    }
    xml_write_text_element(w, "D", "href", buf, n);
}

void dav_write_status(struct xml_writer *w, int status)
{
    char line[64] = "HTTP/1.1 ";
    const char *reason;
    size_t n = 9, reason_len;
    if (status < 100 || status > 999)
        status = 500; /* before the reason, so the line's code and text agree */
    reason = http_reason(status);
    reason_len = strlen(reason);
    line[n++] = (char)('0' + status / 100);
    line[n++] = (char)('0' + status / 10 % 10);
    line[n++] = (char)('0' + status % 10);
    line[n++] = ' ';
    if (reason_len > sizeof(line) - n)
        reason_len = sizeof(line) - n;
    memcpy(line + n, reason, reason_len);
    xml_write_text_element(w, "D", "status", line, n + reason_len);
}

void dav_out_raw(struct dav_ctx *c, const char *s)
{
    size_t n = strlen(s);
    if (c->out_len + n <= c->out_cap) {
        memcpy(c->out + c->out_len, s, n);
        c->out_len += n;
    }
}

void dav_body_open(struct dav_ctx *c, const char *name)
{
    const struct dav_extension *ext;
    unsigned e;
    dav_out_raw(c, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<");
    dav_out_raw(c, name);
    dav_out_raw(c, " xmlns:D=\"DAV:\"");
    for (e = 0; (ext = dav_extensions[e]) != NULL; e++)
        if (ext->xmlns)
            dav_out_raw(c, ext->xmlns);
    dav_out_raw(c, ">\n");
}

void dav_multistatus_open(struct dav_ctx *c) { dav_body_open(c, "D:multistatus"); }

void dav_multistatus_close(struct dav_ctx *c) { dav_out_raw(c, "</D:multistatus>\n"); }

/* c->ref as the next piece, with the chunks that follow it in memory: kept
 * responses rendered in a row lie one after the other, so a multiget of a
 * calendar in the order it was first asked goes out in a few pieces, not
 * one per object. Rendering the next object may reclaim cache memory: the
 * piece is pinned until httpd has it. */
static void produce_refs(struct dav_ctx *c)
{
    const uint8_t *start = c->ref;
    uint32_t n = c->ref_len;
    bool framed = c->ref_framed;
    c->ref_len = 0;
    if (framed) {
        dav_fragments_pin(start, n);
        while (!c->done && !c->render_failed && n < DAV_REF_JOIN_MAX) {
            if (c->render(c) < 0) {
                c->render_failed = true; /* what came before goes out; then the connection ends */
                break;
            }
            if (c->out_len || !c->ref_len || !c->ref_framed || c->ref != start + n ||
                n + c->ref_len > DAV_REF_JOIN_MAX)
                break; /* kept for the next piece */
            n += c->ref_len;
            c->ref_len = 0;
            dav_fragments_pin(start, n);
        }
        dav_fragments_unpin();
    }
    httpd_produce_ref(c->x, start, n, framed);
}

static int dav_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    struct dav_ctx *c = x->state;
    *len = 0;
    if (!c)
        return -1;
    if (c->render_failed) {
        dav_ctx_free(c);
        return -1;
    }
    while (*len < room) {
        if (c->out_off < c->out_len) {
            size_t n = c->out_len - c->out_off;
            if (n > room - *len)
                n = room - *len;
            memcpy(buf + *len, c->out + c->out_off, n);
            c->out_off += n;
            *len += n;
            continue;
        }
        c->out_off = c->out_len = 0;
        if (c->ref_len) {
            if (*len)
                break; /* the copied bytes before it go first */
            produce_refs(c);
            return 0; /* a piece by reference is a piece of its own */
        }
        if (c->done)
            break;
        if (c->render(c) < 0) {
            dav_ctx_free(c);
            return -1;
        }
        if (*len)
            break; /* one piece per call: other connections get their turn */
    }
    if (c->done && c->out_off >= c->out_len && !c->ref_len) {
        dav_ctx_free(c);
        return 1;
    }
    return 0;
}

void dav_respond_multistatus(struct dav_ctx *c, dav_render_fn render)
{
    dav_respond_stream(c, 207, "application/xml; charset=utf-8", render);
}

void dav_respond_stream(struct dav_ctx *c, int status, const char *type, dav_render_fn render)
{
    struct http_response resp;
    memset(&resp, 0, sizeof(resp));
    c->render = render;
    c->out_len = c->out_off = 0;
    c->ref_len = 0;
    c->done = false;
    resp.status = status;
    resp.content_type = type;
    resp.produce = dav_produce;
    resp.content_length = HTTPD_LENGTH_UNKNOWN;
    c->producing = httpd_respond(c->x, &resp) == 0;
}
