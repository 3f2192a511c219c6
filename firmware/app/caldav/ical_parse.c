/* iCalendar (RFC 5545) reader: content lines unfolded into the caller's
 * arena, the component tree, and lookups in it. The checks CalDAV needs are
 * ical_validate.c. See ical.h. */
#include "caldav/ical_private.h"

#include <string.h>

/* ---- arena ------------------------------------------------------------- */

union ical_align { void *p; size_t s; int64_t i; };
#define ALIGN_UP(n) (((n) + sizeof(union ical_align) - 1) & ~(sizeof(union ical_align) - 1))

static void *alloc(struct reader *r, size_t n)
{
    n = ALIGN_UP(n);
    if (n > r->size - r->used) {
        ical_fail(r, ICAL_ERR_ARENA, "arena exhausted");
        return NULL;
    }
    void *p = r->arena + r->used;
    r->used += n;
    return p;
}

/* ---- content lines (5545 3.1) ------------------------------------------- */

/* A line break at r->pos, brk bytes long: content lines end in CRLF. An object
 * whose lines all end in LF is read as well (files written on Unix); a bare CR,
 * or CRLF and LF mixed in one object, is an error: such a line cannot be read
 * back as its writer meant it (a CR inside a value, or a line end lost). */
static bool line_break(struct reader *r, size_t brk)
{
    char kind = brk == 2 ? '\r' : r->buf[r->pos];
    if (kind == '\r' && brk == 1)
        return ical_fail(r, ICAL_ERR_SYNTAX, "bare CR: content lines end in CRLF");
    if (r->line_end == 0)
        r->line_end = kind;
    else if (r->line_end != kind)
        return ical_fail(r, ICAL_ERR_SYNTAX, kind == '\n' ? "bare LF in an object whose lines end in CRLF"
                                                            : "CRLF in an object whose lines end in LF");
    return true;
}

/* Next logical line, unfolded into the arena: a line break followed by one
 * space or tab continues the line. CRLF ends lines, or LF throughout an object
 * (line_break). Returns false at end of input or on error (r->code says which). */
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
                if (!line_break(r, brk))
                    return false;
                if (after < r->len && (r->buf[after] == ' ' || r->buf[after] == '\t')) {
                    r->pos = after + 1;   /* fold: drop the break and one white space */
                    r->line_no++;
                    continue;
                }
                r->pos = after;
                break;
            }
            if (n >= r->lim.max_line)
                return ical_fail(r, ICAL_ERR_LINE_TOO_LONG, "content line longer than the limit");
            if (n >= room)
                return ical_fail(r, ICAL_ERR_ARENA, "arena exhausted");
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
            return ical_fail(r, ICAL_ERR_SYNTAX, "control character in content line");
    const char *q = s;
    while (q < end && is_name_char(*q))
        q++;
    if (q == s)
        return ical_fail(r, ICAL_ERR_SYNTAX, "content line without a name");
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
            return ical_fail(r, ICAL_ERR_SYNTAX, "malformed parameter");
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
                    return ical_fail(r, ICAL_ERR_SYNTAX, "unterminated quoted parameter value");
                q = close + 1;
            } else {
                while (q < end && *q != ';' && *q != ':' && *q != ',' && *q != '"')
                    q++;
                if (q < end && *q == '"')
                    return ical_fail(r, ICAL_ERR_SYNTAX, "quote inside a parameter value");
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
        return ical_fail(r, ICAL_ERR_SYNTAX, "content line without ':'");
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
            return ical_fail(r, ICAL_ERR_NO_VCALENDAR, "content after END:VCALENDAR (one VCALENDAR per resource)");
        struct ical_prop tmp;
        size_t mark = r->used;
        if (!parse_content_line(r, line, &tmp))
            return false;
        bool begin = ical_str_eq_nocase(tmp.name, "BEGIN"), end = ical_str_eq_nocase(tmp.name, "END");
        if (begin) {
            r->used = mark;     /* its parameters, if any, are not kept */
            enum ical_kind kind = kind_of(tmp.value);
            if (tmp.value.len == 0)
                return ical_fail(r, ICAL_ERR_SYNTAX, "BEGIN without a component name");
            for (size_t i = 0; i < tmp.value.len; i++)
                if (!is_name_char(tmp.value.ptr[i]))
                    return ical_fail(r, ICAL_ERR_SYNTAX, "bad component name");
            if (!cur && kind != ICAL_VCALENDAR)
                return ical_fail(r, ICAL_ERR_NO_VCALENDAR, "object does not start with BEGIN:VCALENDAR");
            if (cur && !may_contain(cur->kind, kind))
                return ical_fail(r, ICAL_ERR_NESTING, "component not allowed here (RFC 5545 3.6)");
            if (depth >= r->lim.max_depth || depth >= sizeof(child_tail) / sizeof(child_tail[0]))
                return ical_fail(r, ICAL_ERR_NESTING, "components nested too deep");
            if (++r->n_components > r->lim.max_components)
                return ical_fail(r, ICAL_ERR_TOO_MANY, "more components than the limit");
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
                return ical_fail(r, ICAL_ERR_NO_VCALENDAR, "END before BEGIN:VCALENDAR");
            bool same = tmp.value.len == cur->name.len;
            for (size_t i = 0; same && i < tmp.value.len; i++)
                same = lower((unsigned char)tmp.value.ptr[i]) == lower((unsigned char)cur->name.ptr[i]);
            if (!same)
                return ical_fail(r, ICAL_ERR_NESTING, "END does not match BEGIN");
            depth--;
            cur = cur->parent;
            if (cur)
                for (prop_tail = &cur->props; *prop_tail; prop_tail = &(*prop_tail)->next) {}
            else
                done = true;
        } else {
            if (!cur)
                return ical_fail(r, ICAL_ERR_NO_VCALENDAR, "property outside BEGIN:VCALENDAR");
            if (++r->n_props > r->lim.max_props)
                return ical_fail(r, ICAL_ERR_TOO_MANY, "more properties than the limit");
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
        return ical_fail(r, ICAL_ERR_NO_VCALENDAR, "no BEGIN:VCALENDAR");
    if (cur)
        return ical_fail(r, ICAL_ERR_NESTING, "input ends before END of a component");
    *root_out = root;
    return true;
}

/* ---- lookup ------------------------------------------------------------- */

bool ical_str_eq_nocase(struct ical_str s, const char *lit)
{
    if (strlen(lit) != s.len)
        return false;
    for (size_t i = 0; i < s.len; i++)
        if (lower((unsigned char)s.ptr[i]) != lower((unsigned char)lit[i]))
            return false;
    return true;
}

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
        if (!ical_validate(&r, obj))
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
