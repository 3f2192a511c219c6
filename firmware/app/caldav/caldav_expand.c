/* CALDAV:calendar-data with CALDAV:expand (RFC 4791 section 9.6.5) or
 * CALDAV:limit-recurrence-set (section 9.6.6), in calendar-query and
 * calendar-multiget: the object is rendered anew from its parsed tree
 * instead of streamed from the store.
 *
 * A response goes out in pieces (c->out) and other requests run between
 * them, their objects parsed into the same arena; so each piece reads and
 * parses the object again and renders it from the start, leaving out the
 * physical lines the earlier pieces sent (c->offset counts them). Lines are
 * folded at 75 octets (RFC 5545 section 3.1), so that one always fits a
 * piece. Such a response depends on the request's range: it is never kept
 * in the response cache (caldav_send_object_ref). */
#include "caldav/caldav_private.h"

#include <string.h>

int caldav_data_request(struct dav_ctx *c)
{
    struct caldav_report *report = caldav_report_of(c);
    const struct xml_node *data = c->props ? xml_child(c->props, XML_NS_CALDAV, "calendar-data") : NULL;
    const struct xml_node *n;
    int kind = CALDAV_DATA_EXPAND;
    if (!data)
        return CALDAV_DATA_NONE;
    if ((n = xml_child(data, XML_NS_CALDAV, "expand")) == NULL) {
        kind = CALDAV_DATA_LIMIT;
        if ((n = xml_child(data, XML_NS_CALDAV, "limit-recurrence-set")) == NULL)
            return CALDAV_DATA_WHOLE;
    }
    /* sections 9.6.5 and 9.6.6: start and end are both required, UTC */
    if (!caldav_time_range_bounds(n, &report->range_start, &report->range_end) ||
        report->range_start == INT64_MIN || report->range_end == INT64_MAX)
        return -1;
    return kind;
}

/* The lines of one rendering pass. */
struct emit {
    struct dav_ctx *c;
    const struct ical_object *obj;
    uint32_t skip;              /* physical lines the earlier pieces sent */
    uint32_t n;                 /* lines produced in this pass, sent or skipped */
    bool full;                  /* the next line did not fit c->out: the pass stops */
    size_t len;                 /* bytes in line[] */
    char line[80];              /* 75 octets, CRLF */
};

static void end_line(struct emit *e)
{
    size_t at = e->c->out_len;
    if (e->full)
        return;
    e->line[e->len++] = '\r';
    e->line[e->len++] = '\n';
    if (e->n >= e->skip && dav_out_escaped(e->c, e->line, e->len) < e->len) {
        e->c->out_len = at; /* whole lines only: this one starts the next piece */
        e->full = true;
        return;
    }
    e->n++;
    e->len = 0;
}

static void put(struct emit *e, const char *s, size_t n)
{
    for (size_t i = 0; i < n && !e->full; i++) {
        unsigned char b = (unsigned char)s[i];
        /* RFC 5545 section 3.1: at most 75 octets a line, folded with CRLF
         * and a space, not inside a UTF-8 character (at most 4 octets) */
        if (e->len >= 75 || (e->len >= 72 && b >= 0xc0)) {
            end_line(e);
            e->line[e->len++] = ' ';
        }
        e->line[e->len++] = (char)b;
    }
}

static void put_str(struct emit *e, struct ical_str s) { put(e, s.ptr, s.len); }
static void put_lit(struct emit *e, const char *s) { put(e, s, strlen(s)); }

/* A property as it was written: name, parameters, value (its escapes kept). */
static void write_prop(struct emit *e, const struct ical_prop *p)
{
    put_str(e, p->name);
    for (const struct ical_param *q = p->params; q; q = q->next) {
        /* the reader took the quotes off a single quoted value (ical.h) */
        bool quote = false;
        for (size_t i = 0; i < q->value.len && q->value.ptr[0] != '"'; i++)
            quote |= q->value.ptr[i] == ':' || q->value.ptr[i] == ';' || q->value.ptr[i] == ',';
        put(e, ";", 1);
        put_str(e, q->name);
        put(e, "=\"", quote ? 2 : 1);
        put_str(e, q->value);
        put(e, "\"", quote);
    }
    put(e, ":", 1);
    put_str(e, p->value);
    end_line(e);
}

static void write_time(struct emit *e, struct ical_str name, int64_t utc)
{
    char v[ICAL_UTC_LEN + 1];
    ical_format_utc(utc, v);
    put_str(e, name);
    put(e, ":", 1);
    put(e, v, ICAL_UTC_LEN);
    end_line(e);
}

/* What expand rewrites: the times (in UTC), and the recurrence set (left out). */
static const char *const rewritten[] = { "DTSTART", "DTEND", "DUE", "RECURRENCE-ID", "RRULE", "RDATE", "EXDATE" };

/* comp and what it holds; with in, as that instance of it (section 9.6.5). */
static void write_comp(struct emit *e, const struct ical_component *comp, const struct ical_instance *in)
{
    static const struct ical_str rid = { "RECURRENCE-ID", 13 };
    put_lit(e, "BEGIN:");
    put_str(e, comp->name);
    end_line(e);
    for (const struct ical_prop *p = comp->props; p; p = p->next) {
        unsigned k = 0;
        struct ical_time t;
        while (in && k < sizeof(rewritten) / sizeof(rewritten[0]) && !ical_str_eq_nocase(p->name, rewritten[k]))
            k++;
        if (!in || k == sizeof(rewritten) / sizeof(rewritten[0]))
            write_prop(e, p);
        else if (k > 3 || (in->generated && k == 3))
            continue;
        else if (in->generated) /* DTSTART, or DTEND / DUE: the instance's start and end */
            write_time(e, p->name, in->start + (k ? in->length : 0));
        else if (ical_prop_time(p, &t))
            write_time(e, p->name, ical_time_to_utc(e->obj, &t, 0));
        else
            write_prop(e, p);
    }
    if (in && in->generated)
        write_time(e, rid, in->start);
    for (const struct ical_component *k = comp->first_child; k; k = k->next_sibling)
        write_comp(e, k, NULL);
    put_lit(e, "END:");
    put_str(e, comp->name);
    end_line(e);
}

static bool write_instance(void *ctx, const struct ical_instance *in)
{
    struct emit *e = ctx;
    write_comp(e, in->comp, in);
    return e->full;
}

/* Section 9.6.6: does the override o affect [s, end)? Its own instance
 * overlaps it (section 9.9's rules), or the instance it replaces starts in
 * it, or it replaces that instance and all later ones (RANGE=THISANDFUTURE)
 * from before end. */
static bool override_affects(const struct ical_object *obj, const struct ical_component *o, int64_t s, int64_t end)
{
    const struct ical_prop *rid = ical_find_prop(o, "RECURRENCE-ID");
    const struct ical_param *range;
    struct ical_time t;
    int64_t at;
    if (!rid || !ical_prop_time(rid, &t) || ical_component_range(obj, o, s, end, 0) != ICAL_NO_MATCH)
        return true;
    at = ical_time_to_utc(obj, &t, 0);
    range = ical_find_param(rid, "RANGE");
    return at < end && (at >= s || (range && ical_str_eq_nocase(range->value, "THISANDFUTURE")));
}

static void render_pass(struct emit *e, int data, int64_t s, int64_t end)
{
    const struct ical_object *obj = e->obj;
    const struct ical_prop *rr = obj->master ? ical_find_prop(obj->master, "RRULE") : NULL;
    struct ical_rrule rule;
    const char *why;
    /* a rule the expander does not evaluate (ical.h): the object as it is */
    if (data == CALDAV_DATA_EXPAND && rr && ical_parse_rrule(rr->value, &rule, &why) && rule.unsupported)
        data = CALDAV_DATA_WHOLE;
    put_lit(e, "BEGIN:VCALENDAR");
    end_line(e);
    for (const struct ical_prop *p = obj->root->props; p; p = p->next)
        write_prop(e, p);
    for (const struct ical_component *k = obj->root->first_child; k; k = k->next_sibling) {
        /* expand: instances in UTC, so no time zones (section 9.6.5) */
        if (data == CALDAV_DATA_EXPAND ? k->kind == ICAL_VTIMEZONE || k->kind == obj->kind
                                       : data == CALDAV_DATA_LIMIT && k->kind == obj->kind &&
                                             !override_affects(obj, k, s, end))
            continue;
        write_comp(e, k, NULL);
    }
    if (data == CALDAV_DATA_EXPAND)
        ical_instances(obj, s, end, 0, 0, write_instance, e);
    put_lit(e, "END:VCALENDAR");
    end_line(e);
}

bool caldav_render_data(struct dav_ctx *c, int data)
{
    const struct caldav_report *report = caldav_report_of(c);
    const struct dav_resource *r = &c->obj;
    const char *name = r->path + c->obj_name_off, *text;
    size_t name_len = r->path_len - c->obj_name_off;
    struct ical_object obj;
    struct emit e;
    long len;

    if (store_object_is_current(c->store, r->coll, name, name_len, r->obj.etag) == 1 &&
        (len = dav_read_object(c, r->coll, name, name_len, &text)) > 0 &&
        caldav_parse(&obj, text, (size_t)len) == ICAL_OK) {
        memset(&e, 0, sizeof(e));
        e.c = c;
        e.obj = &obj;
        e.skip = c->offset;
        render_pass(&e, data, report->range_start, report->range_end);
        c->offset = e.n;
        if (e.full)
            return false;
    } else {
        /* gone or replaced since its response began: what was sent stands,
         * the rest is cut (as caldav_render_object does) */
        c->obj_cut = true;
    }
    if (c->out_len + 18 > c->out_cap) /* the end tag's length */
        return false;
    dav_out_raw(c, "</C:calendar-data>");
    return true;
}
