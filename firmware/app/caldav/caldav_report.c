/* The CalDAV REPORTs (RFC 4791 section 7): what they share, calendar-query
 * and calendar-multiget; free-busy-query is caldav_freebusy.c. */
#include "caldav/caldav_private.h"

#include <string.h>

/* Section 7.1: on a calendar collection; a DAV:prop, allprop or propname
 * (RFC 4918 section 9.1) chooses the properties of each object. */
bool caldav_report_begin(struct dav_ctx *c)
{
    const struct xml_node *root = c->doc.root;
    int data;
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return false;
    }
    if (c->target.kind != DAV_RES_COLL || c->target.type != &caldav_calendar) {
        /* RFC 3253 section 3.6 DAV:supported-report */
        dav_respond_precondition(c, 403, "D", "supported-report");
        return false;
    }
    c->mode = DAV_PROP;
    if ((c->props = xml_child(root, XML_NS_DAV, "prop")) == NULL) {
        if (xml_child(root, XML_NS_DAV, "allprop"))
            c->mode = DAV_ALLPROP;
        else if (xml_child(root, XML_NS_DAV, "propname"))
            c->mode = DAV_PROPNAME;
    }
    if ((data = caldav_data_request(c)) < 0) {
        dav_respond_status(c, 400, "expand or limit-recurrence-set: start and end in UTC, start first.");
        return false;
    }
    caldav_report_of(c)->data = (uint8_t)data;
    c->phase = R_OPEN;
    return true;
}

/* How a listing of objects ends: R_OBJECT renders c->obj, then the next
 * one is looked for (R_NEXT); R_CLOSE closes the multistatus. */
static int render_object_or_close(struct dav_ctx *c)
{
    if (c->phase == R_OBJECT) {
        int data = caldav_report_of(c)->data;
        if (caldav_send_object_ref(c, data) || caldav_render_object(c, data))
            c->phase = R_NEXT;
        return 0;
    }
    dav_multistatus_close(c);
    c->done = true;
    return 0;
}

/* calendar-query (section 7.8): every object is read, parsed and tested. */
static int query_render(struct dav_ctx *c)
{
    int rc;
    for (;;) {
        switch (c->phase) {
        case R_OPEN:
            dav_multistatus_open(c);
            dav_enum_start(c, DAV_SRC_OBJECTS);
            c->phase = R_NEXT;
            return 0;
        case R_NEXT: {
            struct ical_object obj;
            rc = dav_enum_next(c, c->target.coll);
            if (rc < 0)
                return -1;
            if (rc == 0) {
                c->phase = R_CLOSE;
                continue;
            }
            if (!caldav_read_member(c, &obj) || !caldav_filter_matches(&obj, caldav_report_of(c)->filter))
                return 0; /* one object per turn: other connections get theirs */
            caldav_object_from_member(c);
            c->phase = R_OBJECT;
        }
            /* fall through */
        default:
            return render_object_or_close(c);
        }
    }
}

/* The object a multiget href names: it must be the user's (section 7.9).
 * An href that is exactly the path of a response kept for this request's
 * properties is its own decoding: it is taken as it is, and the response is
 * used if it is still the object's. */
static void multiget_target(struct dav_ctx *c, struct xml_str href)
{
    struct dav_resource *r = &c->obj;
    struct dav_kept kept;
    bool by_href;
    char own[AUTH_USER_MAX + 8];
    size_t len = 0, own_len, name_off;
    uint32_t got;
    char dummy;

    memset(r, 0, sizeof(*r));
    r->kind = DAV_RES_OBJECT;
    r->path = c->obj_path;
    c->obj_kept_current = false;
    by_href = caldav_find_kept_href(c, href, &kept);
    if (by_href) {
        memcpy(c->obj_path, href.ptr, href.len);
        c->obj_path[href.len] = '\0';
        len = href.len;
    } else if (dav_decode_path(href.ptr, href.len, c->obj_path, sizeof(c->obj_path) - 1, &len) != 0) {
        len = href.len < DAV_PATH_MAX ? href.len : DAV_PATH_MAX;
        memcpy(c->obj_path, href.ptr, len);
        r->path_len = len;
        return;
    }
    r->path_len = len;
    {
        size_t user_len = strlen(c->user);
        own_len = sizeof(DAV_ROOT_PATH) - 1; /* not snprintf: once per href, and it is slow */
        memcpy(own, DAV_ROOT_PATH, own_len);
        if (user_len > sizeof(own) - sizeof(DAV_ROOT_PATH) - 1)
            user_len = sizeof(own) - sizeof(DAV_ROOT_PATH) - 1;
        memcpy(own + own_len, c->user, user_len);
        own_len += user_len;
        own[own_len++] = '/';
    }
    name_off = len;
    while (name_off > 0 && c->obj_path[name_off - 1] != '/')
        name_off--;
    c->obj_name_off = name_off;
    if (len < own_len || memcmp(c->obj_path, own, own_len) != 0 || name_off == len ||
        name_off <= own_len)
        return;
    /* a client names the REPORT's own calendar's members: no collection lookup for them */
    if (name_off == c->target.path_len && memcmp(c->obj_path, c->target.path, name_off) == 0) {
        r->coll = c->target.coll;
        r->type = c->target.type;
    } else if (dav_find_collection(c, c->obj_path, name_off, &r->coll, &r->type) != STORE_OK) {
        return;
    }
    if (r->type == &caldav_calendar &&
        (by_href ? dav_use_kept_if_current(c, r->coll, name_off, &kept) : caldav_find_kept_object(c, name_off))) {
        r->exists = true;
        return;
    }
    r->exists = store_get_object(c->store, r->coll, c->obj_path + name_off, len - name_off, 0,
                                 &dummy, 0, &got, &r->obj) == STORE_OK;
}

static int multiget_render(struct dav_ctx *c)
{
    struct caldav_report *report = caldav_report_of(c);
    switch (c->phase) {
    case R_OPEN:
        dav_multistatus_open(c);
        c->phase = R_NEXT;
        return 0;
    case R_NEXT:
        if (!report->next_href) {
            c->phase = R_CLOSE;
            return 0;
        }
        multiget_target(c, xml_text_trimmed(report->next_href));
        report->next_href = xml_next(report->next_href, XML_NS_DAV, "href");
        c->obj_phase = 0;
        c->phase = R_OBJECT;
        /* fall through */
    default:
        return render_object_or_close(c);
    }
}

/* Section 7.9 */
void caldav_multiget(struct dav_ctx *c)
{
    if (!caldav_report_begin(c))
        return;
    caldav_report_of(c)->next_href = xml_child(c->doc.root, XML_NS_DAV, "href");
    dav_respond_multistatus(c, multiget_render);
}

/* Section 7.8 */
void caldav_query(struct dav_ctx *c)
{
    struct caldav_report *report = caldav_report_of(c);
    const char *bad;
    if (!caldav_report_begin(c))
        return;
    report->filter = xml_child(c->doc.root, XML_NS_CALDAV, "filter");
    if (!report->filter) {
        dav_respond_precondition(c, 403, "C", "valid-filter");
        return;
    }
    if ((bad = caldav_filter_check(report->filter)) != NULL) {
        dav_respond_precondition(c, 403, "C", bad);
        return;
    }
    dav_respond_multistatus(c, query_render);
}
