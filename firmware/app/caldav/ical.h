/* iCalendar (RFC 5545) reader for CalDAV calendar object resources
 * (RFC 4791 section 4.1), and the time-range test of RFC 4791 section 9.9.
 *
 * ical_parse() unfolds the content lines (5545 3.1) into a caller-provided
 * arena, builds the BEGIN/END component tree and validates what CalDAV needs
 * for the valid-calendar-data precondition (4791 5.3.2.1): one VCALENDAR,
 * components nested as 5545 section 3.6 allows, one component type per
 * object, exactly one UID shared by all its components, parseable dates,
 * durations and recurrence rules. Nothing is allocated, the input is not
 * modified, recursion is bounded by the component depth limit.
 *
 * Time zones: a TZID= time is converted with the object's own VTIMEZONE: the
 * STANDARD/DAYLIGHT observance whose latest onset (DTSTART, RRULE or RDATE
 * dates) is not after the local time gives TZOFFSETTO; before the first onset
 * the earliest observance's TZOFFSETFROM applies. Onsets are compared in
 * local time, so the repeated or skipped hour at a switch is resolved to one
 * side. A TZID with no VTIMEZONE in the object (allowed by RFC 7809 time
 * zones by reference) is treated as floating time. Floating times and DATE
 * values are converted with the caller's offset (the calendar's
 * CALDAV:calendar-timezone, 4791 9.9), UTC when the caller passes 0. */
#ifndef LITEDAV_ICAL_H
#define LITEDAV_ICAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ical_str {
    const char *ptr;
    size_t len;
};

struct ical_param {
    struct ical_str name;
    struct ical_str value;      /* surrounding quotes removed from a single quoted value */
    struct ical_param *next;
};

struct ical_prop {
    struct ical_str name;
    struct ical_param *params;
    struct ical_str value;      /* unfolded, escapes (5545 3.3.11) kept */
    struct ical_prop *next;
    uint32_t line;              /* physical line number where it starts, from 1 */
};

enum ical_kind {
    ICAL_OTHER,                 /* x-comp / iana-comp, kept but not interpreted */
    ICAL_VCALENDAR, ICAL_VEVENT, ICAL_VTODO, ICAL_VJOURNAL, ICAL_VFREEBUSY,
    ICAL_VTIMEZONE, ICAL_VALARM, ICAL_STANDARD, ICAL_DAYLIGHT,
};

struct ical_component {
    enum ical_kind kind;
    struct ical_str name;
    struct ical_prop *props;    /* in input order */
    struct ical_component *parent, *first_child, *next_sibling;
};

enum ical_status {
    ICAL_OK = 0,
    ICAL_ERR_SYNTAX,            /* not a content line (5545 3.1) */
    ICAL_ERR_NO_VCALENDAR,      /* missing, or not the only top-level object */
    ICAL_ERR_NESTING,           /* BEGIN/END mismatch, component in the wrong place, too deep */
    ICAL_ERR_COMPONENT,         /* no, or more than one type of, calendar component (4791 4.1) */
    ICAL_ERR_UID,               /* missing, repeated or differing UID (4791 4.1) */
    ICAL_ERR_PROPERTY,          /* required property missing or conflicting ones */
    ICAL_ERR_DATE,              /* bad DATE, DATE-TIME, DURATION or UTC-OFFSET value */
    ICAL_ERR_RRULE,             /* bad recurrence rule (5545 3.3.10) */
    ICAL_ERR_LINE_TOO_LONG,     /* unfolded line longer than the limit */
    ICAL_ERR_TOO_MANY,          /* more properties or components than the limit */
    ICAL_ERR_ARENA,             /* arena exhausted */
};

struct ical_error {
    enum ical_status code;
    size_t offset;              /* byte offset of the offending line */
    uint32_t line;              /* its line number, from 1 */
    const char *message;        /* static English text */
};

struct ical_limits {
    size_t max_line;            /* unfolded content line, bytes; 0 = 8192 */
    unsigned max_props;         /* whole object; 0 = 1024 */
    unsigned max_components;    /* whole object; 0 = 256 */
    unsigned max_depth;         /* component nesting; 0 = 6 */
    bool itip;                  /* a scheduling message (RFC 5546 section 1.4): METHOD allowed */
};

struct ical_object {
    struct ical_component *root;        /* the VCALENDAR */
    enum ical_kind kind;                /* VEVENT, VTODO, VJOURNAL or VFREEBUSY */
    struct ical_str uid;
    struct ical_component *master;      /* the one without RECURRENCE-ID, or NULL */
    size_t arena_used;
};

enum ical_status ical_parse(struct ical_object *obj, const char *buf, size_t len,
                            void *arena, size_t arena_size,
                            const struct ical_limits *limits, struct ical_error *err);

const char *ical_status_name(enum ical_status status);

/* ---- lookup ------------------------------------------------------------- */

bool ical_str_eq_nocase(struct ical_str s, const char *lit);
const struct ical_prop *ical_find_prop(const struct ical_component *c, const char *name);
const struct ical_prop *ical_next_prop(const struct ical_prop *p, const char *name);
size_t ical_count_props(const struct ical_component *c, const char *name);
const struct ical_param *ical_find_param(const struct ical_prop *p, const char *name);
const struct ical_component *ical_find_child(const struct ical_component *c, enum ical_kind kind);

/* ---- values ------------------------------------------------------------- */

enum ical_time_kind { ICAL_TIME_DATE, ICAL_TIME_FLOATING, ICAL_TIME_UTC, ICAL_TIME_ZONED };

struct ical_time {
    int64_t local;              /* seconds from 1970-01-01T00:00:00 of the written fields */
    enum ical_time_kind kind;
    struct ical_str tzid;       /* ICAL_TIME_ZONED only */
};

/* DATE (5545 3.3.4) when is_date, else DATE-TIME (3.3.5). */
bool ical_parse_time(struct ical_str value, bool is_date, struct ical_time *out);
/* The property's value (first of a list) with its VALUE=DATE and TZID= parameters. */
bool ical_prop_time(const struct ical_prop *p, struct ical_time *out);
/* DURATION (5545 3.3.6), in seconds (days as 86400). */
bool ical_parse_duration(struct ical_str value, int64_t *seconds);
/* UTC-OFFSET (5545 3.3.14), seconds east of UTC. */
bool ical_parse_utc_offset(struct ical_str value, int32_t *seconds);
/* A time-range start/end attribute (4791 9.9: UTC DATE-TIME) to UTC seconds. */
bool ical_parse_utc(const char *s, size_t len, int64_t *utc);

/* UTC seconds as a UTC DATE-TIME (5545 3.3.5 form 2: "19980119T070000Z"). */
#define ICAL_UTC_LEN 16
void ical_format_utc(int64_t utc, char out[ICAL_UTC_LEN + 1]);

int64_t ical_days_from_civil(int64_t y, unsigned m, unsigned d);
void ical_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

enum ical_freq { ICAL_FREQ_NONE, ICAL_DAILY, ICAL_WEEKLY, ICAL_MONTHLY, ICAL_YEARLY, ICAL_FREQ_SUBDAILY };

#define ICAL_MAX_BYDAY 16
#define ICAL_MAX_BYMONTHDAY 31

struct ical_rrule {
    enum ical_freq freq;
    uint32_t interval;
    uint32_t count;             /* 0: none */
    bool has_until;
    struct ical_time until;
    uint8_t wkst;               /* 0 = SU ... 6 = SA */
    uint8_t n_byday, n_bymonthday;
    struct { int8_t ordinal; uint8_t weekday; } byday[ICAL_MAX_BYDAY];
    int8_t bymonthday[ICAL_MAX_BYMONTHDAY];
    uint16_t bymonth;           /* bit m set for month m (1..12); 0 = none given */
    bool unsupported;           /* valid parts this expander does not evaluate
                                   (BYSETPOS, BYWEEKNO, BYYEARDAY, BYHOUR..., sub-daily FREQ) */
};

/* RECUR (5545 3.3.10). On false, *why says what is wrong. */
bool ical_parse_rrule(struct ical_str value, struct ical_rrule *rule, const char **why);

/* UTC seconds of t; floating_offset is the caller's zone, seconds east of UTC. */
int64_t ical_time_to_utc(const struct ical_object *obj, const struct ical_time *t,
                         int32_t floating_offset);

/* ---- time-range (RFC 4791 9.9) ------------------------------------------ */

enum ical_match {
    ICAL_NO_MATCH = 0,
    ICAL_MATCH = 1,
    /* could not be decided within the iteration bound, or the rule uses parts
     * the expander does not evaluate: reported as overlapping, so a query
     * returns too much rather than too little */
    ICAL_MATCH_ASSUMED = 2,
};

#define ICAL_DEFAULT_MAX_ITERATIONS 5000

/* Instances are DTSTART, the RRULE's and the RDATEs', less EXDATEs and less
 * those an override (RECURRENCE-ID component) replaces; each override is one
 * instance at its own DTSTART. Approximations: RANGE=THISANDFUTURE is not
 * carried to later instances, an RDATE PERIOD lasts as long as the master,
 * and an instance lasts DTEND - DTSTART in exact seconds (not nominal days
 * across a DST switch).
 *
 * Does any instance of the object overlap [start, end)? start/end are UTC
 * seconds; INT64_MIN / INT64_MAX leave a side open. max_iterations bounds
 * the recurrence periods examined (0 = default). */
enum ical_match ical_time_range(const struct ical_object *obj, int64_t start, int64_t end,
                                int32_t floating_offset, unsigned max_iterations);

/* The VALARM row of RFC 4791 9.9: does a trigger of `alarm` (a VALARM of a
 * VEVENT or VTODO of obj) fall in [start, end)? A TRIGGER;VALUE=DATE-TIME is
 * one time; a duration is from the start (or with RELATED=END the end: DTEND,
 * DUE or DTSTART + DURATION) of each instance of the parent, as
 * ical_time_range counts them; REPEAT / DURATION repetitions follow each
 * trigger. What cannot be placed (a relative trigger of a to-do without the
 * time it refers to, an unsupported rule, the iteration bound) is
 * ICAL_MATCH_ASSUMED. */
enum ical_match ical_alarm_range(const struct ical_object *obj, const struct ical_component *alarm,
                                 int64_t start, int64_t end, int32_t floating_offset,
                                 unsigned max_iterations);

/* ---- instances (RFC 4791 9.6.5 expand, 9.6.6 limit-recurrence-set) ------- */

/* One instance that ical_instances found. */
struct ical_instance {
    const struct ical_component *comp;  /* the component it is of: a master, or an override */
    /* one of a master's recurrences (RRULE, RDATE): it starts at `start` and
     * lasts `length` seconds (DTEND or DUE less DTSTART, as ical_time_range
     * takes them); otherwise the component is the instance, with its own times */
    bool generated;
    int64_t start;              /* UTC */
    int64_t length;
};
/* Called for each instance found: true stops the search. */
typedef bool (*ical_instance_fn)(void *ctx, const struct ical_instance *in);

/* Each instance that ical_time_range would find overlapping [start, end),
 * with the same rules and bounds: the master's (DTSTART, RRULE, RDATE less
 * EXDATE and the instances overrides replace) in increasing order, then each
 * override's, in the order of the object's components. A rule the expander
 * does not evaluate gives no instances (the result is ICAL_MATCH_ASSUMED). */
enum ical_match ical_instances(const struct ical_object *obj, int64_t start, int64_t end,
                               int32_t floating_offset, unsigned max_iterations,
                               ical_instance_fn fn, void *ctx);

/* ical_time_range for one component of the object: an override is its one
 * instance, another component its recurrence set. */
enum ical_match ical_component_range(const struct ical_object *obj, const struct ical_component *comp,
                                     int64_t start, int64_t end, int32_t floating_offset);

#endif
