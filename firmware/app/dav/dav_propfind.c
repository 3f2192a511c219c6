/* PROPFIND (RFC 4918 section 9.1). */
#include "dav/dav_private.h"

#include <stdio.h>
#include <string.h>

static void write_response(struct dav_ctx *c, const struct dav_resource *r)
{
    struct xml_writer w;
    dav_writer(c, &w);
    xml_write_start(&w, "D", "response");
    dav_write_href(&w, r->path, r->path_len);
    dav_write_propstats(c, &w, r, NULL);
    xml_write_end(&w);
    dav_writer_done(c, &w);
}

enum { PF_SELF, PF_COLLECTIONS, PF_FIXED, PF_OBJECTS, PF_CLOSE };

int dav_propfind_render(struct dav_ctx *c)
{
    char path[DAV_PATH_MAX + 2];
    struct dav_resource r;
    uint32_t variant;
    int rc;

    switch (c->phase) {
    case PF_SELF:
        dav_multistatus_open(c);
        if (c->target.exists)
            write_response(c, &c->target);
        c->phase = c->depth == 0 || c->target.kind == DAV_RES_OBJECT ? PF_CLOSE : PF_COLLECTIONS;
        dav_enum_start(c, DAV_SRC_COLLECTIONS);
        return 0;
    case PF_COLLECTIONS:
        if (c->target.kind == DAV_RES_ROOT) {
            /* the DAV root lists the user's own home only; the server's root, the DAV root */
            bool server_root = c->target.path_len == 1;
            memset(&r, 0, sizeof(r));
            r.kind = server_root ? DAV_RES_ROOT : DAV_RES_HOME;
            r.path = path;
            r.path_len = server_root ? (size_t)snprintf(path, sizeof(path), DAV_ROOT_PATH)
                                     : (size_t)snprintf(path, sizeof(path), DAV_ROOT_PATH "%s/", c->user);
            r.exists = true;
            write_response(c, &r);
            c->phase = PF_CLOSE;
            return 0;
        }
        rc = dav_enum_next(c, 0);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            c->phase = c->target.kind == DAV_RES_COLL                              ? PF_OBJECTS
                       : DAV_FIXED_COLLECTIONS && c->target.kind == DAV_RES_HOME ? PF_FIXED
                                                                                 : PF_CLOSE;
            dav_enum_start(c, DAV_SRC_OBJECTS);
            c->obj_phase = 0;
            return 0;
        }
        memset(&r, 0, sizeof(r));
        r.kind = DAV_RES_COLL;
        memcpy(path, c->member.name + 1, c->member.len - 1);
        r.path = path;
        r.path_len = c->member.len - 1;
        r.coll = c->member.coll;
        r.type = dav_coll_type_of(c->member.name[0]);
        r.exists = store_coll_info(c->store, r.coll, &r.info) == STORE_OK;
        /* a collection a fixed one hides (made before it was registered) is not listed */
        if (r.exists && !(DAV_FIXED_COLLECTIONS && c->target.kind == DAV_RES_HOME &&
                          dav_fixed_type(path + c->target.path_len, r.path_len - c->target.path_len)))
            write_response(c, &r);
        return 0;
    case PF_FIXED:
        /* the home's fixed collections (dav.h DAV_RES_FIXED), after the store's; obj_phase
         * counts them */
        memset(&r, 0, sizeof(r));
        if (!DAV_FIXED_COLLECTIONS || (r.type = dav_fixed_type_at((unsigned)c->obj_phase++)) == NULL) {
            c->phase = PF_CLOSE;
            return 0;
        }
        r.kind = DAV_RES_FIXED;
        r.path = path;
        r.path_len = (size_t)snprintf(path, sizeof(path), "%s%s/", c->target.path, r.type->home_name);
        r.exists = true;
        write_response(c, &r);
        return 0;
    case PF_OBJECTS:
        rc = dav_enum_next(c, c->target.coll);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            c->phase = PF_CLOSE;
            return 0;
        }
        dav_object_resource(c, &c->member, path, &r);
        variant = dav_request_variant(c, NULL);
        if (!dav_send_kept_response(c, &r, variant)) {
            size_t from = c->out_len;
            write_response(c, &r);
            dav_keep_response(c, &r, variant, from);
        }
        return 0;
    default:
        dav_multistatus_close(c);
        c->done = true;
        return 0;
    }
}

void dav_do_propfind(struct dav_ctx *c)
{
    const struct xml_node *root;
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (dav_parse_body(c)) {
        dav_respond_status(c, 400, "The body is not well-formed XML.");
        return;
    }
    root = c->doc.root;
    c->mode = DAV_ALLPROP; /* section 9.1: no body means allprop */
    if (root) {
        if (!xml_is(root, XML_NS_DAV, "propfind")) {
            dav_respond_status(c, 400, "Expected a DAV:propfind element.");
            return;
        }
        if ((c->props = xml_child(root, XML_NS_DAV, "prop")) != NULL)
            c->mode = DAV_PROP;
        else if (xml_child(root, XML_NS_DAV, "propname"))
            c->mode = DAV_PROPNAME;
        else if (!xml_child(root, XML_NS_DAV, "allprop")) {
            dav_respond_status(c, 400, "Expected prop, propname or allprop.");
            return;
        }
    }
    c->phase = PF_SELF;
    dav_respond_multistatus(c, dav_propfind_render);
}
