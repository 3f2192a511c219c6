/* PROPPATCH (RFC 4918 section 9.2) of live properties kept in the store
 * and of dead ones (section 4, dav_deadprops.c).
 *
 * The instructions are applied in document order to a copy of the target's
 * property list in RAM; the new list is then written as one store record
 * (store_coll_set_props, store_obj_set_props). So either every instruction
 * takes effect or none does (section 9.2), across a power cut too. */
#include "dav/dav_private.h"

#include <string.h>

/* The property list being edited and, once an instruction failed, which
 * one (its place among the request's properties) and its status. */
struct patch {
    uint8_t *list;
    size_t len, cap;
    unsigned failed_at;
    int failed_status;
    bool creating;          /* the request creating the collection (dav_apply_props) */
};

/* The store key of n if it is a live property r keeps in its property
 * list, else 0. */
static uint8_t live_key(const struct dav_resource *r, const struct xml_node *n)
{
    const struct dav_prop *d = dav_prop_find(n);
    if (!d || !d->stored || r->kind != DAV_RES_COLL || (d->type && d->type != r->type))
        return 0;
    return d->stored;
}

/* A property r's type takes only in the request creating r, else NULL. */
static const struct dav_prop *at_creation(const struct dav_resource *r, const struct xml_node *n)
{
    const struct dav_prop *d = dav_prop_find(n);
    return d && (d->flags & DAV_PROP_AT_CREATION) && r->kind == DAV_RES_COLL && d->type == r->type ? d : NULL;
}

/* Section 9.2.1: the status instruction n gets on its own, 0 when it can be
 * done: 403 for a protected property (section 16,
 * DAV:cannot-modify-protected-property) or a live value this server does not
 * take, and on the root and the homes, which keep no properties. A property
 * set at creation only is refused anywhere else (creating false). */
static int refused(const struct dav_resource *r, const struct xml_node *n, bool set, bool creating)
{
    uint8_t key = live_key(r, n);
    if (r->kind != DAV_RES_COLL && r->kind != DAV_RES_OBJECT)
        return 403;
    if (at_creation(r, n))
        return creating && set ? 0 : 403;
    if (key) {
        const struct dav_prop *d = dav_prop_find(n);
        struct xml_str v = d->flags & DAV_PROP_VERBATIM ? n->text : xml_text_trimmed(n);
        return set && (v.len == 0 || v.len > STORE_COLL_RECORD_MAX / 2) ? 403 : 0;
    }
    return dav_prop_may_be_dead(n) ? 0 : 403;
}

/* One instruction on the list: 0, or its status. */
static int apply_one(struct patch *p, const struct dav_resource *r, const struct xml_node *n, bool set)
{
    uint8_t key = live_key(r, n);
    const struct dav_prop *d;
    int status = refused(r, n, set, p->creating);
    if (status || at_creation(r, n))
        return status;
    dav_props_remove(p->list, &p->len, n, key);
    if (!set)
        return 0;
    if (!key)
        return dav_props_add_dead(p->list, &p->len, p->cap, n) ? 0 : 507;
    d = dav_prop_find(n);
    return dav_props_add_live(p->list, &p->len, p->cap, key,
                              d->flags & DAV_PROP_VERBATIM ? n->text : xml_text_trimmed(n)) ? 0 : 507;
}

/* Every set/remove instruction of update in document order, until one
 * fails (p->failed_at, p->failed_status). */
static void apply_all(struct patch *p, const struct dav_resource *r, const struct xml_node *update)
{
    unsigned at = 0;
    XML_FOR_EACH_CHILD(op, update) {
        bool set = xml_is(op, XML_NS_DAV, "set");
        const struct xml_node *prop;
        if ((!set && !xml_is(op, XML_NS_DAV, "remove")) || !(prop = xml_child(op, XML_NS_DAV, "prop")))
            continue;
        XML_FOR_EACH_CHILD(n, prop) {
            int status = apply_one(p, r, n, set);
            if (status) {
                p->failed_at = at;
                p->failed_status = status;
                return;
            }
            at++;
        }
    }
}

/* The edited list, written as one record: a store status. */
static int write_list(struct dav_ctx *c, const struct dav_resource *r, const struct patch *p)
{
    if (r->kind == DAV_RES_COLL)
        return store_coll_set_props(c->store, r->coll, p->list, p->len);
    return store_obj_set_props(c->store, r->coll, c->path + c->name_off, c->name_len, p->list, p->len);
}

/* Apply update to r: the list is loaded (with check_only, an empty one),
 * edited and, unless check_only, written. A store status; an instruction
 * that failed is in p. */
static int patch_resource(struct dav_ctx *c, const struct dav_resource *r, const struct xml_node *update,
                          bool check_only, struct patch *p)
{
    const uint8_t *list;
    size_t room;
    int rc;
    p->list = (uint8_t *)dav_work_buffer(&room);
    p->cap = room < STORE_PROPS_MAX ? room : STORE_PROPS_MAX;
    p->len = 0;
    p->failed_at = ~0u;
    p->failed_status = 0;
    if (!check_only && (r->kind == DAV_RES_COLL || r->kind == DAV_RES_OBJECT)) {
        if ((rc = dav_props_load(c, r, &list, &p->len)) != STORE_OK)
            return rc;
        if (p->len > p->cap)
            return STORE_ERR_TOO_LARGE;
        memcpy(p->list, list, p->len);
    }
    apply_all(p, r, update);
    if (p->failed_status)
        return STORE_ERR_INVALID;
    return check_only ? STORE_OK : write_list(c, r, p);
}

int dav_apply_props(struct dav_ctx *c, uint32_t coll, const struct xml_node *update, bool check_only)
{
    struct dav_resource r = c->target;
    struct patch p;
    p.creating = true;
    r.kind = DAV_RES_COLL;
    r.coll = coll;
    r.exists = true;
    return patch_resource(c, &r, update, check_only, &p);
}

/* The multistatus: each property's status (section 9.2.1), from the
 * outcome dav_do_proppatch keeps in c->phase: 200 for all, 507 for all (the
 * store could not take the list), or 0: an instruction failed, c->offset
 * the first, which has its own status (refused, else 507: no room), and
 * the others 424 unless refused on their own. */
static int proppatch_render(struct dav_ctx *c)
{
    static const char protected_error[] = "<D:error><D:cannot-modify-protected-property/></D:error>";
    struct xml_writer w;
    unsigned at = 0;
    dav_multistatus_open(c);
    dav_writer(c, &w);
    xml_write_start(&w, "D", "response");
    dav_write_href(&w, c->target.path, c->target.path_len);
    XML_FOR_EACH_CHILD(op, c->doc.root) {
        bool set = xml_is(op, XML_NS_DAV, "set");
        const struct xml_node *prop = xml_child(op, XML_NS_DAV, "prop");
        if (!prop || (!set && !xml_is(op, XML_NS_DAV, "remove")))
            continue;
        XML_FOR_EACH_CHILD(n, prop) {
            int status = c->phase ? c->phase : refused(&c->target, n, set, false);
            if (!status)
                status = at == c->offset ? 507 : 424;
            at++;
            xml_write_start(&w, "D", "propstat");
            xml_write_start(&w, "D", "prop");
            dav_write_prop_name(&w, n);
            xml_write_end(&w);
            dav_write_status(&w, status);
            if (status == 403 && !live_key(&c->target, n) && !dav_prop_may_be_dead(n))
                xml_write_raw(&w, protected_error, sizeof(protected_error) - 1);
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
    struct patch p;
    int rc;
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (dav_parse_body(c) || !c->doc.root || !xml_is(c->doc.root, XML_NS_DAV, "propertyupdate")) {
        dav_respond_status(c, 400, "Expected a DAV:propertyupdate element.");
        return;
    }
    p.creating = false;
    rc = patch_resource(c, &c->target, c->doc.root, false, &p);
    if (rc == STORE_ERR_IO || rc == STORE_ERR_BUSY || rc == STORE_ERR_NOT_FOUND) {
        dav_respond_store_error(c, rc);
        return;
    }
    /* section 9.2.1: 507 when the store cannot take the properties */
    c->phase = rc == STORE_OK ? 200 : rc == STORE_ERR_INVALID ? 0 : 507;
    c->offset = p.failed_at;
    dav_respond_multistatus(c, proppatch_render);
}
