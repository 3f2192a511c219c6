/* The CalDAV REPORTs (RFC 4791 section 7): calendar-query and
 * calendar-multiget; free-busy-query is caldav_freebusy.c. */
#include "caldav/caldav_private.h"

#include <string.h>

static void object_from_member(struct dav_ctx *c)
{
    dav_object_resource(c, &c->member, c->obj_path, &c->obj);
    c->obj_name_off = c->target.path_len;
    c->obj_phase = 0;
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
            long len;
            rc = dav_enum_next(c, c->target.coll);
            if (rc < 0)
                return -1;
            if (rc == 0) {
                c->phase = R_CLOSE;
                continue;
            }
            len = dav_read_object(c->target.coll, c->member.name, c->member.len);
            if (len <= 0 || ical_parse(&obj, dav_work, (size_t)len, dav_ical_arena,
                                       dav_ical_arena_size, NULL, NULL) != ICAL_OK ||
                !caldav_filter_matches(&obj, c->filter))
                return 0; /* one object per turn: other connections get theirs */
            object_from_member(c);
            c->phase = R_OBJECT;
        }
            /* fall through */
        case R_OBJECT:
            if (dav_render_object(c))
                c->phase = R_NEXT;
            return 0;
        default:
            dav_multistatus_close(c);
            c->done = true;
            return 0;
        }
    }
}

/* The object a multiget href names: it must be the user's (section 7.9). */
static void multiget_target(struct dav_ctx *c, struct xml_str href)
{
    struct dav_resource *r = &c->obj;
    char own[AUTH_USER_MAX + 8];
    size_t len = 0, own_len, name_off;
    uint32_t got;
    char dummy;

    memset(r, 0, sizeof(*r));
    r->kind = DAV_RES_OBJECT;
    r->path = c->obj_path;
    if (dav_decode_path(href.ptr, href.len, c->obj_path, sizeof(c->obj_path) - 1, &len) != 0) {
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
        name_off <= own_len ||
        dav_find_collection(c->obj_path, name_off, &r->coll, &r->calendar) != STORE_OK)
        return;
    r->exists = store_get_object(&dav_store, r->coll, c->obj_path + name_off, len - name_off, 0,
                                 &dummy, 0, &got, &r->obj) == STORE_OK;
}

static int multiget_render(struct dav_ctx *c)
{
    switch (c->phase) {
    case R_OPEN:
        dav_multistatus_open(c);
        c->phase = R_NEXT;
        return 0;
    case R_NEXT:
        if (!c->next_href) {
            c->phase = R_CLOSE;
            return 0;
        }
        multiget_target(c, xml_text_trimmed(c->next_href));
        c->next_href = xml_next(c->next_href, XML_NS_DAV, "href");
        c->obj_phase = 0;
        c->phase = R_OBJECT;
        /* fall through */
    case R_OBJECT:
        if (dav_render_object(c))
            c->phase = R_NEXT;
        return 0;
    default:
        dav_multistatus_close(c);
        c->done = true;
        return 0;
    }
}

void caldav_report(struct dav_ctx *c)
{
    const struct xml_node *root = c->doc.root;
    const char *bad;
    bool multiget = xml_is(root, XML_NS_CALDAV, "calendar-multiget");
    bool query = xml_is(root, XML_NS_CALDAV, "calendar-query");
    bool freebusy = xml_is(root, XML_NS_CALDAV, "free-busy-query");

    if (!multiget && !query && !freebusy) {
        /* RFC 3253 section 3.6 DAV:supported-report */
        dav_respond_precondition(c, 403, "D", "supported-report");
        return;
    }
    if (!c->target.exists) {
        dav_respond_status(c, 404, NULL);
        return;
    }
    if (c->target.kind != DAV_RES_COLL || !c->target.calendar) {
        dav_respond_precondition(c, 403, "D", "supported-report");
        return;
    }
    c->mode = DAV_PROP;
    if ((c->props = xml_child(root, XML_NS_DAV, "prop")) == NULL) {
        if (xml_child(root, XML_NS_DAV, "allprop"))
            c->mode = DAV_ALLPROP;
        else if (xml_child(root, XML_NS_DAV, "propname"))
            c->mode = DAV_PROPNAME;
    }
    c->want_data = dav_prop_requested(c, XML_NS_CALDAV, "calendar-data");
    c->phase = R_OPEN;
    if (multiget) {
        c->next_href = xml_child(root, XML_NS_DAV, "href");
        dav_respond_multistatus(c, multiget_render);
    } else if (query) {
        c->filter = xml_child(root, XML_NS_CALDAV, "filter");
        if (!c->filter) {
            dav_respond_precondition(c, 403, "C", "valid-filter");
            return;
        }
        if ((bad = caldav_filter_check(c->filter)) != NULL) {
            dav_respond_precondition(c, 403, "C", bad);
            return;
        }
        dav_respond_multistatus(c, query_render);
    } else {
        caldav_freebusy_query(c, root);
    }
}
