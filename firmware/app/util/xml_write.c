/* The escaping XML writer (xml.h): into a buffer, or through a sink that
 * takes each full buffer. */
#include "util/xml.h"

#include <string.h>

void xml_writer_init(struct xml_writer *w, char *buf, size_t cap)
{
    memset(w, 0, sizeof(*w));
    w->buf = buf;
    w->cap = cap;
}

void xml_writer_init_sink(struct xml_writer *w, char *buf, size_t cap,
                          xml_sink_fn sink, void *ctx)
{
    xml_writer_init(w, buf, cap);
    w->sink = sink;
    w->sink_ctx = ctx;
}

static void w_error(struct xml_writer *w, enum xml_writer_status status)
{
    if (w->status == XMLW_OK)
        w->status = status;
}

static bool w_flush(struct xml_writer *w)
{
    if (!w->sink || w->len == 0 || w->status != XMLW_OK)
        return w->status == XMLW_OK;
    if (!w->sink(w->sink_ctx, w->buf, w->len)) {
        w_error(w, XMLW_ERR_SINK);
        return false;
    }
    w->flushed += w->len;
    w->len = 0;
    return true;
}

static void w_put(struct xml_writer *w, const char *s, size_t n)
{
    while (n && w->status == XMLW_OK) {
        size_t room = w->cap - w->len;
        if (room == 0) {
            if (!w->sink || w->cap == 0) {
                w_error(w, XMLW_ERR_OVERFLOW);
                return;
            }
            if (!w_flush(w))
                return;
            continue;
        }
        size_t k = n < room ? n : room;
        memcpy(w->buf + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

static void w_puts(struct xml_writer *w, const char *s) { w_put(w, s, strlen(s)); }

static void w_close_start_tag(struct xml_writer *w)
{
    if (w->in_start_tag) {
        w_put(w, ">", 1);
        w->in_start_tag = false;
    }
}

static void w_qname(struct xml_writer *w, const char *prefix, const char *name)
{
    if (prefix && *prefix) {
        w_puts(w, prefix);
        w_put(w, ":", 1);
    }
    w_puts(w, name);
}

/* Escape for content (XML 1.0 2.4: '<' and '&' always, '>' for "]]>") or for
 * a double-quoted attribute (3.1, and whitespace as references so 3.3.3
 * normalisation gives it back); CR always as a reference so 2.11 keeps it. */
static const char *content_ref(unsigned char c)
{
    switch (c) {
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '&': return "&amp;";
    case '\r': return "&#13;";
    default: return NULL;
    }
}

static void w_escaped(struct xml_writer *w, const char *s, size_t n, bool attribute)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *ref = content_ref(c);
        if (!ref && attribute) {
            switch (c) {
            case '"': ref = "&quot;"; break;
            case '\n': ref = "&#10;"; break;
            case '\t': ref = "&#9;"; break;
            }
        }
        if (!ref && c < 0x20 && c != '\n' && c != '\t') {
            w_error(w, XMLW_ERR_CHAR);
            return;
        }
        if (ref) {
            w_put(w, s + run, i - run);
            w_puts(w, ref);
            run = i + 1;
        }
    }
    w_put(w, s + run, n - run);
}

static bool content_special(unsigned char c)
{
    return content_ref(c) != NULL;
}

/* Non-zero when one of the word's four bytes is '<', '>', '&' or CR: each
 * test makes the matching bytes zero ('<' and '>' differ in bit 1 only) and
 * (x - 0x01..) & ~x & 0x80.. is non-zero exactly when x has a zero byte. */
static uint32_t word_has_special(uint32_t w)
{
    const uint32_t ones = 0x01010101u;
    uint32_t angle = (w | 0x02020202u) ^ 0x3E3E3E3Eu;
    uint32_t amp = w ^ 0x26262626u;
    uint32_t cr = w ^ 0x0D0D0D0Du;
    return (((angle - ones) & ~angle) | ((amp - ones) & ~amp) | ((cr - ones) & ~cr)) & 0x80808080u;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "clean_run_end reads words as little-endian"
#endif

/* The first byte of a word that word_has_special() flagged: the lowest flag
 * is exact (a borrow can only carry a false flag upwards, past a true one). */
static size_t first_flagged(uint32_t hit)
{
    if (hit & 0x80u)
        return 0;
    if (hit & 0x8000u)
        return 1;
    return hit & 0x800000u ? 2 : 3;
}

/* Where the run of bytes needing no reference that starts at s[i] ends.
 * Aligned words only: the one holding s[i] has its bytes before s[i] set
 * to 0xFF (never special), so a run after a reference costs no byte loop. */
static size_t clean_run_end(const char *s, size_t i, size_t n)
{
    const char *p = s + i, *end = s + n;
    const char *a = (const char *)((uintptr_t)p & ~(uintptr_t)3u);
    uint32_t below = 0;
    if (a < s) {
        /* that word starts before s: bytes up to the next one */
        while (p < end && ((uintptr_t)p & 3u)) {
            if (content_special((unsigned char)*p))
                return (size_t)(p - s);
            p++;
        }
        a = p;
    } else {
        below = (1u << (8u * (unsigned)(p - a))) - 1u;
    }
    while (end - a >= 4) {
        uint32_t w, hit;
        memcpy(&w, a, 4); /* aligned: one load */
        hit = word_has_special(w | below);
        if (hit)
            return (size_t)(a - s) + first_flagged(hit);
        below = 0;
        a += 4;
    }
    if (a > p)
        p = a;
    while (p < end && !content_special((unsigned char)*p))
        p++;
    return (size_t)(p - s);
}

size_t xml_escape_content(char *out, size_t room, const char *s, size_t n, size_t *written)
{
    size_t i = 0, o = 0;
    while (i < n) {
        size_t end = clean_run_end(s, i, n), run = end - i;
        const char *ref;
        size_t ref_len;
        if (run > room - o) {
            memcpy(out + o, s + i, room - o);
            i += room - o;
            o = room;
            break;
        }
        memcpy(out + o, s + i, run);
        o += run;
        i = end;
        if (i == n)
            break;
        ref = content_ref((unsigned char)s[i]);
        ref_len = strlen(ref);
        if (ref_len > room - o)
            break;
        for (size_t k = 0; k < ref_len; k++)
            out[o + k] = ref[k];
        o += ref_len;
        i++;
    }
    *written = o;
    return i;
}

void xml_write_declaration(struct xml_writer *w)
{
    w_puts(w, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
}

void xml_write_start(struct xml_writer *w, const char *prefix, const char *name)
{
    if (w->depth >= XML_WRITER_MAX_DEPTH) {
        w_error(w, XMLW_ERR_NESTING);
        return;
    }
    w_close_start_tag(w);
    w_put(w, "<", 1);
    w_qname(w, prefix, name);
    w->open_prefix[w->depth] = prefix;
    w->open_name[w->depth] = name;
    w->depth++;
    w->in_start_tag = true;
}

void xml_write_attr(struct xml_writer *w, const char *name, const char *value, size_t value_len)
{
    if (!w->in_start_tag) {
        w_error(w, XMLW_ERR_NESTING);
        return;
    }
    w_put(w, " ", 1);
    w_puts(w, name);
    w_put(w, "=\"", 2);
    w_escaped(w, value, value_len, true);
    w_put(w, "\"", 1);
}

void xml_write_xmlns(struct xml_writer *w, const char *prefix, const char *uri)
{
    if (!w->in_start_tag) {
        w_error(w, XMLW_ERR_NESTING);
        return;
    }
    w_puts(w, prefix && *prefix ? " xmlns:" : " xmlns");
    if (prefix)
        w_puts(w, prefix);
    w_put(w, "=\"", 2);
    w_escaped(w, uri, strlen(uri), true);
    w_put(w, "\"", 1);
}

void xml_write_text(struct xml_writer *w, const char *text, size_t len)
{
    if (w->depth == 0) {
        w_error(w, XMLW_ERR_NESTING);
        return;
    }
    w_close_start_tag(w);
    w_escaped(w, text, len, false);
}

void xml_write_raw(struct xml_writer *w, const char *data, size_t len)
{
    w_close_start_tag(w);
    w_put(w, data, len);
}

void xml_write_end(struct xml_writer *w)
{
    if (w->depth == 0) {
        w_error(w, XMLW_ERR_NESTING);
        return;
    }
    w->depth--;
    if (w->in_start_tag) {
        w_put(w, "/>", 2);
        w->in_start_tag = false;
        return;
    }
    w_put(w, "</", 2);
    w_qname(w, w->open_prefix[w->depth], w->open_name[w->depth]);
    w_put(w, ">", 1);
}

void xml_write_text_element(struct xml_writer *w, const char *prefix, const char *name,
                            const char *text, size_t len)
{
    xml_write_start(w, prefix, name);
    xml_write_text(w, text, len);
    xml_write_end(w);
}

enum xml_writer_status xml_writer_finish(struct xml_writer *w)
{
    if (w->depth != 0)
        w_error(w, XMLW_ERR_NESTING);
    w_flush(w);
    return w->status;
}
