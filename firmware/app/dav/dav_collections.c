/* Collections: MKCOL (RFC 4918 section 9.3) and DELETE (section 9.6). */
#include "dav/dav_private.h"

#include <string.h>

#include "http/http_cond.h"

/* ---- MKCOL (RFC 4918 section 9.3) -------------------------------------------- */

/* Also for the methods of the layers above that create collections of their
 * type: a new collection at the target. Returns 0 or the HTTP status already
 * answered. */
int dav_create_collection(struct dav_ctx *c, const struct dav_coll_type *type, uint32_t *id)
{
    char key[STORE_PATH_MAX + 1];
    uint32_t parent;
    const struct dav_coll_type *parent_type;
    size_t len = c->target.path_len;
    int rc;

    if (c->target.kind == DAV_RES_OBJECT) {
        if (c->target.exists) {
            dav_respond_status(c, 405, "A resource exists there.");
            return 405;
        }
        c->path[len++] = '/';
        c->path[len] = '\0';
        c->target.path_len = len;
        c->target.kind = DAV_RES_COLL;
    }
    if (c->target.kind != DAV_RES_COLL || c->target.exists) {
        dav_respond_status(c, 405, "The collection exists.");
        return 405;
    }
    if (!dav_coll_parent_exists(c, c->path, len, &parent, &parent_type)) {
        dav_respond_status(c, 409, "The parent collection does not exist.");
        return 409;
    }
    if (parent) {
        /* a resource of the same name without the slash (section 9.3.1: 405) */
        size_t p = dav_parent_len(c->path, len);
        struct store_object_info info;
        uint32_t got;
        char dummy;
        if (store_get_object(c->store, parent, c->path + p, len - 1 - p, 0, &dummy, 0, &got,
                             &info) == STORE_OK) {
            dav_respond_status(c, 405, "A resource exists there.");
            return 405;
        }
    }
    if (parent_type && parent_type->no_collections) {
        if (type && type->location.name)
            dav_respond_precondition(c, 403, type->location.prefix, type->location.name);
        else
            dav_respond_status(c, 403, parent_type->no_collections);
        return 403;
    }
    if (dav_coll_key(c->path, len, type ? type->key : DAV_PLAIN_KEY, key)) {
        dav_respond_status(c, 414, NULL);
        return 414;
    }
    rc = store_coll_create(c->store, c->user, key, id);
    if (rc != STORE_OK) {
        dav_respond_store_error(c, rc);
        return dav_store_http_status(rc);
    }
    return 0;
}

void dav_do_mkcol(struct dav_ctx *c)
{
    uint32_t id;
    if (c->body_len) {
        /* section 9.3.1: a body we do not understand */
        dav_respond_status(c, 415, "MKCOL takes no body.");
        return;
    }
    if (dav_create_collection(c, NULL, &id) == 0)
        dav_respond_empty(c, 201, NULL);
}

/* ---- DELETE (RFC 4918 section 9.6) ------------------------------------------- */

struct find_under {
    const char *prefix;
    size_t len;
    uint32_t id;
    bool found;
};

static int find_under_cb(void *ctx, const struct store_collection *info)
{
    struct find_under *f = ctx;
    if (info->path_len > f->len && memcmp(info->path + 1, f->prefix, f->len) == 0) {
        f->id = info->id;
        f->found = true;
        return 1;
    }
    return 0;
}

/* The collection at path[0..len) and every collection below it (section
 * 9.6.1): a store status. */
int dav_delete_tree(struct dav_ctx *c, const char *path, size_t len)
{
    int rc;
    for (;;) {
        struct find_under f = {path, len, 0, false};
        rc = store_coll_list(c->store, find_under_cb, &f);
        if (rc != STORE_OK || !f.found)
            return rc;
        if ((rc = store_coll_delete(c->store, f.id)) != STORE_OK)
            return rc;
    }
}

void dav_do_delete(struct dav_ctx *c)
{
    char etag[16];
    int rc;
    if (c->target.kind != DAV_RES_COLL && c->target.kind != DAV_RES_OBJECT) {
        dav_respond_status(c, 403, "The root, the homes and their fixed collections cannot be deleted.");
        return;
    }
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (c->target.kind == DAV_RES_COLL) {
        if ((rc = dav_delete_tree(c, c->target.path, c->target.path_len)) != STORE_OK) {
            dav_respond_store_error(c, rc);
            return;
        }
        dav_respond_empty(c, 204, NULL);
        return;
    }
    dav_etag_format(c->target.obj.etag, etag, sizeof(etag));
    rc = http_preconditions(c->x->req, etag);
    if (rc) {
        dav_respond_status(c, rc, NULL);
        return;
    }
    rc = store_delete_object(c->store, c->target.coll, c->path + c->name_off, c->name_len, NULL);
    if (rc != STORE_OK) {
        dav_respond_store_error(c, rc);
        return;
    }
    dav_respond_empty(c, 204, NULL);
}
