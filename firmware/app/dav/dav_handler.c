/* The route handler for /dav/: a request's context, authentication, its
 * target and checks before the body, then the method. */
#include "dav/dav_private.h"

#include <string.h>

#include "http/http_cond.h"

/* Does a registered method have the flag? */
static bool method_has(enum http_method m, uint8_t flag)
{
    const struct dav_method *d = dav_method_find(m);
    return d && (d->flags & flag);
}

static bool writes_store(enum http_method m)
{
    return m == HTTP_PUT || m == HTTP_DELETE || m == HTTP_MKCOL || m == HTTP_PROPPATCH ||
           m == HTTP_COPY || m == HTTP_MOVE || method_has(m, DAV_METHOD_WRITES);
}

static bool takes_xml(enum http_method m)
{
    return m == HTTP_PROPFIND || m == HTTP_PROPPATCH || m == HTTP_REPORT || m == HTTP_MKCOL ||
           method_has(m, DAV_METHOD_XML);
}

/* The checks before the body, on a request that holds context c: 0, or the
 * status answered. */
static int check_request(struct dav_ctx *c)
{
    const struct http_request *req = c->x->req;
    size_t vlen;
    const char *v;
    int rc;

    if (auth_check(c->store, req, c->user) != AUTH_OK) {
        dav_respond_status(c, 401, NULL);
        return 401;
    }
    if ((rc = dav_resolve(c)) != 0) {
        dav_respond_status(c, rc, rc == 403 ? "Not your collection." : NULL);
        return rc;
    }
    c->depth = -1;
    if ((v = http_header(req, "Depth", &vlen)) != NULL) {
        if (vlen == 1 && (v[0] == '0' || v[0] == '1'))
            c->depth = v[0] - '0';
        else if (!http_token_equals(v, vlen, "infinity")) {
            dav_respond_status(c, 400, "Depth is 0, 1 or infinity.");
            return 400;
        }
    }
    if (req->method == HTTP_PROPFIND && c->depth < 0) {
        /* RFC 4918 section 9.1: we may refuse infinite depth */
        dav_respond_precondition(c, 403, "D", "propfind-finite-depth");
        return 403;
    }
    if (req->method == HTTP_REPORT && c->depth < 0)
        c->depth = 0; /* RFC 3253 section 3.6 */
    if (takes_xml(req->method) && req->has_content_length && req->content_length > DAV_XML_MAX) {
        dav_respond_too_large(c->x, "XML bodies are limited to", DAV_XML_MAX);
        return 413;
    }
    if (req->method == HTTP_PUT) {
        const struct dav_coll_type *type = c->target.type;
        char etag[16];
        if (c->target.kind != DAV_RES_OBJECT) {
            dav_respond_status(c, 405, "PUT creates resources inside collections.");
            return 405;
        }
        if (!c->parent_exists) {
            dav_respond_status(c, 409, "The parent collection does not exist.");
            return 409;
        }
        if (req->has_content_length && req->content_length > DAV_MAX_RESOURCE_SIZE)
            return dav_put_too_large(c);
        if (type && type->put_begin && (rc = type->put_begin(c)) != 0)
            return rc;
        /* fail early, before the body is sent (re-checked once it is in) */
        if (c->target.exists)
            dav_etag_format(c->target.obj.etag, etag, sizeof(etag));
        if ((rc = http_preconditions(req, c->target.exists ? etag : NULL)) != 0) {
            dav_respond_status(c, rc, NULL);
            return rc;
        }
    }
    return 0;
}

static int dav_begin(struct http_exchange *x)
{
    struct dav_ctx *c;
    int rc;

    if (!dav_mounted_store())
        return 503;
    if ((rc = dav_ctx_acquire(x, &c)) != 0)
        return rc;
    if ((rc = check_request(c)) != 0)
        dav_ctx_free(c);
    return rc;
}

static int dav_body(struct http_exchange *x, const uint8_t *data, size_t len)
{
    struct dav_ctx *c = x->state;
    if (!c)
        return 500;
    if (x->req->method == HTTP_PUT) {
        if (!dav_lock_try(c)) {
            if (len > x->scratch_size)
                return 503;
            memcpy(x->scratch, data, len);
            c->stash_len = (uint32_t)len;
            dav_lock_wait(c, DAV_WAIT_BODY);
            return HTTPD_BODY_PAUSE;
        }
        return dav_put_take(c, data, len);
    }
    if (c->body_len + len > sizeof(c->body)) {
        c->body_too_large = true;
        return 413;
    }
    memcpy(c->body + c->body_len, data, len);
    c->body_len += len;
    return HTTPD_BODY_OK;
}

/* RFC 3253 section 3.6: the REPORT its body's root element names, if one is
 * registered. */
static void report(struct dav_ctx *c)
{
    const struct dav_report *r;
    if (dav_parse_body(c) || !c->doc.root)
        dav_respond_status(c, 400, "The body is not well-formed XML.");
    else if ((r = dav_report_find(c->doc.root)) != NULL)
        r->run(c);
    else
        dav_respond_precondition(c, 403, "D", "supported-report");
}

/* A method a layer above registered, or 405. */
static void registered_method(struct dav_ctx *c)
{
    const struct dav_method *m = dav_method_find(c->x->req->method);
    if (!m)
        dav_respond_status(c, 405, NULL);
    else if ((m->flags & DAV_METHOD_XML) && dav_parse_body(c))
        dav_respond_status(c, 400, "The body is not well-formed XML.");
    else
        m->run(c);
}

/* Run the request; the response is started unless it waits for the lock. */
void dav_end_request(struct dav_ctx *c)
{
    switch (c->x->req->method) {
    case HTTP_GET:
    case HTTP_HEAD: dav_do_get(c); break;
    case HTTP_PUT: dav_do_put(c); break;
    case HTTP_DELETE: dav_do_delete(c); break;
    case HTTP_MKCOL: dav_do_mkcol(c); break;
    case HTTP_PROPFIND: dav_do_propfind(c); break;
    case HTTP_PROPPATCH: dav_do_proppatch(c); break;
    case HTTP_REPORT: report(c); break;
    case HTTP_COPY:
    case HTTP_MOVE: dav_do_copymove(c); break;
    default: registered_method(c); break;
    }
    /* answered from scratch or headers only, unless a producer owns c now */
    if (!c->producing)
        dav_ctx_free(c);
}

static void dav_end(struct http_exchange *x)
{
    struct dav_ctx *c = x->state;
    if (!c) {
        httpd_respond_error(x, 500, NULL, NULL);
        return;
    }
    if (writes_store(x->req->method) && !dav_lock_try(c)) {
        dav_lock_wait(c, DAV_WAIT_END);
        return; /* dav_poll() runs it and resumes the connection */
    }
    dav_end_request(c);
}

static void dav_abort(struct http_exchange *x)
{
    if (x->state)
        dav_ctx_free(x->state);
    else
        dav_ctx_wait_remove(x); /* it ended while waiting for a context */
}

const struct http_handler dav_handler = {dav_begin, dav_body, dav_end, dav_abort};
