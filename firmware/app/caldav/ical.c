/* iCalendar (RFC 5545) reader, CalDAV object validation (RFC 4791 4.1) and
 * time-range matching with recurrence expansion (RFC 4791 9.9). See ical.h. */
#include "caldav/ical.h"

#include <string.h>

/* ---- arena ------------------------------------------------------------- */

union ical_align { void *p; size_t s; int64_t i; };
#define ALIGN_UP(n) (((n) + sizeof(union ical_align) - 1) & ~(sizeof(union ical_align) - 1))

struct reader {
    const char *buf;
    size_t len, pos;
    uint32_t line_no;           /* physical lines read so far */
    uint32_t start_line;        /* first physical line of the current logical line */
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

static bool fail(struct reader *r, enum ical_status code, const char *message)
{
    if (r->code == ICAL_OK) {
        r->code = code;
        r->err_offset = r->line_offset;
        r->err_line = r->start_line;
        r->message = message;
    }
    return false;
}

static void *alloc(struct reader *r, size_t n)
{
    n = ALIGN_UP(n);
    if (n > r->size - r->used) {
        fail(r, ICAL_ERR_ARENA, "arena exhausted");
        return NULL;
    }
    void *p = r->arena + r->used;
    r->used += n;
    return p;
}

/* ---- small string helpers ----------------------------------------------- */

static unsigned char lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c; }

static bool eq_nocase(const char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (k != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)s[i]) != lower((unsigned char)lit[i]))
            return false;
    return true;
}

bool ical_str_eq_nocase(struct ical_str s, const char *lit) { return eq_nocase(s.ptr, s.len, lit); }

static bool str_eq(struct ical_str a, struct ical_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

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

/* ---- content lines (5545 3.1) ------------------------------------------- */

/* Next logical line, unfolded into the arena: a line break followed by one
 * space or tab continues the line. CRLF and bare LF both end lines. Returns
 * false at end of input or on error (r->code says which). */
static bool next_line(struct reader *r, struct ical_str *out)
{
    while (r->pos < r->len) {
        r->line_offset = r->pos;
        r->line_no++;
        r->start_line = r->line_no;
        char *dst = (char *)r->arena + r->used;
        size_t room = r->size - r->used, n = 0;
        for (;;) {
            if (r->pos >= r->len)
                break;
            char c = r->buf[r->pos];
            if (c == '\r' || c == '\n') {
                size_t brk = (c == '\r' && r->pos + 1 < r->len && r->buf[r->pos + 1] == '\n') ? 2 : 1;
                size_t after = r->pos + brk;
                if (after < r->len && (r->buf[after] == ' ' || r->buf[after] == '\t')) {
                    r->pos = after + 1;   /* fold: drop the break and one white space */
                    r->line_no++;
                    continue;
                }
                r->pos = after;
                break;
            }
            if (n >= r->lim.max_line)
                return fail(r, ICAL_ERR_LINE_TOO_LONG, "content line longer than the limit");
            if (n >= room)
                return fail(r, ICAL_ERR_ARENA, "arena exhausted");
            dst[n++] = c;
            r->pos++;
        }
        if (n == 0)
            continue;   /* blank lines are tolerated */
        r->used += ALIGN_UP(n);
        out->ptr = dst;
        out->len = n;
        return true;
    }
    return false;
}

static bool is_name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '-';
}

/* CONTROL of 5545 3.1: everything below space except HTAB, and DEL */
static bool is_control(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7F; }

/* contentline = name *(";" param) ":" value  (5545 3.1) */
static bool parse_content_line(struct reader *r, struct ical_str line, struct ical_prop *p)
{
    const char *s = line.ptr, *end = line.ptr + line.len;
    for (const char *q = s; q < end; q++)
        if (is_control((unsigned char)*q))
            return fail(r, ICAL_ERR_SYNTAX, "control character in content line");
    const char *q = s;
    while (q < end && is_name_char(*q))
        q++;
    if (q == s)
        return fail(r, ICAL_ERR_SYNTAX, "content line without a name");
    p->name.ptr = s;
    p->name.len = (size_t)(q - s);
    p->params = NULL;
    struct ical_param **tail = &p->params;
    while (q < end && *q == ';') {
        q++;
        const char *ns = q;
        while (q < end && is_name_char(*q))
            q++;
        if (q == ns || q >= end || *q != '=')
            return fail(r, ICAL_ERR_SYNTAX, "malformed parameter");
        struct ical_param *param = alloc(r, sizeof(*param));
        if (!param)
            return false;
        param->name.ptr = ns;
        param->name.len = (size_t)(q - ns);
        param->next = NULL;
        q++;
        const char *vs = q;
        /* param-value *("," param-value); quoted ones may hold ; : , */
        for (;;) {
            if (q < end && *q == '"') {
                const char *close = memchr(q + 1, '"', (size_t)(end - q - 1));
                if (!close)
                    return fail(r, ICAL_ERR_SYNTAX, "unterminated quoted parameter value");
                q = close + 1;
            } else {
                while (q < end && *q != ';' && *q != ':' && *q != ',' && *q != '"')
                    q++;
                if (q < end && *q == '"')
                    return fail(r, ICAL_ERR_SYNTAX, "quote inside a parameter value");
            }
            if (q < end && *q == ',') {
                q++;
                continue;
            }
            break;
        }
        param->value.ptr = vs;
        param->value.len = (size_t)(q - vs);
        if (param->value.len >= 2 && vs[0] == '"' && vs[param->value.len - 1] == '"' &&
            !memchr(vs + 1, '"', param->value.len - 2)) {
            param->value.ptr++;
            param->value.len -= 2;
        }
        *tail = param;
        tail = &param->next;
    }
    if (q >= end || *q != ':')
        return fail(r, ICAL_ERR_SYNTAX, "content line without ':'");
    q++;
    p->value.ptr = q;
    p->value.len = (size_t)(end - q);
    return true;
}

/* ---- components (5545 3.4, 3.6) ---------------------------------------- */

static enum ical_kind kind_of(struct ical_str name)
{
    static const struct { const char *name; enum ical_kind kind; } kinds[] = {
        { "VCALENDAR", ICAL_VCALENDAR }, { "VEVENT", ICAL_VEVENT }, { "VTODO", ICAL_VTODO },
        { "VJOURNAL", ICAL_VJOURNAL }, { "VFREEBUSY", ICAL_VFREEBUSY },
        { "VTIMEZONE", ICAL_VTIMEZONE }, { "VALARM", ICAL_VALARM },
        { "STANDARD", ICAL_STANDARD }, { "DAYLIGHT", ICAL_DAYLIGHT },
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (ical_str_eq_nocase(name, kinds[i].name))
            return kinds[i].kind;
    return ICAL_OTHER;
}

/* Which component may appear inside which (5545 3.6 and its subsections).
 * x-comp and iana-comp (ICAL_OTHER) are kept wherever they appear in a
 * VCALENDAR or in one another. */
static bool may_contain(enum ical_kind parent, enum ical_kind child)
{
    switch (child) {
    case ICAL_VCALENDAR:
        return false;
    case ICAL_VEVENT: case ICAL_VTODO: case ICAL_VJOURNAL: case ICAL_VFREEBUSY: case ICAL_VTIMEZONE:
        return parent == ICAL_VCALENDAR;
    case ICAL_VALARM:
        return parent == ICAL_VEVENT || parent == ICAL_VTODO;
    case ICAL_STANDARD: case ICAL_DAYLIGHT:
        return parent == ICAL_VTIMEZONE;
    case ICAL_OTHER:
        return parent == ICAL_VCALENDAR || parent == ICAL_OTHER;
    }
    return false;
}

static bool parse_structure(struct reader *r, struct ical_component **root_out)
{
    struct ical_component *root = NULL, *cur = NULL;
    struct ical_prop **prop_tail = NULL;
    struct ical_component **child_tail[16];
    unsigned depth = 0;
    bool done = false;
    struct ical_str line = { "", 0 };
    while (next_line(r, &line)) {
        if (done)
            return fail(r, ICAL_ERR_NO_VCALENDAR, "content after END:VCALENDAR (one VCALENDAR per resource)");
        struct ical_prop tmp;
        size_t mark = r->used;
        if (!parse_content_line(r, line, &tmp))
            return false;
        bool begin = ical_str_eq_nocase(tmp.name, "BEGIN"), end = ical_str_eq_nocase(tmp.name, "END");
        if (begin) {
            r->used = mark;     /* its parameters, if any, are not kept */
            enum ical_kind kind = kind_of(tmp.value);
            if (tmp.value.len == 0)
                return fail(r, ICAL_ERR_SYNTAX, "BEGIN without a component name");
            for (size_t i = 0; i < tmp.value.len; i++)
                if (!is_name_char(tmp.value.ptr[i]))
                    return fail(r, ICAL_ERR_SYNTAX, "bad component name");
            if (!cur && kind != ICAL_VCALENDAR)
                return fail(r, ICAL_ERR_NO_VCALENDAR, "object does not start with BEGIN:VCALENDAR");
            if (cur && !may_contain(cur->kind, kind))
                return fail(r, ICAL_ERR_NESTING, "component not allowed here (RFC 5545 3.6)");
            if (depth >= r->lim.max_depth || depth >= sizeof(child_tail) / sizeof(child_tail[0]))
                return fail(r, ICAL_ERR_NESTING, "components nested too deep");
            if (++r->n_components > r->lim.max_components)
                return fail(r, ICAL_ERR_TOO_MANY, "more components than the limit");
            struct ical_component *c = alloc(r, sizeof(*c));
            if (!c)
                return false;
            memset(c, 0, sizeof(*c));
            c->kind = kind;
            c->name = tmp.value;
            c->parent = cur;
            if (cur) {
                *child_tail[depth - 1] = c;
                child_tail[depth - 1] = &c->next_sibling;
            } else {
                root = c;
            }
            child_tail[depth] = &c->first_child;
            depth++;
            cur = c;
            prop_tail = &c->props;
        } else if (end) {
            r->used = mark;
            if (!cur)
                return fail(r, ICAL_ERR_NO_VCALENDAR, "END before BEGIN:VCALENDAR");
            bool same = tmp.value.len == cur->name.len;
            for (size_t i = 0; same && i < tmp.value.len; i++)
                same = lower((unsigned char)tmp.value.ptr[i]) == lower((unsigned char)cur->name.ptr[i]);
            if (!same)
                return fail(r, ICAL_ERR_NESTING, "END does not match BEGIN");
            depth--;
            cur = cur->parent;
            if (cur)
                for (prop_tail = &cur->props; *prop_tail; prop_tail = &(*prop_tail)->next) {}
            else
                done = true;
        } else {
            if (!cur)
                return fail(r, ICAL_ERR_NO_VCALENDAR, "property outside BEGIN:VCALENDAR");
            if (++r->n_props > r->lim.max_props)
                return fail(r, ICAL_ERR_TOO_MANY, "more properties than the limit");
            struct ical_prop *p = alloc(r, sizeof(*p));
            if (!p)
                return false;
            *p = tmp;
            p->line = r->start_line;
            p->next = NULL;
            *prop_tail = p;
            prop_tail = &p->next;
        }
    }
    if (r->code != ICAL_OK)
        return false;
    if (!root)
        return fail(r, ICAL_ERR_NO_VCALENDAR, "no BEGIN:VCALENDAR");
    if (cur)
        return fail(r, ICAL_ERR_NESTING, "input ends before END of a component");
    *root_out = root;
    return true;
}

/* ---- lookup ------------------------------------------------------------- */

const struct ical_prop *ical_find_prop(const struct ical_component *c, const char *name)
{
    for (const struct ical_prop *p = c ? c->props : NULL; p; p = p->next)
        if (ical_str_eq_nocase(p->name, name))
            return p;
    return NULL;
}

const struct ical_prop *ical_next_prop(const struct ical_prop *p, const char *name)
{
    for (p = p ? p->next : NULL; p; p = p->next)
        if (ical_str_eq_nocase(p->name, name))
            return p;
    return NULL;
}

size_t ical_count_props(const struct ical_component *c, const char *name)
{
    size_t n = 0;
    for (const struct ical_prop *p = ical_find_prop(c, name); p; p = ical_next_prop(p, name))
        n++;
    return n;
}

const struct ical_param *ical_find_param(const struct ical_prop *p, const char *name)
{
    for (const struct ical_param *a = p ? p->params : NULL; a; a = a->next)
        if (ical_str_eq_nocase(a->name, name))
            return a;
    return NULL;
}

const struct ical_component *ical_find_child(const struct ical_component *c, enum ical_kind kind)
{
    for (const struct ical_component *k = c ? c->first_child : NULL; k; k = k->next_sibling)
        if (k->kind == kind)
            return k;
    return NULL;
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

static bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned char dim[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* 0 = Sunday; 1970-01-01 was a Thursday */
static unsigned weekday_of(int64_t days) { return (unsigned)(((days % 7) + 7 + 4) % 7); }

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

bool ical_parse_time(struct ical_str v, bool is_date, struct ical_time *out)
{
    unsigned y, m, d, hh = 0, mm = 0, ss = 0;
    if (v.len < 8 || !digits(v.ptr, 4, &y) || !digits(v.ptr + 4, 2, &m) || !digits(v.ptr + 6, 2, &d))
        return false;
    if (y == 0 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
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

static bool prop_is_date(const struct ical_prop *p)
{
    const struct ical_param *vt = ical_find_param(p, "VALUE");
    return vt && ical_str_eq_nocase(vt->value, "DATE");
}

/* One value of a DATE / DATE-TIME property, with its parameters applied. */
static bool prop_time_value(const struct ical_prop *p, struct ical_str v, struct ical_time *out)
{
    if (!ical_parse_time(v, prop_is_date(p), out))
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
    return p && prop_time_value(p, first_of_list(p->value), out);
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

/* ---- recurrence rules (5545 3.3.10) -------------------------------------- */

static int weekday_code(const char *s, size_t n)
{
    static const char *const codes[7] = { "SU", "MO", "TU", "WE", "TH", "FR", "SA" };
    for (int i = 0; i < 7; i++)
        if (eq_nocase(s, n, codes[i]))
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
    unsigned dim = days_in_month(y, m);
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
            n_days = days_in_month(y, m);
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
                i += days_in_month(y, m) - d;
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
                if (prop_time_value(rd, item, &t) && t.local <= local && (!s.found || t.local > s.best)) {
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

/* ---- validation (RFC 4791 4.1, RFC 5545 3.6) ---------------------------- */

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
    return fail(r, code, message);
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
        if (!prop_time_value(p, item, &t))
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
            (ical_str_eq_nocase(p->name, "TRIGGER") && !prop_is_date(p) && !ical_find_param(p, "VALUE") &&
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

static bool validate(struct reader *r, struct ical_object *obj)
{
    const struct ical_component *cal = obj->root;
    const struct ical_prop *version = ical_find_prop(cal, "VERSION");
    if (!version || !ical_str_eq_nocase(version->value, "2.0"))
        return fail_at(r, version, ICAL_ERR_PROPERTY, "VCALENDAR needs VERSION:2.0 (RFC 5545 3.7.4)");
    if (!ical_find_prop(cal, "PRODID"))
        return fail_at(r, cal->props, ICAL_ERR_PROPERTY, "VCALENDAR needs PRODID (RFC 5545 3.7.3)");
    if (ical_find_prop(cal, "METHOD"))
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

enum ical_status ical_parse(struct ical_object *obj, const char *buf, size_t len,
                            void *arena, size_t arena_size,
                            const struct ical_limits *limits, struct ical_error *err)
{
    struct reader r;
    memset(&r, 0, sizeof(r));
    r.buf = buf;
    r.len = len;
    uintptr_t base = (uintptr_t)arena;
    size_t skew = (size_t)(ALIGN_UP(base) - base);
    r.arena = (unsigned char *)arena + (skew < arena_size ? skew : arena_size);
    r.size = arena_size > skew ? (arena_size - skew) & ~(sizeof(union ical_align) - 1) : 0;
    if (limits)
        r.lim = *limits;
    if (!r.lim.max_line) r.lim.max_line = 8192;
    if (!r.lim.max_props) r.lim.max_props = 1024;
    if (!r.lim.max_components) r.lim.max_components = 256;
    if (!r.lim.max_depth) r.lim.max_depth = 6;
    memset(obj, 0, sizeof(*obj));

    struct ical_component *root = NULL;
    if (parse_structure(&r, &root)) {
        obj->root = root;
        if (!validate(&r, obj))
            obj->root = NULL;
    }
    obj->arena_used = r.used + skew;
    if (r.code != ICAL_OK) {
        memset(obj, 0, sizeof(*obj));
        obj->arena_used = r.used + skew;
    }
    if (err) {
        err->code = r.code;
        err->offset = r.code ? r.err_offset : 0;
        err->line = r.code ? r.err_line : 0;
        err->message = r.code ? r.message : "ok";
    }
    return r.code;
}

const char *ical_status_name(enum ical_status status)
{
    static const char *const names[] = {
        "ok", "syntax", "no-vcalendar", "nesting", "component", "uid", "property", "date",
        "rrule", "line-too-long", "too-many", "arena",
    };
    return (unsigned)status < sizeof(names) / sizeof(names[0]) ? names[status] : "?";
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
    bool matched;
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
            if (prop_time_value(p, item, &t) && same_instance(c, &t, local, utc))
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

static bool range_emit(void *ctx, int64_t local)
{
    struct range_ctx *c = ctx;
    int64_t utc = zone_to_utc(&c->zone, local);
    if (excluded(c, local, utc))
        return false;
    if (instance_overlaps(c, utc)) {
        c->matched = true;
        return true;
    }
    return false;
}

static enum ical_match component_range(const struct ical_object *obj, const struct ical_component *comp,
                                       int64_t start, int64_t end, int32_t floating_offset,
                                       unsigned max_iterations, bool expand_rules)
{
    struct range_ctx c;
    memset(&c, 0, sizeof(c));
    c.obj = obj;
    c.comp = comp;
    c.start = start;
    c.end = end;
    c.floating_offset = floating_offset;
    c.is_override = !expand_rules;
    c.has_dtstart = ical_prop_time(ical_find_prop(comp, "DTSTART"), &c.dtstart);
    if (!c.has_dtstart) {
        if (comp->kind == ICAL_VTODO)
            return todo_without_start(&c) ? ICAL_MATCH : ICAL_NO_MATCH;
        return comp->kind == ICAL_VFREEBUSY ? ICAL_MATCH_ASSUMED : ICAL_NO_MATCH;
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

    const struct ical_prop *rr = expand_rules ? ical_find_prop(comp, "RRULE") : NULL;
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
    if (!c.matched && expand_rules) {
        for (const struct ical_prop *p = ical_find_prop(comp, "RDATE"); p && !c.matched; p = ical_next_prop(p, "RDATE")) {
            const char *v = p->value.ptr, *vend = p->value.ptr + p->value.len;
            while (v < vend && !c.matched) {
                const char *comma = memchr(v, ',', (size_t)(vend - v));
                struct ical_str item = { v, (size_t)((comma ? comma : vend) - v) };
                const char *slash = memchr(item.ptr, '/', item.len);
                if (slash)
                    item.len = (size_t)(slash - item.ptr);
                struct ical_time t;
                if (prop_time_value(p, item, &t)) {
                    struct zone_ctx z;
                    zone_for(&z, obj, &t, floating_offset);
                    int64_t utc = zone_to_utc(&z, t.local);
                    if (!excluded(&c, t.local, utc) && instance_overlaps(&c, utc))
                        c.matched = true;
                }
                v = comma ? comma + 1 : vend;
            }
        }
    }
    if (c.matched)
        return ICAL_MATCH;
    return res == EXPAND_LIMIT ? ICAL_MATCH_ASSUMED : ICAL_NO_MATCH;
}

enum ical_match ical_time_range(const struct ical_object *obj, int64_t start, int64_t end,
                                int32_t floating_offset, unsigned max_iterations)
{
    if (!obj->root)
        return ICAL_NO_MATCH;
    if (!max_iterations)
        max_iterations = ICAL_DEFAULT_MAX_ITERATIONS;
    enum ical_match result = ICAL_NO_MATCH;
    for (const struct ical_component *c = obj->root->first_child; c; c = c->next_sibling) {
        if (c->kind != obj->kind)
            continue;
        /* overrides are single instances at their own DTSTART (5545 3.8.4.4;
         * RANGE=THISANDFUTURE is not applied to later instances) */
        bool is_override = ical_find_prop(c, "RECURRENCE-ID") != NULL;
        enum ical_match m = component_range(obj, c, start, end, floating_offset, max_iterations, !is_override);
        if (m == ICAL_MATCH)
            return ICAL_MATCH;
        if (m == ICAL_MATCH_ASSUMED)
            result = ICAL_MATCH_ASSUMED;
    }
    return result;
}
