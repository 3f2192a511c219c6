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

/* Check what evaluation relies on: time ranges parse, collations are known
 * (section 7.5: i;ascii-casemap and i;octet). 0, or the precondition name. */
const char *caldav_filter_check(const struct xml_node *n)
{
    char collation[32];
    int64_t s, e;
    if (xml_is(n, XML_NS_CALDAV, "time-range") && !caldav_time_range_bounds(n, &s, &e))
        return "valid-filter";
    if (xml_is(n, XML_NS_CALDAV, "text-match") && attr_value(n, "collation", collation, sizeof(collation)) &&
        strcmp(collation, "i;ascii-casemap") != 0 && strcmp(collation, "i;octet") != 0)
        return "supported-collation";
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

/* Section 9.7.5: substring match under the collation, maybe negated. */
static bool text_match(const struct xml_node *tm, const char *value, size_t len)
{
    char collation[32], negate[8];
    bool octet = attr_value(tm, "collation", collation, sizeof(collation)) &&
                 strcmp(collation, "i;octet") == 0;
    bool negated = attr_value(tm, "negate-condition", negate, sizeof(negate)) &&
                   strcmp(negate, "yes") == 0;
    return xml_contains(value, len, tm->text, !octet) != negated;
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
                ok = caldav_time_range_bounds(cond, &s, &e) && ical_prop_time(p, &t);
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
            if (!caldav_time_range_bounds(cond, &s, &e))
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
