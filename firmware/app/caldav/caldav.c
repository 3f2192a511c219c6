#include "caldav/caldav.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "caldav/ical.h"

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

/* ---- PUT (section 5.3.2) ------------------------------------------------------ */

int caldav_put_begin(struct dav_ctx *c)
{
    size_t len;
    const char *type = http_header(c->x->req, "Content-Type", &len);
    /* section 5.3.2.1 CALDAV:supported-calendar-data */
    if (type && !(len >= 13 && http_token_equals(type, 13, "text/calendar"))) {
        dav_respond_precondition(c, 403, "C", "supported-calendar-data");
        return 403;
    }
    return 0;
}

/* XML 1.0 characters in UTF-8: what calendar-data can carry in a REPORT. */
static bool xml_safe_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char ch = s[i];
        size_t extra, k;
        if (ch < 0x80) {
            if (ch < 0x20 && ch != '\t' && ch != '\r' && ch != '\n')
                return false;
            i++;
            continue;
        }
        if (ch >= 0xC2 && ch <= 0xDF)
            extra = 1;
        else if (ch >= 0xE0 && ch <= 0xEF)
            extra = 2;
        else if (ch >= 0xF0 && ch <= 0xF4)
            extra = 3;
        else
            return false;
        if (i + extra >= n + 0 && i + extra > n - 1)
            return false;
        for (k = 1; k <= extra; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
        i += extra + 1;
    }
    return true;
}

/* The value of the first UID line of a stored object, unfolded into out. */
static size_t find_uid(const char *obj, size_t len, char *out, size_t cap)
{
    size_t i, n = 0;
    for (i = 0; i + 4 < len; i++) {
        if ((i == 0 || obj[i - 1] == '\n') && memcmp(obj + i, "UID", 3) == 0 &&
            (obj[i + 3] == ':' || obj[i + 3] == ';')) {
            const char *colon = memchr(obj + i, ':', len - i);
            if (!colon)
                return 0;
            for (i = (size_t)(colon - obj) + 1; i < len && n < cap; i++) {
                if (obj[i] == '\r')
                    continue;
                if (obj[i] == '\n') {
                    /* RFC 5545 section 3.1: a folded line goes on after CRLF + space */
                    if (i + 1 < len && (obj[i + 1] == ' ' || obj[i + 1] == '\t')) {
                        i++;
                        continue;
                    }
                    break;
                }
                out[n++] = obj[i];
            }
            return n;
        }
    }
    return 0;
}

/* no-uid-conflict (section 5.3.2.1): no other resource of the collection has
 * this UID. The store keeps a digest of each object's UID in RAM once it is
 * known (store_tag_next): only objects whose digest matches, or is not known
 * yet (after a put or a remount), are read and their UID line compared;
 * those read teach the store their digest. So a PUT reads about one object
 * (the one put before it), not all of them. */
static bool uid_conflict(struct dav_ctx *c, const char *uid, size_t uid_len)
{
    char other[256], name[STORE_NAME_MAX + 1];
    uint32_t pos = STORE_TAG_START;
    size_t name_len;
    int known;
    while (store_tag_next(&dav_store, c->target.coll, store_name_hash(uid, uid_len), &pos, name,
                          sizeof(name), &name_len, &known) == 1) {
        long len;
        size_t other_len;
        if (name_len == c->name_len && memcmp(name, c->path + c->name_off, c->name_len) == 0)
            continue;
        len = dav_read_object(c->target.coll, name, name_len);
        if (len <= 0)
            continue;
        other_len = find_uid(dav_work, (size_t)len, other, sizeof(other));
        if (!known)
            store_tag_set(&dav_store, c->target.coll, name, name_len, store_name_hash(other, other_len));
        if (other_len == uid_len && memcmp(other, uid, uid_len) == 0)
            return true;
    }
    return false;
}

int caldav_put_check(struct dav_ctx *c, const char *body, size_t len)
{
    struct ical_object obj;
    char uid[256];
    size_t uid_len;

    /* section 5.3.2.1 CALDAV:valid-calendar-data */
    if (!xml_safe_utf8((const unsigned char *)body, len) ||
        ical_parse(&obj, body, len, dav_ical_arena, dav_ical_arena_size, NULL, NULL) != ICAL_OK) {
        dav_respond_precondition(c, 403, "C", "valid-calendar-data");
        return 403;
    }
    /* CALDAV:supported-calendar-component */
    if (obj.kind != ICAL_VEVENT && obj.kind != ICAL_VTODO && obj.kind != ICAL_VJOURNAL) {
        dav_respond_precondition(c, 403, "C", "supported-calendar-component");
        return 403;
    }
    uid_len = obj.uid.len < sizeof(uid) ? obj.uid.len : sizeof(uid);
    memcpy(uid, obj.uid.ptr, uid_len);
    if (uid_conflict(c, uid, uid_len)) {
        dav_respond_precondition(c, 403, "C", "no-uid-conflict");
        return 403;
    }
    return 0;
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

/* ---- filters (section 9.7) ---------------------------------------------------- */

static bool attr_value(const struct xml_node *n, const char *name, char *out, size_t cap)
{
    const struct xml_attr *a = xml_attr_find(n, NULL, name);
    if (!a || a->value.len >= cap)
        return false;
    memcpy(out, a->value.ptr, a->value.len);
    out[a->value.len] = '\0';
    return true;
}

static bool time_range_bounds(const struct xml_node *tr, int64_t *start, int64_t *end)
{
    const struct xml_attr *s = xml_attr_find(tr, NULL, "start");
    const struct xml_attr *e = xml_attr_find(tr, NULL, "end");
    *start = INT64_MIN;
    *end = INT64_MAX;
    /* section 9.9: at least one of them */
    if (!s && !e)
        return false;
    if (s && !ical_parse_utc(s->value.ptr, s->value.len, start))
        return false;
    if (e && !ical_parse_utc(e->value.ptr, e->value.len, end))
        return false;
    return *start < *end;
}

/* Check what evaluation relies on: time ranges parse, collations are known
 * (section 7.5: i;ascii-casemap and i;octet). 0, or the precondition name. */
static const char *filter_check(const struct xml_node *n)
{
    char collation[32];
    int64_t s, e;
    if (xml_is(n, XML_NS_CALDAV, "time-range") && !time_range_bounds(n, &s, &e))
        return "valid-filter";
    if (xml_is(n, XML_NS_CALDAV, "text-match") && attr_value(n, "collation", collation, sizeof(collation)) &&
        strcmp(collation, "i;ascii-casemap") != 0 && strcmp(collation, "i;octet") != 0)
        return "supported-collation";
    if ((xml_is(n, XML_NS_CALDAV, "comp-filter") || xml_is(n, XML_NS_CALDAV, "prop-filter") ||
         xml_is(n, XML_NS_CALDAV, "param-filter")) && !xml_attr_find(n, NULL, "name"))
        return "valid-filter";
    XML_FOR_EACH_CHILD(child, n) {
        const char *bad = filter_check(child);
        if (bad)
            return bad;
    }
    return NULL;
}

static char fold_case(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }

/* Section 9.7.5: substring match under the collation, maybe negated. */
static bool text_match(const struct xml_node *tm, const char *value, size_t len)
{
    char collation[32], negate[8];
    bool octet = attr_value(tm, "collation", collation, sizeof(collation)) &&
                 strcmp(collation, "i;octet") == 0;
    bool negated = attr_value(tm, "negate-condition", negate, sizeof(negate)) &&
                   strcmp(negate, "yes") == 0;
    struct xml_str needle = tm->text;
    bool found = needle.len == 0;
    size_t i, k;
    for (i = 0; !found && i + needle.len <= len; i++) {
        for (k = 0; k < needle.len; k++) {
            char a = value[i + k], b = needle.ptr[k];
            if (octet ? a != b : fold_case(a) != fold_case(b))
                break;
        }
        found = k == needle.len;
    }
    return found != negated;
}

static bool name_is(struct ical_str s, const char *name)
{
    return ical_str_eq_nocase(s, name);
}

/* Section 9.7.3 */
static bool param_filter(const struct ical_prop *p, const struct xml_node *pf)
{
    char name[64];
    const struct ical_param *param = NULL, *q;
    const struct xml_node *tm;
    if (!attr_value(pf, "name", name, sizeof(name)))
        return false;
    for (q = p->params; q; q = q->next)
        if (name_is(q->name, name)) {
            param = q;
            break;
        }
    if (xml_child(pf, XML_NS_CALDAV, "is-not-defined"))
        return param == NULL;
    if (!param)
        return false;
    tm = xml_child(pf, XML_NS_CALDAV, "text-match");
    return !tm || text_match(tm, param->value.ptr, param->value.len);
}

/* Section 9.7.2: some property of that name meets every condition. */
static bool prop_filter(const struct ical_object *obj, const struct ical_component *comp,
                        const struct xml_node *pf)
{
    char name[64];
    const struct ical_prop *p;
    bool any = false;
    if (!attr_value(pf, "name", name, sizeof(name)))
        return false;
    for (p = comp->props; p; p = p->next) {
        bool ok = true;
        if (!name_is(p->name, name))
            continue;
        any = true;
        XML_FOR_EACH_CHILD(cond, pf) {
            if (xml_is(cond, XML_NS_CALDAV, "time-range")) {
                struct ical_time t;
                int64_t s, e, at;
                ok = time_range_bounds(cond, &s, &e) && ical_prop_time(p, &t);
                at = ok ? ical_time_to_utc(obj, &t, 0) : 0;
                ok = ok && at >= s && at < e;
            } else if (xml_is(cond, XML_NS_CALDAV, "text-match")) {
                ok = text_match(cond, p->value.ptr, p->value.len);
            } else if (xml_is(cond, XML_NS_CALDAV, "param-filter")) {
                ok = param_filter(p, cond);
            }
            if (!ok)
                break;
        }
        if (ok && !xml_child(pf, XML_NS_CALDAV, "is-not-defined"))
            return true;
    }
    return xml_child(pf, XML_NS_CALDAV, "is-not-defined") ? !any : false;
}

/* Section 9.7.1: comp is a component named by the filter; does it meet the
 * filter's conditions? Time ranges on the object's own component type cover
 * all its instances (ical_time_range); on others (VALARM...) they are taken
 * as met. */
static bool comp_conditions(const struct ical_object *obj, const struct ical_component *comp,
                            const struct xml_node *cf);

static bool comp_filter_in(const struct ical_object *obj, const struct ical_component *parent,
                           const struct xml_node *cf)
{
    char name[64];
    const struct ical_component *child;
    bool any = false;
    if (!attr_value(cf, "name", name, sizeof(name)))
        return false;
    for (child = parent->first_child; child; child = child->next_sibling) {
        if (!name_is(child->name, name))
            continue;
        any = true;
        if (!xml_child(cf, XML_NS_CALDAV, "is-not-defined") && comp_conditions(obj, child, cf))
            return true;
    }
    return xml_child(cf, XML_NS_CALDAV, "is-not-defined") ? !any : false;
}

static bool comp_conditions(const struct ical_object *obj, const struct ical_component *comp,
                            const struct xml_node *cf)
{
    XML_FOR_EACH_CHILD(cond, cf) {
        if (xml_is(cond, XML_NS_CALDAV, "time-range")) {
            int64_t s, e;
            if (!time_range_bounds(cond, &s, &e))
                return false;
            if (comp->kind == obj->kind && ical_time_range(obj, s, e, 0, 0) == ICAL_NO_MATCH)
                return false;
        } else if (xml_is(cond, XML_NS_CALDAV, "prop-filter")) {
            if (!prop_filter(obj, comp, cond))
                return false;
        } else if (xml_is(cond, XML_NS_CALDAV, "comp-filter")) {
            if (!comp_filter_in(obj, comp, cond))
                return false;
        }
    }
    return true;
}

static bool filter_matches(const struct ical_object *obj, const struct xml_node *filter)
{
    const struct xml_node *top = xml_child(filter, XML_NS_CALDAV, "comp-filter");
    char name[16];
    if (!top || !attr_value(top, "name", name, sizeof(name)) || !name_is(obj->root->name, name))
        return false;
    if (xml_child(top, XML_NS_CALDAV, "is-not-defined"))
        return false;
    return comp_conditions(obj, obj->root, top);
}

/* ---- REPORTs (section 7) -------------------------------------------------------- */

enum { R_OPEN, R_NEXT, R_OBJECT, R_CLOSE };

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
                !filter_matches(&obj, c->filter))
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

/* ---- free-busy-query (section 7.10) ------------------------------------------ */

static void format_utc(int64_t t, char *out, size_t size)
{
    int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400, rem = t - days * 86400, y;
    unsigned m, d;
    ical_civil_from_days(days, &y, &m, &d);
    snprintf(out, size, "%04d%02u%02uT%02d%02d%02dZ", (int)y, m, d, (int)(rem / 3600),
             (int)(rem / 60 % 60), (int)(rem % 60));
}

static void out_period(struct dav_ctx *c, int64_t s, int64_t e, bool tentative)
{
    char a[24], b[24], line[96];
    format_utc(s, a, sizeof(a));
    format_utc(e, b, sizeof(b));
    snprintf(line, sizeof(line), "FREEBUSY;FBTYPE=%s:%s/%s\r\n", tentative ? "BUSY-TENTATIVE" : "BUSY",
             a, b);
    dav_out_raw(c, line);
}

static bool overlaps(const struct ical_object *obj, int64_t s, int64_t e)
{
    return ical_time_range(obj, s, e, 0, 0) != ICAL_NO_MATCH;
}

/* The busy time of one event inside [s, e): exact for a single instance; for
 * recurring events one period per day from the first to the last busy
 * second of that day, found by bisection with ical_time_range. */
static void event_periods(struct dav_ctx *c, const struct ical_object *obj, int64_t s, int64_t e,
                          bool tentative)
{
    const struct ical_component *m = obj->master;
    const struct ical_prop *start = m ? ical_find_prop(m, "DTSTART") : NULL;
    struct ical_time t;
    int64_t day;
    unsigned days = 0;

    if (m && start && !ical_find_prop(m, "RRULE") && !ical_find_prop(m, "RDATE") &&
        ical_prop_time(start, &t)) {
        const struct ical_prop *end = ical_find_prop(m, "DTEND");
        const struct ical_prop *dur = ical_find_prop(m, "DURATION");
        struct ical_time te;
        int64_t a = ical_time_to_utc(obj, &t, 0), b = a, secs;
        bool single = true;
        const struct ical_component *k;
        for (k = obj->root->first_child; k; k = k->next_sibling)
            if (k->kind == obj->kind && k != m)
                single = false;
        if (single) {
            if (end && ical_prop_time(end, &te))
                b = ical_time_to_utc(obj, &te, 0);
            else if (dur && ical_parse_duration(dur->value, &secs))
                b = a + secs;
            else if (t.kind == ICAL_TIME_DATE)
                b = a + 86400;
            if (b > a) {
                out_period(c, a < s ? s : a, b > e ? e : b, tentative);
                return;
            }
        }
    }
    for (day = s; day < e && days < 366; day += 86400, days++) {
        int64_t we = day + 86400 < e ? day + 86400 : e, lo, hi;
        int64_t first, last;
        if (!overlaps(obj, day, we))
            continue;
        /* first: the smallest t with an instance in [day, t) */
        lo = day;
        hi = we;
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (overlaps(obj, day, mid))
                hi = mid;
            else
                lo = mid;
        }
        first = lo;
        /* last: the largest t with an instance in [t, we) */
        lo = day;
        hi = we;
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (overlaps(obj, mid, we))
                lo = mid;
            else
                hi = mid;
        }
        last = hi;
        if (last > first)
            out_period(c, first, last, tentative);
    }
}

static int freebusy_render(struct dav_ctx *c)
{
    char a[24], b[24], line[224];
    int rc;
    switch (c->phase) {
    case R_OPEN:
        format_utc(c->range_start, a, sizeof(a));
        format_utc(c->range_end, b, sizeof(b));
        /* no wall clock on the appliance: DTSTAMP is the range start */
        snprintf(line, sizeof(line),
                 "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//LiteDAV//CalDAV//EN\r\n"
                 "BEGIN:VFREEBUSY\r\nDTSTAMP:%s\r\nDTSTART:%s\r\nDTEND:%s\r\n", a, a, b);
        dav_out_raw(c, line);
        dav_enum_start(c, DAV_SRC_OBJECTS);
        c->phase = R_NEXT;
        return 0;
    case R_NEXT: {
        struct ical_object obj;
        const struct ical_prop *p;
        long len;
        rc = dav_enum_next(c, c->target.coll);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            c->phase = R_CLOSE;
            return 0;
        }
        len = dav_read_object(c->target.coll, c->member.name, c->member.len);
        if (len <= 0 || ical_parse(&obj, dav_work, (size_t)len, dav_ical_arena, dav_ical_arena_size,
                                   NULL, NULL) != ICAL_OK ||
            obj.kind != ICAL_VEVENT || !obj.master || !overlaps(&obj, c->range_start, c->range_end))
            return 0;
        /* section 7.10: transparent and cancelled events are not busy time */
        if ((p = ical_find_prop(obj.master, "TRANSP")) && ical_str_eq_nocase(p->value, "TRANSPARENT"))
            return 0;
        p = ical_find_prop(obj.master, "STATUS");
        if (p && ical_str_eq_nocase(p->value, "CANCELLED"))
            return 0;
        event_periods(c, &obj, c->range_start, c->range_end,
                      p && ical_str_eq_nocase(p->value, "TENTATIVE"));
        return 0;
    }
    default:
        dav_out_raw(c, "END:VFREEBUSY\r\nEND:VCALENDAR\r\n");
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
        if ((bad = filter_check(c->filter)) != NULL) {
            dav_respond_precondition(c, 403, "C", bad);
            return;
        }
        dav_respond_multistatus(c, query_render);
    } else {
        const struct xml_node *tr = xml_child(root, XML_NS_CALDAV, "time-range");
        if (!tr || !time_range_bounds(tr, &c->range_start, &c->range_end) ||
            c->range_start == INT64_MIN || c->range_end == INT64_MAX) {
            dav_respond_status(c, 400, "free-busy-query needs a time-range with start and end.");
            return;
        }
        dav_respond_stream(c, 200, "text/calendar; charset=utf-8", freebusy_render);
    }
}
