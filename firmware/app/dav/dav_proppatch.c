/* PROPPATCH (RFC 4918 section 9.2). */
#include "dav/dav_private.h"

#include <string.h>

/* The property n names if PROPPATCH may set it on the target, else NULL. */
static const struct dav_prop *patchable(const struct dav_ctx *c, const struct xml_node *n)
{
    const struct dav_prop *d;
    if (c->target.kind != DAV_RES_COLL)
        return NULL;
    d = dav_prop_find(n);
    return d && d->stored && (!d->type || d->type == c->target.type) ? d : NULL;
}

/* Apply every set/remove instruction in document order, all or none
 * (section 9.2): a failure restores the values changed before it. Returns
 * 0, or the store status of the failure. */
int dav_apply_props(struct dav_ctx *c, uint32_t coll, const struct xml_node *update, bool check_only)
{
    size_t room;
    struct { uint8_t prop; uint16_t len; char value[STORE_COLL_RECORD_MAX]; } *saved =
        (void *)dav_work_buffer(&room); /* up to 4 properties' old values */
    unsigned nsaved = 0, i;
    int rc = STORE_OK;

    XML_FOR_EACH_CHILD(op, update) {
        bool set = xml_is(op, XML_NS_DAV, "set");
        const struct xml_node *prop;
        if (!set && !xml_is(op, XML_NS_DAV, "remove"))
            continue;
        if (!(prop = xml_child(op, XML_NS_DAV, "prop")))
            continue;
        XML_FOR_EACH_CHILD(p, prop) {
            const struct dav_prop *d = patchable(c, p);
            struct xml_str v;
            size_t old = 0;
            if (!d)
                return STORE_ERR_INVALID;
            v = d->flags & DAV_PROP_VERBATIM ? p->text : xml_text_trimmed(p);
            if (set && (v.len == 0 || v.len > STORE_COLL_RECORD_MAX / 2))
                return STORE_ERR_INVALID;
            if (check_only)
                continue;
            if (nsaved < 4 * sizeof(saved[0]) / sizeof(saved[0]) &&
                (size_t)(nsaved + 1) * sizeof(saved[0]) <= room) {
                saved[nsaved].prop = d->stored;
                if (store_coll_get_prop(c->store, coll, (enum store_prop)d->stored, saved[nsaved].value,
                                        sizeof(saved[nsaved].value), &old) != STORE_OK)
                    old = 0;
                saved[nsaved].len = (uint16_t)old;
                nsaved++;
            }
            rc = store_coll_set_prop(c->store, coll, (enum store_prop)d->stored, set ? v.ptr : NULL,
                                     set ? v.len : 0);
            if (rc != STORE_OK && !(rc == STORE_ERR_NOT_FOUND && !set))
                goto undo;
            rc = STORE_OK;
        }
    }
    return STORE_OK;
undo:
    for (i = nsaved; i-- > 0;)
        store_coll_set_prop(c->store, coll, (enum store_prop)saved[i].prop, saved[i].value,
                            saved[i].len);
    return rc;
}

static int proppatch_render(struct dav_ctx *c)
{
    struct xml_writer w;
    int rc = c->phase; /* the result, kept there by dav_do_proppatch */
    dav_multistatus_open(c);
    dav_writer(c, &w);
    xml_write_start(&w, "D", "response");
    dav_write_href(&w, c->target.path, c->target.path_len);
    XML_FOR_EACH_CHILD(op, c->doc.root) {
        const struct xml_node *prop = xml_child(op, XML_NS_DAV, "prop");
        if (!prop)
            continue;
        XML_FOR_EACH_CHILD(p, prop) {
            int status = rc == 0 ? 200 : patchable(c, p) ? 424 : 403;
            xml_write_start(&w, "D", "propstat");
            xml_write_start(&w, "D", "prop");
            dav_write_prop_name(&w, p);
            xml_write_end(&w);
            dav_write_status(&w, status);
            xml_write_end(&w);
        }
    }
    xml_write_end(&w);
    dav_writer_done(c, &w);
    dav_multistatus_close(c);
    c->done = true;
    return 0;
}

void dav_do_proppatch(struct dav_ctx *c)
{
    int rc;
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (dav_parse_body(c) || !c->doc.root || !xml_is(c->doc.root, XML_NS_DAV, "propertyupdate")) {
        dav_respond_status(c, 400, "Expected a DAV:propertyupdate element.");
        return;
    }
    rc = dav_apply_props(c, c->target.coll, c->doc.root, true);
    if (rc == STORE_OK)
        rc = dav_apply_props(c, c->target.coll, c->doc.root, false);
    if (rc != STORE_OK && rc != STORE_ERR_INVALID) {
        dav_respond_store_error(c, rc);
        return;
    }
    c->phase = rc == STORE_OK ? 0 : 1;
    dav_respond_multistatus(c, proppatch_render);
}
