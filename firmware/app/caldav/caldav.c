/* CalDAV (RFC 4791) on the WebDAV layer: the calendar properties and
 * MKCALENDAR. Calendar object PUTs are checked in caldav_put.c, the REPORTs
 * are caldav_report.c and caldav_freebusy.c, their filters caldav_filter.c. */
#include "caldav/caldav_private.h"

#include <stdio.h>
#include <string.h>

/* ---- properties ------------------------------------------------------------ */

/* RFC 4791 section 6.2.1: the home is the principal's own collection. */
bool caldav_prop_calendar_home_set(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char path[DAV_PATH_MAX + 1];
    int n;
    if (r->kind != DAV_RES_HOME)
        return false;
    if (w) {
        n = snprintf(path, sizeof(path), DAV_ROOT_PATH "%s/", c->user);
        xml_write_start(w, "C", "calendar-home-set");
        dav_write_href(w, path, (size_t)n);
        xml_write_end(w);
    }
    return true;
}

static const char *const components[] = {"VEVENT", "VTODO", "VJOURNAL"};

/* Section 5.2.3 */
bool caldav_prop_supported_components(struct dav_ctx *c, const struct dav_resource *r,
                                      struct xml_writer *w)
{
    unsigned i;
    if (r->kind != DAV_RES_COLL || !r->calendar)
        return false;
    if (w) {
        xml_write_start(w, "C", "supported-calendar-component-set");
        for (i = 0; i < 3; i++) {
            xml_write_start(w, "C", "comp");
            xml_write_attr(w, "name", components[i], strlen(components[i]));
            xml_write_end(w);
        }
        xml_write_end(w);
    }
    return true;
}

/* Section 5.2.4 */
bool caldav_prop_supported_data(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind != DAV_RES_COLL || !r->calendar)
        return false;
    if (w) {
        xml_write_start(w, "C", "supported-calendar-data");
        xml_write_start(w, "C", "calendar-data");
        xml_write_attr(w, "content-type", "text/calendar", 13);
        xml_write_attr(w, "version", "2.0", 3);
        xml_write_end(w);
        xml_write_end(w);
    }
    return true;
}

/* Section 5.2.5 */
bool caldav_prop_max_resource_size(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char n[16];
    if (r->kind != DAV_RES_COLL || !r->calendar)
        return false;
    if (w) {
        snprintf(n, sizeof(n), "%u", (unsigned)DAV_MAX_RESOURCE_SIZE);
        xml_write_text_element(w, "C", "max-resource-size", n, strlen(n));
    }
    return true;
}

/* ---- MKCALENDAR (section 5.3.1) --------------------------------------------- */

void caldav_mkcalendar(struct dav_ctx *c)
{
    const struct xml_node *root = c->doc.root;
    uint32_t id;
    int rc;

    if (root && !xml_is(root, XML_NS_CALDAV, "mkcalendar")) {
        dav_respond_status(c, 400, "Expected a CALDAV:mkcalendar element.");
        return;
    }
    if (c->target.exists) {
        /* section 5.3.1.1 DAV:resource-must-be-null */
        dav_respond_precondition(c, 403, "D", "resource-must-be-null");
        return;
    }
    if (root) {
        enum dav_kind kind = c->target.kind;
        bool calendar = c->target.calendar;
        c->target.kind = DAV_RES_COLL;
        c->target.calendar = true;
        rc = dav_apply_props(c, 0, root, true);
        c->target.kind = kind;
        c->target.calendar = calendar;
        if (rc != STORE_OK) {
            dav_respond_status(c, 403, "A property cannot be set.");
            return;
        }
    }
    if (dav_create_collection(c, 'c', &id) != 0)
        return;
    c->target.coll = id;
    c->target.calendar = true;
    if (root && (rc = dav_apply_props(c, id, root, false)) != STORE_OK) {
        store_coll_delete(&dav_store, id);
        dav_respond_status(c, dav_store_http_status(rc), store_strerror(rc));
        return;
    }
    {
        struct http_response resp;
        memset(&resp, 0, sizeof(resp));
        resp.status = 201;
        httpd_respond(c->x, &resp);
    }
}
