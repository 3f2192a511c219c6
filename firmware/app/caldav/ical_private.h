/* What the files of the iCalendar reader share among themselves (ical.h is
 * its interface): the reader's state, which ical_parse.c fills and
 * ical_validate.c checks, and small helpers for values. */
#ifndef LITEDAV_ICAL_PRIVATE_H
#define LITEDAV_ICAL_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "caldav/ical.h"

struct reader {
    const char *buf;
    size_t len, pos;
    uint32_t line_no;           /* physical lines read so far */
    uint32_t start_line;        /* first physical line of the current logical line */
    char line_end;              /* the object's line ends: '\r' CRLF, '\n' LF, 0 none yet */
    size_t line_offset;
    unsigned char *arena;
    size_t used, size;
    struct ical_limits lim;
    unsigned n_props, n_components;
    enum ical_status code;
    size_t err_offset;
    uint32_t err_line;
    const char *message;
};

/* The first error stays: later ones are consequences. Returns false. */
static inline bool ical_fail(struct reader *r, enum ical_status code, const char *message)
{
    if (r->code == ICAL_OK) {
        r->code = code;
        r->err_offset = r->line_offset;
        r->err_line = r->start_line;
        r->message = message;
    }
    return false;
}

/* ical_validate.c: the checks of RFC 4791 section 4.1 on the parsed tree;
 * sets obj->kind, uid and master. false with r->code set. */
bool ical_validate(struct reader *r, struct ical_object *obj);

/* ---- ical_time.c ----------------------------------------------------------- */

/* Does the property carry VALUE=DATE? */
bool ical_prop_is_date(const struct ical_prop *p);
/* One value v of a DATE / DATE-TIME property (an item of its list), with the
 * property's VALUE and TZID parameters applied. */
bool ical_prop_time_value(const struct ical_prop *p, struct ical_str v, struct ical_time *out);

/* ---- small helpers --------------------------------------------------------- */

static inline unsigned char lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c; }

static inline bool str_eq(struct ical_str a, struct ical_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

static inline bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* Days in month m (1-12) of year y (ical_time.c). */
unsigned ical_days_in_month(int64_t y, unsigned m);

#endif
