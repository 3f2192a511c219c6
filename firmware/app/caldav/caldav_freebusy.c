/* free-busy-query (RFC 4791 section 7.10): the busy time of a calendar's
 * events in a time range, as a VFREEBUSY. */
#include "caldav/caldav_private.h"

#include <stdio.h>

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

void caldav_freebusy_query(struct dav_ctx *c, const struct xml_node *root)
{
    const struct xml_node *tr = xml_child(root, XML_NS_CALDAV, "time-range");
    if (!tr || !caldav_time_range_bounds(tr, &c->range_start, &c->range_end) ||
        c->range_start == INT64_MIN || c->range_end == INT64_MAX) {
        dav_respond_status(c, 400, "free-busy-query needs a time-range with start and end.");
        return;
    }
    dav_respond_stream(c, 200, "text/calendar; charset=utf-8", freebusy_render);
}
