/* COPY and MOVE (RFC 4918 sections 9.8, 9.9) of objects and collections.
 *
 * The source is the request's target; once the Destination (section 10.3)
 * is resolved, that is the target (what a collection type's put_check
 * looks at) and the source is kept in c->obj / c->obj_path.
 *
 * An object's COPY or MOVE is one store operation (store_copy_object): a
 * MOVE is atomic across a power cut, and replaces an existing destination
 * object in the same step. A collection's MOVE renames it and each
 * collection below it (one record each), a COPY creates the copies and
 * copies the members one by one: a power cut in the middle of a tree
 * leaves part of it done. An error on a resource below the destination
 * collection, once that is made, stops the copy and is a 207 naming that
 * resource (sections 9.8.8, 9.9.4); what was done before it stays. Replacing
 * an existing destination collection (Overwrite: T) deletes it first. */
#include "dav/dav_private.h"

#include <string.h>

#include "http/http_cond.h"

/* Is the authority a[0..alen) this server's Host h[0..hlen)? Host names are
 * case-insensitive (RFC 3986 section 3.2.2); port 80 may be left out. */
static bool same_authority(const char *a, size_t alen, const char *h, size_t hlen)
{
    size_t i;
    if (alen > 3 && memcmp(a + alen - 3, ":80", 3) == 0)
        alen -= 3;
    if (hlen > 3 && memcmp(h + hlen - 3, ":80", 3) == 0)
        hlen -= 3;
    if (alen != hlen)
        return false;
    for (i = 0; i < alen; i++)
        if ((a[i] | 0x20) != (h[i] | 0x20))
            return false;
    return true;
}

/* The path of the Destination (section 10.3): the header itself when it is
 * an absolute path, else the path of an absolute URI of this server (its
 * scheme, case-insensitive (RFC 3986 section 3.1), and its Host). NULL
 * without one; *other set when it names another server. */
static const char *destination(struct dav_ctx *c, size_t *len, bool *other)
{
    size_t hlen;
    const char *d = http_header(c->x->req, "Destination", len), *host, *end;
    *other = false;
    if (!d || !*len || d[0] == '/')
        return d && *len ? d : NULL;
    end = *len > 7 ? memchr(d + 7, '/', *len - 7) : NULL;
    host = http_header(c->x->req, "Host", &hlen);
    if (!end || !same_authority(d, 7, "http://", 7) ||
        (host && !same_authority(d + 7, (size_t)(end - d - 7), host, hlen))) {
        *other = true;
        return NULL;
    }
    *len -= (size_t)(end - d);
    return end;
}

/* The Destination into c->target, the source moved to c->obj first: 0 or
 * the status answered. */
static int resolve_destination(struct dav_ctx *c)
{
    size_t len;
    bool other;
    const char *d = destination(c, &len, &other);
    int rc;

    if (other) {
        /* this server cannot write to another one (sections 9.8.5, 9.9.4) */
        dav_respond_status(c, 502, "The destination is on another server.");
        return 502;
    }
    if (!d) {
        dav_respond_status(c, 400, "COPY and MOVE need a Destination.");
        return 400;
    }
    c->obj = c->target;
    memcpy(c->obj_path, c->path, sizeof(c->obj_path));
    c->obj.path = c->obj_path;
    c->obj_name_off = c->name_off;
    rc = dav_resolve_path(c, d, len);
    if (rc == 404 || (rc == 0 && c->target.kind != DAV_RES_COLL && c->target.kind != DAV_RES_OBJECT))
        rc = 403;
    if (rc)
        dav_respond_status(c, rc, rc == 403 ? "The destination is outside your collections." : NULL);
    return rc;
}

/* The destination exists: with Overwrite T (section 10.6) it is deleted
 * (sections 9.8.4, 9.9.3), except an object replacing an object, which the
 * store does in the same step. 0 or the status answered. */
static int clear_destination(struct dav_ctx *c, bool overwrite)
{
    const char *d;
    size_t len;
    bool other;
    int rc;
    if (!c->target.exists)
        return 0;
    if (!overwrite) {
        dav_respond_status(c, 412, "The destination exists (Overwrite: F).");
        return 412;
    }
    if (c->target.kind == DAV_RES_OBJECT) {
        if (c->obj.kind == DAV_RES_OBJECT)
            return 0;
        rc = store_delete_object(c->store, c->target.coll, c->path + c->name_off, c->name_len, NULL);
    } else {
        rc = dav_delete_tree(c, c->target.path, c->target.path_len);
    }
    if (rc != STORE_OK) {
        dav_respond_store_error(c, rc);
        return dav_store_http_status(rc);
    }
    /* what is there now: nothing, as an object or a collection as the source is */
    d = destination(c, &len, &other);
    if ((rc = dav_resolve_path(c, d, len)) != 0) {
        dav_respond_status(c, rc, NULL);
        return rc;
    }
    return 0;
}

static int copy_object(struct dav_ctx *c, bool move)
{
    size_t len;
    bool other;
    const char *d = destination(c, &len, &other);
    int rc;
    /* a collection's path, "c/" (the collection replaced, or none there): the
     * object goes to "c" */
    if (c->target.kind == DAV_RES_COLL && len > 1 && d[len - 1] == '/' &&
        (rc = dav_resolve_path(c, d, len - 1)) != 0) {
        dav_respond_status(c, rc, NULL);
        return rc;
    }
    if (c->target.kind != DAV_RES_OBJECT) {
        dav_respond_status(c, 409, "The destination is a collection.");
        return 409;
    }
    if (!c->parent_exists) {
        dav_respond_status(c, 409, "The destination's parent collection does not exist.");
        return 409;
    }
    /* a MOVE inside one collection changes nothing its type checks */
    if (!(move && c->obj.coll == c->target.coll) && (rc = dav_copy_check(c)) != 0)
        return rc;
    rc = store_copy_object(c->store, c->obj.coll, c->obj_path + c->obj_name_off,
                           c->obj.path_len - c->obj_name_off, c->target.coll, c->path + c->name_off,
                           c->name_len, move, NULL);
    if (rc != STORE_OK) {
        dav_respond_store_error(c, rc);
        return dav_store_http_status(rc);
    }
    return 0;
}

/* The collections below the source, shortest path first (a parent before
 * its members): the one after (len, id) in that order. */
struct next_below {
    const char *prefix;
    size_t len, after_len;
    uint32_t after_id, id;
    size_t best_len;
};

static int next_below_cb(void *ctx, const struct store_collection *info)
{
    struct next_below *n = ctx;
    if (info->path_len <= n->len + 1 || memcmp(info->path + 1, n->prefix, n->len) != 0)
        return 0;
    if (info->path_len < n->after_len || (info->path_len == n->after_len && info->id <= n->after_id))
        return 0;
    if (n->best_len && (info->path_len > n->best_len || (info->path_len == n->best_len && info->id > n->id)))
        return 0;
    n->best_len = info->path_len;
    n->id = info->id;
    return 0;
}

/* The members of collection from, copied into to (section 9.8.3). */
static int copy_members(struct dav_ctx *c, uint32_t from, uint32_t to)
{
    int rc;
    dav_enum_start(c, DAV_SRC_OBJECTS);
    while ((rc = dav_enum_next(c, from)) == 1) {
        rc = store_copy_object(c->store, from, c->member.name, c->member.len, to, c->member.name,
                               c->member.len, 0, NULL);
        if (rc != STORE_OK)
            return rc;
    }
    return rc;
}

/* The target as a collection's path, ending in '/' (dav_resolve leaves room
 * for it); its length. */
static size_t coll_path(struct dav_ctx *c)
{
    size_t len = c->target.path_len;
    if (c->path[len - 1] != '/') {
        c->path[len++] = '/';
        c->path[len] = '\0';
        c->target.path_len = len;
    }
    return len;
}

/* What a collection's COPY or MOVE checks before the destination is
 * replaced: 0 or the status answered. */
static int collection_checks(struct dav_ctx *c, bool move)
{
    size_t dlen = coll_path(c);
    uint32_t parent;
    const struct dav_coll_type *parent_type;

    /* section 9.8.3: Depth 0 or infinity; section 9.9.2: a MOVE is always infinity */
    if (c->depth == 1 || (move && c->depth != -1)) {
        dav_respond_status(c, 400, move ? "MOVE of a collection is Depth: infinity." :
                                          "COPY of a collection is Depth: 0 or infinity.");
        return 400;
    }
    if (dlen >= c->obj.path_len && memcmp(c->path, c->obj_path, c->obj.path_len) == 0) {
        dav_respond_status(c, 403, "The destination is inside the source.");
        return 403;
    }
    if (!dav_coll_parent_exists(c, c->path, dlen, &parent, &parent_type)) {
        dav_respond_status(c, 409, "The destination's parent collection does not exist.");
        return 409;
    }
    if (parent_type && parent_type->no_collections) {
        /* as MKCOL: the moved type's own precondition (CalDAV: RFC 4791 section 5.3.2.1,
         * calendar-collection-location-ok on COPY and MOVE), else the parent's text */
        if (c->obj.type && c->obj.type->location.name)
            dav_respond_precondition(c, 403, c->obj.type->location.prefix, c->obj.type->location.name);
        else
            dav_respond_status(c, 403, parent_type->no_collections);
        return 403;
    }
    return 0;
}

/* Sections 9.8.8 and 9.9.4: the resource below the destination that failed
 * (its URL in c->path, c->target.path_len long) and its status (c->phase). */
static int member_failed_render(struct dav_ctx *c)
{
    struct xml_writer w;
    dav_multistatus_open(c);
    dav_writer(c, &w);
    xml_write_start(&w, "D", "response");
    dav_write_href(&w, c->path, c->target.path_len);
    dav_write_status(&w, c->phase);
    xml_write_end(&w);
    dav_writer_done(c, &w);
    dav_multistatus_close(c);
    c->done = true;
    return 0;
}

/* The error rc on the resource at coll[0..len) (a collection's URL below
 * or at the destination), or on its member c->member when member is set:
 * answered as a 207 when it is below the destination, else as itself. */
static int copy_failed(struct dav_ctx *c, const char *coll, size_t len, bool member, int rc)
{
    size_t name_len = member ? c->member.len : 0;
    if ((!member && len == c->target.path_len) || len + name_len > DAV_PATH_MAX) {
        dav_respond_store_error(c, rc);
        return dav_store_http_status(rc);
    }
    memmove(c->path, coll, len);
    memcpy(c->path + len, c->member.name, name_len);
    c->path[len + name_len] = '\0';
    c->target.path_len = len + name_len;
    c->phase = dav_store_http_status(rc);
    dav_respond_multistatus(c, member_failed_render);
    return 207;
}

static int copy_collection(struct dav_ctx *c, bool move)
{
    struct next_below n;
    struct store_collection info;
    char key[STORE_PATH_MAX + 1];
    size_t dlen = coll_path(c);
    uint32_t id;
    int rc;

    if (dav_coll_key(c->path, dlen, c->obj.type ? c->obj.type->key : DAV_PLAIN_KEY, key)) {
        dav_respond_status(c, 414, NULL);
        return 414;
    }
    rc = store_coll_copy(c->store, c->obj.coll, key, move, &id);
    if (rc != STORE_OK)
        return copy_failed(c, c->path, dlen, false, rc);
    if (!move && c->depth != 0 && (rc = copy_members(c, c->obj.coll, id)) != STORE_OK)
        return copy_failed(c, c->path, dlen, true, rc);
    /* the collections below, at the same place under the destination */
    memset(&n, 0, sizeof(n));
    n.prefix = c->obj_path;
    n.len = c->obj.path_len;
    while (move || c->depth != 0) {
        size_t klen;
        n.best_len = 0;
        if ((rc = store_coll_list(c->store, next_below_cb, &n)) != STORE_OK)
            return copy_failed(c, c->path, dlen, false, rc);
        if (!n.best_len)
            break;
        n.after_len = n.best_len;
        n.after_id = n.id;
        /* key, destination path, the rest of the path below the source */
        klen = 1 + dlen + n.best_len - 1 - n.len;
        if (klen > STORE_PATH_MAX || (rc = store_coll_info(c->store, n.id, &info)) != STORE_OK)
            return copy_failed(c, c->path, dlen, false, klen > STORE_PATH_MAX ? STORE_ERR_INVALID : rc);
        memcpy(key + 1 + dlen, info.path + 1 + n.len, n.best_len - 1 - n.len);
        key[0] = info.path[0];
        key[klen] = '\0';
        if (move) {
            /* renamed collections leave the source's prefix: a pass finds the rest */
            rc = store_coll_copy(c->store, n.id, key, 1, NULL);
            n.after_len = 0;
            n.after_id = 0;
        } else if ((rc = store_coll_copy(c->store, n.id, key, 0, &id)) == STORE_OK &&
                   (rc = copy_members(c, n.id, id)) != STORE_OK) {
            return copy_failed(c, key + 1, klen - 1, true, rc);
        }
        if (rc != STORE_OK)
            return copy_failed(c, key + 1, klen - 1, false, rc);
    }
    return 0;
}

void dav_do_copymove(struct dav_ctx *c)
{
    const struct http_request *req = c->x->req;
    bool move = req->method == HTTP_MOVE, overwrite = true, existed;
    size_t vlen;
    const char *v;
    char etag[16];
    int rc;

    if (c->target.kind != DAV_RES_COLL && c->target.kind != DAV_RES_OBJECT) {
        dav_respond_status(c, 403, "The root, the homes and their fixed collections cannot be copied or moved.");
        return;
    }
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if ((v = http_header(req, "Overwrite", &vlen)) != NULL) {
        /* section 10.6 */
        if (vlen != 1 || (v[0] != 'T' && v[0] != 'F')) {
            dav_respond_status(c, 400, "Overwrite is T or F.");
            return;
        }
        overwrite = v[0] == 'T';
    }
    if (c->target.kind == DAV_RES_OBJECT) {
        /* conditional headers are about the source, the request's target */
        dav_etag_format(c->target.obj.etag, etag, sizeof(etag));
        if ((rc = http_preconditions(req, etag)) != 0) {
            dav_respond_status(c, rc, NULL);
            return;
        }
    }
    if (resolve_destination(c))
        return;
    /* sections 9.8.5, 9.9.4: 403 when source and destination are the same;
     * and replacing a collection the source is in would delete the source */
    if (c->target.path_len <= c->obj.path_len && memcmp(c->path, c->obj_path, c->target.path_len) == 0 &&
        (c->target.path_len == c->obj.path_len || c->target.kind == DAV_RES_COLL)) {
        dav_respond_status(c, 403, c->target.path_len == c->obj.path_len
                                       ? "The source and the destination are the same."
                                       : "The source is inside the destination.");
        return;
    }
    existed = c->target.exists;
    if ((c->obj.kind == DAV_RES_COLL && collection_checks(c, move)) || clear_destination(c, overwrite))
        return;
    rc = c->obj.kind == DAV_RES_OBJECT ? copy_object(c, move) : copy_collection(c, move);
    if (rc == 0)
        dav_respond_empty(c, existed ? 204 : 201, NULL);
}
