/* CalDAV (RFC 4791) on the WebDAV layer: what it registers there (the
 * calendar collection type, its properties, MKCALENDAR and the REPORTs, and
 * of scheduling (RFC 6638) the principal's properties, the inbox and outbox
 * and the outbox's POST), the properties and MKCALENDAR themselves. Calendar
 * object PUTs are checked in caldav_put.c, the REPORTs are caldav_report.c
 * and caldav_freebusy.c, their filters caldav_filter.c, calendar objects
 * caldav_object.c, scheduling caldav_sched.c. */
#include "caldav/caldav_private.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- properties ------------------------------------------------------------ */

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

/* A property of the principal (the home) holding one href, /dav/<user>/<member>. */
static bool principal_href(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w,
                           const char *name, const char *member)
{
    char path[DAV_PATH_MAX + 1];
    int n;
    if (r->kind != DAV_RES_HOME)
        return false;
    if (w) {
        n = snprintf(path, sizeof(path), DAV_ROOT_PATH "%s/%s", c->user, member);
        xml_write_start(w, "C", name);
        dav_write_href(w, path, (size_t)n);
        xml_write_end(w);
    }
    return true;
}

/* RFC 4791 section 6.2.1: the home is the principal's own collection. */
static bool p_calendar_home_set(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    return principal_href(c, r, w, "calendar-home-set", "");
}

#if CALDAV_SCHEDULING
/* RFC 6638 section 2.4.1: the principal's URL is the user's address (caldav_sched.c) */
static bool p_calendar_user_address_set(struct dav_ctx *c, const struct dav_resource *r,
                                        struct xml_writer *w)
{
    return principal_href(c, r, w, "calendar-user-address-set", "");
}

/* RFC 6638 sections 2.2 and 2.1 */
static bool p_schedule_inbox_url(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    return principal_href(c, r, w, "schedule-inbox-URL", CALDAV_INBOX "/");
}

static bool p_schedule_outbox_url(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    return principal_href(c, r, w, "schedule-outbox-URL", CALDAV_OUTBOX "/");
}

/* RFC 6638 section 2.4.2: every user is a person */
static bool p_calendar_user_type(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    if (r->kind != DAV_RES_HOME)
        return false;
    if (w)
        xml_write_text_element(w, "C", "calendar-user-type", "INDIVIDUAL", 10);
    return true;
}
#endif

/* Section 5.2.3: the component kinds a calendar takes, a bit each (bit i:
 * components[i]). A calendar created with a CALDAV:supported-calendar-
 * component-set keeps its bits (STORE_PROP_COMPONENTS, one byte); without
 * one it takes all three. */
static const char *const components[] = {"VEVENT", "VTODO", "VJOURNAL"};
#define ALL_COMPONENTS 7u

unsigned caldav_components(struct dav_ctx *c, uint32_t coll)
{
    uint8_t bits = 0;
    size_t len;
    if (store_coll_get_prop(c->store, coll, STORE_PROP_COMPONENTS, &bits, 1, &len) != STORE_OK || len != 1 ||
        !(bits & ALL_COMPONENTS))
        return ALL_COMPONENTS;
    return bits & ALL_COMPONENTS;
}

unsigned caldav_component_bit(enum ical_kind kind)
{
    return kind == ICAL_VEVENT ? 1u : kind == ICAL_VTODO ? 2u : kind == ICAL_VJOURNAL ? 4u : 0u;
}

static bool p_supported_components(struct dav_ctx *c, const struct dav_resource *r,
                                   struct xml_writer *w)
{
    unsigned i, bits;
    if (w) {
        bits = caldav_components(c, r->coll);
        xml_write_start(w, "C", "supported-calendar-component-set");
        for (i = 0; i < 3; i++) {
            if (!(bits & (1u << i)))
                continue;
            xml_write_start(w, "C", "comp");
            xml_write_attr(w, "name", components[i], strlen(components[i]));
            xml_write_end(w);
        }
        xml_write_end(w);
    }
    return true;
}

/* The bits a MKCALENDAR's CALDAV:supported-calendar-component-set asks for
 * (section 5.3.1: any property of the calendar may be set there): 0 when it
 * names none or one this server does not keep (VFREEBUSY, VAVAILABILITY...);
 * VTIMEZONE goes with every calendar object and adds nothing. */
static unsigned components_asked(const struct xml_node *set)
{
    unsigned bits = 0, i;
    XML_FOR_EACH_CHILD(comp, set) {
        const struct xml_attr *a = xml_attr_find(comp, NULL, "name");
        if (!xml_is(comp, XML_NS_CALDAV, "comp") || !a)
            return 0;
        for (i = 0; i < 3 && !xml_str_eq(a->value, components[i]); i++)
            ;
        if (i < 3)
            bits |= 1u << i;
        else if (!xml_str_eq(a->value, "VTIMEZONE"))
            return 0;
    }
    return bits;
}

/* The CALDAV:supported-calendar-component-set a DAV:set of update names
 * (the last one), or NULL. */
static const struct xml_node *components_set(const struct xml_node *update)
{
    const struct xml_node *found = NULL;
    XML_FOR_EACH_CHILD(op, update) {
        const struct xml_node *prop = xml_child(op, XML_NS_DAV, "prop");
        if (!xml_is(op, XML_NS_DAV, "set") || !prop)
            continue;
        XML_FOR_EACH_CHILD(n, prop) {
            if (xml_is(n, XML_NS_CALDAV, "supported-calendar-component-set"))
                found = n;
        }
    }
    return found;
}

/* Section 5.2.4 */
static bool p_supported_data(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
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
static bool p_max_resource_size(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w)
{
    char n[16];
    if (w) {
        snprintf(n, sizeof(n), "%u", (unsigned)DAV_MAX_RESOURCE_SIZE);
        xml_write_text_element(w, "C", "max-resource-size", n, strlen(n));
    }
    return true;
}

/* ---- MKCALENDAR (section 5.3.1) --------------------------------------------- */

static void mkcalendar(struct dav_ctx *c)
{
    const struct xml_node *root = c->doc.root;
    const struct xml_node *set = root ? components_set(root) : NULL;
    uint8_t bits = set ? (uint8_t)components_asked(set) : 0;
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
        const struct dav_coll_type *type = c->target.type;
        c->target.kind = DAV_RES_COLL;
        c->target.type = &caldav_calendar;
        rc = dav_apply_props(c, 0, root, true);
        c->target.kind = kind;
        c->target.type = type;
        if (rc != STORE_OK) {
            dav_respond_status(c, 403, "A property cannot be set.");
            return;
        }
        if (set && !bits) {
            dav_respond_status(c, 403, "supported-calendar-component-set: this server keeps VEVENT, "
                                       "VTODO and VJOURNAL calendars.");
            return;
        }
    }
    if (dav_create_collection(c, &caldav_calendar, &id) != 0)
        return;
    c->target.coll = id;
    c->target.type = &caldav_calendar;
    if ((bits && (rc = store_coll_set_prop(c->store, id, STORE_PROP_COMPONENTS, &bits, 1)) != STORE_OK) ||
        (root && (rc = dav_apply_props(c, id, root, false)) != STORE_OK)) {
        store_coll_delete(c->store, id);
        dav_respond_store_error(c, rc);
        return;
    }
    dav_respond_empty(c, 201, NULL);
}

/* ---- what CalDAV registers on the WebDAV layer ------------------------------ */

static const struct dav_prop props[] = {
    {XML_NS_CALSERVER, "CS", "getctag", p_getctag, 0, 0, NULL},
    {XML_NS_CALDAV, "C", "calendar-home-set", p_calendar_home_set, 0, 0, NULL},
#if CALDAV_SCHEDULING
    {XML_NS_CALDAV, "C", "calendar-user-address-set", p_calendar_user_address_set, 0, 0, NULL},
    {XML_NS_CALDAV, "C", "calendar-user-type", p_calendar_user_type, 0, 0, NULL},
    {XML_NS_CALDAV, "C", "schedule-inbox-URL", p_schedule_inbox_url, 0, 0, NULL},
    {XML_NS_CALDAV, "C", "schedule-outbox-URL", p_schedule_outbox_url, 0, 0, NULL},
#endif
    {XML_NS_CALDAV, "C", "supported-calendar-component-set", p_supported_components, 0, DAV_PROP_AT_CREATION,
     &caldav_calendar},
    {XML_NS_CALDAV, "C", "supported-calendar-data", p_supported_data, 0, 0, &caldav_calendar},
    {XML_NS_CALDAV, "C", "max-resource-size", p_max_resource_size, 0, 0, &caldav_calendar},
    /* sections 5.2.1, 5.2.2 and Apple's color: kept by the store, set by PROPPATCH */
    {XML_NS_CALDAV, "C", "calendar-description", NULL, STORE_PROP_DESCRIPTION, 0, &caldav_calendar},
    {XML_NS_CALDAV, "C", "calendar-timezone", NULL, STORE_PROP_TIMEZONE, DAV_PROP_VERBATIM,
     &caldav_calendar},
    {XML_NS_APPLE_ICAL, "A", "calendar-color", NULL, STORE_PROP_COLOR, 0, &caldav_calendar},
};

/* Section 7 */
static const struct dav_report reports[] = {
    {XML_NS_CALDAV, "C", "calendar-multiget", caldav_multiget, &caldav_calendar},
    {XML_NS_CALDAV, "C", "calendar-query", caldav_query, &caldav_calendar},
    {XML_NS_CALDAV, "C", "free-busy-query", caldav_freebusy, &caldav_calendar},
};

static const struct dav_method methods[] = {
    {HTTP_MKCALENDAR, mkcalendar, DAV_METHOD_WRITES | DAV_METHOD_XML},
#if CALDAV_SCHEDULING
    {HTTP_POST, caldav_outbox_post, 0}, /* RFC 6638 section 5 */
#endif
};

#if CALDAV_SCHEDULING
/* RFC 3744 section 9.5, for principal searches (dav_principals.c) */
static const struct dav_search_prop searchable[] = {
    {XML_NS_CALDAV, "C", "calendar-user-address-set", "The user's calendar user address: their principal's URL"},
};
#endif

/* Calendar collections (section 4.2): their store paths start with 'c'. */
const struct dav_coll_type caldav_calendar = {
    'c',
    {"C", "calendar"},
    "text/calendar; charset=utf-8",
    caldav_put_begin,
    caldav_put_check,
    {"C", "max-resource-size"},                  /* section 5.3.2.1 */
    {"C", "calendar-collection-location-ok"},    /* section 5.3.1.1 */
    "Calendar collections hold no collections.", /* section 4.2 */
    NULL,
};

const struct dav_extension caldav_extension = {
    props, sizeof(props) / sizeof(props[0]),
    reports, sizeof(reports) / sizeof(reports[0]),
    methods, sizeof(methods) / sizeof(methods[0]),
    &caldav_calendar,
    " xmlns:C=\"" XML_NS_CALDAV "\" xmlns:CS=\"" XML_NS_CALSERVER "\" xmlns:A=\"" XML_NS_APPLE_ICAL "\"",
    " xmlns:C=\"" XML_NS_CALDAV "\"",
#if CALDAV_SCHEDULING
    caldav_mailboxes, 2,
    searchable, sizeof(searchable) / sizeof(searchable[0]),
#else
    NULL, 0, NULL, 0,
#endif
};
