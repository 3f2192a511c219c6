/* free-busy-query (RFC 4791 section 7.10): the busy time of a calendar's
 * events in a time range, as a VFREEBUSY; the busy time of one member, which
 * the scheduling outbox's free-busy request (caldav_sched.c) shares. */
#include "caldav/caldav_private.h"

#include <stdio.h>
#include <string.h>

static void out_period(struct dav_ctx *c, int64_t s, int64_t e, bool tentative)
{
    char a[24], b[24], line[96];
    ical_format_utc(s, a);
    ical_format_utc(e, b);
    snprintf(line, sizeof(line), "FREEBUSY;FBTYPE=%s:%s/%s\r\n", tentative ? "BUSY-TENTATIVE" : "BUSY",
             a, b);
    caldav_out_ical(c, line);
}

static bool overlaps(const struct ical_object *obj, int64_t s, int64_t e)
{
    return ical_time_range(obj, s, e, 0, 0) != ICAL_NO_MATCH;
}

/* By bisection in [day, we): with first, the smallest t with an instance in
 * [day, t); else the largest t with an instance in [t, we). */
static int64_t busy_edge(const struct ical_object *obj, int64_t day, int64_t we, bool first)
{
    int64_t lo = day, hi = we;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        bool busy = first ? overlaps(obj, day, mid) : overlaps(obj, mid, we);
        if (busy == first)
            hi = mid;
        else
            lo = mid;
    }
    return first ? lo : hi;
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
        int64_t we = day + 86400 < e ? day + 86400 : e;
        int64_t first, last;
        if (!overlaps(obj, day, we))
            continue;
        first = busy_edge(obj, day, we, true);
        last = busy_edge(obj, day, we, false);
        if (last > first)
            out_period(c, first, last, tentative);
    }
}

void caldav_out_ical(struct dav_ctx *c, const char *s)
{
    if (CALDAV_SCHEDULING && caldav_report_of(c)->in_xml)
        dav_out_escaped(c, s, strlen(s));
    else
        dav_out_raw(c, s);
}

void caldav_freebusy_head(struct dav_ctx *c, const char *method)
{
    const struct caldav_report *report = caldav_report_of(c);
    char a[24], b[24], line[240];
    ical_format_utc(report->range_start, a);
    ical_format_utc(report->range_end, b);
    /* no wall clock on the appliance: DTSTAMP is the range start */
    snprintf(line, sizeof(line),
             "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//LiteDAV//CalDAV//EN\r\n%s"
             "BEGIN:VFREEBUSY\r\nDTSTAMP:%s\r\nDTSTART:%s\r\nDTEND:%s\r\n", method, a, a, b);
    caldav_out_ical(c, line);
}

void caldav_busy_time(struct dav_ctx *c, int64_t s, int64_t e)
{
    struct ical_object obj;
    const struct ical_prop *p;
    if (!caldav_read_member(c, &obj) || obj.kind != ICAL_VEVENT || !obj.master || !overlaps(&obj, s, e))
        return;
    /* section 7.10: transparent and cancelled events are not busy time */
    if ((p = ical_find_prop(obj.master, "TRANSP")) && ical_str_eq_nocase(p->value, "TRANSPARENT"))
        return;
    p = ical_find_prop(obj.master, "STATUS");
    if (p && ical_str_eq_nocase(p->value, "CANCELLED"))
        return;
    event_periods(c, &obj, s, e, p && ical_str_eq_nocase(p->value, "TENTATIVE"));
}

static int freebusy_render(struct dav_ctx *c)
{
    const struct caldav_report *report = caldav_report_of(c);
    int rc;
    switch (c->phase) {
    case R_OPEN:
        caldav_freebusy_head(c, "");
        dav_enum_start(c, DAV_SRC_OBJECTS);
        c->phase = R_NEXT;
        return 0;
    case R_NEXT:
        rc = dav_enum_next(c, c->target.coll);
        if (rc < 0)
            return -1;
        if (rc == 0)
            c->phase = R_CLOSE;
        else
            caldav_busy_time(c, report->range_start, report->range_end);
        return 0;
    default:
        dav_out_raw(c, "END:VFREEBUSY\r\nEND:VCALENDAR\r\n");
        c->done = true;
        return 0;
    }
}

void caldav_freebusy(struct dav_ctx *c)
{
    struct caldav_report *report = caldav_report_of(c);
    const struct xml_node *tr;
    if (!caldav_report_begin(c))
        return;
    tr = xml_child(c->doc.root, XML_NS_CALDAV, "time-range");
    if (!tr || !caldav_time_range_bounds(tr, &report->range_start, &report->range_end) ||
        report->range_start == INT64_MIN || report->range_end == INT64_MAX) {
        dav_respond_status(c, 400, "free-busy-query needs a time-range with start and end.");
        return;
    }
    dav_respond_stream(c, 200, "text/calendar; charset=utf-8", freebusy_render);
}
