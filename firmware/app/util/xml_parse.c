/* Non-validating XML 1.0 (Fifth Edition) reader with Namespaces in XML 1.0
 * (Third Edition). See xml.h for the contract; the queries on the tree it
 * builds are xml_query.c, the escaping writer xml_write.c.
 *
 * The reader is a single forward pass with no recursion: the open element is
 * `cur` and the way back is node->parent. The arena is used from both ends:
 * the tree (nodes, attributes, decoded text) grows up from the bottom and the
 * namespace bindings in scope grow down from the top, popped at end tags. */
#include "util/xml.h"

#include <string.h>

/* ---- arena ------------------------------------------------------------- */

union xml_align { void *p; size_t s; uint32_t u; };
#define ALIGN_UP(n) (((n) + sizeof(union xml_align) - 1) & ~(sizeof(union xml_align) - 1))

struct binding {
    struct xml_str prefix;      /* empty: the default namespace */
    struct xml_str uri;         /* empty: undeclared (xmlns="") */
    unsigned depth;             /* of the element that declared it */
    struct binding *next;       /* outer (older) binding */
};

struct parser {
    const char *buf;
    size_t len, pos;
    unsigned char *arena;
    size_t lo, hi;              /* bottom used [0, lo), top used [hi, size) */
    size_t size, high_water;
    unsigned max_depth;
    struct binding *bindings;
    struct xml_node *cur;       /* innermost open element */
    struct xml_node *root;
    enum xml_status code;
    size_t err_offset;
    const char *message;
};

static bool fail(struct parser *p, enum xml_status code, size_t offset, const char *message)
{
    if (p->code == XML_OK) {
        p->code = code;
        p->err_offset = offset;
        p->message = message;
    }
    return false;
}

static void note_use(struct parser *p)
{
    size_t used = p->lo + (p->size - p->hi);
    if (used > p->high_water)
        p->high_water = used;
}

static void *alloc_bottom(struct parser *p, size_t n)
{
    n = ALIGN_UP(n);
    if (n > p->hi - p->lo) {
        fail(p, XML_ERR_ARENA, p->pos, "arena exhausted");
        return NULL;
    }
    void *mem = p->arena + p->lo;
    p->lo += n;
    note_use(p);
    return mem;
}

static void *alloc_top(struct parser *p, size_t n)
{
    n = ALIGN_UP(n);
    if (n > p->hi - p->lo) {
        fail(p, XML_ERR_ARENA, p->pos, "arena exhausted");
        return NULL;
    }
    p->hi -= n;
    note_use(p);
    return p->arena + p->hi;
}

/* ---- characters -------------------------------------------------------- */

/* NameStartChar / NameChar of XML 1.0 section 2.3, with every non-ASCII byte
 * accepted (the UTF-8 was validated before). */
static bool is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || c >= 0x80;
}

static bool is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* XML 1.0 section 2.2 Char, in well-formed UTF-8 (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF). Returns the offset of the first bad
 * byte, or n when all is good. */
static size_t check_chars(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c;
        /* printable ASCII a word at a time (a word with a byte of 0x80 or
         * more, or below 0x20, goes byte by byte) */
        if (!((uintptr_t)(s + i) & 3)) {
            for (; n - i >= 4; i += 4) {
                uint32_t w;
                memcpy(&w, s + i, 4);
                if ((w & 0x80808080u) || ((w - 0x20202020u) & ~w & 0x80808080u))
                    break;
            }
            if (i >= n)
                break;
        }
        c = s[i];
        if (c < 0x80) {
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                return i;
            i++;
            continue;
        }
        size_t extra;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            extra = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            extra = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            extra = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return i;
        }
        if (n - i <= extra || s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= extra; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        /* U+FFFE and U+FFFF are not Chars */
        if (c == 0xEF && s[i + 1] == 0xBF && s[i + 2] >= 0xBE)
            return i;
        i += extra + 1;
    }
    return n;
}

static bool is_xml_char(uint32_t c)
{
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
           (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

static size_t utf8_encode(uint32_t c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static bool starts_with(const struct parser *p, const char *lit)
{
    size_t n = strlen(lit);
    return p->len - p->pos >= n && memcmp(p->buf + p->pos, lit, n) == 0;
}

static bool str_eq(struct xml_str a, struct xml_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static bool lit_eq(const char *s, size_t len, const char *lit)
{
    return xml_str_eq((struct xml_str){s, len}, lit);
}

static bool lit_eq_nocase(const char *s, size_t len, const char *lit)
{
    if (strlen(lit) != len)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char a = (unsigned char)s[i], b = (unsigned char)lit[i];
        if (a >= 'A' && a <= 'Z') a = (unsigned char)(a + 32);
        if (b >= 'A' && b <= 'Z') b = (unsigned char)(b + 32);
        if (a != b)
            return false;
    }
    return true;
}

static void skip_space(struct parser *p)
{
    while (p->pos < p->len && xml_is_space((unsigned char)p->buf[p->pos]))
        p->pos++;
}

/* Name (XML 1.0 section 2.3) at p->pos; empty when none. */
static struct xml_str scan_name(struct parser *p)
{
    struct xml_str s = { p->buf + p->pos, 0 };
    if (p->pos < p->len && is_name_start((unsigned char)p->buf[p->pos])) {
        size_t end = p->pos + 1;
        while (end < p->len && is_name_char((unsigned char)p->buf[end]))
            end++;
        s.len = end - p->pos;
        p->pos = end;
    }
    return s;
}

/* QName (Namespaces section 4): NCName or NCName ':' NCName. Returns the
 * prefix length (0 when unprefixed) or -1 when it is not a QName. */
static int qname_prefix_len(struct xml_str q)
{
    const char *colon = memchr(q.ptr, ':', q.len);
    if (!colon)
        return 0;
    size_t plen = (size_t)(colon - q.ptr);
    if (plen == 0 || plen + 1 == q.len || memchr(colon + 1, ':', q.len - plen - 1))
        return -1;
    if (!is_name_start((unsigned char)colon[1]) || plen > 0xFFFF)
        return -1;
    return (int)plen;
}

/* ---- decoding ---------------------------------------------------------- */

/* Reference (XML 1.0 section 4.1) at raw[*i] == '&': the five predefined
 * entities (section 4.6) and character references. Writes UTF-8 to out and
 * returns its length, or 0 on error (p is told). */
static size_t decode_reference(struct parser *p, const char *raw, size_t n, size_t *i,
                               size_t base, char *out)
{
    size_t start = *i;
    const char *semi = memchr(raw + start, ';', n - start);
    if (!semi)
        return fail(p, XML_ERR_ENTITY, base + start, "reference without ';'"), 0;
    size_t end = (size_t)(semi - raw);
    const char *name = raw + start + 1;
    size_t name_len = end - start - 1;
    *i = end + 1;
    static const struct { const char *name; char c; } predefined[] = {
        { "lt", '<' }, { "gt", '>' }, { "amp", '&' }, { "quot", '"' }, { "apos", '\'' },
    };
    for (size_t k = 0; k < sizeof(predefined) / sizeof(predefined[0]); k++)
        if (lit_eq(name, name_len, predefined[k].name)) {
            out[0] = predefined[k].c;
            return 1;
        }
    if (name_len < 2 || name[0] != '#')
        return fail(p, XML_ERR_ENTITY, base + start, "unknown entity (only the XML 1.0 4.6 predefined ones)"), 0;
    bool hex = name[1] == 'x';
    size_t k = hex ? 2 : 1;
    if (k == name_len)
        return fail(p, XML_ERR_ENTITY, base + start, "empty character reference"), 0;
    uint32_t value = 0;
    for (; k < name_len; k++) {
        unsigned char c = (unsigned char)name[k];
        unsigned digit;
        if (c >= '0' && c <= '9') digit = c - '0';
        else if (hex && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        else if (hex && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        else return fail(p, XML_ERR_ENTITY, base + start, "bad digit in character reference"), 0;
        value = value * (hex ? 16 : 10) + digit;
        if (value > 0x10FFFF)
            return fail(p, XML_ERR_ENTITY, base + start, "character reference out of range"), 0;
    }
    if (!is_xml_char(value))
        return fail(p, XML_ERR_ENTITY, base + start, "character reference to a non-Char (XML 1.0 2.2)"), 0;
    return utf8_encode(value, out);
}

/* Decode raw[0..n) (at input offset base) into out, which has room for n
 * bytes (decoding never grows text). Line ends are normalised (XML 1.0
 * section 2.11); with `cdata` references are not interpreted; with
 * `attribute` whitespace becomes spaces (section 3.3.3). Returns the decoded
 * length or SIZE_MAX on error. */
static size_t decode(struct parser *p, const char *raw, size_t n, size_t base,
                     char *out, bool cdata, bool attribute)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        char c = raw[i];
        if (c == '\r') {
            i += (i + 1 < n && raw[i + 1] == '\n') ? 2 : 1;
            out[o++] = attribute ? ' ' : '\n';
        } else if (c == '&' && !cdata) {
            size_t got = decode_reference(p, raw, n, &i, base, out + o);
            if (!got)
                return SIZE_MAX;
            o += got;
        } else {
            out[o++] = (attribute && (c == '\t' || c == '\n')) ? ' ' : c;
            i++;
        }
    }
    return o;
}

static bool needs_decoding(const char *raw, size_t n, bool attribute)
{
    if (!attribute)
        return memchr(raw, '&', n) || memchr(raw, '\r', n);
    for (size_t i = 0; i < n; i++) {
        char c = raw[i];
        if (c == '&' || c == '\r' || (attribute && (c == '\t' || c == '\n')))
            return true;
    }
    return false;
}

/* Decoded copy (or the raw span when nothing needs decoding). */
static bool decode_value(struct parser *p, const char *raw, size_t n, size_t base,
                         bool attribute, struct xml_str *out)
{
    if (!needs_decoding(raw, n, attribute)) {
        out->ptr = raw;
        out->len = n;
        return true;
    }
    char *dst = alloc_bottom(p, n);
    if (!dst)
        return false;
    size_t got = decode(p, raw, n, base, dst, false, attribute);
    if (got == SIZE_MAX)
        return false;
    /* give back what decoding did not use */
    p->lo -= ALIGN_UP(n) - ALIGN_UP(got);
    out->ptr = dst;
    out->len = got;
    return true;
}

static bool all_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!xml_is_space((unsigned char)s[i]))
            return false;
    return true;
}

/* What scan_text saw in character data besides its end. */
#define TEXT_BRACKET 1u   /* ']': "]]>" may be there */
#define TEXT_DECODE 2u    /* '&' or CR: a reference, or a line end to normalise */

static bool text_byte(unsigned char c, unsigned *seen)
{
    if (c == '<')
        return true;
    if (c == ']')
        *seen |= TEXT_BRACKET;
    else if (c == '&' || c == '\r')
        *seen |= TEXT_DECODE;
    return false;
}

/* Character data from s: its length (up to the next '<', or n), with what
 * it holds that needs a second look in *seen. One pass, a word at a time
 * through plain text (a word holding one of the four bytes goes byte by byte). */
static size_t scan_text(const char *s, size_t n, unsigned *seen)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    *seen = 0;
    for (; p < end && ((uintptr_t)p & 3); p++)
        if (text_byte(*p, seen))
            return (size_t)(p - (const unsigned char *)s);
    while (end - p >= 4) {
        uint32_t w, lt, rb, amp, cr;
        memcpy(&w, p, 4);
        lt = w ^ 0x3C3C3C3Cu;
        rb = w ^ 0x5D5D5D5Du;
        amp = w ^ 0x26262626u;
        cr = w ^ 0x0D0D0D0Du;
        if ((((lt - 0x01010101u) & ~lt) | ((rb - 0x01010101u) & ~rb) | ((amp - 0x01010101u) & ~amp) |
             ((cr - 0x01010101u) & ~cr)) & 0x80808080u) {
            for (unsigned k = 0; k < 4; k++)
                if (text_byte(p[k], seen))
                    return (size_t)(p + k - (const unsigned char *)s);
        }
        p += 4;
    }
    for (; p < end; p++)
        if (text_byte(*p, seen))
            return (size_t)(p - (const unsigned char *)s);
    return n;
}

/* Character data or a CDATA section's content, for the open element.
 * plain: known to hold no '&' and no CR (so nothing to decode). */
static bool add_text(struct parser *p, const char *raw, size_t n, size_t base, bool cdata, bool plain)
{
    struct xml_node *e = p->cur;
    if (n == 0)
        return true;
    /* indentation between child elements is not content we keep */
    if (!cdata && e->first_child && all_space(raw, n))
        return true;
    if (e->text.len == 0 &&
        (plain || !(cdata ? memchr(raw, '\r', n) != NULL : needs_decoding(raw, n, false)))) {
        e->text.ptr = raw;
        e->text.len = n;
        return true;
    }
    /* append: grow in place when the text is the newest arena block */
    char *dst;
    const unsigned char *text_end = (const unsigned char *)e->text.ptr + e->text.len;
    bool in_arena_tail = e->text.len > 0 &&
        (const unsigned char *)e->text.ptr >= p->arena &&
        (const unsigned char *)e->text.ptr < p->arena + p->lo &&
        ALIGN_UP((size_t)(text_end - p->arena)) == p->lo;
    if (in_arena_tail) {
        size_t start = (size_t)((const unsigned char *)e->text.ptr - p->arena);
        size_t need = ALIGN_UP(start + e->text.len + n);
        if (need > p->hi)
            return fail(p, XML_ERR_ARENA, base, "arena exhausted");
        p->lo = need;
        note_use(p);
        dst = (char *)p->arena + start;
    } else {
        dst = alloc_bottom(p, e->text.len + n);
        if (!dst)
            return false;
        if (e->text.len)
            memcpy(dst, e->text.ptr, e->text.len);
    }
    size_t got = decode(p, raw, n, base, dst + e->text.len, cdata, false);
    if (got == SIZE_MAX)
        return false;
    e->text.ptr = dst;
    e->text.len += got;
    p->lo = ALIGN_UP((size_t)((unsigned char *)dst + e->text.len - p->arena));
    return true;
}

/* ---- namespaces -------------------------------------------------------- */

static const struct xml_str xml_prefix = { "xml", 3 };
static const struct xml_str xml_ns_uri = { XML_NS_XML, sizeof(XML_NS_XML) - 1 };
static const struct xml_str xmlns_ns_uri = { "http://www.w3.org/2000/xmlns/", 29 };

/* Namespaces section 3: declare prefix (empty = default) for this element. */
static bool declare(struct parser *p, struct xml_str prefix, struct xml_str uri,
                    unsigned depth, size_t offset)
{
    bool is_xml = str_eq(prefix, xml_prefix);
    if (is_xml != str_eq(uri, xml_ns_uri))
        return fail(p, XML_ERR_PREFIX, offset, "prefix xml is bound to its namespace only");
    if (lit_eq(prefix.ptr, prefix.len, "xmlns") || str_eq(uri, xmlns_ns_uri))
        return fail(p, XML_ERR_PREFIX, offset, "prefix xmlns cannot be declared");
    if (prefix.len && uri.len == 0)
        return fail(p, XML_ERR_PREFIX, offset, "empty namespace name for a prefix (Namespaces 1.0)");
    for (struct binding *b = p->bindings; b && b->depth == depth; b = b->next)
        if (str_eq(b->prefix, prefix))
            return fail(p, XML_ERR_DUPLICATE_ATTR, offset, "namespace declared twice on one element");
    struct binding *b = alloc_top(p, sizeof(*b));
    if (!b)
        return false;
    b->prefix = prefix;
    b->uri = uri;
    b->depth = depth;
    b->next = p->bindings;
    p->bindings = b;
    return true;
}

static bool resolve(struct parser *p, struct xml_str prefix, struct xml_str *uri)
{
    if (str_eq(prefix, xml_prefix)) {
        *uri = xml_ns_uri;
        return true;
    }
    for (struct binding *b = p->bindings; b; b = b->next)
        if (str_eq(b->prefix, prefix)) {
            *uri = b->uri;
            return true;
        }
    uri->ptr = "";
    uri->len = 0;
    return prefix.len == 0;   /* no default namespace: no namespace */
}

static void pop_bindings(struct parser *p, unsigned depth)
{
    while (p->bindings && p->bindings->depth >= depth) {
        p->hi += ALIGN_UP(sizeof(struct binding));
        p->bindings = p->bindings->next;
    }
}

/* ---- markup ------------------------------------------------------------ */

/* Comment (XML 1.0 section 2.5) at "<!--". */
static bool skip_comment(struct parser *p)
{
    size_t start = p->pos;
    for (size_t i = p->pos + 4; i + 1 < p->len; i++) {
        if (p->buf[i] == '-' && p->buf[i + 1] == '-') {
            if (i + 2 < p->len && p->buf[i + 2] == '>') {
                p->pos = i + 3;
                return true;
            }
            return fail(p, XML_ERR_SYNTAX, i, "'--' inside a comment (XML 1.0 2.5)");
        }
    }
    return fail(p, XML_ERR_UNTERMINATED, start, "unterminated comment");
}

/* Processing instruction (XML 1.0 section 2.6) at "<?": skipped. */
static bool skip_pi(struct parser *p)
{
    size_t start = p->pos;
    p->pos += 2;
    struct xml_str target = scan_name(p);
    if (target.len == 0)
        return fail(p, XML_ERR_SYNTAX, start, "processing instruction without a target");
    if (lit_eq_nocase(target.ptr, target.len, "xml"))
        return fail(p, XML_ERR_SYNTAX, start, "XML declaration not at the start of the document (XML 1.0 2.8)");
    if (p->pos < p->len && !xml_is_space((unsigned char)p->buf[p->pos]) && !starts_with(p, "?>"))
        return fail(p, XML_ERR_SYNTAX, p->pos, "bad processing instruction target");
    for (size_t i = p->pos; i + 1 < p->len; i++)
        if (p->buf[i] == '?' && p->buf[i + 1] == '>') {
            p->pos = i + 2;
            return true;
        }
    return fail(p, XML_ERR_UNTERMINATED, start, "unterminated processing instruction");
}

/* Quoted literal at p->pos; returns the content span. */
static bool scan_quoted(struct parser *p, struct xml_str *out, size_t *offset)
{
    if (p->pos >= p->len)
        return fail(p, XML_ERR_UNTERMINATED, p->pos, "input ends in a tag");
    char q = p->buf[p->pos];
    if (q != '"' && q != '\'')
        return fail(p, XML_ERR_SYNTAX, p->pos, "attribute value not quoted");
    const char *end = memchr(p->buf + p->pos + 1, q, p->len - p->pos - 1);
    if (!end)
        return fail(p, XML_ERR_UNTERMINATED, p->pos, "unterminated attribute value");
    *offset = p->pos + 1;
    out->ptr = p->buf + p->pos + 1;
    out->len = (size_t)(end - out->ptr);
    p->pos = (size_t)(end - p->buf) + 1;
    return true;
}

/* XML declaration (XML 1.0 section 2.8) at "<?xml ": version, encoding and
 * standalone pseudo-attributes. Only UTF-8 (and its subset US-ASCII) is read. */
static bool parse_xml_decl(struct parser *p)
{
    size_t start = p->pos;
    p->pos += 5;
    bool have_version = false;
    for (;;) {
        size_t before = p->pos;
        skip_space(p);
        if (starts_with(p, "?>")) {
            p->pos += 2;
            break;
        }
        if (p->pos >= p->len)
            return fail(p, XML_ERR_UNTERMINATED, start, "unterminated XML declaration");
        if (before == p->pos)
            return fail(p, XML_ERR_SYNTAX, p->pos, "malformed XML declaration");
        size_t name_at = p->pos;
        struct xml_str name = scan_name(p);
        skip_space(p);
        if (name.len == 0 || p->pos >= p->len || p->buf[p->pos] != '=')
            return fail(p, XML_ERR_SYNTAX, name_at, "malformed XML declaration");
        p->pos++;
        skip_space(p);
        struct xml_str value;
        size_t value_at;
        if (!scan_quoted(p, &value, &value_at))
            return false;
        if (lit_eq(name.ptr, name.len, "version")) {
            if (value.len < 3 || memcmp(value.ptr, "1.", 2) != 0)
                return fail(p, XML_ERR_SYNTAX, value_at, "XML version is not 1.x");
            have_version = true;
        } else if (lit_eq(name.ptr, name.len, "encoding")) {
            if (!lit_eq_nocase(value.ptr, value.len, "utf-8") &&
                !lit_eq_nocase(value.ptr, value.len, "utf8") &&
                !lit_eq_nocase(value.ptr, value.len, "us-ascii"))
                return fail(p, XML_ERR_ENCODING, value_at, "only UTF-8 is accepted");
        } else if (!lit_eq(name.ptr, name.len, "standalone")) {
            return fail(p, XML_ERR_SYNTAX, name_at, "unknown pseudo-attribute in XML declaration");
        }
    }
    if (!have_version)
        return fail(p, XML_ERR_SYNTAX, start, "XML declaration without version");
    return true;
}

/* Reverse a singly linked list built by prepending. */
static struct xml_node *reverse_nodes(struct xml_node *n)
{
    struct xml_node *prev = NULL;
    while (n) {
        struct xml_node *next = n->next_sibling;
        n->next_sibling = prev;
        prev = n;
        n = next;
    }
    return prev;
}

static struct xml_attr *reverse_attrs(struct xml_attr *a)
{
    struct xml_attr *prev = NULL;
    while (a) {
        struct xml_attr *next = a->next;
        a->next = prev;
        prev = a;
        a = next;
    }
    return prev;
}

static void close_element(struct parser *p, struct xml_node *e)
{
    e->first_child = reverse_nodes(e->first_child);
    pop_bindings(p, e->depth);
    p->cur = e->parent;
}

/* Start tag or empty-element tag (XML 1.0 section 3.1) at '<'. */
static bool parse_start_tag(struct parser *p)
{
    size_t start = p->pos;
    p->pos++;
    struct xml_str qname = scan_name(p);
    if (qname.len == 0)
        return fail(p, XML_ERR_SYNTAX, start, "'<' not followed by a name");
    int plen = qname_prefix_len(qname);
    if (plen < 0)
        return fail(p, XML_ERR_PREFIX, start + 1, "element name is not a QName (Namespaces 4)");
    unsigned depth = p->cur ? p->cur->depth + 1u : 1u;
    if (depth > p->max_depth)
        return fail(p, XML_ERR_DEPTH, start, "elements nested too deep");
    struct xml_node *e = alloc_bottom(p, sizeof(*e));
    if (!e)
        return false;
    memset(e, 0, sizeof(*e));
    e->depth = (uint16_t)depth;
    e->prefix_len = (uint16_t)plen;
    e->parent = p->cur;
    e->text.ptr = "";
    /* attribute qnames stay in name with the prefix length in ns.len until
     * the namespace declarations of this tag are all known */
    bool empty;
    for (;;) {
        bool had_space = p->pos < p->len && xml_is_space((unsigned char)p->buf[p->pos]);
        skip_space(p);
        if (p->pos >= p->len)
            return fail(p, XML_ERR_UNTERMINATED, start, "input ends inside a tag");
        if (p->buf[p->pos] == '>') {
            p->pos++;
            empty = false;
            break;
        }
        if (starts_with(p, "/>")) {
            p->pos += 2;
            empty = true;
            break;
        }
        size_t attr_at = p->pos;
        struct xml_str aname = scan_name(p);
        if (aname.len == 0 || !had_space)
            return fail(p, XML_ERR_SYNTAX, attr_at, "malformed attribute");
        skip_space(p);
        if (p->pos >= p->len || p->buf[p->pos] != '=')
            return fail(p, p->pos >= p->len ? XML_ERR_UNTERMINATED : XML_ERR_SYNTAX, attr_at,
                        "attribute without '='");
        p->pos++;
        skip_space(p);
        struct xml_str raw;
        size_t value_at;
        if (!scan_quoted(p, &raw, &value_at))
            return false;
        if (memchr(raw.ptr, '<', raw.len))
            return fail(p, XML_ERR_SYNTAX, value_at, "'<' in attribute value (XML 1.0 3.1)");
        struct xml_str value;
        if (!decode_value(p, raw.ptr, raw.len, value_at, true, &value))
            return false;
        if (lit_eq(aname.ptr, aname.len, "xmlns")) {
            struct xml_str none = { "", 0 };
            if (!declare(p, none, value, depth, attr_at))
                return false;
            continue;
        }
        int aplen = qname_prefix_len(aname);
        if (aplen < 0)
            return fail(p, XML_ERR_PREFIX, attr_at, "attribute name is not a QName");
        if (aplen == 5 && memcmp(aname.ptr, "xmlns", 5) == 0) {
            struct xml_str prefix = { aname.ptr + 6, aname.len - 6 };
            if (!declare(p, prefix, value, depth, attr_at))
                return false;
            continue;
        }
        struct xml_attr *a = alloc_bottom(p, sizeof(*a));
        if (!a)
            return false;
        a->name = aname;
        a->ns.ptr = NULL;
        a->ns.len = (size_t)aplen;
        a->value = value;
        a->next = e->attrs;
        e->attrs = a;
    }
    /* Namespaces section 6: resolve the element and attribute prefixes */
    struct xml_str prefix = { qname.ptr, (size_t)plen };
    if (plen && lit_eq(prefix.ptr, prefix.len, "xmlns"))
        return fail(p, XML_ERR_PREFIX, start + 1, "element with prefix xmlns");
    if (!resolve(p, prefix, &e->ns))
        return fail(p, XML_ERR_PREFIX, start + 1, "undeclared namespace prefix on element");
    e->name.ptr = qname.ptr + (plen ? plen + 1 : 0);
    e->name.len = qname.len - (plen ? (size_t)plen + 1 : 0);
    e->attrs = reverse_attrs(e->attrs);
    for (struct xml_attr *a = e->attrs; a; a = a->next) {
        size_t aplen = a->ns.len;
        if (aplen) {
            struct xml_str aprefix = { a->name.ptr, aplen };
            if (!resolve(p, aprefix, &a->ns))
                return fail(p, XML_ERR_PREFIX, (size_t)(a->name.ptr - p->buf),
                            "undeclared namespace prefix on attribute");
            a->name.ptr += aplen + 1;
            a->name.len -= aplen + 1;
        } else {
            a->ns.ptr = "";   /* Namespaces 6.2: unprefixed attributes have no namespace */
        }
    }
    for (struct xml_attr *a = e->attrs; a; a = a->next)
        for (struct xml_attr *b = a->next; b; b = b->next)
            if (str_eq(a->name, b->name) && str_eq(a->ns, b->ns))
                return fail(p, XML_ERR_DUPLICATE_ATTR, (size_t)(b->name.ptr - p->buf),
                            "attribute given twice (XML 1.0 3.1, Namespaces 6.3)");
    if (p->cur) {
        /* text seen so far was indentation if it is only whitespace */
        if (!p->cur->first_child && all_space(p->cur->text.ptr, p->cur->text.len))
            p->cur->text.len = 0;
        e->next_sibling = p->cur->first_child;
        p->cur->first_child = e;
    } else {
        p->root = e;
    }
    p->cur = e;
    if (empty)
        close_element(p, e);
    return true;
}

/* End tag (XML 1.0 section 3.1) at "</". */
static bool parse_end_tag(struct parser *p)
{
    size_t start = p->pos;
    p->pos += 2;
    struct xml_str qname = scan_name(p);
    skip_space(p);
    if (p->pos >= p->len)
        return fail(p, XML_ERR_UNTERMINATED, start, "input ends inside an end tag");
    if (qname.len == 0 || p->buf[p->pos] != '>')
        return fail(p, XML_ERR_SYNTAX, start, "malformed end tag");
    p->pos++;
    struct xml_node *e = p->cur;
    struct xml_str open = { e->name.ptr - (e->prefix_len ? e->prefix_len + 1u : 0u), 0 };
    open.len = e->name.len + (size_t)(e->name.ptr - open.ptr);
    if (!str_eq(open, qname))
        return fail(p, XML_ERR_MISMATCH, start, "end tag does not match the open element (XML 1.0 3 WFC Element Type Match)");
    close_element(p, e);
    return true;
}

static bool parse_content(struct parser *p)
{
    while (p->cur) {
        if (p->pos >= p->len)
            return fail(p, XML_ERR_UNTERMINATED, p->pos, "input ends inside an element");
        if (p->buf[p->pos] != '<') {
            size_t start = p->pos;
            unsigned seen;
            size_t end = start + scan_text(p->buf + start, p->len - start, &seen);
            if (seen & TEXT_BRACKET)
                for (const char *q = p->buf + start; (q = memchr(q, ']', (size_t)(p->buf + end - q))) != NULL; q++)
                    if (q + 2 < p->buf + end && q[1] == ']' && q[2] == '>')
                        return fail(p, XML_ERR_SYNTAX, (size_t)(q - p->buf),
                                    "']]>' in character data (XML 1.0 2.4)");
            if (!add_text(p, p->buf + start, end - start, start, false, !(seen & TEXT_DECODE)))
                return false;
            p->pos = end;
        } else if (starts_with(p, "</")) {
            if (!parse_end_tag(p))
                return false;
        } else if (starts_with(p, "<!--")) {
            if (!skip_comment(p))
                return false;
        } else if (starts_with(p, "<![CDATA[")) {
            /* XML 1.0 section 2.7 */
            size_t start = p->pos, body = p->pos + 9;
            size_t i = body;
            while (i + 2 < p->len && !(p->buf[i] == ']' && p->buf[i + 1] == ']' && p->buf[i + 2] == '>'))
                i++;
            if (i + 2 >= p->len)
                return fail(p, XML_ERR_UNTERMINATED, start, "unterminated CDATA section");
            if (!add_text(p, p->buf + body, i - body, body, true, false))
                return false;
            p->pos = i + 3;
        } else if (starts_with(p, "<?")) {
            if (!skip_pi(p))
                return false;
        } else if (starts_with(p, "<!")) {
            return fail(p, XML_ERR_SYNTAX, p->pos, "markup declaration inside an element");
        } else if (!parse_start_tag(p)) {
            return false;
        }
    }
    return true;
}

/* Misc* (XML 1.0 section 2.8) before or after the root element. */
static bool parse_misc(struct parser *p, bool before_root)
{
    for (;;) {
        skip_space(p);
        if (p->pos >= p->len)
            return before_root ? fail(p, XML_ERR_EMPTY, p->pos, "no root element") : true;
        if (starts_with(p, "<!--")) {
            if (!skip_comment(p))
                return false;
        } else if (starts_with(p, "<?")) {
            if (!skip_pi(p))
                return false;
        } else if (starts_with(p, "<!DOCTYPE")) {
            return fail(p, XML_ERR_DOCTYPE, p->pos, "DOCTYPE refused (no DTDs or entity declarations)");
        } else if (before_root && p->buf[p->pos] == '<' && p->pos + 1 < p->len &&
                   is_name_start((unsigned char)p->buf[p->pos + 1])) {
            return true;
        } else {
            return fail(p, XML_ERR_SYNTAX, p->pos,
                        before_root ? "content before the root element" : "content after the root element");
        }
    }
}

enum xml_status xml_parse(struct xml_doc *doc, const char *buf, size_t len,
                          void *arena, size_t arena_size,
                          const struct xml_limits *limits, struct xml_error *err)
{
    struct parser p;
    memset(&p, 0, sizeof(p));
    p.buf = buf;
    p.len = len;
    /* align the arena start; the rest is ours */
    uintptr_t base = (uintptr_t)arena;
    size_t skew = (size_t)(ALIGN_UP(base) - base);
    p.arena = (unsigned char *)arena + (skew < arena_size ? skew : arena_size);
    p.size = arena_size > skew ? (arena_size - skew) & ~(sizeof(union xml_align) - 1) : 0;
    p.hi = p.size;
    p.max_depth = limits && limits->max_depth ? limits->max_depth : XML_DEFAULT_MAX_DEPTH;
    if (p.max_depth > 0xFFFF)
        p.max_depth = 0xFFFF;
    doc->root = NULL;
    doc->arena_used = 0;

    size_t bad;
    if (limits && limits->max_input && len > limits->max_input) {
        fail(&p, XML_ERR_TOO_LARGE, limits->max_input, "body larger than the limit");
    } else if ((bad = check_chars((const unsigned char *)buf, len)) != len) {
        fail(&p, XML_ERR_CHAR, bad, "not a legal XML character in UTF-8 (XML 1.0 2.2)");
    } else {
        if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
            p.pos = 3;   /* byte order mark (XML 1.0 4.3.3) */
        bool ok = true;
        if (starts_with(&p, "<?xml") && p.pos + 5 < len && xml_is_space((unsigned char)buf[p.pos + 5]))
            ok = parse_xml_decl(&p);
        ok = ok && parse_misc(&p, true) && parse_start_tag(&p) && parse_content(&p) &&
             parse_misc(&p, false);
        (void)ok;
    }
    doc->arena_used = p.high_water + skew;
    if (err) {
        err->code = p.code;
        err->offset = p.code ? p.err_offset : 0;
        err->message = p.code ? p.message : "ok";
    }
    if (p.code == XML_OK)
        doc->root = p.root;
    return p.code;
}

const char *xml_status_name(enum xml_status status)
{
    static const char *const names[] = {
        "ok", "empty", "syntax", "mismatch", "unterminated", "prefix", "entity", "char",
        "duplicate-attribute", "doctype", "encoding", "depth", "arena", "too-large",
    };
    return (unsigned)status < sizeof(names) / sizeof(names[0]) ? names[status] : "?";
}
