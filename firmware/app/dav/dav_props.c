/* Live properties (RFC 4918 section 15, RFC 5397, RFC 3744, RFC 3253) and
 * those the layers above register, and their propstat elements in a
 * multistatus, dead properties (section 4, dav_deadprops.c) with them. */
#include "dav/dav_private.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void write_user_href(struct xml_writer *w, const char *user)
{
    char path[DAV_PATH_MAX + 1];
    int n = snprintf(path, sizeof(path), DAV_ROOT_PATH "%s/", user);
    dav_write_href(w, path, (size_t)n);
}

static bool p_resourcetype(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (w && r->kind != DAV_RES_OBJECT) {
        xml_write_start(w, "D", "resourcetype");
        xml_write_start(w, "D", "collection");
        xml_write_end(w);
        if (r->kind == DAV_RES_HOME) {
            xml_write_start(w, "D", "principal");
            xml_write_end(w);
        }
        if (r->type && r->type->resourcetype.name) {
            xml_write_start(w, r->type->resourcetype.prefix, r->type->resourcetype.name);
            xml_write_end(w);
        }
        xml_write_end(w);
    } else if (w) {
        xml_write_start(w, "D", "resourcetype");
        xml_write_end(w);
    }
    return true;
}

static bool coll_prop(struct dav_ctx *c, const struct dav_resource *r, enum store_prop prop,
                      struct xml_writer *w, const char *prefix, const char *name)
{
    char value[STORE_COLL_RECORD_MAX];
    size_t len = 0;
    if (r->kind != DAV_RES_COLL ||
        store_coll_get_prop(c->store, r->coll, prop, value, sizeof(value), &len) != STORE_OK)
        return false;
    if (w)
        xml_write_text_element(w, prefix, name, value, len);
    return true;
}

static bool p_displayname(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind == DAV_RES_HOME) {
        if (w)
            xml_write_text_element(w, "D", "displayname", c->user, strlen(c->user));
        return true;
    }
    return coll_prop(c, r, STORE_PROP_DISPLAYNAME, w, "D", "displayname");
}

/* By hand, not snprintf: picolibc formats with 64-bit divisions, and a
 * listing formats an ETag and a status line per member. */
void dav_etag_format(uint32_t etag, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    char tag[11];
    tag[0] = tag[9] = '"';
    for (int i = 8; i >= 1; i--, etag >>= 4)
        tag[i] = hex[etag & 15];
    tag[10] = '\0';
    if (size) {
        size_t n = size - 1 < 10 ? size - 1 : 10;
        memcpy(out, tag, n);
        out[n] = '\0';
    }
}

static bool p_getetag(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char etag[16];
    if (r->kind != DAV_RES_OBJECT)
        return false;
    if (w) {
        dav_etag_format(r->obj.etag, etag, sizeof(etag));
        xml_write_text_element(w, "D", "getetag", etag, strlen(etag));
    }
    return true;
}

const char *dav_content_type(const struct dav_resource *r)
{
    return r->type && r->type->content_type ? r->type->content_type : "application/octet-stream";
}

static bool p_getcontenttype(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind != DAV_RES_OBJECT)
        return false;
    if (w)
        xml_write_text_element(w, "D", "getcontenttype", dav_content_type(r), strlen(dav_content_type(r)));
    return true;
}

static bool p_getcontentlength(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char n[16];
    if (r->kind != DAV_RES_OBJECT)
        return false;
    if (w) {
        snprintf(n, sizeof(n), "%" PRIu32, r->obj.size);
        xml_write_text_element(w, "D", "getcontentlength", n, strlen(n));
    }
    return true;
}

/* RFC 5397 section 3 */
static bool p_current_user_principal(struct dav_ctx *c, const struct dav_resource *r,
                                     struct xml_writer *w)
{
    if (w) {
        xml_write_start(w, "D", "current-user-principal");
        write_user_href(w, c->user);
        xml_write_end(w);
    }
    return true;
}

/* RFC 3744 section 4.2 */
static bool p_principal_url(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind != DAV_RES_HOME)
        return false;
    if (w) {
        xml_write_start(w, "D", "principal-URL");
        write_user_href(w, c->user);
        xml_write_end(w);
    }
    return true;
}

/* RFC 3744 section 5.1: everything below /dav/<user>/ is the user's */
static bool p_owner(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind == DAV_RES_ROOT)
        return false;
    if (w) {
        xml_write_start(w, "D", "owner");
        write_user_href(w, c->user);
        xml_write_end(w);
    }
    return true;
}

/* RFC 3744 section 5.4: the owner may do everything */
static bool p_current_user_privilege_set(struct dav_ctx *c, const struct dav_resource *r,
                                         struct xml_writer *w)
{
    static const char *const privileges[] = {"read", "write", "write-properties", "write-content",
                                             "bind", "unbind", "read-current-user-privilege-set"};
    unsigned i;
    if (w) {
        xml_write_start(w, "D", "current-user-privilege-set");
        for (i = 0; i < sizeof(privileges) / sizeof(privileges[0]); i++) {
            if (r->kind == DAV_RES_ROOT && i > 0 && i < 6)
                continue;
            xml_write_start(w, "D", "privilege");
            xml_write_start(w, "D", privileges[i]);
            xml_write_end(w);
            xml_write_end(w);
        }
        xml_write_end(w);
    }
    return true;
}

/* The REPORTs registered for collections of this type (NULL: of every
 * collection), in the order registered. */
static void write_reports(struct xml_writer *w, const struct dav_coll_type *type)
{
    const struct dav_extension *ext;
    unsigned e, i;
    for (e = 0; (ext = dav_extensions[e]) != NULL; e++) {
        for (i = 0; i < ext->n_reports; i++) {
            if (ext->reports[i].type != type)
                continue;
            xml_write_start(w, "D", "supported-report");
            xml_write_start(w, "D", "report");
            xml_write_start(w, ext->reports[i].prefix, ext->reports[i].name);
            xml_write_end(w);
            xml_write_end(w);
            xml_write_end(w);
        }
    }
}

/* RFC 3253 section 3.1.5: those of the collection's type, then those of
 * every collection */
static bool p_supported_report_set(struct dav_ctx *c, const struct dav_resource *r,
                                   struct xml_writer *w)
{
    if (r->kind != DAV_RES_COLL)
        return false;
    if (!w)
        return true;
    xml_write_start(w, "D", "supported-report-set");
    if (r->type)
        write_reports(w, r->type);
    write_reports(w, NULL);
    xml_write_end(w);
    return true;
}

static const struct dav_prop props[] = {
    {XML_NS_DAV, "D", "resourcetype", p_resourcetype, 0, DAV_PROP_ALLPROP | DAV_PROP_OF_CONTENT, NULL},
    {XML_NS_DAV, "D", "displayname", p_displayname, STORE_PROP_DISPLAYNAME, DAV_PROP_ALLPROP, NULL},
    {XML_NS_DAV, "D", "getetag", p_getetag, 0, DAV_PROP_ALLPROP | DAV_PROP_OF_CONTENT, NULL},
    {XML_NS_DAV, "D", "getcontenttype", p_getcontenttype, 0, DAV_PROP_ALLPROP | DAV_PROP_OF_CONTENT, NULL},
    {XML_NS_DAV, "D", "getcontentlength", p_getcontentlength, 0, DAV_PROP_ALLPROP | DAV_PROP_OF_CONTENT, NULL},
    {XML_NS_DAV, "D", "current-user-principal", p_current_user_principal, 0, 0, NULL},
    {XML_NS_DAV, "D", "principal-URL", p_principal_url, 0, 0, NULL},
    {XML_NS_DAV, "D", "owner", p_owner, 0, 0, NULL},
    {XML_NS_DAV, "D", "current-user-privilege-set", p_current_user_privilege_set, 0, 0, NULL},
    {XML_NS_DAV, "D", "supported-report-set", p_supported_report_set, 0, 0, NULL},
};
#define PROPS_COUNT (sizeof(props) / sizeof(props[0]))

/* WebDAV's own first, then each extension's in the order registered. */
const struct dav_prop *dav_prop_find(const struct xml_node *n)
{
    const struct dav_extension *ext;
    unsigned e, i;
    for (i = 0; i < PROPS_COUNT; i++)
        if (xml_is(n, props[i].ns, props[i].name))
            return &props[i];
    for (e = 0; (ext = dav_extensions[e]) != NULL; e++)
        for (i = 0; i < ext->n_props; i++)
            if (xml_is(n, ext->props[i].ns, ext->props[i].name))
                return &ext->props[i];
    return NULL;
}

/* A property of r: what its getter writes, or the value the collection keeps. */
static bool prop_get(const struct dav_prop *d, struct dav_ctx *c, const struct dav_resource *r,
                     struct xml_writer *w)
{
    if (d->type && (r->kind != DAV_RES_COLL || r->type != d->type))
        return false;
    return d->get ? d->get(c, r, w) : coll_prop(c, r, (enum store_prop)d->stored, w, d->prefix, d->name);
}

bool dav_prop_requested(const struct dav_ctx *c, const char *ns, const char *name)
{
    return c->props && xml_child(c->props, ns, name) != NULL;
}

/* An element named like a requested one, empty, in its own namespace. */
void dav_write_prop_name(struct xml_writer *w, const struct xml_node *n)
{
    xml_write_raw(w, n->ns.len ? "<X:" : "<", n->ns.len ? 3 : 1);
    xml_write_raw(w, n->name.ptr, n->name.len);
    xml_write_raw(w, n->ns.len ? " xmlns:X=\"" : " xmlns=\"", n->ns.len ? 10 : 8);
    dav_write_attr_value(w, n->ns.ptr, n->ns.len);
    xml_write_raw(w, "\"/>", 3);
}

/* allprop or propname: each of the table's properties that r has. */
static unsigned write_all(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                          const struct dav_prop *table, unsigned n)
{
    unsigned found = 0, i;
    for (i = 0; i < n; i++) {
        if (c->mode == DAV_ALLPROP && !(table[i].flags & DAV_PROP_ALLPROP))
            continue;
        if (c->mode == DAV_PROPNAME) {
            if (prop_get(&table[i], c, r, NULL)) {
                xml_write_start(w, table[i].prefix, table[i].name);
                xml_write_end(w);
                found++;
            }
        } else if (prop_get(&table[i], c, r, w)) {
            found++;
        }
    }
    return found;
}

static bool is_streamed(const struct xml_node *n, const struct dav_prop *streamed)
{
    return streamed && xml_is(n, streamed->ns, streamed->name);
}

bool dav_prop_get_named(struct dav_ctx *c, const struct dav_resource *r, const struct xml_node *n,
                        struct xml_writer *w)
{
    const struct dav_prop *d = dav_prop_find(n);
    if (d && prop_get(d, c, r, w))
        return true;
    return dav_prop_may_be_dead(n) && dav_dead_prop_get(c, r, n, w);
}

/* A requested property r does not have (the streamed one it has). */
static bool missing_from(struct dav_ctx *c, const struct dav_resource *r, const struct xml_node *n,
                         const struct dav_prop *streamed)
{
    return !is_streamed(n, streamed) && !dav_prop_get_named(c, r, n, NULL);
}

/* RFC 4918 section 9.1: 404 for each property that does not exist */
static void write_missing(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                          const struct dav_prop *streamed)
{
    xml_write_start(w, "D", "propstat");
    xml_write_start(w, "D", "prop");
    XML_FOR_EACH_CHILD(n, c->props) {
        if (missing_from(c, r, n, streamed))
            dav_write_prop_name(w, n);
    }
    xml_write_end(w);
    dav_write_status(w, 404);
    xml_write_end(w);
}

unsigned dav_write_propstats(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                             const struct dav_prop *streamed)
{
    const struct dav_extension *ext;
    unsigned found = 0, missing = 0, e;

    xml_write_start(w, "D", "propstat");
    xml_write_start(w, "D", "prop");
    if (c->mode == DAV_PROP && c->props) {
        XML_FOR_EACH_CHILD(n, c->props) {
            if (is_streamed(n, streamed) || dav_prop_get_named(c, r, n, w))
                found++;
            else
                missing++;
        }
    } else {
        /* sections 9.1, 14.2: allprop and propname include the dead properties */
        found = write_all(c, w, r, props, PROPS_COUNT);
        for (e = 0; (ext = dav_extensions[e]) != NULL; e++)
            found += write_all(c, w, r, ext->props, ext->n_props);
        found += dav_dead_props_write_all(c, r, w, c->mode == DAV_PROPNAME);
    }
    if (streamed)
        return found; /* the caller closes prop and propstat after its property */
    xml_write_end(w);
    dav_write_status(w, 200);
    xml_write_end(w);
    if (missing)
        write_missing(c, w, r, NULL);
    return found;
}

void dav_write_propstats_tail(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                              const struct dav_prop *streamed)
{
    unsigned missing = 0;
    xml_write_raw(w, "</D:prop>", 9);
    dav_write_status(w, 200);
    xml_write_raw(w, "</D:propstat>", 13);
    if (c->props) {
        XML_FOR_EACH_CHILD(n, c->props) {
            if (missing_from(c, r, n, streamed))
                missing++;
        }
    }
    if (missing)
        write_missing(c, w, r, streamed);
}
