/* Unit tests of the iCalendar reader and time-range matcher
 * (firmware/app/caldav/ical_*.c).
 *
 * A table of objects with the validation status expected, value parsers
 * (dates, durations, offsets, recurrence rules), exports in the shape Google
 * Calendar, Apple Calendar, Outlook and Thunderbird write them, and a table
 * of time-range queries (RFC 4791 9.9) whose answers were worked out by hand
 * from the RFC 5545 recurrence rules and the zones' offsets, and the
 * instances ical_instances hands out (RFC 4791 9.6.5). Inputs are
 * parsed from malloc'd copies of exactly their length so ASan catches any
 * over-read. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "caldav/ical.h"

static unsigned char arena[32768];

static enum ical_status parse_lim(struct ical_object *obj, const char *text, size_t len, size_t arena_size,
                                  const struct ical_limits *lim, struct ical_error *err)
{
    static char *copy;
    free(copy);
    copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    return ical_parse(obj, copy, len, arena, arena_size, lim, err);
}

static enum ical_status parse(struct ical_object *obj, const char *text, struct ical_error *err)
{
    return parse_lim(obj, text, strlen(text), sizeof(arena), NULL, err);
}

static struct ical_str S(const char *s)
{
    struct ical_str v = { s, strlen(s) };
    return v;
}

static int64_t utc(const char *s)
{
    int64_t t = 0;
    if (!ical_parse_utc(s, strlen(s), &t)) {
        fprintf(stderr, "bad test time %s\n", s);
        abort();
    }
    return t;
}

#define CAL_HEAD "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//LiteDAV//test//EN\r\n"
#define CAL_TAIL "END:VCALENDAR\r\n"
#define EVENT(body) "BEGIN:VEVENT\r\nUID:u1\r\nDTSTAMP:20240101T000000Z\r\n" body "END:VEVENT\r\n"

/* ---- validation table ---------------------------------------------------- */

struct valid_case {
    const char *ics;
    enum ical_status status;
    unsigned line;       /* expected error line, 0 = not checked */
};

static const struct valid_case valid_cases[] = {
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART;VALUE=DATE:20240101\r\n") CAL_TAIL, ICAL_OK, 0 },
    { "begin:vcalendar\nversion:2.0\nprodid:x\nbegin:vevent\nuid:a\ndtstart:20240101T100000\nend:vevent\nend:vcalendar\n", ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL "\r\n\r\n", ICAL_OK, 0 },
    { CAL_HEAD "\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nX-FOO;X-P=\"a:b;c\",d:v\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") "BEGIN:X-THING\r\nX-A:1\r\nBEGIN:X-INNER\r\nEND:X-INNER\r\nEND:X-THING\r\n" CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD "BEGIN:VTODO\r\nUID:t\r\nEND:VTODO\r\n" CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD "BEGIN:VJOURNAL\r\nUID:j\r\nDTSTART;VALUE=DATE:20240101\r\nEND:VJOURNAL\r\n" CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD "BEGIN:VFREEBUSY\r\nUID:f\r\nDTSTART:20240101T000000Z\r\nDTEND:20240102T000000Z\r\nEND:VFREEBUSY\r\n" CAL_TAIL, ICAL_OK, 0 },
    /* structure */
    { "", ICAL_ERR_NO_VCALENDAR, 0 },
    { "\r\n\r\n", ICAL_ERR_NO_VCALENDAR, 0 },
    { "BEGIN:VEVENT\r\nUID:x\r\nEND:VEVENT\r\n", ICAL_ERR_NO_VCALENDAR, 1 },
    { "VERSION:2.0\r\n", ICAL_ERR_NO_VCALENDAR, 1 },
    { "END:VCALENDAR\r\n", ICAL_ERR_NO_VCALENDAR, 1 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL CAL_HEAD CAL_TAIL, ICAL_ERR_NO_VCALENDAR, 10 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL "X-LATE:1\r\n", ICAL_ERR_NO_VCALENDAR, 10 },
    { CAL_HEAD "BEGIN:VEVENT\r\nUID:u\r\nDTSTART:20240101T100000Z\r\nEND:VTODO\r\n" CAL_TAIL, ICAL_ERR_NESTING, 7 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n"), ICAL_ERR_NESTING, 0 },
    { CAL_HEAD "BEGIN:VEVENT\r\nUID:u\r\nDTSTART:20240101T100000Z\r\n", ICAL_ERR_NESTING, 0 },
    { CAL_HEAD "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\n" CAL_TAIL, ICAL_ERR_NESTING, 4 },
    { CAL_HEAD "BEGIN:VEVENT\r\nBEGIN:VEVENT\r\nEND:VEVENT\r\nEND:VEVENT\r\n" CAL_TAIL, ICAL_ERR_NESTING, 5 },
    { CAL_HEAD "BEGIN:VEVENT\r\nBEGIN:STANDARD\r\nEND:STANDARD\r\nEND:VEVENT\r\n" CAL_TAIL, ICAL_ERR_NESTING, 5 },
    { CAL_HEAD "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n" CAL_TAIL, ICAL_ERR_NESTING, 4 },
    { CAL_HEAD "BEGIN:\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD "BEGIN:V EVENT\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD "BEGIN:X-A\r\nBEGIN:X-B\r\nBEGIN:X-C\r\nBEGIN:X-D\r\nBEGIN:X-E\r\nBEGIN:X-F\r\nEND:X-F\r\nEND:X-E\r\nEND:X-D\r\nEND:X-C\r\nEND:X-B\r\nEND:X-A\r\n" CAL_TAIL, ICAL_ERR_NESTING, 9 },
    /* content lines (5545 3.1) */
    { CAL_HEAD "NOCOLON\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD ":value\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD "X-A;P:v\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD "X-A;=1:v\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD "X-A;P=\"open:v\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD "X-A;P=a\"b\":v\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD "X_A:v\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    { CAL_HEAD "X-A:bell\a\r\n" CAL_TAIL, ICAL_ERR_SYNTAX, 4 },
    /* RFC 4791 4.1 */
    { CAL_HEAD CAL_TAIL, ICAL_ERR_COMPONENT, 0 },
    { CAL_HEAD "BEGIN:VTIMEZONE\r\nTZID:Z\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0000\r\nTZOFFSETTO:+0000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n" CAL_TAIL, ICAL_ERR_COMPONENT, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") "BEGIN:VTODO\r\nUID:u1\r\nEND:VTODO\r\n" CAL_TAIL, ICAL_ERR_COMPONENT, 0 },
    { CAL_HEAD "BEGIN:VEVENT\r\nDTSTART:20240101T100000Z\r\nEND:VEVENT\r\n" CAL_TAIL, ICAL_ERR_UID, 0 },
    { CAL_HEAD "BEGIN:VEVENT\r\nUID:a\r\nUID:a\r\nDTSTART:20240101T100000Z\r\nEND:VEVENT\r\n" CAL_TAIL, ICAL_ERR_UID, 6 },
    { CAL_HEAD "BEGIN:VEVENT\r\nUID:\r\nDTSTART:20240101T100000Z\r\nEND:VEVENT\r\n" CAL_TAIL, ICAL_ERR_UID, 5 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") "BEGIN:VEVENT\r\nUID:u2\r\nRECURRENCE-ID:20240102T100000Z\r\nDTSTART:20240102T100000Z\r\nEND:VEVENT\r\n" CAL_TAIL, ICAL_ERR_UID, 10 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") EVENT("DTSTART:20240102T100000Z\r\n") CAL_TAIL, ICAL_ERR_UID, 10 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRECURRENCE-ID:20240101T100000Z\r\n") EVENT("DTSTART:20240101T110000Z\r\nRECURRENCE-ID:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRECURRENCE-ID:20240101T100000Z\r\n") CAL_TAIL, ICAL_OK, 0 },
    /* required properties */
    { "BEGIN:VCALENDAR\r\nPRODID:x\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 0 },
    { "BEGIN:VCALENDAR\r\nVERSION:1.0\r\nPRODID:x\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 2 },
    { "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 0 },
    { CAL_HEAD "METHOD:REQUEST\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 4 },
    { CAL_HEAD EVENT("SUMMARY:no start\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nDTEND:20240101T110000Z\r\nDURATION:PT1H\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 9 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nDTSTART:20240101T110000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 8 },
    { CAL_HEAD "BEGIN:VTODO\r\nUID:t\r\nDURATION:PT1H\r\nEND:VTODO\r\n" CAL_TAIL, ICAL_ERR_PROPERTY, 6 },
    { CAL_HEAD "BEGIN:VTODO\r\nUID:t\r\nDTSTART:20240101T100000Z\r\nDUE:20240101T110000Z\r\nDURATION:PT1H\r\nEND:VTODO\r\n" CAL_TAIL, ICAL_ERR_PROPERTY, 8 },
    { CAL_HEAD "BEGIN:VTODO\r\nUID:t\r\nRRULE:FREQ=DAILY\r\nEND:VTODO\r\n" CAL_TAIL, ICAL_ERR_PROPERTY, 6 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nEND:VALARM\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:15M\r\nEND:VALARM\r\n") CAL_TAIL, ICAL_ERR_DATE, 10 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER;VALUE=DATE-TIME:20240101T090000Z\r\nEND:VALARM\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD "BEGIN:VTIMEZONE\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0000\r\nTZOFFSETTO:+0000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 0 },
    { CAL_HEAD "BEGIN:VTIMEZONE\r\nTZID:Z\r\nEND:VTIMEZONE\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 5 },
    { CAL_HEAD "BEGIN:VTIMEZONE\r\nTZID:Z\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_PROPERTY, 0 },
    { CAL_HEAD "BEGIN:VTIMEZONE\r\nTZID:Z\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+0000\r\nTZOFFSETTO:0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_DATE, 9 },
    /* values */
    { CAL_HEAD EVENT("DTSTART:20241301T100000Z\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART:20240230T100000Z\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART:20230229\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART;VALUE=DATE:20240229\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T250000Z\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART:20240101T106000Z\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART:20240101 100000Z\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000X\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART;VALUE=DATE:20240101T100000Z\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART:2024-01-01\r\n") CAL_TAIL, ICAL_ERR_DATE, 7 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nDTEND:20240101T090000Z\r\n") CAL_TAIL, ICAL_ERR_DATE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nDTEND;VALUE=DATE:20240102\r\n") CAL_TAIL, ICAL_ERR_DATE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nDTEND:20240101T100000Z\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nDURATION:1H\r\n") CAL_TAIL, ICAL_ERR_DATE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nEXDATE:20240102T100000Z,2024010\r\n") CAL_TAIL, ICAL_ERR_DATE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nEXDATE:20240102T100000Z,20240103T100000Z\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRDATE;VALUE=PERIOD:20240105T100000Z/PT1H\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nDTSTAMP:yesterday\r\n") CAL_TAIL, ICAL_ERR_DATE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRRULE:COUNT=3\r\n") CAL_TAIL, ICAL_ERR_RRULE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRRULE:FREQ=DAILY;COUNT=3;UNTIL=20240201T000000Z\r\n") CAL_TAIL, ICAL_ERR_RRULE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRRULE:FREQ=WEEKLY;BYDAY=1MO\r\n") CAL_TAIL, ICAL_ERR_RRULE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRRULE:FREQ=FORTNIGHTLY\r\n") CAL_TAIL, ICAL_ERR_RRULE, 8 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRRULE:FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR\r\n") CAL_TAIL, ICAL_OK, 0 },
    { CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nRRULE:FREQ=HOURLY;INTERVAL=6\r\n") CAL_TAIL, ICAL_OK, 0 },
};

static void test_validation_table(void)
{
    for (size_t i = 0; i < sizeof(valid_cases) / sizeof(valid_cases[0]); i++) {
        const struct valid_case *c = &valid_cases[i];
        struct ical_object obj;
        struct ical_error err;
        enum ical_status got = parse(&obj, c->ics, &err);
        CHECKF(got == c->status, "case %zu: got %s (%s, line %u), want %s", i, ical_status_name(got),
               err.message, (unsigned)err.line, ical_status_name(c->status));
        CHECKF(err.code == got && err.message && *err.message, "case %zu: error record", i);
        CHECKF((got == ICAL_OK) == (obj.root != NULL), "case %zu: root iff ok", i);
        if (c->line)
            CHECKF(err.line == c->line, "case %zu: error line %u, want %u (%s)", i, (unsigned)err.line,
                   c->line, err.message);
        if (got != ICAL_OK) {
            CHECKF(err.offset <= strlen(c->ics), "case %zu: offset %zu", i, err.offset);
            /* the offset is the start of the reported line */
            if (err.line) {
                size_t line = 1;
                for (size_t k = 0; k < err.offset; k++)
                    line += c->ics[k] == '\n';
                CHECKF(line == err.line, "case %zu: offset %zu is on line %zu, not %u", i, err.offset, line,
                       (unsigned)err.line);
            }
        }
    }
}

/* ---- values ------------------------------------------------------------- */

static void test_values(void)
{
    /* civil days round trip and known anchors */
    CHECK(ical_days_from_civil(1970, 1, 1) == 0);
    CHECK(ical_days_from_civil(2000, 3, 1) == 11017);
    CHECK(ical_days_from_civil(1601, 1, 1) == -134774);
    for (int64_t d = -800000; d <= 3000000; d += 997) {
        int64_t y;
        unsigned m, dd;
        ical_civil_from_days(d, &y, &m, &dd);
        CHECKF(ical_days_from_civil(y, m, dd) == d, "day %lld", (long long)d);
    }
    struct ical_time t;
    CHECK(ical_parse_time(S("20240229T235960Z"), false, &t) && t.kind == ICAL_TIME_UTC);
    CHECK(ical_parse_time(S("19700101T000000"), false, &t) && t.kind == ICAL_TIME_FLOATING && t.local == 0);
    CHECK(ical_parse_time(S("20240101"), true, &t) && t.kind == ICAL_TIME_DATE && t.local == 19723LL * 86400);
    CHECK(!ical_parse_time(S("20240101"), false, &t));
    CHECK(!ical_parse_time(S("00000101"), true, &t));
    CHECK(!ical_parse_time(S("20240101T000000Zx"), false, &t));
    CHECK(!ical_parse_time(S("2024010"), true, &t));
    int64_t u;
    CHECK(ical_parse_utc("20060104T000000Z", 16, &u) && u == 1136332800);
    CHECK(!ical_parse_utc("20060104T000000", 15, &u));
    CHECK(!ical_parse_utc("20060104", 8, &u));

    static const struct { const char *v; bool ok; int64_t s; } durations[] = {
        { "PT1H", true, 3600 }, { "PT15M", true, 900 }, { "-PT15M", true, -900 }, { "+P1D", true, 86400 },
        { "P2W", true, 14 * 86400 }, { "P1DT12H", true, 129600 }, { "PT1H30M15S", true, 5415 },
        { "PT0S", true, 0 }, { "P0D", true, 0 }, { "PT90M", true, 5400 }, { "PT1H1S", true, 3601 },
        { "P", false, 0 }, { "PT", false, 0 }, { "P1H", false, 0 }, { "PT1D", false, 0 },
        { "P1W2D", false, 0 }, { "PT1M1H", false, 0 }, { "P1DT", false, 0 }, { "1H", false, 0 },
        { "PT1H1H", false, 0 }, { "P-1D", false, 0 }, { "P1234567890D", false, 0 }, { "", false, 0 },
        { "P1D2", false, 0 }, { "PTH", false, 0 },
    };
    for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
        int64_t s = -12345;
        bool ok = ical_parse_duration(S(durations[i].v), &s);
        CHECKF(ok == durations[i].ok && (!ok || s == durations[i].s), "duration %s: %d %lld",
               durations[i].v, ok, (long long)s);
    }
    int32_t off;
    CHECK(ical_parse_utc_offset(S("+0100"), &off) && off == 3600);
    CHECK(ical_parse_utc_offset(S("-0530"), &off) && off == -19800);
    CHECK(ical_parse_utc_offset(S("+001730"), &off) && off == 1050);
    CHECK(!ical_parse_utc_offset(S("0100"), &off));
    CHECK(!ical_parse_utc_offset(S("+1"), &off));
    CHECK(!ical_parse_utc_offset(S("+0160"), &off));

    struct ical_rrule r;
    const char *why;
    CHECK(ical_parse_rrule(S("FREQ=MONTHLY;BYDAY=MO,1MO,-1FR,+2TU;INTERVAL=2;COUNT=10"), &r, &why));
    CHECK(r.freq == ICAL_MONTHLY && r.interval == 2 && r.count == 10 && r.n_byday == 4);
    CHECK(r.byday[0].ordinal == 0 && r.byday[0].weekday == 1);
    CHECK(r.byday[1].ordinal == 1 && r.byday[2].ordinal == -1 && r.byday[2].weekday == 5);
    CHECK(r.byday[3].ordinal == 2 && r.byday[3].weekday == 2 && !r.unsupported);
    CHECK(ical_parse_rrule(S("FREQ=YEARLY;BYMONTH=3,10;BYMONTHDAY=-1,15;UNTIL=20301231;WKST=SU"), &r, &why));
    CHECK(r.bymonth == ((1u << 3) | (1u << 10)) && r.n_bymonthday == 2 && r.bymonthday[0] == -1);
    CHECK(r.has_until && r.until.kind == ICAL_TIME_DATE && r.wkst == 0);
    CHECK(ical_parse_rrule(S("freq=weekly;x-name=whatever"), &r, &why) && r.freq == ICAL_WEEKLY);
    CHECK(ical_parse_rrule(S("FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO"), &r, &why) && r.unsupported);
    static const char *const bad_rules[] = {
        "", "FREQ", "FREQ=", "=DAILY", "FREQ=DAILY;FREQ=DAILY", "FREQ=DAILY;INTERVAL=0",
        "FREQ=DAILY;COUNT=0", "FREQ=DAILY;COUNT=x", "FREQ=DAILY;UNTIL=2024", "FREQ=DAILY;BYDAY=XX",
        "FREQ=MONTHLY;BYDAY=0MO", "FREQ=MONTHLY;BYDAY=54MO", "FREQ=MONTHLY;BYMONTHDAY=32",
        "FREQ=MONTHLY;BYMONTHDAY=0", "FREQ=YEARLY;BYMONTH=13", "FREQ=YEARLY;BYMONTH=",
        "FREQ=YEARLY;BYMONTH=1,,2", "FREQ=DAILY;BYDAY=1MO", "FREQ=WEEKLY;BYMONTHDAY=1",
        "FREQ=DAILY;WKST=XX", "FREQ=DAILY;FOO=1", "FREQ=DAILY;BYSETPOS=x",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR,SA,SU,1MO,2MO,3MO,4MO,-1MO,1TU,2TU,3TU,4TU,5TU",
    };
    for (size_t i = 0; i < sizeof(bad_rules) / sizeof(bad_rules[0]); i++)
        CHECKF(!ical_parse_rrule(S(bad_rules[i]), &r, &why) && why && *why, "rule %s accepted", bad_rules[i]);
}

/* ---- unfolding, parameters, lookup ---------------------------------------- */

static void test_lines(void)
{
    struct ical_object obj;
    struct ical_error err;
    const char *ics =
        CAL_HEAD
        "BEGIN:VEVENT\r\n"
        "UID:fold\r\n"
        " ed-uid\r\n"
        "DTSTART;TZID=\"Europe/Berlin\";X-Q=\"a;b:c\",plain:20240101T100000\r\n"
        "DESCRIPTION:first line\\nsecond \r\n"
        "\tpart and\r\n"
        "  a space\r\n"
        "ATTENDEE;CN=\"Doe, Jane\";ROLE=REQ-PARTICIPANT:mailto:jane@example.com\r\n"
        "X-EMPTY:\r\n"
        "END:VEVENT\r\n"
        CAL_TAIL;
    CHECK(parse(&obj, ics, &err) == ICAL_OK);
    CHECK(obj.kind == ICAL_VEVENT && obj.master && obj.master->kind == ICAL_VEVENT);
    CHECK(obj.uid.len == 10 && memcmp(obj.uid.ptr, "folded-uid", 10) == 0);
    const struct ical_prop *d = ical_find_prop(obj.master, "description");
    CHECK(d && d->value.len == strlen("first line\\nsecond part and a space") &&
          memcmp(d->value.ptr, "first line\\nsecond part and a space", d->value.len) == 0);
    CHECK(d && d->line == 8);
    const struct ical_prop *s = ical_find_prop(obj.master, "DTSTART");
    const struct ical_param *tz = ical_find_param(s, "tzid");
    CHECK(tz && ical_str_eq_nocase(tz->value, "europe/berlin"));
    const struct ical_param *q = ical_find_param(s, "X-Q");
    CHECK(q && q->value.len == strlen("\"a;b:c\",plain"));
    struct ical_time t;
    CHECK(ical_prop_time(s, &t) && t.kind == ICAL_TIME_ZONED && t.tzid.len == 13);
    const struct ical_prop *a = ical_find_prop(obj.master, "ATTENDEE");
    CHECK(a && ical_str_eq_nocase(ical_find_param(a, "CN")->value, "Doe, Jane"));
    CHECK(a && ical_str_eq_nocase(a->value, "mailto:jane@example.com"));
    CHECK(ical_find_prop(obj.master, "X-EMPTY") && ical_find_prop(obj.master, "X-EMPTY")->value.len == 0);
    CHECK(ical_find_prop(obj.master, "LOCATION") == NULL);
    CHECK(ical_count_props(obj.root, "VERSION") == 1);

    /* bare LF line ends and LF folds */
    CHECK(parse(&obj, "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nUID:lf\n  -tail\nEND:VTODO\nEND:VCALENDAR", &err) == ICAL_OK);
    CHECK(obj.kind == ICAL_VTODO && obj.uid.len == 8 && memcmp(obj.uid.ptr, "lf -tail", 8) == 0);

    /* 5545 3.1: a bare CR, or CRLF and LF mixed in one object, is refused where it is */
    CHECK(parse(&obj, CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nSUMMARY:a\r (moved)\n") CAL_TAIL, &err) ==
          ICAL_ERR_SYNTAX);
    CHECK(err.line == 8 && err.message && strstr(err.message, "bare CR"));
    CHECK(parse(&obj, CAL_HEAD EVENT("DTSTART:20240101T100000Z\nSUMMARY:a\r\n") CAL_TAIL, &err) ==
          ICAL_ERR_SYNTAX);
    CHECK(err.line == 7 && err.message && strstr(err.message, "bare LF"));
    CHECK(parse(&obj, "BEGIN:VCALENDAR\nVERSION:2.0\r\nPRODID:x\nEND:VCALENDAR\n", &err) == ICAL_ERR_SYNTAX);
    CHECK(err.line == 2 && err.message && strstr(err.message, "CRLF in an object"));
    CHECK(parse(&obj, CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") "END:VCALENDAR\r", &err) ==
          ICAL_ERR_SYNTAX);

    /* line length limit counts the unfolded line */
    struct ical_limits lim = { 40, 0, 0, 0, false };
    const char *long_line = CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\nSUMMARY:0123456789012345678901234\r\n 567890123456789\r\n") CAL_TAIL;
    CHECK(parse_lim(&obj, long_line, strlen(long_line), sizeof(arena), &lim, &err) == ICAL_ERR_LINE_TOO_LONG);
    CHECK(err.line == 8);
    lim.max_line = 60;
    CHECK(parse_lim(&obj, long_line, strlen(long_line), sizeof(arena), &lim, &err) == ICAL_OK);

    /* a scheduling message (RFC 5546) has the METHOD a stored object may not (RFC 4791 4.1) */
    const char *request = CAL_HEAD "METHOD:REQUEST\r\n" EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL;
    struct ical_limits itip = { 0, 0, 0, 0, true };
    CHECK(parse_lim(&obj, request, strlen(request), sizeof(arena), &itip, &err) == ICAL_OK);
    itip.itip = false;
    CHECK(parse_lim(&obj, request, strlen(request), sizeof(arena), &itip, &err) == ICAL_ERR_PROPERTY);

    /* property and component limits */
    const char *basic = CAL_HEAD EVENT("DTSTART:20240101T100000Z\r\n") CAL_TAIL;
    struct ical_limits props = { 0, 4, 0, 0, false };
    CHECK(parse_lim(&obj, basic, strlen(basic), sizeof(arena), &props, &err) == ICAL_ERR_TOO_MANY);
    props.max_props = 5;
    CHECK(parse_lim(&obj, basic, strlen(basic), sizeof(arena), &props, &err) == ICAL_OK);
    struct ical_limits comps = { 0, 0, 1, 0, false };
    CHECK(parse_lim(&obj, basic, strlen(basic), sizeof(arena), &comps, &err) == ICAL_ERR_TOO_MANY);
    comps.max_components = 2;
    CHECK(parse_lim(&obj, basic, strlen(basic), sizeof(arena), &comps, &err) == ICAL_OK);

    /* arena: every size below what it needs fails cleanly */
    CHECK(parse(&obj, ics, &err) == ICAL_OK);
    size_t need = obj.arena_used;
    CHECK(need > 0 && need < 4096);
    for (size_t size = 0; size < need; size++) {
        enum ical_status st = parse_lim(&obj, ics, strlen(ics), size, NULL, &err);
        CHECKF(st == ICAL_ERR_ARENA, "arena %zu of %zu: %s", size, need, ical_status_name(st));
    }
    CHECK(parse_lim(&obj, ics, strlen(ics), need, NULL, &err) == ICAL_OK);
    CHECK(ical_parse(&obj, ics, strlen(ics), arena + 3, need + 16, NULL, &err) == ICAL_OK);
}

/* ---- real-world exports ---------------------------------------------------- */

/* Google Calendar: weekly meeting in New York, one instance cancelled
 * (EXDATE), one moved (RECURRENCE-ID override), ten in all. */
static const char google_weekly[] =
    "BEGIN:VCALENDAR\r\n"
    "PRODID:-//Google Inc//Google Calendar 70.9054//EN\r\n"
    "VERSION:2.0\r\n"
    "CALSCALE:GREGORIAN\r\n"
    "X-WR-CALNAME:Work\r\n"
    "X-WR-TIMEZONE:America/New_York\r\n"
    "BEGIN:VTIMEZONE\r\n"
    "TZID:America/New_York\r\n"
    "X-LIC-LOCATION:America/New_York\r\n"
    "BEGIN:DAYLIGHT\r\n"
    "TZOFFSETFROM:-0500\r\n"
    "TZOFFSETTO:-0400\r\n"
    "TZNAME:EDT\r\n"
    "DTSTART:19700308T020000\r\n"
    "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\n"
    "END:DAYLIGHT\r\n"
    "BEGIN:STANDARD\r\n"
    "TZOFFSETFROM:-0400\r\n"
    "TZOFFSETTO:-0500\r\n"
    "TZNAME:EST\r\n"
    "DTSTART:19701101T020000\r\n"
    "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\n"
    "END:STANDARD\r\n"
    "END:VTIMEZONE\r\n"
    "BEGIN:VEVENT\r\n"
    "DTSTART;TZID=America/New_York:20240105T100000\r\n"
    "DTEND;TZID=America/New_York:20240105T110000\r\n"
    "RRULE:FREQ=WEEKLY;WKST=SU;COUNT=10;BYDAY=FR\r\n"
    "EXDATE;TZID=America/New_York:20240119T100000\r\n"
    "DTSTAMP:20240301T120000Z\r\n"
    "UID:5p0tc2qs0dm7vj8d1ul8cgbqm9@google.com\r\n"
    "CREATED:20231220T150000Z\r\n"
    "DESCRIPTION:Weekly sync. Join: https://meet.google.com/abc-defg-hij\\n\\nAgend\r\n"
    " a in the doc.\r\n"
    "LAST-MODIFIED:20240110T090000Z\r\n"
    "LOCATION:\r\n"
    "SEQUENCE:2\r\n"
    "STATUS:CONFIRMED\r\n"
    "SUMMARY:Team sync\r\n"
    "TRANSP:OPAQUE\r\n"
    "BEGIN:VALARM\r\n"
    "ACTION:DISPLAY\r\n"
    "DESCRIPTION:This is an event reminder\r\n"
    "TRIGGER:-P0DT0H10M0S\r\n"
    "END:VALARM\r\n"
    "END:VEVENT\r\n"
    "BEGIN:VEVENT\r\n"
    "DTSTART;TZID=America/New_York:20240126T140000\r\n"
    "DTEND;TZID=America/New_York:20240126T150000\r\n"
    "DTSTAMP:20240301T120000Z\r\n"
    "UID:5p0tc2qs0dm7vj8d1ul8cgbqm9@google.com\r\n"
    "RECURRENCE-ID;TZID=America/New_York:20240126T100000\r\n"
    "CREATED:20231220T150000Z\r\n"
    "LAST-MODIFIED:20240120T090000Z\r\n"
    "SEQUENCE:3\r\n"
    "STATUS:CONFIRMED\r\n"
    "SUMMARY:Team sync (moved)\r\n"
    "TRANSP:OPAQUE\r\n"
    "END:VEVENT\r\n"
    "END:VCALENDAR\r\n";

/* Apple Calendar: weekly Friday 09:00 in Berlin across the DST switch,
 * 1 h long, ending by UNTIL; alarm with Apple's extensions. */
static const char apple_berlin[] =
    "BEGIN:VCALENDAR\r\n"
    "VERSION:2.0\r\n"
    "PRODID:-//Apple Inc.//macOS 14.4//EN\r\n"
    "CALSCALE:GREGORIAN\r\n"
    "BEGIN:VTIMEZONE\r\n"
    "TZID:Europe/Berlin\r\n"
    "BEGIN:DAYLIGHT\r\n"
    "TZOFFSETFROM:+0100\r\n"
    "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\n"
    "DTSTART:19810329T020000\r\n"
    "TZNAME:CEST\r\n"
    "TZOFFSETTO:+0200\r\n"
    "END:DAYLIGHT\r\n"
    "BEGIN:STANDARD\r\n"
    "TZOFFSETFROM:+0200\r\n"
    "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\n"
    "DTSTART:19961027T030000\r\n"
    "TZNAME:CET\r\n"
    "TZOFFSETTO:+0100\r\n"
    "END:STANDARD\r\n"
    "END:VTIMEZONE\r\n"
    "BEGIN:VEVENT\r\n"
    "CREATED:20240220T101010Z\r\n"
    "UID:8A4E1A2C-5D6B-4E7F-9A0B-1C2D3E4F5A6B\r\n"
    "RRULE:FREQ=WEEKLY;UNTIL=20241231T225959Z\r\n"
    "DTEND;TZID=Europe/Berlin:20240301T100000\r\n"
    "TRANSP:OPAQUE\r\n"
    "X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC\r\n"
    "SUMMARY:Standup\r\n"
    "LAST-MODIFIED:20240220T101012Z\r\n"
    "DTSTAMP:20240220T101012Z\r\n"
    "DTSTART;TZID=Europe/Berlin:20240301T090000\r\n"
    "SEQUENCE:0\r\n"
    "BEGIN:VALARM\r\n"
    "X-WR-ALARMUID:F1E2D3C4-B5A6-4789-8A7B-6C5D4E3F2A1B\r\n"
    "UID:F1E2D3C4-B5A6-4789-8A7B-6C5D4E3F2A1B\r\n"
    "TRIGGER:-PT15M\r\n"
    "ATTACH;VALUE=URI:Chord\r\n"
    "ACTION:AUDIO\r\n"
    "X-APPLE-DEFAULT-ALARM:TRUE\r\n"
    "ACKNOWLEDGED:20240301T074500Z\r\n"
    "END:VALARM\r\n"
    "END:VEVENT\r\n"
    "END:VCALENDAR\r\n";

/* Outlook: Windows zone name, zone rules anchored in 1601, quoted TZID,
 * monthly on the last Friday. */
static const char outlook_monthly[] =
    "BEGIN:VCALENDAR\r\n"
    "PRODID:Microsoft Exchange Server 2010\r\n"
    "VERSION:2.0\r\n"
    "BEGIN:VTIMEZONE\r\n"
    "TZID:W. Europe Standard Time\r\n"
    "BEGIN:STANDARD\r\n"
    "DTSTART:16010101T030000\r\n"
    "TZOFFSETFROM:+0200\r\n"
    "TZOFFSETTO:+0100\r\n"
    "RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10\r\n"
    "END:STANDARD\r\n"
    "BEGIN:DAYLIGHT\r\n"
    "DTSTART:16010101T020000\r\n"
    "TZOFFSETFROM:+0100\r\n"
    "TZOFFSETTO:+0200\r\n"
    "RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3\r\n"
    "END:DAYLIGHT\r\n"
    "END:VTIMEZONE\r\n"
    "BEGIN:VEVENT\r\n"
    "ORGANIZER;CN=Jane Doe:mailto:jane@contoso.com\r\n"
    "RRULE:FREQ=MONTHLY;UNTIL=20241231T230000Z;INTERVAL=1;BYDAY=-1FR\r\n"
    "UID:040000008200E00074C5B7101A82E0080000000010A0AC5E8C4BDA01000000000000000\r\n"
    " 010000000B1E5D1D2BF6B8F4CB8C5C1D7E6F4A3B2\r\n"
    "SUMMARY;LANGUAGE=en-US:Monthly review\r\n"
    "DTSTART;TZID=\"W. Europe Standard Time\":20240126T150000\r\n"
    "DTEND;TZID=\"W. Europe Standard Time\":20240126T160000\r\n"
    "CLASS:PUBLIC\r\n"
    "PRIORITY:5\r\n"
    "DTSTAMP:20240115T101500Z\r\n"
    "TRANSP:OPAQUE\r\n"
    "STATUS:CONFIRMED\r\n"
    "SEQUENCE:0\r\n"
    "LOCATION;LANGUAGE=en-US:Room 4\r\n"
    "X-MICROSOFT-CDO-APPT-SEQUENCE:0\r\n"
    "X-MICROSOFT-CDO-BUSYSTATUS:BUSY\r\n"
    "X-MICROSOFT-CDO-INTENDEDSTATUS:BUSY\r\n"
    "X-MICROSOFT-CDO-ALLDAYEVENT:FALSE\r\n"
    "X-MICROSOFT-CDO-IMPORTANCE:1\r\n"
    "X-MICROSOFT-CDO-INSTTYPE:1\r\n"
    "X-MICROSOFT-DONOTFORWARDMEETING:FALSE\r\n"
    "X-MICROSOFT-DISALLOW-COUNTER:FALSE\r\n"
    "END:VEVENT\r\n"
    "END:VCALENDAR\r\n";

/* Thunderbird task with DUE and an alarm relative to it. */
static const char thunderbird_todo[] =
    "BEGIN:VCALENDAR\r\n"
    "PRODID:-//Mozilla.org/NONSGML Mozilla Calendar V1.1//EN\r\n"
    "VERSION:2.0\r\n"
    "BEGIN:VTODO\r\n"
    "CREATED:20240110T080000Z\r\n"
    "LAST-MODIFIED:20240110T080500Z\r\n"
    "DTSTAMP:20240110T080500Z\r\n"
    "UID:3f2b9c1e-7d4a-4b8e-9f0a-1b2c3d4e5f60\r\n"
    "SUMMARY:File taxes\r\n"
    "PRIORITY:1\r\n"
    "STATUS:NEEDS-ACTION\r\n"
    "DUE;VALUE=DATE:20240415\r\n"
    "BEGIN:VALARM\r\n"
    "ACTION:DISPLAY\r\n"
    "TRIGGER;RELATED=END:-P1D\r\n"
    "DESCRIPTION:Default Mozilla Description\r\n"
    "END:VALARM\r\n"
    "END:VTODO\r\n"
    "END:VCALENDAR\r\n";

/* All-day birthday, yearly (DATE values; 5545 3.8.2.4 floating days). */
static const char birthday[] =
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Apple Inc.//iOS 17.4//EN\r\n"
    "BEGIN:VEVENT\r\nUID:bday-1\r\nDTSTAMP:20240101T000000Z\r\n"
    "DTSTART;VALUE=DATE:19900315\r\nDTEND;VALUE=DATE:19900316\r\n"
    "RRULE:FREQ=YEARLY\r\nSUMMARY:Birthday\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

static void test_exports(void)
{
    struct ical_object obj;
    struct ical_error err;

    CHECKF(parse(&obj, google_weekly, &err) == ICAL_OK, "%s line %u", err.message, (unsigned)err.line);
    CHECK(obj.kind == ICAL_VEVENT && obj.uid.len == strlen("5p0tc2qs0dm7vj8d1ul8cgbqm9@google.com"));
    CHECK(obj.master && !ical_find_prop(obj.master, "RECURRENCE-ID"));
    CHECK(ical_find_child(obj.root, ICAL_VTIMEZONE) && ical_find_child(obj.master, ICAL_VALARM));
    struct ical_time t;
    CHECK(ical_prop_time(ical_find_prop(obj.master, "DTSTART"), &t));
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("20240105T150000Z"));    /* EST */
    CHECK(ical_parse_time(S("20240705T100000"), false, &t));
    t.kind = ICAL_TIME_ZONED;
    t.tzid = S("America/New_York");
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("20240705T140000Z"));    /* EDT */
    /* the switch days of 2024: 10 March 02:00 EST, 3 November 02:00 EDT */
    CHECK(ical_parse_time(S("20240310T013000"), false, &t));
    t.kind = ICAL_TIME_ZONED;
    t.tzid = S("America/New_York");
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("20240310T063000Z"));
    CHECK(ical_parse_time(S("20240310T030000"), false, &t));
    t.kind = ICAL_TIME_ZONED;
    t.tzid = S("America/New_York");
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("20240310T070000Z"));
    CHECK(ical_parse_time(S("20241103T030000"), false, &t));
    t.kind = ICAL_TIME_ZONED;
    t.tzid = S("America/New_York");
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("20241103T080000Z"));
    /* a TZID with no VTIMEZONE is floating */
    t.tzid = S("Mars/Olympus");
    CHECK(ical_time_to_utc(&obj, &t, 0) == t.local && ical_time_to_utc(&obj, &t, 3600) == t.local - 3600);

    CHECKF(parse(&obj, apple_berlin, &err) == ICAL_OK, "%s line %u", err.message, (unsigned)err.line);
    CHECK(obj.kind == ICAL_VEVENT && ical_find_child(obj.master, ICAL_VALARM));
    CHECK(ical_parse_time(S("20240329T090000"), false, &t));
    t.kind = ICAL_TIME_ZONED;
    t.tzid = S("Europe/Berlin");
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("20240329T080000Z"));    /* CET */
    CHECK(ical_parse_time(S("20240405T090000"), false, &t));
    t.kind = ICAL_TIME_ZONED;
    t.tzid = S("Europe/Berlin");
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("20240405T070000Z"));    /* CEST */
    /* before the first onset (1981) the earliest observance's TZOFFSETFROM */
    CHECK(ical_parse_time(S("19750601T120000"), false, &t));
    t.kind = ICAL_TIME_ZONED;
    t.tzid = S("Europe/Berlin");
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("19750601T110000Z"));

    CHECKF(parse(&obj, outlook_monthly, &err) == ICAL_OK, "%s line %u", err.message, (unsigned)err.line);
    const char *outlook_uid = "040000008200E00074C5B7101A82E0080000000010A0AC5E8C4BDA01000000000000000"
                              "010000000B1E5D1D2BF6B8F4CB8C5C1D7E6F4A3B2";
    CHECK(obj.uid.len == strlen(outlook_uid) && memcmp(obj.uid.ptr, outlook_uid, obj.uid.len) == 0);
    CHECK(ical_prop_time(ical_find_prop(obj.master, "DTSTART"), &t) && t.kind == ICAL_TIME_ZONED);
    CHECK(ical_time_to_utc(&obj, &t, 0) == utc("20240126T140000Z"));

    CHECKF(parse(&obj, thunderbird_todo, &err) == ICAL_OK, "%s line %u", err.message, (unsigned)err.line);
    CHECK(obj.kind == ICAL_VTODO && ical_find_child(obj.master, ICAL_VALARM));

    CHECKF(parse(&obj, birthday, &err) == ICAL_OK, "%s", err.message);
}

/* ---- time-range table ------------------------------------------------------ */

#define TODO(body) CAL_HEAD "BEGIN:VTODO\r\nUID:t1\r\nDTSTAMP:20240101T000000Z\r\n" body "END:VTODO\r\n" CAL_TAIL
#define ONE(body) CAL_HEAD EVENT(body) CAL_TAIL

struct range_case {
    const char *ics;
    const char *start, *end;      /* NULL = open */
    int32_t floating_offset;
    enum ical_match want;
};

static const struct range_case range_cases[] = {
    /* Google weekly: 15:00-16:00Z in winter */
    { google_weekly, "20240105T150000Z", "20240105T153000Z", 0, ICAL_MATCH },
    { google_weekly, "20240105T155959Z", "20240105T170000Z", 0, ICAL_MATCH },
    { google_weekly, "20240105T160000Z", "20240105T170000Z", 0, ICAL_NO_MATCH },
    { google_weekly, "20240105T140000Z", "20240105T150000Z", 0, ICAL_NO_MATCH },
    { google_weekly, "20240112T150000Z", "20240112T160000Z", 0, ICAL_MATCH },
    { google_weekly, "20240119T000000Z", "20240120T000000Z", 0, ICAL_NO_MATCH },   /* EXDATE */
    { google_weekly, "20240126T150000Z", "20240126T160000Z", 0, ICAL_NO_MATCH },   /* moved away */
    { google_weekly, "20240126T190000Z", "20240126T193000Z", 0, ICAL_MATCH },      /* moved here */
    { google_weekly, "20240308T150000Z", "20240308T160000Z", 0, ICAL_MATCH },      /* 10th */
    { google_weekly, "20240315T000000Z", "20240316T000000Z", 0, ICAL_NO_MATCH },   /* COUNT=10 */
    { google_weekly, "20240101T000000Z", NULL, 0, ICAL_MATCH },
    { NULL, NULL, NULL, 0, ICAL_MATCH },   /* separator */
    { google_weekly, NULL, "20240105T150000Z", 0, ICAL_NO_MATCH },
    { google_weekly, NULL, "20240105T150001Z", 0, ICAL_MATCH },
    /* Apple Berlin weekly: 08:00Z in CET, 07:00Z in CEST, UNTIL end of 2024 */
    { apple_berlin, "20240329T080000Z", "20240329T083000Z", 0, ICAL_MATCH },
    { apple_berlin, "20240405T070000Z", "20240405T071500Z", 0, ICAL_MATCH },
    { apple_berlin, "20240405T080000Z", "20240405T090000Z", 0, ICAL_NO_MATCH },
    { apple_berlin, "20241101T080000Z", "20241101T081500Z", 0, ICAL_MATCH },
    { apple_berlin, "20241101T070000Z", "20241101T080000Z", 0, ICAL_NO_MATCH },
    { apple_berlin, "20241227T080000Z", "20241227T090000Z", 0, ICAL_MATCH },
    { apple_berlin, "20250103T000000Z", "20250104T000000Z", 0, ICAL_NO_MATCH },
    { apple_berlin, "20240302T000000Z", "20240308T075959Z", 0, ICAL_NO_MATCH },
    /* Outlook: last Friday monthly 15:00 Berlin */
    { outlook_monthly, "20240223T140000Z", "20240223T143000Z", 0, ICAL_MATCH },
    { outlook_monthly, "20240329T140000Z", "20240329T150000Z", 0, ICAL_MATCH },
    { outlook_monthly, "20240426T130000Z", "20240426T140000Z", 0, ICAL_MATCH },   /* CEST */
    { outlook_monthly, "20240419T000000Z", "20240420T000000Z", 0, ICAL_NO_MATCH },
    { outlook_monthly, "20240531T130000Z", "20240531T133000Z", 0, ICAL_MATCH },
    { outlook_monthly, "20250131T000000Z", "20250201T000000Z", 0, ICAL_NO_MATCH },
    /* monthly BYDAY=1MO */
    { ONE("DTSTART:20240101T090000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MONTHLY;BYDAY=1MO\r\n"),
      "20240205T090000Z", "20240205T100000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240101T090000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MONTHLY;BYDAY=1MO\r\n"),
      "20240212T000000Z", "20240213T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20240101T090000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MONTHLY;BYDAY=1MO\r\n"),
      "20240304T093000Z", "20240304T094000Z", 0, ICAL_MATCH },
    /* monthly -1FR, no end: DATE-TIME start only, so S <= s < E */
    { ONE("DTSTART:20240126T120000Z\r\nRRULE:FREQ=MONTHLY;BYDAY=-1FR\r\n"),
      "20240531T000000Z", "20240601T000000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240126T120000Z\r\nRRULE:FREQ=MONTHLY;BYDAY=-1FR\r\n"),
      "20240524T000000Z", "20240525T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20240126T120000Z\r\nRRULE:FREQ=MONTHLY;BYDAY=-1FR\r\n"),
      "20240531T120001Z", "20240601T000000Z", 0, ICAL_NO_MATCH },
    /* BYMONTHDAY=31 skips short months; -1 is the last day */
    { ONE("DTSTART:20240131T100000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MONTHLY;BYMONTHDAY=31\r\n"),
      "20240229T000000Z", "20240301T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20240131T100000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MONTHLY;BYMONTHDAY=31\r\n"),
      "20240331T100000Z", "20240331T110000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240131T100000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MONTHLY\r\n"),
      "20240430T000000Z", "20240501T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20240131T100000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-1\r\n"),
      "20240229T100000Z", "20240229T110000Z", 0, ICAL_MATCH },
    /* daily every other day until the 9th */
    { ONE("DTSTART:20240101T080000Z\r\nDTEND:20240101T090000Z\r\nRRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20240109T080000Z\r\n"),
      "20240109T080000Z", "20240109T083000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240101T080000Z\r\nDTEND:20240101T090000Z\r\nRRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20240109T080000Z\r\n"),
      "20240111T000000Z", "20240112T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20240101T080000Z\r\nDTEND:20240101T090000Z\r\nRRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20240109T080000Z\r\n"),
      "20240102T000000Z", "20240103T000000Z", 0, ICAL_NO_MATCH },
    /* weekly TU,TH four times */
    { ONE("DTSTART:20240102T170000Z\r\nDURATION:PT30M\r\nRRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4\r\n"),
      "20240111T170000Z", "20240111T171000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240102T170000Z\r\nDURATION:PT30M\r\nRRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4\r\n"),
      "20240116T000000Z", "20240117T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20240102T170000Z\r\nDURATION:PT30M\r\nRRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4\r\n"),
      "20240103T000000Z", "20240104T000000Z", 0, ICAL_NO_MATCH },
    /* every second week with WKST=SU vs MO (5545 3.3.10 example) */
    { ONE("DTSTART:19970805T090000Z\r\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO\r\n"),
      "19970810T090000Z", "19970810T100000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:19970805T090000Z\r\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO\r\n"),
      "19970817T090000Z", "19970817T100000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:19970805T090000Z\r\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO\r\n"),
      "19970824T090000Z", "19970824T100000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:19970805T090000Z\r\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU\r\n"),
      "19970817T090000Z", "19970817T100000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:19970805T090000Z\r\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU\r\n"),
      "19970810T090000Z", "19970810T100000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:19970805T090000Z\r\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU\r\n"),
      "19970831T090000Z", "19970831T100000Z", 0, ICAL_MATCH },
    /* yearly DATE birthday; floating days move with the caller's zone */
    { birthday, "20250315T000000Z", "20250315T010000Z", 0, ICAL_MATCH },
    { birthday, "20250316T000000Z", "20250317T000000Z", 0, ICAL_NO_MATCH },
    { birthday, "20250315T233000Z", "20250316T000000Z", 3600, ICAL_NO_MATCH },
    { birthday, "20250314T233000Z", "20250315T000000Z", 3600, ICAL_MATCH },
    { birthday, "19890315T000000Z", "19890316T000000Z", 0, ICAL_NO_MATCH },
    /* leap day yearly: only leap years */
    { ONE("DTSTART;VALUE=DATE:20200229\r\nRRULE:FREQ=YEARLY\r\n"), "20210228T000000Z", "20210302T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART;VALUE=DATE:20200229\r\nRRULE:FREQ=YEARLY\r\n"), "20240229T120000Z", "20240229T130000Z", 0, ICAL_MATCH },
    /* yearly with BYMONTH and nth weekday: US Thanksgiving */
    { ONE("DTSTART;VALUE=DATE:20201126\r\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=4TH\r\n"), "20241128T000000Z", "20241129T000000Z", 0, ICAL_MATCH },
    { ONE("DTSTART;VALUE=DATE:20201126\r\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=4TH\r\n"), "20241121T000000Z", "20241122T000000Z", 0, ICAL_NO_MATCH },
    /* yearly nth weekday of the year: 20th Monday (5545 example: 1997-05-19) */
    { ONE("DTSTART:19970519T090000Z\r\nRRULE:FREQ=YEARLY;BYDAY=20MO\r\n"), "19980518T090000Z", "19980518T100000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:19970519T090000Z\r\nRRULE:FREQ=YEARLY;BYDAY=20MO\r\n"), "19980511T000000Z", "19980512T000000Z", 0, ICAL_NO_MATCH },
    /* Friday the 13th (5545 example), EXDATE on the first */
    { ONE("DTSTART:19970902T090000Z\r\nEXDATE:19970902T090000Z\r\nRRULE:FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13\r\n"),
      "19980213T090000Z", "19980213T100000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:19970902T090000Z\r\nEXDATE:19970902T090000Z\r\nRRULE:FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13\r\n"),
      "19970902T000000Z", "19970903T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:19970902T090000Z\r\nEXDATE:19970902T090000Z\r\nRRULE:FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13\r\n"),
      "19980313T090000Z", "19980313T100000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:19970902T090000Z\r\nEXDATE:19970902T090000Z\r\nRRULE:FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13\r\n"),
      "19980413T000000Z", "19980414T000000Z", 0, ICAL_NO_MATCH },
    /* RDATE adds, EXDATE list removes */
    { ONE("DTSTART:20240101T100000Z\r\nRDATE:20240110T100000Z,20240120T100000Z\r\nEXDATE:20240110T100000Z\r\n"),
      "20240120T100000Z", "20240120T100001Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240101T100000Z\r\nRDATE:20240110T100000Z,20240120T100000Z\r\nEXDATE:20240110T100000Z\r\n"),
      "20240110T000000Z", "20240111T000000Z", 0, ICAL_NO_MATCH },
    /* long-running daily series: fast-forward, and the open end */
    { ONE("DTSTART:20000101T070000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=DAILY\r\n"), "20300615T073000Z", "20300615T074000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20000101T070000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=DAILY\r\n"), "20300615T080000Z", "20300616T070000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20000101T070000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=DAILY;INTERVAL=3\r\n"), "20300601T000000Z", NULL, 0, ICAL_MATCH },
    /* with COUNT nothing can be skipped: the bound gives up, assumed */
    { ONE("DTSTART:20000101T070000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=DAILY;COUNT=100000\r\n"), "20300615T073000Z", "20300615T074000Z", 0, ICAL_MATCH_ASSUMED },
    { ONE("DTSTART:20000101T070000Z\r\nDURATION:PT1H\r\nRRULE:FREQ=DAILY;COUNT=100000\r\n"), "19990615T073000Z", "19990615T074000Z", 0, ICAL_NO_MATCH },
    /* rules the expander does not evaluate */
    { ONE("DTSTART:20240101T100000Z\r\nRRULE:FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR\r\n"), "20240301T000000Z", "20240302T000000Z", 0, ICAL_MATCH_ASSUMED },
    { ONE("DTSTART:20240101T100000Z\r\nRRULE:FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR\r\n"), "20231201T000000Z", "20231202T000000Z", 0, ICAL_NO_MATCH },
    /* single events, RFC 4791 9.9 VEVENT table */
    { ONE("DTSTART:20240101T100000Z\r\nDTEND:20240101T100000Z\r\n"), "20240101T100000Z", "20240101T100001Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240101T100000Z\r\nDTEND:20240101T100000Z\r\n"), "20240101T090000Z", "20240101T100000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20240101T100000Z\r\nDURATION:PT0S\r\n"), "20240101T100000Z", "20240101T100001Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240101T100000Z\r\n"), "20240101T100001Z", "20240101T110000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART;VALUE=DATE:20240704\r\n"), "20240704T230000Z", "20240705T000000Z", 0, ICAL_MATCH },
    { ONE("DTSTART;VALUE=DATE:20240704\r\n"), "20240705T000000Z", "20240705T010000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART;VALUE=DATE:20240704\r\nDTEND;VALUE=DATE:20240707\r\n"), "20240706T120000Z", "20240706T130000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240101T100000\r\nDTEND:20240101T110000\r\n"), "20240101T103000Z", "20240101T104000Z", 0, ICAL_MATCH },
    { ONE("DTSTART:20240101T100000\r\nDTEND:20240101T110000\r\n"), "20240101T103000Z", "20240101T104000Z", -3 * 3600, ICAL_NO_MATCH },
    { ONE("DTSTART:20240101T100000\r\nDTEND:20240101T110000\r\n"), "20240101T133000Z", "20240101T134000Z", -3 * 3600, ICAL_MATCH },
    /* VTODO table */
    { TODO("DTSTART:20240110T090000Z\r\nDUE:20240112T170000Z\r\n"), "20240111T000000Z", "20240111T010000Z", 0, ICAL_MATCH },
    { TODO("DTSTART:20240110T090000Z\r\nDUE:20240112T170000Z\r\n"), "20240113T000000Z", "20240114T000000Z", 0, ICAL_NO_MATCH },
    { TODO("DTSTART:20240110T090000Z\r\nDUE:20240112T170000Z\r\n"), "20240109T000000Z", "20240110T090000Z", 0, ICAL_NO_MATCH },
    { TODO("DTSTART:20240110T090000Z\r\nDUE:20240112T170000Z\r\n"), "20240109T000000Z", "20240110T090001Z", 0, ICAL_MATCH },
    { TODO("DUE:20240115T120000Z\r\n"), "20240115T000000Z", "20240115T120000Z", 0, ICAL_MATCH },
    { TODO("DUE:20240115T120000Z\r\n"), "20240115T120000Z", "20240116T000000Z", 0, ICAL_NO_MATCH },
    { TODO("DTSTART:20240201T100000Z\r\nDURATION:PT2H\r\n"), "20240201T110000Z", "20240201T113000Z", 0, ICAL_MATCH },
    { TODO("DTSTART:20240201T100000Z\r\nDURATION:PT2H\r\n"), "20240201T120000Z", "20240201T130000Z", 0, ICAL_MATCH },
    { TODO("DTSTART:20240201T100000Z\r\nDURATION:PT2H\r\n"), "20240201T120001Z", "20240201T130000Z", 0, ICAL_NO_MATCH },
    { TODO("DTSTART:20240201T100000Z\r\n"), "20240201T100000Z", "20240201T100001Z", 0, ICAL_MATCH },
    { TODO("DTSTART:20240201T100000Z\r\n"), "20240201T100001Z", "20240201T110000Z", 0, ICAL_NO_MATCH },
    { TODO("CREATED:20240101T000000Z\r\nCOMPLETED:20240105T000000Z\r\n"), "20240103T000000Z", "20240104T000000Z", 0, ICAL_MATCH },
    { TODO("CREATED:20240101T000000Z\r\nCOMPLETED:20240105T000000Z\r\n"), "20240110T000000Z", "20240111T000000Z", 0, ICAL_NO_MATCH },
    { TODO("COMPLETED:20240105T000000Z\r\n"), "20240105T000000Z", "20240105T000000Z", 0, ICAL_MATCH },
    { TODO("COMPLETED:20240105T000000Z\r\n"), "20240106T000000Z", "20240107T000000Z", 0, ICAL_NO_MATCH },
    { TODO("CREATED:20240101T000000Z\r\n"), "20231201T000000Z", "20240101T000000Z", 0, ICAL_NO_MATCH },
    { TODO("CREATED:20240101T000000Z\r\n"), "20231201T000000Z", "20240101T000001Z", 0, ICAL_MATCH },
    { TODO("SUMMARY:whenever\r\n"), "19700101T000000Z", "19700101T000001Z", 0, ICAL_MATCH },
    { thunderbird_todo, "20240414T000000Z", "20240415T000000Z", 0, ICAL_MATCH },
    { thunderbird_todo, "20240415T000000Z", "20240416T000000Z", 0, ICAL_NO_MATCH },
    /* recurring VTODO: DUE moves with each instance */
    { TODO("DTSTART:20240101T090000Z\r\nDUE:20240101T170000Z\r\nRRULE:FREQ=WEEKLY\r\n"), "20240115T160000Z", "20240115T163000Z", 0, ICAL_MATCH },
    { TODO("DTSTART:20240101T090000Z\r\nDUE:20240101T170000Z\r\nRRULE:FREQ=WEEKLY\r\n"), "20240116T000000Z", "20240122T000000Z", 0, ICAL_NO_MATCH },
};

static void test_time_ranges(void)
{
    for (size_t i = 0; i < sizeof(range_cases) / sizeof(range_cases[0]); i++) {
        const struct range_case *c = &range_cases[i];
        if (!c->ics)
            continue;
        struct ical_object obj;
        struct ical_error err;
        enum ical_status st = parse(&obj, c->ics, &err);
        CHECKF(st == ICAL_OK, "range case %zu: %s (%s line %u)", i, ical_status_name(st), err.message,
               (unsigned)err.line);
        if (st != ICAL_OK)
            continue;
        int64_t s = c->start ? utc(c->start) : INT64_MIN;
        int64_t e = c->end ? utc(c->end) : INT64_MAX;
        unsigned iterations = c->want == ICAL_MATCH_ASSUMED ? 1000 : 0;
        enum ical_match got = ical_time_range(&obj, s, e, c->floating_offset, iterations);
        CHECKF(got == c->want, "range case %zu [%s, %s): got %d, want %d", i, c->start ? c->start : "-",
               c->end ? c->end : "-", (int)got, (int)c->want);
    }
}

/* ical_instances (RFC 4791 9.6.5): what the callback is handed. */
struct seen {
    unsigned n, stop_after;
    const struct ical_component *comp[8];
    bool generated[8];
    int64_t start[8], length[8];
};

static bool collect(void *ctx, const struct ical_instance *in)
{
    struct seen *s = ctx;
    if (s->n < 8) {
        s->comp[s->n] = in->comp;
        s->generated[s->n] = in->generated;
        s->start[s->n] = in->start;
        s->length[s->n] = in->length;
    }
    return ++s->n == s->stop_after;
}

static void test_instances(void)
{
    char v[ICAL_UTC_LEN + 1];
    ical_format_utc(0, v);
    CHECK(strcmp(v, "19700101T000000Z") == 0);
    ical_format_utc(1136332800 + 3723, v);
    CHECK(strcmp(v, "20060104T010203Z") == 0);
    ical_format_utc(-1, v);
    CHECK(strcmp(v, "19691231T235959Z") == 0);
    ical_format_utc(utc("99991231T235959Z"), v);
    CHECK(strcmp(v, "99991231T235959Z") == 0);

    /* weekly from Monday 01-01 09:00Z, 01-08 excluded, 01-15 moved to 01-16,
     * an RDATE on Saturday 01-20 */
    const char *text = CAL_HEAD
        EVENT("DTSTART:20240101T090000Z\r\nDTEND:20240101T100000Z\r\nRRULE:FREQ=WEEKLY;COUNT=4\r\n"
              "EXDATE:20240108T090000Z\r\nRDATE:20240120T120000Z\r\n")
        EVENT("RECURRENCE-ID:20240115T090000Z\r\nDTSTART:20240116T140000Z\r\nDTEND:20240116T143000Z\r\n")
        CAL_TAIL;
    struct ical_object obj;
    struct ical_error err;
    CHECK(parse(&obj, text, &err) == ICAL_OK);
    if (!obj.root)
        return;
    const struct ical_component *override = obj.master->next_sibling;
    struct seen s = { 0 };
    CHECK(ical_instances(&obj, utc("20240101T000000Z"), utc("20240201T000000Z"), 0, 0, collect, &s) == ICAL_MATCH);
    /* the rule's in order (01-01, 01-22), then the RDATE's, then the override's own */
    CHECKF(s.n == 4, "%u instances", s.n);
    CHECK(s.comp[0] == obj.master && s.generated[0] && s.start[0] == utc("20240101T090000Z") && s.length[0] == 3600);
    CHECK(s.comp[1] == obj.master && s.generated[1] && s.start[1] == utc("20240122T090000Z"));
    CHECK(s.comp[2] == obj.master && s.generated[2] && s.start[2] == utc("20240120T120000Z"));
    CHECK(s.comp[3] == override && !s.generated[3] && s.length[3] == 1800);
    /* stopping at the first */
    memset(&s, 0, sizeof(s));
    s.stop_after = 1;
    CHECK(ical_instances(&obj, utc("20240101T000000Z"), utc("20240201T000000Z"), 0, 0, collect, &s) == ICAL_MATCH);
    CHECK(s.n == 1);
    /* one component alone: the override overlaps 01-16, the master does not */
    CHECK(ical_component_range(&obj, override, utc("20240116T000000Z"), utc("20240117T000000Z"), 0) == ICAL_MATCH);
    CHECK(ical_component_range(&obj, obj.master, utc("20240116T000000Z"), utc("20240117T000000Z"), 0) ==
          ICAL_NO_MATCH);
    memset(&s, 0, sizeof(s));
    CHECK(ical_instances(&obj, utc("20240115T000000Z"), utc("20240116T000000Z"), 0, 0, collect, &s) ==
          ICAL_NO_MATCH && s.n == 0);
}

/* Without COUNT the expander skips ahead to the query; with a COUNT too big
 * to matter it walks every period from DTSTART. Both must agree, day by day,
 * in New York time (zone conversion on every instance). */
static void test_skip_ahead_agrees(void)
{
    static const char *const rules[] = {
        "FREQ=DAILY;INTERVAL=3",
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH",
        "FREQ=WEEKLY;INTERVAL=3;BYDAY=SU;WKST=SU",
        "FREQ=MONTHLY;BYDAY=-1FR,2TU",
        "FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=-1,15",
        "FREQ=YEARLY;BYMONTH=2,8;BYDAY=-1SA",
        "FREQ=YEARLY;INTERVAL=2",
        "FREQ=DAILY;BYMONTH=3;BYDAY=SA,SU",
    };
    const char *tz =
        "BEGIN:VTIMEZONE\r\nTZID:NY\r\n"
        "BEGIN:DAYLIGHT\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r\nDTSTART:20070311T020000\r\n"
        "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\nEND:DAYLIGHT\r\n"
        "BEGIN:STANDARD\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nDTSTART:20071104T020000\r\n"
        "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n";
    static unsigned char arena2[8192];
    static char a_text[2048], b_text[2048];
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        snprintf(a_text, sizeof(a_text), CAL_HEAD "%s" EVENT("DTSTART;TZID=NY:20220103T233000\r\n"
                 "DURATION:PT45M\r\nRRULE:%s\r\n") CAL_TAIL, tz, rules[i]);
        snprintf(b_text, sizeof(b_text), CAL_HEAD "%s" EVENT("DTSTART;TZID=NY:20220103T233000\r\n"
                 "DURATION:PT45M\r\nRRULE:%s;COUNT=99999\r\n") CAL_TAIL, tz, rules[i]);
        struct ical_object a, b;
        struct ical_error err;
        CHECK(ical_parse(&a, a_text, strlen(a_text), arena, sizeof(arena), NULL, &err) == ICAL_OK);
        CHECK(ical_parse(&b, b_text, strlen(b_text), arena2, sizeof(arena2), NULL, &err) == ICAL_OK);
        if (!a.root || !b.root)
            continue;
        unsigned matches = 0, disagree = 0;
        for (int64_t t = utc("20240101T000000Z"); t < utc("20250101T000000Z"); t += 86400) {
            enum ical_match ma = ical_time_range(&a, t, t + 86400, 0, 0);
            enum ical_match mb = ical_time_range(&b, t, t + 86400, 0, 100000);
            struct seen s = { 0 };
            ical_instances(&a, t, t + 86400, 0, 0, collect, &s);
            matches += ma == ICAL_MATCH;
            disagree += ma != mb || (s.n > 0) != (ma == ICAL_MATCH);
        }
        CHECKF(disagree == 0 && matches > 0, "rule %s: %u disagreements, %u matches", rules[i], disagree, matches);
    }
}

/* ---- alarm table (RFC 4791 9.9, VALARM) ------------------------------------ */

#define ALARM(trigger, more) "BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\n" trigger "\r\n" more "END:VALARM\r\n"

static const struct range_case alarm_cases[] = {
    /* Berlin Fridays at 09:00, fifteen minutes' notice: 07:45Z in CET, 06:45Z in CEST */
    { apple_berlin, "20240329T074000Z", "20240329T074600Z", 0, ICAL_MATCH },
    { apple_berlin, "20240329T064000Z", "20240329T064600Z", 0, ICAL_NO_MATCH },
    { apple_berlin, "20240405T064000Z", "20240405T064600Z", 0, ICAL_MATCH },
    { apple_berlin, "20240405T074000Z", "20240405T074600Z", 0, ICAL_NO_MATCH },
    { apple_berlin, "20241227T074500Z", "20241227T074501Z", 0, ICAL_MATCH },     /* last before UNTIL */
    { apple_berlin, "20250103T060000Z", "20250103T080000Z", 0, ICAL_NO_MATCH },
    { apple_berlin, "20241227T074501Z", NULL, 0, ICAL_NO_MATCH },
    { apple_berlin, NULL, "20240301T074500Z", 0, ICAL_NO_MATCH },
    { apple_berlin, NULL, "20240301T074501Z", 0, ICAL_MATCH },
    /* a day before a DUE date, no DTSTART: midnight in the caller's zone */
    { thunderbird_todo, "20240414T000000Z", "20240414T000001Z", 0, ICAL_MATCH },
    { thunderbird_todo, "20240413T000000Z", "20240414T000000Z", 0, ICAL_NO_MATCH },
    { thunderbird_todo, "20240413T230000Z", "20240413T230001Z", 3600, ICAL_MATCH },
    /* RDATE instances have alarms too */
    { ONE("DTSTART:20240101T100000Z\r\nRDATE:20240201T100000Z\r\n" ALARM("TRIGGER:-PT10M", "")),
      "20240201T094500Z", "20240201T095500Z", 0, ICAL_MATCH },
    /* a floating DTSTART in the caller's zone (UTC-3): 11:00 there */
    { ONE("DTSTART:20240101T100000\r\n" ALARM("TRIGGER:PT1H", "")),
      "20240101T140000Z", "20240101T140001Z", -3 * 3600, ICAL_MATCH },
    { ONE("DTSTART:20240101T100000\r\n" ALARM("TRIGGER:PT1H", "")),
      "20240101T110000Z", "20240101T110001Z", -3 * 3600, ICAL_NO_MATCH },
    /* an absolute trigger is one time, whatever the instances */
    { ONE("DTSTART:20240101T100000Z\r\nRRULE:FREQ=DAILY\r\n" ALARM("TRIGGER;VALUE=DATE-TIME:20231231T000000Z", "")),
      "20240105T000000Z", NULL, 0, ICAL_NO_MATCH },
    /* repetitions far apart and many of them: no overflow */
    { ONE("DTSTART:20240101T100000Z\r\n" ALARM("TRIGGER:-P999999999W", "REPEAT:999999999\r\nDURATION:P999999999W\r\n")),
      "20240101T000000Z", "20250101T000000Z", 0, ICAL_MATCH },      /* the first repetition is DTSTART */
    { ONE("DTSTART:20240101T100000Z\r\n" ALARM("TRIGGER:-P999999999W", "REPEAT:999999999\r\nDURATION:P999999999W\r\n")),
      "20240101T100001Z", "99991231T000000Z", 0, ICAL_NO_MATCH },
    { ONE("DTSTART:20240101T100000Z\r\nRRULE:FREQ=YEARLY\r\n" ALARM("TRIGGER:P999999999W", "")),
      NULL, "99990101T000000Z", 0, ICAL_NO_MATCH },
    /* what cannot be placed: a to-do's end that is not there, the iteration
     * bound, a rule part the expander does not evaluate */
    { TODO("DTSTART:20240101T100000Z\r\n" ALARM("TRIGGER;RELATED=END:-PT10M", "")),
      "20240101T000000Z", "20240102T000000Z", 0, ICAL_MATCH_ASSUMED },
    { ONE("DTSTART:20000101T070000Z\r\nRRULE:FREQ=DAILY;COUNT=100000\r\n" ALARM("TRIGGER:-PT5M", "")),
      "20300615T065000Z", "20300615T070000Z", 0, ICAL_MATCH_ASSUMED },
    { ONE("DTSTART:20240101T100000Z\r\nRRULE:FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR\r\n" ALARM("TRIGGER:-PT5M", "")),
      "20240301T000000Z", "20240302T000000Z", 0, ICAL_MATCH_ASSUMED },
};

static void test_alarms(void)
{
    for (size_t i = 0; i < sizeof(alarm_cases) / sizeof(alarm_cases[0]); i++) {
        const struct range_case *c = &alarm_cases[i];
        struct ical_object obj;
        struct ical_error err;
        enum ical_status st = parse(&obj, c->ics, &err);
        CHECKF(st == ICAL_OK, "alarm case %zu: %s (%s line %u)", i, ical_status_name(st), err.message,
               (unsigned)err.line);
        const struct ical_component *alarm = st == ICAL_OK ? ical_find_child(obj.master, ICAL_VALARM) : NULL;
        CHECKF(alarm != NULL, "alarm case %zu: no VALARM", i);
        if (!alarm)
            continue;
        int64_t s = c->start ? utc(c->start) : INT64_MIN;
        int64_t e = c->end ? utc(c->end) : INT64_MAX;
        unsigned iterations = c->want == ICAL_MATCH_ASSUMED ? 1000 : 0;
        enum ical_match got = ical_alarm_range(&obj, alarm, s, e, c->floating_offset, iterations);
        CHECKF(got == c->want, "alarm case %zu [%s, %s): got %d, want %d", i, c->start ? c->start : "-",
               c->end ? c->end : "-", (int)got, (int)c->want);
    }
}

int main(void)
{
    test_validation_table();
    test_values();
    test_lines();
    test_exports();
    test_time_ranges();
    test_instances();
    test_skip_ahead_agrees();
    test_alarms();
    return check_summary();
}
