/* libFuzzer target for the iCalendar reader and time-range matcher
 * (firmware/app/caldav/ical_*.c).
 *
 * For each input:
 *   - parse it with a small and with a roomy arena; an error must carry a
 *     known code, an offset inside the input and a message, and the small
 *     arena may only add ICAL_ERR_ARENA;
 *   - on success, check the object: a VCALENDAR root, a calendar component
 *     type, one non-empty UID shared by every component of that type, parent
 *     links, every string inside the input or the arena;
 *   - ask time-range questions (ranges taken from the input's own dates and
 *     from a hash of it) and require monotony: an instance overlapping a
 *     range overlaps every wider range, so a match may only turn into a
 *     match or an assumed match when the range grows; the same for the
 *     triggers of the master's first alarm.
 * Any failed invariant aborts, which libFuzzer reports with the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caldav/ical.h"

#define REQUIRE(cond) \
    do { if (!(cond)) { fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

static unsigned char arena_small[1024], arena_big[65536];

static void check_str(struct ical_str s, const char *in, size_t len)
{
    const char *a = (const char *)arena_big;
    REQUIRE(s.len == 0 || (s.ptr >= in && s.ptr + s.len <= in + len) ||
            (s.ptr >= a && s.ptr + s.len <= a + sizeof(arena_big)));
}

static void check_component(const struct ical_component *c, const struct ical_component *parent,
                            unsigned depth, const struct ical_object *obj, const char *in, size_t len)
{
    REQUIRE(depth <= 6);
    for (; c; c = c->next_sibling) {
        REQUIRE(c->parent == parent);
        check_str(c->name, in, len);
        for (const struct ical_prop *p = c->props; p; p = p->next) {
            REQUIRE(p->name.len > 0 && p->line >= 1);
            check_str(p->name, in, len);
            check_str(p->value, in, len);
            for (const struct ical_param *a = p->params; a; a = a->next) {
                check_str(a->name, in, len);
                check_str(a->value, in, len);
            }
        }
        if (parent == obj->root && c->kind == obj->kind) {
            const struct ical_prop *uid = ical_find_prop(c, "UID");
            REQUIRE(uid && ical_count_props(c, "UID") == 1);
            REQUIRE(uid->value.len == obj->uid.len && memcmp(uid->value.ptr, obj->uid.ptr, obj->uid.len) == 0);
        }
        check_component(c->first_child, c, depth + 1, obj, in, len);
    }
}

static uint64_t hash(const uint8_t *d, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 1099511628211ull;
    return h;
}

static void ranges(const struct ical_object *obj, int64_t anchor, uint64_t h)
{
    static const int64_t widths[] = { 1, 3600, 86400, 7 * 86400, 400 * 86400LL };
    int64_t s = anchor + (int64_t)(h % (90 * 86400)) - 45 * 86400;
    int64_t w = widths[(h >> 20) % 5];
    int32_t floating = (int32_t)((int64_t)((h >> 30) % 49) * 1800 - 12 * 3600);
    enum ical_match narrow = ical_time_range(obj, s, s + w, floating, 300);
    REQUIRE(narrow == ICAL_NO_MATCH || narrow == ICAL_MATCH || narrow == ICAL_MATCH_ASSUMED);
    enum ical_match wide = ical_time_range(obj, s - 86400, s + w + 86400, floating, 300);
    if (narrow == ICAL_MATCH)
        REQUIRE(wide != ICAL_NO_MATCH);
    enum ical_match open_end = ical_time_range(obj, s, INT64_MAX, floating, 300);
    if (narrow == ICAL_MATCH)
        REQUIRE(open_end != ICAL_NO_MATCH);
    enum ical_match everything = ical_time_range(obj, INT64_MIN, INT64_MAX, floating, 300);
    if (narrow == ICAL_MATCH || wide == ICAL_MATCH)
        REQUIRE(everything != ICAL_NO_MATCH);

    /* the same of the first alarm's triggers */
    const struct ical_component *alarm = obj->master ? ical_find_child(obj->master, ICAL_VALARM) : NULL;
    if (!alarm)
        return;
    narrow = ical_alarm_range(obj, alarm, s, s + w, floating, 300);
    REQUIRE(narrow == ICAL_NO_MATCH || narrow == ICAL_MATCH || narrow == ICAL_MATCH_ASSUMED);
    wide = ical_alarm_range(obj, alarm, s - 86400, s + w + 86400, floating, 300);
    open_end = ical_alarm_range(obj, alarm, s, INT64_MAX, floating, 300);
    everything = ical_alarm_range(obj, alarm, INT64_MIN, INT64_MAX, floating, 300);
    if (narrow == ICAL_MATCH)
        REQUIRE(wide != ICAL_NO_MATCH && open_end != ICAL_NO_MATCH && everything != ICAL_NO_MATCH);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    struct ical_object obj;
    struct ical_error err;

    enum ical_status small = ical_parse(&obj, in, size, arena_small, sizeof(arena_small), NULL, &err);
    REQUIRE(err.code == small && err.message && err.offset <= size);
    enum ical_status st = ical_parse(&obj, in, size, arena_big, sizeof(arena_big), NULL, &err);
    REQUIRE(err.code == st && err.message && err.offset <= size);
    REQUIRE(ical_status_name(st)[0] != '?');
    REQUIRE((st == ICAL_OK) == (obj.root != NULL));
    REQUIRE(small == st || small == ICAL_ERR_ARENA);
    if (st != ICAL_OK)
        return 0;
    REQUIRE(obj.arena_used <= sizeof(arena_big));
    REQUIRE(obj.root->kind == ICAL_VCALENDAR && obj.root->parent == NULL && obj.root->next_sibling == NULL);
    REQUIRE(obj.kind == ICAL_VEVENT || obj.kind == ICAL_VTODO || obj.kind == ICAL_VJOURNAL ||
            obj.kind == ICAL_VFREEBUSY);
    REQUIRE(obj.uid.len > 0);
    check_component(obj.root, NULL, 1, &obj, in, size);

    /* anchor the ranges on the master's start when there is one */
    int64_t anchor = 1700000000;
    struct ical_time t;
    const struct ical_component *first = obj.master;
    for (const struct ical_component *c = obj.root->first_child; !first && c; c = c->next_sibling)
        if (c->kind == obj.kind)
            first = c;
    if (ical_prop_time(ical_find_prop(first, "DTSTART"), &t))
        anchor = ical_time_to_utc(&obj, &t, 0);
    uint64_t h = hash(data, size);
    ranges(&obj, anchor, h);
    ranges(&obj, anchor + 365 * 86400LL, h * 31 + 7);
    return 0;
}
