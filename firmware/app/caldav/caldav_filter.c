/* calendar-query filters (RFC 4791 section 9.7) evaluated on a parsed
 * calendar object, and the time ranges they and free-busy-query give. */
#include "caldav/caldav_private.h"

#include <string.h>

static bool attr_value(const struct xml_node *n, const char *name, char *out, size_t cap)
{
    const struct xml_attr *a = xml_attr_find(n, NULL, name);
    if (!a || a->value.len >= cap)
        return false;
    memcpy(out, a->value.ptr, a->value.len);
    out[a->value.len] = '\0';
    return true;
}

bool caldav_time_range_bounds(const struct xml_node *tr, int64_t *start, int64_t *end)
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

/* Is attribute `name` of n absent, or one of the values a and b? */
static bool attr_absent_or(const struct xml_node *n, const char *name, const char *a, const char *b)
{
    const struct xml_attr *at = xml_attr_find(n, NULL, name);
    return !at || xml_str_eq(at->value, a) || xml_str_eq(at->value, b);
}

/* Check what evaluation relies on: time ranges parse, collations are known
 * (section 7.5: i;ascii-casemap and i;octet), negate-condition is "yes" or
 * "no" (section 9.7.5). 0, or the precondition name. */
const char *caldav_filter_check(const struct xml_node *n)
{
    int64_t s, e;
    if (xml_is(n, XML_NS_CALDAV, "time-range") && !caldav_time_range_bounds(n, &s, &e))
        return "valid-filter";
    if (xml_is(n, XML_NS_CALDAV, "text-match")) {
        if (!attr_absent_or(n, "collation", "i;ascii-casemap", "i;octet"))
            return "supported-collation";
        if (!attr_absent_or(n, "negate-condition", "yes", "no"))
            return "valid-filter";
    }
    if ((xml_is(n, XML_NS_CALDAV, "comp-filter") || xml_is(n, XML_NS_CALDAV, "prop-filter") ||
         xml_is(n, XML_NS_CALDAV, "param-filter")) && !xml_attr_find(n, NULL, "name"))
        return "valid-filter";
    XML_FOR_EACH_CHILD(child, n) {
        const char *bad = caldav_filter_check(child);
        if (bad)
            return bad;
    }
    return NULL;
}

static char fold_case(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }

/* The character at v[*i], advancing *i past it; with `text`, an escape of
 * a TEXT value (RFC 5545 3.3.11: \\ \; \, \n \N) is the character it stands
 * for, so a text-match compares with the value rather than its encoding. */
static char value_char(const char *v, size_t len, size_t *i, bool text)
{
    char ch = v[(*i)++];
    if (text && ch == '\\' && *i < len) {
        ch = v[(*i)++];
        if (ch == 'n' || ch == 'N')
            ch = '\n';
    }
    return ch;
}

/* Section 9.7.5: substring match under the collation (i;ascii-casemap
 * unless i;octet is named, section 7.5.1), maybe negated. */
static bool text_match(const struct xml_node *tm, const char *value, size_t len, bool text)
{
    /* the attributes' values are known good (caldav_filter_check) */
    bool octet = !attr_absent_or(tm, "collation", "i;ascii-casemap", "i;ascii-casemap");
    bool negated = !attr_absent_or(tm, "negate-condition", "no", "no");
    struct xml_str needle = tm->text;
    bool found = needle.len == 0;
    size_t i, j, k;
    for (i = 0; !found && i < len; value_char(value, len, &i, text)) {
        for (j = i, k = 0; k < needle.len && j < len; k++) {
            char a = value_char(value, len, &j, text), b = needle.ptr[k];
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
    return !tm || text_match(tm, param->value.ptr, param->value.len, false);
}

/* Section 9.7.2: some property of that name in comp meets every condition.
 * comp is the component of the enclosing comp-filter: under the VCALENDAR
 * comp-filter it is the VCALENDAR itself, so a prop-filter there tests the
 * calendar's own properties (RFC 5545 3.6 and 3.7, RFC 7986 section 4 adds
 * NAME, DESCRIPTION, UID, CATEGORIES, COLOR... there), never those of the
 * VEVENT or VTODO inside: "exists in the enclosing calendar component"
 * (section 9.7.2). A query that leaves out the component type and puts a
 * CATEGORIES or SUMMARY prop-filter there matches only calendars that carry
 * that property themselves, as with Radicale, Xandikos and SabreDAV; a
 * client wanting the components' properties names the component, as the
 * examples of section 7.8 do. */
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
                ok = caldav_time_range_bounds(cond, &s, &e) && ical_prop_time(p, &t);
                at = ok ? ical_time_to_utc(obj, &t, 0) : 0;
                ok = ok && at >= s && at < e;
            } else if (xml_is(cond, XML_NS_CALDAV, "text-match")) {
                ok = text_match(cond, p->value.ptr, p->value.len, true);
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
 * filter's conditions? Time ranges (section 9.9) on the object's own
 * component type cover all its instances (ical_time_range); on a VALARM
 * they test its triggers in each instance of its parent (ical_alarm_range).
 * Section 9.9 gives the VCALENDAR no time of its own: a time range directly
 * under it (a query without a component type) is taken as one on the
 * object's component, the only type it holds (section 4.1). On others
 * (VTIMEZONE...) time ranges are taken as met. */
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
            enum ical_match m = ICAL_MATCH;
            if (!caldav_time_range_bounds(cond, &s, &e))
                return false;
            if (comp->kind == ICAL_VALARM)
                m = ical_alarm_range(obj, comp, s, e, 0, 0);
            else if (comp->kind == obj->kind || comp == obj->root)
                m = ical_time_range(obj, s, e, 0, 0);
            if (m == ICAL_NO_MATCH)
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

bool caldav_filter_matches(const struct ical_object *obj, const struct xml_node *filter)
{
    const struct xml_node *top = xml_child(filter, XML_NS_CALDAV, "comp-filter");
    char name[16];
    if (!top || !attr_value(top, "name", name, sizeof(name)) || !name_is(obj->root->name, name))
        return false;
    if (xml_child(top, XML_NS_CALDAV, "is-not-defined"))
        return false;
    return comp_conditions(obj, obj->root, top);
}
