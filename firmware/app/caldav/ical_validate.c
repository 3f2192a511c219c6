/* Validation of a parsed calendar object: what CalDAV's
 * valid-calendar-data precondition requires (RFC 4791 section 4.1) and the
 * value types of RFC 5545. */
#include "caldav/ical_private.h"

#include <string.h>

static bool fail_at(struct reader *r, const struct ical_prop *p, enum ical_status code, const char *message)
{
    if (p) {
        r->start_line = p->line;
        r->line_offset = 0;
        /* find the offset of that line again for the message */
        uint32_t line = 1;
        for (size_t i = 0; i < r->len && line < p->line; i++)
            if (r->buf[i] == '\n') {
                line++;
                r->line_offset = i + 1;
            }
    }
    return ical_fail(r, code, message);
}

static bool check_time_prop(struct reader *r, const struct ical_prop *p, struct ical_time *out)
{
    /* every value of a list (EXDATE, RDATE) must parse */
    const char *v = p->value.ptr, *vend = p->value.ptr + p->value.len;
    bool first = true;
    do {
        const char *c = memchr(v, ',', (size_t)(vend - v));
        struct ical_str item = { v, (size_t)((c ? c : vend) - v) };
        const char *slash = memchr(item.ptr, '/', item.len);
        const struct ical_param *vt = ical_find_param(p, "VALUE");
        if (slash && vt && ical_str_eq_nocase(vt->value, "PERIOD"))
            item.len = (size_t)(slash - item.ptr);   /* RDATE period: its start */
        struct ical_time t;
        if (!ical_prop_time_value(p, item, &t))
            return fail_at(r, p, ICAL_ERR_DATE, "bad DATE or DATE-TIME value (RFC 5545 3.3.4, 3.3.5)");
        if (first && out)
            *out = t;
        first = false;
        v = c ? c + 1 : vend;
    } while (v < vend);
    return true;
}

static const char *const time_props[] = {
    "DTSTART", "DTEND", "DUE", "RECURRENCE-ID", "EXDATE", "RDATE", "DTSTAMP", "CREATED",
    "LAST-MODIFIED", "COMPLETED",
};

static bool check_component(struct reader *r, const struct ical_component *c)
{
    for (const struct ical_prop *p = c->props; p; p = p->next) {
        for (size_t i = 0; i < sizeof(time_props) / sizeof(time_props[0]); i++)
            if (ical_str_eq_nocase(p->name, time_props[i]) && !check_time_prop(r, p, NULL))
                return false;
        int64_t d;
        if ((ical_str_eq_nocase(p->name, "DURATION") && !ical_parse_duration(p->value, &d)) ||
            (ical_str_eq_nocase(p->name, "TRIGGER") && !ical_prop_is_date(p) && !ical_find_param(p, "VALUE") &&
             !ical_parse_duration(p->value, &d)))
            return fail_at(r, p, ICAL_ERR_DATE, "bad DURATION value (RFC 5545 3.3.6)");
        int32_t off;
        if ((ical_str_eq_nocase(p->name, "TZOFFSETFROM") || ical_str_eq_nocase(p->name, "TZOFFSETTO")) &&
            !ical_parse_utc_offset(p->value, &off))
            return fail_at(r, p, ICAL_ERR_DATE, "bad UTC-OFFSET value (RFC 5545 3.3.14)");
        struct ical_rrule rule;
        const char *why;
        if (ical_str_eq_nocase(p->name, "RRULE") && !ical_parse_rrule(p->value, &rule, &why))
            return fail_at(r, p, ICAL_ERR_RRULE, why);
    }
    switch (c->kind) {
    case ICAL_VEVENT:
    case ICAL_VTODO: {
        const struct ical_prop *start = ical_find_prop(c, "DTSTART");
        const char *end_name = c->kind == ICAL_VEVENT ? "DTEND" : "DUE";
        const struct ical_prop *end = ical_find_prop(c, end_name);
        const struct ical_prop *dur = ical_find_prop(c, "DURATION");
        if (c->kind == ICAL_VEVENT && !start)
            return fail_at(r, c->props, ICAL_ERR_PROPERTY, "VEVENT without DTSTART (RFC 5545 3.6.1)");
        if (end && dur)
            return fail_at(r, dur, ICAL_ERR_PROPERTY, "both DTEND/DUE and DURATION (RFC 5545 3.6.1, 3.6.2)");
        if (dur && !start)
            return fail_at(r, dur, ICAL_ERR_PROPERTY, "DURATION without DTSTART (RFC 5545 3.6.2)");
        static const char *const once[] = { "DTSTART", "DTEND", "DUE", "DURATION", "RECURRENCE-ID" };
        for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
            if (ical_count_props(c, once[i]) > 1)
                return fail_at(r, ical_next_prop(ical_find_prop(c, once[i]), once[i]), ICAL_ERR_PROPERTY,
                               "property that must occur at most once occurs twice");
        if (ical_find_prop(c, "RRULE") && !start)
            return fail_at(r, ical_find_prop(c, "RRULE"), ICAL_ERR_PROPERTY, "RRULE without DTSTART");
        if (start && end) {
            struct ical_time ts, te;
            ical_prop_time(start, &ts);
            ical_prop_time(end, &te);
            if ((ts.kind == ICAL_TIME_DATE) != (te.kind == ICAL_TIME_DATE))
                return fail_at(r, end, ICAL_ERR_DATE, "DTEND/DUE value type differs from DTSTART");
            if (ts.kind == te.kind && str_eq(ts.tzid, te.tzid) && te.local < ts.local)
                return fail_at(r, end, ICAL_ERR_DATE, "DTEND/DUE before DTSTART");
        }
        break;
    }
    case ICAL_VTIMEZONE:
        if (!ical_find_prop(c, "TZID"))
            return fail_at(r, c->props, ICAL_ERR_PROPERTY, "VTIMEZONE without TZID (RFC 5545 3.6.5)");
        if (!ical_find_child(c, ICAL_STANDARD) && !ical_find_child(c, ICAL_DAYLIGHT))
            return fail_at(r, ical_find_prop(c, "TZID"), ICAL_ERR_PROPERTY,
                           "VTIMEZONE without STANDARD or DAYLIGHT (RFC 5545 3.6.5)");
        break;
    case ICAL_STANDARD:
    case ICAL_DAYLIGHT:
        if (!ical_find_prop(c, "DTSTART") || !ical_find_prop(c, "TZOFFSETFROM") || !ical_find_prop(c, "TZOFFSETTO"))
            return fail_at(r, c->props, ICAL_ERR_PROPERTY,
                           "time zone observance needs DTSTART, TZOFFSETFROM, TZOFFSETTO (RFC 5545 3.6.5)");
        break;
    case ICAL_VALARM:
        if (!ical_find_prop(c, "ACTION") || !ical_find_prop(c, "TRIGGER"))
            return fail_at(r, c->props, ICAL_ERR_PROPERTY, "VALARM needs ACTION and TRIGGER (RFC 5545 3.6.6)");
        break;
    default:
        break;
    }
    for (const struct ical_component *k = c->first_child; k; k = k->next_sibling)
        if (!check_component(r, k))
            return false;
    return true;
}

bool ical_validate(struct reader *r, struct ical_object *obj)
{
    const struct ical_component *cal = obj->root;
    const struct ical_prop *version = ical_find_prop(cal, "VERSION");
    if (!version || !ical_str_eq_nocase(version->value, "2.0"))
        return fail_at(r, version, ICAL_ERR_PROPERTY, "VCALENDAR needs VERSION:2.0 (RFC 5545 3.7.4)");
    if (!ical_find_prop(cal, "PRODID"))
        return fail_at(r, cal->props, ICAL_ERR_PROPERTY, "VCALENDAR needs PRODID (RFC 5545 3.7.3)");
    if (!r->lim.itip && ical_find_prop(cal, "METHOD"))
        return fail_at(r, ical_find_prop(cal, "METHOD"), ICAL_ERR_PROPERTY,
                       "METHOD not allowed in a stored calendar object (RFC 4791 4.1)");
    if (!check_component(r, cal))
        return false;
    obj->kind = ICAL_OTHER;
    obj->master = NULL;
    bool have_uid = false;
    for (struct ical_component *c = cal->first_child; c; c = c->next_sibling) {
        if (c->kind != ICAL_VEVENT && c->kind != ICAL_VTODO && c->kind != ICAL_VJOURNAL &&
            c->kind != ICAL_VFREEBUSY)
            continue;
        if (obj->kind == ICAL_OTHER)
            obj->kind = c->kind;
        else if (obj->kind != c->kind)
            return fail_at(r, c->props, ICAL_ERR_COMPONENT,
                           "more than one type of calendar component (RFC 4791 4.1)");
        size_t n = ical_count_props(c, "UID");
        const struct ical_prop *uid = ical_find_prop(c, "UID");
        if (n == 0)
            return fail_at(r, c->props, ICAL_ERR_UID, "component without UID (RFC 5545 3.8.4.7)");
        if (n > 1)
            return fail_at(r, ical_next_prop(uid, "UID"), ICAL_ERR_UID, "UID given twice in a component");
        if (uid->value.len == 0)
            return fail_at(r, uid, ICAL_ERR_UID, "empty UID");
        if (!have_uid) {
            obj->uid = uid->value;
            have_uid = true;
        } else if (!str_eq(obj->uid, uid->value)) {
            return fail_at(r, uid, ICAL_ERR_UID, "components with different UIDs in one resource (RFC 4791 4.1)");
        }
        const struct ical_prop *rid = ical_find_prop(c, "RECURRENCE-ID");
        if (!rid) {
            if (obj->master)
                return fail_at(r, uid, ICAL_ERR_UID,
                               "two components with the same UID and no RECURRENCE-ID (RFC 4791 4.1)");
            obj->master = c;
            continue;
        }
        struct ical_time t;
        ical_prop_time(rid, &t);
        for (struct ical_component *o = cal->first_child; o != c; o = o->next_sibling) {
            const struct ical_prop *orid = ical_find_prop(o, "RECURRENCE-ID");
            struct ical_time ot;
            if (o->kind == c->kind && orid && ical_prop_time(orid, &ot) && ot.local == t.local &&
                ot.kind == t.kind)
                return fail_at(r, rid, ICAL_ERR_PROPERTY, "two overrides with the same RECURRENCE-ID");
        }
    }
    if (obj->kind == ICAL_OTHER)
        return fail_at(r, cal->props, ICAL_ERR_COMPONENT,
                       "no VEVENT, VTODO, VJOURNAL or VFREEBUSY (RFC 4791 4.1)");
    return true;
}
