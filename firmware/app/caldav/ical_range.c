/* Recurrence expansion, time zones and the time-range test of RFC 4791
 * section 9.9. */
#include "caldav/ical_private.h"

#include <string.h>

/* 0 = Sunday; 1970-01-01 was a Thursday */
static unsigned weekday_of(int64_t days) { return (unsigned)(((days % 7) + 7 + 4) % 7); }

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* ---- recurrence expansion ------------------------------------------------ */

struct expansion {
    const struct ical_rrule *rule;
    int64_t dtstart;            /* local seconds */
    /* instance found: local start; return true to stop */
    bool (*emit)(void *ctx, int64_t local);
    void *ctx;
    /* local -> UTC, for a UTC UNTIL */
    int64_t (*to_utc)(const void *zone_ctx, int64_t local);
    const void *zone_ctx;
    int64_t skip_before;        /* periods entirely before this local time may be skipped (no COUNT) */
    int64_t stop_after;         /* no instance of interest starts after this local time */
    unsigned max_periods;
};

enum expand_result { EXPAND_DONE, EXPAND_STOPPED, EXPAND_LIMIT };

static bool day_matches(const struct ical_rrule *r, int64_t y, unsigned m, unsigned d, unsigned wd,
                        unsigned m0, unsigned d0, unsigned wd0)
{
    if (r->bymonth && !(r->bymonth & (1u << m)))
        return false;
    unsigned dim = ical_days_in_month(y, m);
    if (r->n_bymonthday) {
        bool hit = false;
        for (unsigned i = 0; i < r->n_bymonthday && !hit; i++) {
            int v = r->bymonthday[i];
            hit = v > 0 ? (unsigned)v == d : (int)dim + 1 + v == (int)d;
        }
        if (!hit)
            return false;
    }
    if (r->n_byday) {
        /* ordinals count in the month, or in the year for YEARLY without BYMONTH */
        bool in_year = r->freq == ICAL_YEARLY && !r->bymonth;
        int64_t doy = ical_days_from_civil(y, m, d) - ical_days_from_civil(y, 1, 1) + 1;
        int64_t span = in_year ? (is_leap(y) ? 366 : 365) : dim;
        int64_t pos = in_year ? doy : d;
        int nth = (int)((pos - 1) / 7 + 1), nth_back = -(int)((span - pos) / 7 + 1);
        bool hit = false;
        for (unsigned i = 0; i < r->n_byday && !hit; i++)
            hit = r->byday[i].weekday == wd &&
                  (r->byday[i].ordinal == 0 || r->byday[i].ordinal == nth || r->byday[i].ordinal == nth_back);
        if (!hit)
            return false;
    }
    if (!r->n_byday && !r->n_bymonthday) {
        /* the rule's own day comes from DTSTART (5545 3.3.10) */
        switch (r->freq) {
        case ICAL_WEEKLY: return wd == wd0;
        case ICAL_MONTHLY: return d == d0;
        case ICAL_YEARLY: return d == d0 && (r->bymonth || m == m0);
        default: return true;
        }
    }
    return true;
}

static bool until_passed(const struct expansion *e, int64_t local)
{
    const struct ical_rrule *r = e->rule;
    if (!r->has_until)
        return false;
    if (r->until.kind == ICAL_TIME_UTC && e->to_utc)
        return e->to_utc(e->zone_ctx, local) > r->until.local;
    if (r->until.kind == ICAL_TIME_DATE)
        return local > r->until.local + 86399;   /* the whole UNTIL day */
    return local > r->until.local;
}

/* Instances of the rule, DTSTART first, in increasing order. */
static enum expand_result expand(const struct expansion *e)
{
    const struct ical_rrule *r = e->rule;
    int64_t day0 = floor_div(e->dtstart, 86400);
    int64_t tod = e->dtstart - day0 * 86400;
    int64_t y0;
    unsigned m0, d0;
    ical_civil_from_days(day0, &y0, &m0, &d0);
    unsigned wd0 = weekday_of(day0);
    int64_t week0 = day0 - (int64_t)((wd0 + 7 - r->wkst) % 7);
    int64_t month0 = y0 * 12 + (m0 - 1);
    uint32_t emitted = 1;

    if (e->emit(e->ctx, e->dtstart))
        return EXPAND_STOPPED;
    if (r->count == 1)
        return EXPAND_DONE;

    /* Without COUNT nothing before skip_before matters: start near it. */
    int64_t k = 0;
    if (!r->count && e->skip_before > e->dtstart) {
        int64_t target = floor_div(e->skip_before, 86400);
        int64_t ty;
        unsigned tm, td;
        ical_civil_from_days(target, &ty, &tm, &td);
        int64_t steps;
        switch (r->freq) {
        case ICAL_DAILY: steps = target - day0; break;
        case ICAL_WEEKLY: steps = (target - week0) / 7; break;
        case ICAL_MONTHLY: steps = ty * 12 + (tm - 1) - month0; break;
        default: steps = ty - y0; break;
        }
        k = steps / r->interval - 1;
        if (k < 0)
            k = 0;
    }
    for (unsigned periods = 0;; periods++, k++) {
        if (periods >= e->max_periods)
            return EXPAND_LIMIT;
        int64_t first_day, n_days;
        int64_t step = k * (int64_t)r->interval;
        switch (r->freq) {
        case ICAL_DAILY:
            first_day = day0 + step;
            n_days = 1;
            break;
        case ICAL_WEEKLY:
            first_day = week0 + 7 * step;
            n_days = 7;
            break;
        case ICAL_MONTHLY: {
            int64_t mi = month0 + step;
            int64_t y = floor_div(mi, 12);
            unsigned m = (unsigned)(mi - y * 12) + 1;
            if (y > 9999)
                return EXPAND_DONE;
            first_day = ical_days_from_civil(y, m, 1);
            n_days = ical_days_in_month(y, m);
            break;
        }
        default: {
            int64_t y = y0 + step;
            if (y > 9999)
                return EXPAND_DONE;
            first_day = ical_days_from_civil(y, 1, 1);
            n_days = is_leap(y) ? 366 : 365;
            break;
        }
        }
        if (first_day * 86400 > e->stop_after || first_day > 2932896 /* 9999-12-31 */)
            return EXPAND_DONE;
        for (int64_t i = 0; i < n_days; i++) {
            int64_t day = first_day + i;
            int64_t y;
            unsigned m, d;
            ical_civil_from_days(day, &y, &m, &d);
            if (r->freq == ICAL_YEARLY && r->bymonth && !(r->bymonth & (1u << m))) {
                /* jump to the next month */
                i += ical_days_in_month(y, m) - d;
                continue;
            }
            if (!day_matches(r, y, m, d, weekday_of(day), m0, d0, wd0))
                continue;
            int64_t local = day * 86400 + tod;
            if (local <= e->dtstart)
                continue;
            if (until_passed(e, local))
                return EXPAND_DONE;
            if (local > e->stop_after)
                return EXPAND_DONE;
            if (e->emit(e->ctx, local))
                return EXPAND_STOPPED;
            if (r->count && ++emitted >= r->count)
                return EXPAND_DONE;
        }
    }
}

/* ---- time zones ---------------------------------------------------------- */

static const struct ical_component *find_timezone(const struct ical_object *obj, struct ical_str tzid)
{
    for (const struct ical_component *c = obj->root ? obj->root->first_child : NULL; c; c = c->next_sibling) {
        if (c->kind != ICAL_VTIMEZONE)
            continue;
        const struct ical_prop *id = ical_find_prop(c, "TZID");
        if (id && str_eq(id->value, tzid))
            return c;
    }
    return NULL;
}

struct onset_search {
    int64_t local;              /* find the latest onset not after this */
    int64_t best;
    bool found;
};

static bool onset_emit(void *ctx, int64_t onset)
{
    struct onset_search *s = ctx;
    if (onset > s->local)
        return true;
    s->best = onset;
    s->found = true;
    return false;
}

struct observance_zone { int32_t offset_from; };

static int64_t observance_to_utc(const void *ctx, int64_t local)
{
    return local - ((const struct observance_zone *)ctx)->offset_from;
}

/* Seconds east of UTC in effect at `local` in the VTIMEZONE (5545 3.6.5). */
static int32_t zone_offset(const struct ical_component *tz, int64_t local)
{
    bool have_best = false, have_earliest = false;
    int64_t best_onset = 0, earliest_onset = 0;
    int32_t best_offset = 0, earliest_from = 0;
    for (const struct ical_component *o = tz->first_child; o; o = o->next_sibling) {
        if (o->kind != ICAL_STANDARD && o->kind != ICAL_DAYLIGHT)
            continue;
        struct ical_time start;
        int32_t from, to;
        const struct ical_prop *from_p = ical_find_prop(o, "TZOFFSETFROM");
        const struct ical_prop *to_p = ical_find_prop(o, "TZOFFSETTO");
        if (!ical_prop_time(ical_find_prop(o, "DTSTART"), &start) || !from_p || !to_p ||
            !ical_parse_utc_offset(from_p->value, &from) || !ical_parse_utc_offset(to_p->value, &to))
            continue;   /* ical_parse rejects these; only for hand-made trees */
        if (!have_earliest || start.local < earliest_onset) {
            earliest_onset = start.local;
            earliest_from = from;
            have_earliest = true;
        }
        struct onset_search s = { local, 0, false };
        const struct ical_prop *rr = ical_find_prop(o, "RRULE");
        struct ical_rrule rule;
        const char *why;
        if (rr && ical_parse_rrule(rr->value, &rule, &why) && !rule.unsupported) {
            struct observance_zone z = { from };
            struct expansion e = {
                .rule = &rule, .dtstart = start.local, .emit = onset_emit, .ctx = &s,
                .to_utc = observance_to_utc, .zone_ctx = &z,
                .skip_before = local - 366 * 86400 * (int64_t)rule.interval,
                .stop_after = local, .max_periods = 400,
            };
            expand(&e);
        } else {
            onset_emit(&s, start.local);
        }
        for (const struct ical_prop *rd = ical_find_prop(o, "RDATE"); rd; rd = ical_next_prop(rd, "RDATE")) {
            const char *v = rd->value.ptr, *vend = rd->value.ptr + rd->value.len;
            while (v < vend) {
                const char *c = memchr(v, ',', (size_t)(vend - v));
                struct ical_str item = { v, (size_t)((c ? c : vend) - v) };
                struct ical_time t;
                if (ical_prop_time_value(rd, item, &t) && t.local <= local && (!s.found || t.local > s.best)) {
                    s.best = t.local;
                    s.found = true;
                }
                v = c ? c + 1 : vend;
            }
        }
        if (s.found && (!have_best || s.best > best_onset)) {
            best_onset = s.best;
            best_offset = to;
            have_best = true;
        }
    }
    if (have_best)
        return best_offset;
    return have_earliest ? earliest_from : 0;
}

struct zone_ctx {
    const struct ical_object *obj;
    const struct ical_component *tz;    /* NULL: floating */
    enum ical_time_kind kind;
    int32_t floating_offset;
};

static int64_t zone_to_utc(const void *ctx, int64_t local)
{
    const struct zone_ctx *z = ctx;
    if (z->kind == ICAL_TIME_UTC)
        return local;
    if (z->kind == ICAL_TIME_ZONED && z->tz)
        return local - zone_offset(z->tz, local);
    return local - z->floating_offset;   /* floating, DATE, or a TZID without VTIMEZONE */
}

static void zone_for(struct zone_ctx *z, const struct ical_object *obj, const struct ical_time *t,
                     int32_t floating_offset)
{
    z->obj = obj;
    z->kind = t->kind;
    z->floating_offset = floating_offset;
    z->tz = t->kind == ICAL_TIME_ZONED ? find_timezone(obj, t->tzid) : NULL;
}

int64_t ical_time_to_utc(const struct ical_object *obj, const struct ical_time *t, int32_t floating_offset)
{
    struct zone_ctx z;
    zone_for(&z, obj, t, floating_offset);
    return zone_to_utc(&z, t->local);
}

/* ---- time-range (RFC 4791 9.9) ------------------------------------------- */

struct range_ctx {
    const struct ical_object *obj;
    const struct ical_component *comp;
    int64_t start, end;         /* the query, UTC */
    int32_t floating_offset;
    struct zone_ctx zone;       /* of DTSTART */
    struct ical_time dtstart;
    bool has_dtstart;
    /* VEVENT: instance length; VTODO: DUE or DURATION relative to DTSTART */
    bool has_end, has_duration;
    int64_t length;             /* seconds from instance start to DTEND/DUE/+DURATION */
    bool is_date;
    bool is_override;           /* a RECURRENCE-ID component: one instance, nothing excluded */
    bool matched;               /* an instance overlapped (without fn: the search stops there) */
    bool stopped;               /* fn asked to stop */
    ical_instance_fn fn;        /* NULL: the yes/no test of ical_time_range */
    void *fn_ctx;
    struct ical_instance inst;  /* what fn is handed */
};

/* RFC 4791 9.9 tables for one instance starting at `s` (UTC). */
static bool instance_overlaps(const struct range_ctx *c, int64_t s)
{
    int64_t S = c->start, E = c->end;
    switch (c->comp->kind) {
    case ICAL_VEVENT:
        if (c->has_end || c->has_duration) {
            if (c->length > 0)
                return S < s + c->length && E > s;
            return S <= s && E > s;
        }
        if (c->is_date)
            return S < s + 86400 && E > s;
        return S <= s && E > s;
    case ICAL_VTODO: {
        if (c->has_dtstart && c->has_duration) {
            int64_t due = s + c->length;
            return S <= due && (E > s || E >= due);
        }
        if (c->has_dtstart && c->has_end) {
            int64_t due = s + c->length;
            return (S < due || S <= s) && (E > s || E >= due);
        }
        if (c->has_dtstart)
            return S <= s && E > s;
        return true;    /* handled by todo_without_start */
    }
    case ICAL_VJOURNAL:
        if (c->is_date)
            return S < s + 86400 && E > s;
        return S <= s && E > s;
    default:
        return c->has_end ? (S < s + c->length && E > s) : true;
    }
}

/* VTODO without DTSTART: DUE alone, or COMPLETED/CREATED (RFC 4791 9.9). */
static bool todo_without_start(const struct range_ctx *c)
{
    int64_t S = c->start, E = c->end;
    const struct ical_component *t = c->comp;
    struct ical_time due, completed, created;
    if (ical_prop_time(ical_find_prop(t, "DUE"), &due)) {
        int64_t d = ical_time_to_utc(c->obj, &due, c->floating_offset);
        return S < d && E >= d;
    }
    bool has_completed = ical_prop_time(ical_find_prop(t, "COMPLETED"), &completed);
    bool has_created = ical_prop_time(ical_find_prop(t, "CREATED"), &created);
    int64_t co = has_completed ? ical_time_to_utc(c->obj, &completed, c->floating_offset) : 0;
    int64_t cr = has_created ? ical_time_to_utc(c->obj, &created, c->floating_offset) : 0;
    if (has_completed && has_created)
        return (S <= cr || S <= co) && (E >= cr || E >= co);
    if (has_completed)
        return S <= co && E >= co;
    if (has_created)
        return E > cr;
    return true;
}

static bool same_instance(const struct range_ctx *c, const struct ical_time *t, int64_t local, int64_t utc)
{
    if (t->kind == ICAL_TIME_DATE || c->is_date)
        return floor_div(t->local, 86400) == floor_div(local, 86400);
    return ical_time_to_utc(c->obj, t, c->floating_offset) == utc;
}

static bool excluded(const struct range_ctx *c, int64_t local, int64_t utc)
{
    if (c->is_override)
        return false;
    for (const struct ical_prop *p = ical_find_prop(c->comp, "EXDATE"); p; p = ical_next_prop(p, "EXDATE")) {
        const char *v = p->value.ptr, *vend = p->value.ptr + p->value.len;
        while (v < vend) {
            const char *comma = memchr(v, ',', (size_t)(vend - v));
            struct ical_str item = { v, (size_t)((comma ? comma : vend) - v) };
            struct ical_time t;
            if (ical_prop_time_value(p, item, &t) && same_instance(c, &t, local, utc))
                return true;
            v = comma ? comma + 1 : vend;
        }
    }
    /* an override component replaces this instance */
    for (const struct ical_component *o = c->obj->root->first_child; o; o = o->next_sibling) {
        struct ical_time rid;
        if (o != c->comp && o->kind == c->comp->kind &&
            ical_prop_time(ical_find_prop(o, "RECURRENCE-ID"), &rid) && same_instance(c, &rid, local, utc))
            return true;
    }
    return false;
}

/* An instance at utc overlaps the range: true when the search stops. */
static bool hit(struct range_ctx *c, int64_t utc)
{
    c->matched = true;
    if (!c->fn)
        return c->stopped = true;
    c->inst.start = utc;
    return c->stopped = c->fn(c->fn_ctx, &c->inst);
}

static bool range_emit(void *ctx, int64_t local)
{
    struct range_ctx *c = ctx;
    int64_t utc = zone_to_utc(&c->zone, local);
    if (excluded(c, local, utc))
        return false;
    return instance_overlaps(c, utc) && hit(c, utc);
}

/* c set up with obj, comp, the range, the zone and fn: the instances of
 * comp (its RRULE and RDATEs unless it is an override) that overlap. */
static enum ical_match component_range(struct range_ctx *cp, unsigned max_iterations)
{
    struct range_ctx c = *cp;
    const struct ical_object *obj = c.obj;
    const struct ical_component *comp = c.comp;
    int64_t start = c.start, end = c.end;
    int32_t floating_offset = c.floating_offset;
    bool expand_rules = !(c.is_override = ical_find_prop(comp, "RECURRENCE-ID") != NULL);
    c.inst.comp = comp;
    c.has_dtstart = ical_prop_time(ical_find_prop(comp, "DTSTART"), &c.dtstart);
    if (!c.has_dtstart) {
        if (comp->kind != ICAL_VTODO)
            return comp->kind == ICAL_VFREEBUSY ? ICAL_MATCH_ASSUMED : ICAL_NO_MATCH;
        if (!todo_without_start(&c))
            return ICAL_NO_MATCH;
        hit(&c, 0); /* one instance, without a start of its own */
        cp->stopped = c.stopped;
        return ICAL_MATCH;
    }
    zone_for(&c.zone, obj, &c.dtstart, floating_offset);
    c.is_date = c.dtstart.kind == ICAL_TIME_DATE;
    int64_t start_utc = zone_to_utc(&c.zone, c.dtstart.local);
    struct ical_time end_time;
    const struct ical_prop *dur = ical_find_prop(comp, "DURATION");
    if (ical_prop_time(ical_find_prop(comp, comp->kind == ICAL_VTODO ? "DUE" : "DTEND"), &end_time)) {
        c.has_end = true;
        c.length = ical_time_to_utc(obj, &end_time, floating_offset) - start_utc;
    } else if (dur && ical_parse_duration(dur->value, &c.length)) {
        c.has_duration = true;
    }
    if (c.length < 0)
        c.length = 0;
    c.inst.length = c.length;

    const struct ical_prop *rr = expand_rules ? ical_find_prop(comp, "RRULE") : NULL;
    c.inst.generated = rr || (expand_rules && ical_find_prop(comp, "RDATE"));
    struct ical_rrule rule;
    const char *why;
    if (!rr || !ical_parse_rrule(rr->value, &rule, &why)) {
        memset(&rule, 0, sizeof(rule));
        rule.freq = ICAL_DAILY;
        rule.interval = 1;
        rule.count = 1;      /* just DTSTART */
    } else if (rule.unsupported) {
        return end > start_utc ? ICAL_MATCH_ASSUMED : ICAL_NO_MATCH;
    }
    /* local-time window that can hold an overlapping instance: zones are
     * within +-26 h of UTC, instances last c.length (or a day) */
    const int64_t slack = 2 * 26 * 3600;
    int64_t span = (c.length > 86400 ? c.length : 86400) + slack;
    struct expansion e = {
        .rule = &rule, .dtstart = c.dtstart.local, .emit = range_emit, .ctx = &c,
        .to_utc = zone_to_utc, .zone_ctx = &c.zone,
        .skip_before = start > INT64_MIN + span ? start - span : INT64_MIN,
        .stop_after = end < INT64_MAX - slack ? end + slack : INT64_MAX,
        .max_periods = max_iterations,
    };
    enum expand_result res = expand(&e);
    /* RDATE instances (5545 3.8.5.2); PERIOD values use their start */
    if (!c.stopped && expand_rules) {
        for (const struct ical_prop *p = ical_find_prop(comp, "RDATE"); p && !c.stopped; p = ical_next_prop(p, "RDATE")) {
            const char *v = p->value.ptr, *vend = p->value.ptr + p->value.len;
            while (v < vend && !c.stopped) {
                const char *comma = memchr(v, ',', (size_t)(vend - v));
                struct ical_str item = { v, (size_t)((comma ? comma : vend) - v) };
                const char *slash = memchr(item.ptr, '/', item.len);
                if (slash)
                    item.len = (size_t)(slash - item.ptr);
                struct ical_time t;
                if (ical_prop_time_value(p, item, &t)) {
                    struct zone_ctx z;
                    zone_for(&z, obj, &t, floating_offset);
                    int64_t utc = zone_to_utc(&z, t.local);
                    if (!excluded(&c, t.local, utc) && instance_overlaps(&c, utc))
                        hit(&c, utc);
                }
                v = comma ? comma + 1 : vend;
            }
        }
    }
    cp->stopped = c.stopped;
    if (c.matched)
        return ICAL_MATCH;
    return res == EXPAND_LIMIT ? ICAL_MATCH_ASSUMED : ICAL_NO_MATCH;
}

static enum ical_match search(const struct ical_object *obj, const struct ical_component *only,
                              int64_t start, int64_t end, int32_t floating_offset,
                              unsigned max_iterations, ical_instance_fn fn, void *fn_ctx)
{
    struct range_ctx rc;
    enum ical_match result = ICAL_NO_MATCH;
    if (!obj->root)
        return ICAL_NO_MATCH;
    if (!max_iterations)
        max_iterations = ICAL_DEFAULT_MAX_ITERATIONS;
    memset(&rc, 0, sizeof(rc));
    rc.obj = obj;
    rc.start = start;
    rc.end = end;
    rc.floating_offset = floating_offset;
    rc.fn = fn;
    rc.fn_ctx = fn_ctx;
    for (const struct ical_component *c = obj->root->first_child; c && !rc.stopped; c = c->next_sibling) {
        if (c->kind != obj->kind || (only && c != only))
            continue;
        /* overrides are single instances at their own DTSTART (5545 3.8.4.4;
         * RANGE=THISANDFUTURE is not applied to later instances) */
        rc.comp = c;
        enum ical_match m = component_range(&rc, max_iterations);
        if (m == ICAL_MATCH)
            result = ICAL_MATCH;
        else if (m == ICAL_MATCH_ASSUMED && result == ICAL_NO_MATCH)
            result = ICAL_MATCH_ASSUMED;
    }
    return result;
}

/* ---- alarms (RFC 4791 9.9, VALARM row) ------------------------------------ */

struct alarm_ctx {
    struct range_ctx range;     /* the alarm's parent component and the query */
    int64_t shift;              /* from an instance's start to its first trigger */
    int64_t interval;           /* DURATION between repetitions, > 0 when repeat > 0 */
    uint32_t repeat;            /* REPEAT: further triggers after the first */
};

/* (start <= trigger-time) AND (end > trigger-time) for the trigger at
 * `first` or one of its REPEAT repetitions (RFC 5545 3.8.6.2). */
static bool triggers_in(const struct alarm_ctx *a, int64_t first)
{
    uint64_t k = 0;
    if (first < a->range.start) {
        if (!a->repeat)
            return false;
        k = ((uint64_t)(a->range.start - first) + (uint64_t)a->interval - 1) / (uint64_t)a->interval;
        if (k > a->repeat)
            return false;
    }
    return first + (int64_t)k * a->interval < a->range.end;
}

static bool alarm_instance(struct alarm_ctx *a, int64_t local, int64_t utc)
{
    if (!excluded(&a->range, local, utc) && triggers_in(a, utc + a->shift))
        a->range.matched = true;
    return a->range.matched;
}

static bool alarm_emit(void *ctx, int64_t local)
{
    struct alarm_ctx *a = ctx;
    return alarm_instance(a, local, zone_to_utc(&a->range.zone, local));
}

static enum ical_match match_if(bool yes) { return yes ? ICAL_MATCH : ICAL_NO_MATCH; }

enum ical_match ical_alarm_range(const struct ical_object *obj, const struct ical_component *alarm,
                                 int64_t start, int64_t end, int32_t floating_offset, unsigned max_iterations)
{
    const struct ical_component *comp = alarm->parent;
    const struct ical_prop *trigger = ical_find_prop(alarm, "TRIGGER");
    const struct ical_prop *repeat = ical_find_prop(alarm, "REPEAT");
    const struct ical_prop *every = ical_find_prop(alarm, "DURATION");
    const struct ical_param *related;
    struct alarm_ctx a;
    struct ical_time t;
    int64_t start_utc, repeats = 0;

    if (!comp || !trigger)
        return ICAL_NO_MATCH;
    memset(&a, 0, sizeof(a));
    a.range.obj = obj;
    a.range.comp = comp;
    a.range.start = start;
    a.range.end = end;
    a.range.floating_offset = floating_offset;
    /* a RECURRENCE-ID component is one instance of its own (5545 3.8.4.4) */
    a.range.is_override = ical_find_prop(comp, "RECURRENCE-ID") != NULL;
    /* REPEAT and DURATION come together (5545 3.6.6); REPEAT is an INTEGER */
    if (repeat && every && ical_parse_duration(every->value, &a.interval) && a.interval > 0) {
        for (size_t i = 0; i < repeat->value.len && i < 9 && is_digit(repeat->value.ptr[i]); i++)
            a.repeat = a.repeat * 10 + (uint32_t)(repeat->value.ptr[i] - '0');
        repeats = a.interval > INT64_MAX / 4 / ((int64_t)a.repeat + 1) ? INT64_MAX / 4
                                                                      : (int64_t)a.repeat * a.interval;
    }

    /* TRIGGER;VALUE=DATE-TIME: one absolute time, whatever the instances
     * (5545 3.8.6.3) */
    if (!ical_parse_duration(trigger->value, &a.shift)) {
        if (!ical_prop_time(trigger, &t))
            return ICAL_MATCH_ASSUMED;
        return match_if(triggers_in(&a, ical_time_to_utc(obj, &t, floating_offset)));
    }
    related = ical_find_param(trigger, "RELATED");
    bool from_end = related && ical_str_eq_nocase(related->value, "END");
    if (!ical_prop_time(ical_find_prop(comp, "DTSTART"), &a.range.dtstart)) {
        /* a VTODO without DTSTART has no instances to repeat: only an
         * alarm related to its DUE can be placed */
        if (from_end && ical_prop_time(ical_find_prop(comp, "DUE"), &t))
            return match_if(triggers_in(&a, ical_time_to_utc(obj, &t, floating_offset) + a.shift));
        return ICAL_MATCH_ASSUMED;
    }
    zone_for(&a.range.zone, obj, &a.range.dtstart, floating_offset);
    start_utc = zone_to_utc(&a.range.zone, a.range.dtstart.local);
    a.range.is_date = a.range.dtstart.kind == ICAL_TIME_DATE;
    if (from_end) {
        /* RELATED=END: DTEND or DUE, else DTSTART + DURATION; an event
         * with neither ends as it starts, or after its day (5545 3.6.1);
         * a to-do with neither has no end to relate to */
        const struct ical_prop *length = ical_find_prop(comp, "DURATION");
        int64_t seconds = 0;
        if (ical_prop_time(ical_find_prop(comp, comp->kind == ICAL_VTODO ? "DUE" : "DTEND"), &t)) {
            seconds = ical_time_to_utc(obj, &t, floating_offset) - start_utc;
        } else if (!length || !ical_parse_duration(length->value, &seconds)) {
            if (comp->kind == ICAL_VTODO)
                return ICAL_MATCH_ASSUMED;
            seconds = a.range.is_date ? 86400 : 0;
        }
        a.shift += seconds;
    }

    const struct ical_prop *rr = a.range.is_override ? NULL : ical_find_prop(comp, "RRULE");
    struct ical_rrule rule;
    const char *why;
    if (!rr || !ical_parse_rrule(rr->value, &rule, &why)) {
        memset(&rule, 0, sizeof(rule));
        rule.freq = ICAL_DAILY;
        rule.interval = 1;
        rule.count = 1;      /* just DTSTART */
    } else if (rule.unsupported) {
        return ICAL_MATCH_ASSUMED;
    }
    /* instances whose triggers can fall in [start, end): their starts are
     * in [start - shift - repeats, end - shift); local times are within
     * +-26 h of UTC. Durations (9 digits a unit) and repeats (at most
     * INT64_MAX / 4) stay far from the limits: only an open side needs care. */
    const int64_t slack = 2 * 26 * 3600;
    struct expansion e = {
        .rule = &rule, .dtstart = a.range.dtstart.local, .emit = alarm_emit, .ctx = &a,
        .to_utc = zone_to_utc, .zone_ctx = &a.range.zone,
        .skip_before = start == INT64_MIN ? INT64_MIN : start - a.shift - repeats - slack,
        .stop_after = end == INT64_MAX ? INT64_MAX : end - a.shift + slack,
        .max_periods = max_iterations ? max_iterations : ICAL_DEFAULT_MAX_ITERATIONS,
    };
    enum expand_result res = expand(&e);
    /* RDATE instances (5545 3.8.5.2); PERIOD values use their start */
    const struct ical_prop *p = a.range.is_override ? NULL : ical_find_prop(comp, "RDATE");
    for (; p && !a.range.matched; p = ical_next_prop(p, "RDATE")) {
        const char *v = p->value.ptr, *vend = p->value.ptr + p->value.len;
        while (v < vend && !a.range.matched) {
            const char *comma = memchr(v, ',', (size_t)(vend - v));
            struct ical_str item = { v, (size_t)((comma ? comma : vend) - v) };
            const char *slash = memchr(item.ptr, '/', item.len);
            struct zone_ctx z;
            if (slash)
                item.len = (size_t)(slash - item.ptr);
            if (ical_prop_time_value(p, item, &t)) {
                zone_for(&z, obj, &t, floating_offset);
                alarm_instance(&a, t.local, zone_to_utc(&z, t.local));
            }
            v = comma ? comma + 1 : vend;
        }
    }
    if (a.range.matched)
        return ICAL_MATCH;
    return res == EXPAND_LIMIT ? ICAL_MATCH_ASSUMED : ICAL_NO_MATCH;
}

enum ical_match ical_time_range(const struct ical_object *obj, int64_t start, int64_t end,
                                int32_t floating_offset, unsigned max_iterations)
{
    return search(obj, NULL, start, end, floating_offset, max_iterations, NULL, NULL);
}

enum ical_match ical_component_range(const struct ical_object *obj, const struct ical_component *comp,
                                     int64_t start, int64_t end, int32_t floating_offset)
{
    return search(obj, comp, start, end, floating_offset, 0, NULL, NULL);
}

enum ical_match ical_instances(const struct ical_object *obj, int64_t start, int64_t end,
                               int32_t floating_offset, unsigned max_iterations,
                               ical_instance_fn fn, void *ctx)
{
    return search(obj, NULL, start, end, floating_offset, max_iterations, fn, ctx);
}
