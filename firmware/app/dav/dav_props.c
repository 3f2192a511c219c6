/* Live properties (RFC 4918 section 15, RFC 5397, RFC 3744, RFC 4791,
 * RFC 6578) and their propstat elements in a multistatus. */
#include "dav/dav_private.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "caldav/caldav.h"
#include "caldav/sync.h"

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
        if (r->kind == DAV_RES_COLL && r->calendar) {
            xml_write_start(w, "C", "calendar");
            xml_write_end(w);
        }
        xml_write_end(w);
    } else if (w) {
        xml_write_start(w, "D", "resourcetype");
        xml_write_end(w);
    }
    return true;
}

static bool coll_prop(const struct dav_resource *r, enum store_prop prop, struct xml_writer *w,
                      const char *prefix, const char *name)
{
    char value[STORE_COLL_RECORD_MAX];
    size_t len = 0;
    if (r->kind != DAV_RES_COLL ||
        store_coll_get_prop(&dav_store, r->coll, prop, value, sizeof(value), &len) != STORE_OK)
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
    return coll_prop(r, STORE_PROP_DISPLAYNAME, w, "D", "displayname");
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
    return r->calendar ? "text/calendar; charset=utf-8" : "application/octet-stream";
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

/* RFC 3253 section 3.1.5 */
static bool p_supported_report_set(struct dav_ctx *c, const struct dav_resource *r,
                                   struct xml_writer *w)
{
    static const char *const calendar_reports[] = {"calendar-multiget", "calendar-query",
                                                   "free-busy-query"};
    unsigned i;
    if (r->kind != DAV_RES_COLL)
        return false;
    if (!w)
        return true;
    xml_write_start(w, "D", "supported-report-set");
    for (i = 0; r->calendar && i < 3; i++) {
        xml_write_start(w, "D", "supported-report");
        xml_write_start(w, "D", "report");
        xml_write_start(w, "C", calendar_reports[i]);
        xml_write_end(w);
        xml_write_end(w);
        xml_write_end(w);
    }
    xml_write_start(w, "D", "supported-report");
    xml_write_start(w, "D", "report");
    xml_write_start(w, "D", "sync-collection");
    xml_write_end(w);
    xml_write_end(w);
    xml_write_end(w);
    xml_write_end(w);
    return true;
}

static bool p_sync_token(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char token[64];
    if (r->kind != DAV_RES_COLL)
        return false;
    if (w) {
        sync_token_format(r->coll, r->info.sync_seq, token, sizeof(token));
        xml_write_text_element(w, "D", "sync-token", token, strlen(token));
    }
    return true;
}

/* calendarserver.org CTag: changes whenever a member does */
static bool p_getctag(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char tag[32];
    if (r->kind != DAV_RES_COLL)
        return false;
    if (w) {
        snprintf(tag, sizeof(tag), "\"%" PRIu32 "-%" PRIu32 "\"", r->coll, r->info.sync_seq);
        xml_write_text_element(w, "CS", "getctag", tag, strlen(tag));
    }
    return true;
}

static bool p_calendar_description(struct dav_ctx *c, const struct dav_resource *r,
                                   struct xml_writer *w)
{
    return coll_prop(r, STORE_PROP_DESCRIPTION, w, "C", "calendar-description");
}

static bool p_calendar_color(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    return coll_prop(r, STORE_PROP_COLOR, w, "A", "calendar-color");
}

static bool p_calendar_timezone(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    return coll_prop(r, STORE_PROP_TIMEZONE, w, "C", "calendar-timezone");
}

struct prop_def {
    const char *ns, *prefix, *name;
    bool (*get)(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w);
    bool allprop;   /* RFC 4918 section 14.2: the live properties of this spec */
};

static const struct prop_def props[] = {
    {XML_NS_DAV, "D", "resourcetype", p_resourcetype, true},
    {XML_NS_DAV, "D", "displayname", p_displayname, true},
    {XML_NS_DAV, "D", "getetag", p_getetag, true},
    {XML_NS_DAV, "D", "getcontenttype", p_getcontenttype, true},
    {XML_NS_DAV, "D", "getcontentlength", p_getcontentlength, true},
    {XML_NS_DAV, "D", "current-user-principal", p_current_user_principal, false},
    {XML_NS_DAV, "D", "principal-URL", p_principal_url, false},
    {XML_NS_DAV, "D", "owner", p_owner, false},
    {XML_NS_DAV, "D", "current-user-privilege-set", p_current_user_privilege_set, false},
    {XML_NS_DAV, "D", "supported-report-set", p_supported_report_set, false},
    {XML_NS_DAV, "D", "sync-token", p_sync_token, false},
    {XML_NS_CALSERVER, "CS", "getctag", p_getctag, false},
    {XML_NS_CALDAV, "C", "calendar-home-set", caldav_prop_calendar_home_set, false},
    {XML_NS_CALDAV, "C", "supported-calendar-component-set", caldav_prop_supported_components, false},
    {XML_NS_CALDAV, "C", "supported-calendar-data", caldav_prop_supported_data, false},
    {XML_NS_CALDAV, "C", "max-resource-size", caldav_prop_max_resource_size, false},
    {XML_NS_CALDAV, "C", "calendar-description", p_calendar_description, false},
    {XML_NS_CALDAV, "C", "calendar-timezone", p_calendar_timezone, false},
    {XML_NS_APPLE_ICAL, "A", "calendar-color", p_calendar_color, false},
};
#define PROPS_COUNT (sizeof(props) / sizeof(props[0]))

static const struct prop_def *prop_lookup(const struct xml_node *n)
{
    size_t i;
    for (i = 0; i < PROPS_COUNT; i++)
        if (xml_is(n, props[i].ns, props[i].name))
            return &props[i];
    return NULL;
}

bool dav_prop_requested(const struct dav_ctx *c, const char *ns, const char *name)
{
    return c->props && xml_child(c->props, ns, name) != NULL;
}

static bool is_calendar_data(const struct xml_node *n)
{
    return xml_is(n, XML_NS_CALDAV, "calendar-data");
}

/* An element named like a requested one, empty, in its own namespace. */
void dav_write_prop_name(struct xml_writer *w, const struct xml_node *n)
{
    char buf[512];
    size_t len = 0, i;
    if (n->name.len > 200)
        return;
    buf[len++] = '<';
    if (n->ns.len) {
        memcpy(buf + len, "X:", 2);
        len += 2;
    }
    memcpy(buf + len, n->name.ptr, n->name.len);
    len += n->name.len;
    memcpy(buf + len, n->ns.len ? " xmlns:X=\"" : " xmlns=\"", n->ns.len ? 10 : 8);
    len += n->ns.len ? 10 : 8;
    for (i = 0; i < n->ns.len && len + 8 < sizeof(buf); i++) {
        char ch = n->ns.ptr[i];
        const char *ref = ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '"' ? "&quot;" : NULL;
        if (ref) {
            memcpy(buf + len, ref, strlen(ref));
            len += strlen(ref);
        } else {
            buf[len++] = ch;
        }
    }
    memcpy(buf + len, "\"/>", 3);
    len += 3;
    xml_write_raw(w, buf, len);
}

unsigned dav_write_propstats(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                             bool skip_data)
{
    unsigned found = 0, missing = 0;
    size_t i;

    xml_write_start(w, "D", "propstat");
    xml_write_start(w, "D", "prop");
    if (c->mode == DAV_PROP && c->props) {
        XML_FOR_EACH_CHILD(n, c->props) {
            const struct prop_def *d = prop_lookup(n);
            if (is_calendar_data(n) && skip_data) {
                found++;
                continue;
            }
            if (d && d->get(c, r, w))
                found++;
            else
                missing++;
        }
    } else {
        for (i = 0; i < PROPS_COUNT; i++) {
            if (c->mode == DAV_ALLPROP && !props[i].allprop)
                continue;
            if (c->mode == DAV_PROPNAME) {
                if (props[i].get(c, r, NULL)) {
                    xml_write_start(w, props[i].prefix, props[i].name);
                    xml_write_end(w);
                    found++;
                }
            } else if (props[i].get(c, r, w)) {
                found++;
            }
        }
    }
    if (skip_data)
        return found; /* the caller closes prop and propstat after the data */
    xml_write_end(w);
    dav_write_status(w, 200);
    xml_write_end(w);
    if (missing) {
        /* RFC 4918 section 9.1: 404 for each property that does not exist */
        xml_write_start(w, "D", "propstat");
        xml_write_start(w, "D", "prop");
        XML_FOR_EACH_CHILD(n, c->props) {
            const struct prop_def *d = prop_lookup(n);
            if (!(d && d->get(c, r, NULL)))
                dav_write_prop_name(w, n);
        }
        xml_write_end(w);
        dav_write_status(w, 404);
        xml_write_end(w);
    }
    return found;
}

/* After a skip_data dav_write_propstats and the streamed calendar-data. */
void dav_write_propstats_tail(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r)
{
    unsigned missing = 0;
    xml_write_raw(w, "</D:prop>", 9);
    dav_write_status(w, 200);
    xml_write_raw(w, "</D:propstat>", 13);
    if (c->props) {
        XML_FOR_EACH_CHILD(n, c->props) {
            const struct prop_def *d = prop_lookup(n);
            if (!is_calendar_data(n) && !(d && d->get(c, r, NULL)))
                missing++;
        }
    }
    if (!missing)
        return;
    xml_write_start(w, "D", "propstat");
    xml_write_start(w, "D", "prop");
    XML_FOR_EACH_CHILD(n, c->props) {
        const struct prop_def *d = prop_lookup(n);
        if (!is_calendar_data(n) && !(d && d->get(c, r, NULL)))
            dav_write_prop_name(w, n);
    }
    xml_write_end(w);
    dav_write_status(w, 404);
    xml_write_end(w);
}
