/* Resource contents: GET and HEAD (RFC 9110 sections 9.3.1, 9.3.2) and PUT
 * (section 9.3.4). */
#include "dav/dav_private.h"

#include <stdio.h>
#include <string.h>

#include "http/http_cond.h"

/* ---- GET / HEAD (RFC 9110 sections 9.3.1, 9.3.2) ---------------------------- */

static int get_produce(struct http_exchange *x, char *buf, size_t room, size_t *len)
{
    struct dav_ctx *c = x->state;
    struct store_object_info info;
    uint32_t got = 0;
    int rc;
    *len = 0;
    if (!c)
        return -1;
    rc = store_get_object(c->store, c->target.coll, c->path + c->name_off, c->name_len, c->offset,
                          buf, (uint32_t)room, &got, &info);
    /* replaced while being sent: the length sent no longer holds */
    if (rc != STORE_OK || info.etag != c->target.obj.etag || got == 0) {
        dav_ctx_free(c);
        return -1;
    }
    c->offset += got;
    *len = got;
    if (c->offset >= c->target.obj.size) {
        dav_ctx_free(c);
        return 1;
    }
    return 0;
}

void dav_do_get(struct dav_ctx *c)
{
    struct http_response resp;
    char headers[64], etag[16];
    int rc;
    if (c->target.kind != DAV_RES_OBJECT) {
        /* collections have no representation of their own here */
        dav_respond_status(c, 405, "Collections are read with PROPFIND.");
        return;
    }
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    dav_etag_format(c->target.obj.etag, etag, sizeof(etag));
    snprintf(headers, sizeof(headers), "ETag: %s\r\n", etag);
    rc = http_preconditions(c->x->req, etag);
    memset(&resp, 0, sizeof(resp));
    if (rc == 304) {
        resp.status = 304;
        resp.headers = headers;
        httpd_respond(c->x, &resp);
        return;
    }
    if (rc) {
        dav_respond_status(c, rc, NULL);
        return;
    }
    resp.status = 200;
    resp.content_type = dav_content_type(&c->target);
    resp.headers = headers;
    c->offset = 0;
    if (c->target.obj.size == 0 || c->x->req->method == HTTP_HEAD) {
        resp.body_len = 0;
        resp.content_length = c->target.obj.size;
        resp.produce = c->target.obj.size ? get_produce : NULL;
        httpd_respond(c->x, &resp);
        return;
    }
    resp.produce = get_produce;
    resp.content_length = c->target.obj.size;
    c->producing = httpd_respond(c->x, &resp) == 0; /* get_produce frees c */
}

/* ---- PUT (RFC 9110 section 9.3.4) --------------------------------------------- */

/* PUT bodies are collected here, by the request holding the writer lock,
 * when the collection's type checks them whole before they are stored (or
 * their length is not known): the others are streamed into the store. */
static char upload[DAV_MAX_RESOURCE_SIZE] LITEDAV_NOINIT;
static size_t upload_len;

int dav_put_too_large(struct dav_ctx *c)
{
    const struct dav_coll_type *type = c->target.type;
    if (type && type->too_large.name) {
        dav_respond_precondition(c, 403, type->too_large.prefix, type->too_large.name);
        return 403;
    }
    dav_respond_too_large(c->x, "The limit is", DAV_MAX_RESOURCE_SIZE);
    return 413;
}

/* COPY and MOVE into a collection whose type checks what is put in it (for
 * CalDAV, RFC 4791 section 5.3.2.1 names COPY and MOVE beside PUT): the
 * source's body, read into the upload buffer (the writer lock is held),
 * through the type's put_check as the target. */
int dav_copy_check(struct dav_ctx *c)
{
    const struct dav_coll_type *type = c->target.type;
    uint32_t got;
    int rc;
    if (!type || !type->put_check)
        return 0;
    if (c->obj.obj.size > sizeof(upload))
        return dav_put_too_large(c);
    rc = store_get_object(c->store, c->obj.coll, c->obj_path + c->obj_name_off,
                          c->obj.path_len - c->obj_name_off, 0, upload, sizeof(upload), &got, NULL);
    if (rc != STORE_OK) {
        dav_respond_store_error(c, rc);
        return dav_store_http_status(rc);
    }
    upload_len = got;
    return type->put_check(c, upload, got);
}

/* The writer lock is held: check the preconditions against the store as it
 * is now, and start streaming a body of known length that is not checked
 * whole. */
static int put_start(struct dav_ctx *c)
{
    char etag[16];
    struct store_object_info info;
    uint32_t got;
    char dummy;
    int rc = store_get_object(c->store, c->target.coll, c->path + c->name_off, c->name_len, 0,
                              &dummy, 0, &got, &info);
    c->put_existed = rc == STORE_OK;
    if (c->put_existed)
        dav_etag_format(info.etag, etag, sizeof(etag));
    rc = http_preconditions(c->x->req, c->put_existed ? etag : NULL);
    if (rc) {
        dav_respond_status(c, rc, NULL);
        return rc;
    }
    upload_len = 0;
    if (!(c->target.type && c->target.type->put_check) && !c->x->req->chunked) {
        rc = store_put_begin(c->store, c->target.coll, c->path + c->name_off, c->name_len,
                             c->x->req->content_length, NULL, 0);
        if (rc != STORE_OK) {
            rc = dav_store_http_status(rc);
            dav_respond_status(c, rc, store_strerror(rc));
            return rc;
        }
        c->streaming_put = true;
    }
    return 0;
}

/* Body bytes of a PUT, with the writer lock held. */
int dav_put_take(struct dav_ctx *c, const uint8_t *data, size_t len)
{
    int rc;
    if (!c->put_started) {
        c->put_started = true;
        if ((rc = put_start(c)) != 0)
            return rc;
    }
    if (c->streaming_put) {
        rc = store_put_write(c->store, data, (uint32_t)len);
        if (rc != STORE_OK) {
            rc = dav_store_http_status(rc);
            dav_respond_status(c, rc, NULL);
            return rc;
        }
        return HTTPD_BODY_OK;
    }
    if (upload_len + len > sizeof(upload))
        return dav_put_too_large(c);
    memcpy(upload + upload_len, data, len);
    upload_len += len;
    return HTTPD_BODY_OK;
}

void dav_do_put(struct dav_ctx *c)
{
    char headers[64], etag[16];
    uint32_t tag;
    int rc;
    if (!c->put_started) {
        c->put_started = true;
        if (put_start(c) != 0)
            return;
    }
    if (c->streaming_put) {
        rc = store_put_commit(c->store, &tag);
        c->streaming_put = false;
    } else {
        const struct dav_coll_type *type = c->target.type;
        if (type && type->put_check && type->put_check(c, upload, upload_len) != 0)
            return;
        rc = store_put_object(c->store, c->target.coll, c->path + c->name_off, c->name_len,
                              upload, (uint32_t)upload_len, NULL, 0, &tag);
    }
    if (rc != STORE_OK) {
        rc == STORE_ERR_TOO_LARGE ? (void)dav_put_too_large(c)
                                  : dav_respond_store_error(c, rc);
        return;
    }
    dav_etag_format(tag, etag, sizeof(etag));
    snprintf(headers, sizeof(headers), "ETag: %s\r\n", etag);
    dav_respond_empty(c, c->put_existed ? 204 : 201, headers);
}
