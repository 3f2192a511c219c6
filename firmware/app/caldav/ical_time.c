/* iCalendar values: dates, date-times, durations, UTC offsets and
 * recurrence rules (RFC 5545 sections 3.3.4 to 3.3.14). */
#include "caldav/ical_private.h"

#include <string.h>

/* n digits at s as a number; false if any is not a digit */
static bool digits(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* ---- dates and durations ------------------------------------------------- */

/* Days from 1970-01-01 in the proleptic Gregorian calendar (5545 3.3.4),
 * counting in 400-year eras that start on March 1st. */
int64_t ical_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void ical_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

unsigned ical_days_in_month(int64_t y, unsigned m)
{
    static const unsigned char dim[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

bool ical_parse_time(struct ical_str v, bool is_date, struct ical_time *out)
{
    unsigned y, m, d, hh = 0, mm = 0, ss = 0;
    if (v.len < 8 || !digits(v.ptr, 4, &y) || !digits(v.ptr + 4, 2, &m) || !digits(v.ptr + 6, 2, &d))
        return false;
    if (y == 0 || m < 1 || m > 12 || d < 1 || d > ical_days_in_month(y, m))
        return false;
    if (is_date) {
        if (v.len != 8)
            return false;
        out->kind = ICAL_TIME_DATE;
    } else {
        if ((v.len != 15 && v.len != 16) || v.ptr[8] != 'T' || !digits(v.ptr + 9, 2, &hh) ||
            !digits(v.ptr + 11, 2, &mm) || !digits(v.ptr + 13, 2, &ss))
            return false;
        if (hh > 23 || mm > 59 || ss > 60)
            return false;
        if (v.len == 16 && v.ptr[15] != 'Z')
            return false;
        out->kind = v.len == 16 ? ICAL_TIME_UTC : ICAL_TIME_FLOATING;
    }
    out->local = ical_days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss;
    out->tzid.ptr = "";
    out->tzid.len = 0;
    return true;
}

static struct ical_str first_of_list(struct ical_str v)
{
    const char *comma = memchr(v.ptr, ',', v.len);
    if (comma)
        v.len = (size_t)(comma - v.ptr);
    return v;
}

bool ical_prop_is_date(const struct ical_prop *p)
{
    const struct ical_param *vt = ical_find_param(p, "VALUE");
    return vt && ical_str_eq_nocase(vt->value, "DATE");
}

bool ical_prop_time_value(const struct ical_prop *p, struct ical_str v, struct ical_time *out)
{
    if (!ical_parse_time(v, ical_prop_is_date(p), out))
        return false;
    const struct ical_param *tz = ical_find_param(p, "TZID");
    if (tz && out->kind == ICAL_TIME_FLOATING) {
        out->kind = ICAL_TIME_ZONED;
        out->tzid = tz->value;
    }
    return true;
}

bool ical_prop_time(const struct ical_prop *p, struct ical_time *out)
{
    return p && ical_prop_time_value(p, first_of_list(p->value), out);
}

bool ical_parse_duration(struct ical_str v, int64_t *seconds)
{
    size_t i = 0;
    int sign = 1;
    if (i < v.len && (v.ptr[i] == '+' || v.ptr[i] == '-'))
        sign = v.ptr[i++] == '-' ? -1 : 1;
    if (i >= v.len || v.ptr[i++] != 'P')
        return false;
    int64_t total = 0;
    bool in_time = false, any = false;
    int last_unit = 0;    /* order: W/D = 1, H = 2, M = 3, S = 4 */
    while (i < v.len) {
        if (v.ptr[i] == 'T') {
            if (in_time || i + 1 >= v.len)
                return false;
            in_time = true;
            i++;
            continue;
        }
        int64_t n = 0;
        size_t start = i;
        while (i < v.len && is_digit(v.ptr[i])) {
            if (i - start >= 9)
                return false;
            n = n * 10 + (v.ptr[i++] - '0');
        }
        if (i == start || i >= v.len)
            return false;
        char unit = v.ptr[i++];
        int rank;
        int64_t scale;
        if (!in_time && unit == 'W') { rank = 1; scale = 7 * 86400; if (any || i != v.len) return false; }
        else if (!in_time && unit == 'D') { rank = 1; scale = 86400; }
        else if (in_time && unit == 'H') { rank = 2; scale = 3600; }
        else if (in_time && unit == 'M') { rank = 3; scale = 60; }
        else if (in_time && unit == 'S') { rank = 4; scale = 1; }
        else return false;
        if (rank <= last_unit)
            return false;
        last_unit = rank;
        total += n * scale;
        any = true;
    }
    if (!any || (in_time && last_unit < 2))
        return false;
    *seconds = sign * total;
    return true;
}

bool ical_parse_utc_offset(struct ical_str v, int32_t *seconds)
{
    unsigned hh, mm, ss = 0;
    if ((v.len != 5 && v.len != 7) || (v.ptr[0] != '+' && v.ptr[0] != '-') ||
        !digits(v.ptr + 1, 2, &hh) || !digits(v.ptr + 3, 2, &mm) ||
        (v.len == 7 && !digits(v.ptr + 5, 2, &ss)))
        return false;
    if (hh > 23 || mm > 59 || ss > 59)
        return false;
    int32_t s = (int32_t)(hh * 3600 + mm * 60 + ss);
    *seconds = v.ptr[0] == '-' ? -s : s;
    return true;
}

bool ical_parse_utc(const char *s, size_t len, int64_t *utc)
{
    struct ical_str v = { s, len };
    struct ical_time t;
    if (!ical_parse_time(v, false, &t) || t.kind != ICAL_TIME_UTC)
        return false;
    *utc = t.local;
    return true;
}

void ical_format_utc(int64_t utc, char out[ICAL_UTC_LEN + 1])
{
    int64_t days = utc / 86400, y;
    int32_t sec = (int32_t)(utc % 86400);
    unsigned m, d;
    uint32_t date, time;
    if (sec < 0) {  /* before 1970: the day before, and the seconds into it */
        sec += 86400;
        days--;
    }
    ical_civil_from_days(days, &y, &m, &d);
    /* yyyymmdd 'T' hhmmss 'Z' (5545 3.3.5 form 2), the digits from the right */
    date = (uint32_t)y % 10000u * 10000u + m * 100u + d;
    time = (uint32_t)sec / 3600 * 10000u + (uint32_t)sec / 60 % 60 * 100u + (uint32_t)sec % 60;
    for (int i = 7; i >= 0; i--, date /= 10)
        out[i] = (char)('0' + date % 10);
    for (int i = 14; i > 8; i--, time /= 10)
        out[i] = (char)('0' + time % 10);
    out[8] = 'T';
    out[15] = 'Z';
    out[16] = '\0';
}

/* ---- recurrence rules (5545 3.3.10) -------------------------------------- */

static int weekday_code(const char *s, size_t n)
{
    static const char *const codes[7] = { "SU", "MO", "TU", "WE", "TH", "FR", "SA" };
    for (int i = 0; i < 7; i++)
        if (ical_str_eq_nocase((struct ical_str){ s, n }, codes[i]))
            return i;
    return -1;
}

/* signed integer in [-max, max], no zero unless allow_zero */
static bool small_int(const char *s, size_t n, int max, int *out)
{
    int sign = 1;
    size_t i = 0;
    if (n && (s[0] == '+' || s[0] == '-'))
        sign = s[i++] == '-' ? -1 : 1;
    if (i == n || n - i > 3)
        return false;
    unsigned v;
    if (!digits(s + i, n - i, &v) || v == 0 || (int)v > max)
        return false;
    *out = sign * (int)v;
    return true;
}

bool ical_parse_rrule(struct ical_str value, struct ical_rrule *rule, const char **why)
{
    memset(rule, 0, sizeof(*rule));
    rule->interval = 1;
    rule->wkst = 1;
    const char *s = value.ptr, *end = value.ptr + value.len;
    bool seen_count = false;
    *why = "bad recurrence rule";
    while (s < end) {
        const char *part_end = memchr(s, ';', (size_t)(end - s));
        if (!part_end)
            part_end = end;
        const char *eq = memchr(s, '=', (size_t)(part_end - s));
        if (!eq || eq == s || eq + 1 == part_end)
            return *why = "rule part is not NAME=VALUE", false;
        struct ical_str name = { s, (size_t)(eq - s) };
        struct ical_str val = { eq + 1, (size_t)(part_end - eq - 1) };
        if (ical_str_eq_nocase(name, "FREQ")) {
            if (rule->freq != ICAL_FREQ_NONE) return *why = "FREQ given twice", false;
            if (ical_str_eq_nocase(val, "DAILY")) rule->freq = ICAL_DAILY;
            else if (ical_str_eq_nocase(val, "WEEKLY")) rule->freq = ICAL_WEEKLY;
            else if (ical_str_eq_nocase(val, "MONTHLY")) rule->freq = ICAL_MONTHLY;
            else if (ical_str_eq_nocase(val, "YEARLY")) rule->freq = ICAL_YEARLY;
            else if (ical_str_eq_nocase(val, "HOURLY") || ical_str_eq_nocase(val, "MINUTELY") ||
                     ical_str_eq_nocase(val, "SECONDLY")) {
                rule->freq = ICAL_FREQ_SUBDAILY;
                rule->unsupported = true;
            } else return *why = "unknown FREQ", false;
        } else if (ical_str_eq_nocase(name, "INTERVAL")) {
            unsigned n;
            if (val.len > 6 || !digits(val.ptr, val.len, &n) || n == 0)
                return *why = "bad INTERVAL", false;
            rule->interval = n;
        } else if (ical_str_eq_nocase(name, "COUNT")) {
            unsigned n;
            if (val.len > 6 || !digits(val.ptr, val.len, &n) || n == 0)
                return *why = "bad COUNT", false;
            rule->count = n;
            seen_count = true;
        } else if (ical_str_eq_nocase(name, "UNTIL")) {
            if (!ical_parse_time(val, val.len == 8, &rule->until))
                return *why = "bad UNTIL", false;
            rule->has_until = true;
        } else if (ical_str_eq_nocase(name, "WKST")) {
            int wd = weekday_code(val.ptr, val.len);
            if (wd < 0) return *why = "bad WKST", false;
            rule->wkst = (uint8_t)wd;
        } else if (ical_str_eq_nocase(name, "BYDAY") || ical_str_eq_nocase(name, "BYMONTHDAY") ||
                   ical_str_eq_nocase(name, "BYMONTH")) {
            bool byday = ical_str_eq_nocase(name, "BYDAY");
            bool bymonth = ical_str_eq_nocase(name, "BYMONTH");
            const char *v = val.ptr, *vend = val.ptr + val.len;
            while (v <= vend) {
                const char *item_end = memchr(v, ',', (size_t)(vend - v));
                if (!item_end)
                    item_end = vend;
                size_t n = (size_t)(item_end - v);
                if (n == 0) return *why = "empty list item", false;
                if (byday) {
                    if (n < 2) return *why = "bad BYDAY", false;
                    int wd = weekday_code(item_end - 2, 2);
                    int ord = 0;
                    if (wd < 0 || (n > 2 && !small_int(v, n - 2, 53, &ord)))
                        return *why = "bad BYDAY", false;
                    if (rule->n_byday >= ICAL_MAX_BYDAY) return *why = "too many BYDAY values", false;
                    rule->byday[rule->n_byday].ordinal = (int8_t)ord;
                    rule->byday[rule->n_byday].weekday = (uint8_t)wd;
                    rule->n_byday++;
                } else if (bymonth) {
                    unsigned mo;
                    if (n > 2 || !digits(v, n, &mo) || mo < 1 || mo > 12)
                        return *why = "bad BYMONTH", false;
                    rule->bymonth |= (uint16_t)(1u << mo);
                } else {
                    int md;
                    if (!small_int(v, n, 31, &md)) return *why = "bad BYMONTHDAY", false;
                    if (rule->n_bymonthday >= ICAL_MAX_BYMONTHDAY) return *why = "too many BYMONTHDAY values", false;
                    rule->bymonthday[rule->n_bymonthday++] = (int8_t)md;
                }
                v = item_end + 1;
            }
        } else if (ical_str_eq_nocase(name, "BYSETPOS") || ical_str_eq_nocase(name, "BYWEEKNO") ||
                   ical_str_eq_nocase(name, "BYYEARDAY") || ical_str_eq_nocase(name, "BYHOUR") ||
                   ical_str_eq_nocase(name, "BYMINUTE") || ical_str_eq_nocase(name, "BYSECOND")) {
            for (size_t i = 0; i < val.len; i++)
                if (!is_digit(val.ptr[i]) && val.ptr[i] != ',' && val.ptr[i] != '-' && val.ptr[i] != '+')
                    return *why = "bad BYxxx list", false;
            rule->unsupported = true;
        } else if (!(name.len > 2 && lower((unsigned char)name.ptr[0]) == 'x' && name.ptr[1] == '-')) {
            return *why = "unknown rule part", false;
        }
        s = part_end + (part_end < end);
        if (part_end == end)
            break;
    }
    if (rule->freq == ICAL_FREQ_NONE)
        return *why = "FREQ missing", false;
    if (seen_count && rule->has_until)
        return *why = "COUNT and UNTIL both given", false;
    if (rule->freq != ICAL_MONTHLY && rule->freq != ICAL_YEARLY)
        for (unsigned i = 0; i < rule->n_byday; i++)
            if (rule->byday[i].ordinal)
                return *why = "BYDAY ordinals need FREQ=MONTHLY or YEARLY", false;
    if (rule->freq == ICAL_WEEKLY && rule->n_bymonthday)
        return *why = "BYMONTHDAY with FREQ=WEEKLY", false;
    return true;
}
