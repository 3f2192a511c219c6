/* Dead properties (RFC 4918 section 4): properties the server keeps for a
 * client without knowing them, on collections and objects.
 *
 * They live in the resource's property list in the store (store.h), one
 * entry (key STORE_PROP_DEAD) each, whose value is
 *   ns_len u8, ns, name_len u8, name, lang_len u8, lang, value
 * where value is the property's content as XML that declares every
 * namespace it uses (section 4.3): its elements are written unprefixed with
 * a default namespace declaration wherever theirs changes, attributes in a
 * namespace with a prefix of their own, character data escaped. The
 * property's xml:lang (section 4.3, on it or inherited) is kept.
 *
 * What the parser (util/xml.h) does not keep is not kept: comments and
 * processing instructions, and where an element's character data stood
 * among its child elements (the text comes back before them). */
#include "dav/dav_private.h"

#include <string.h>

/* ---- the property list ------------------------------------------------- */

/* The entry at *at of list[0..len): its key and value; false at the end. */
static bool list_next(const uint8_t *list, size_t len, size_t *at, uint8_t *key, const uint8_t **v,
                      size_t *vlen)
{
    size_t n;
    if (*at + STORE_PROP_HEAD > len)
        return false;
    n = (size_t)list[*at + 1] | (size_t)list[*at + 2] << 8;
    if (*at + STORE_PROP_HEAD + n > len)
        return false;
    *key = list[*at];
    *v = list + *at + STORE_PROP_HEAD;
    *vlen = n;
    *at += STORE_PROP_HEAD + n;
    return true;
}

/* A dead property's entry value, parsed in place. */
struct dead_prop {
    const uint8_t *ns, *name, *lang, *xml;
    size_t ns_len, name_len, lang_len, xml_len;
};

static bool dead_parse(const uint8_t *v, size_t len, struct dead_prop *d)
{
    size_t at = 0;
    const uint8_t **parts[3] = {&d->ns, &d->name, &d->lang};
    size_t *lens[3] = {&d->ns_len, &d->name_len, &d->lang_len};
    unsigned i;
    for (i = 0; i < 3; i++) {
        if (at >= len || at + 1 + v[at] > len)
            return false;
        *lens[i] = v[at];
        *parts[i] = v + at + 1;
        at += 1 + v[at];
    }
    d->xml = v + at;
    d->xml_len = len - at;
    return d->name_len > 0;
}

static bool same_str(struct xml_str s, const uint8_t *p, size_t n)
{
    return s.len == n && memcmp(s.ptr, p, n) == 0;
}

/* Does the list entry (key, v) hold property n? live: the key n has as a
 * live property stored in the list, or 0 for a dead one. */
static bool entry_is(uint8_t key, const uint8_t *v, size_t vlen, const struct xml_node *n, uint8_t live)
{
    struct dead_prop d;
    if (live)
        return key == live;
    return key == STORE_PROP_DEAD && dead_parse(v, vlen, &d) && same_str(n->name, d.name, d.name_len) &&
           same_str(n->ns, d.ns, d.ns_len);
}

/* Remove the entry of property n (as entry_is) from list[0..*len), if any. */
void dav_props_remove(uint8_t *list, size_t *len, const struct xml_node *n, uint8_t live)
{
    size_t at = 0, from;
    uint8_t key;
    const uint8_t *v;
    size_t vlen;
    for (from = 0; list_next(list, *len, &at, &key, &v, &vlen); from = at) {
        if (entry_is(key, v, vlen, n, live)) {
            memmove(list + from, list + at, *len - at);
            *len -= at - from;
            return;
        }
    }
}

/* ---- a property's value as self-contained XML ---------------------------- */

/* A bounded buffer; full once something did not fit. */
struct out {
    uint8_t *p;
    size_t len, cap;
    bool full;
};

static void put(struct out *o, const void *d, size_t n)
{
    if (o->full || n > o->cap - o->len) {
        o->full = true;
        return;
    }
    memcpy(o->p + o->len, d, n);
    o->len += n;
}

static void put_str(struct out *o, const char *s) { put(o, s, strlen(s)); }

/* Character data (XML 1.0 section 2.4) or, with attr, an attribute value
 * in double quotes (section 3.1): the characters markup would take. */
static void put_escaped(struct out *o, const char *s, size_t n, bool attr)
{
    size_t i, run = 0;
    for (i = 0; i < n; i++) {
        char ch = s[i];
        const char *ref = ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '\r' ? "&#13;"
                        : attr && ch == '"' ? "&quot;" : attr && ch == '\t' ? "&#9;"
                        : attr && ch == '\n' ? "&#10;" : NULL;
        if (!ref)
            continue;
        put(o, s + run, i - run);
        put_str(o, ref);
        run = i + 1;
    }
    put(o, s + run, n - run);
}

/* An element's start tag, unprefixed in the default namespace of its own
 * namespace (declared where it differs from scope, the parent's), its
 * attributes (xml:lang and the like as xml:, others in a namespace with a
 * prefix aN declared on the element); "/>" when it is empty. */
static void put_start_tag(struct out *o, const struct xml_node *e, struct xml_str scope)
{
    unsigned prefix = 0;
    put_str(o, "<");
    put(o, e->name.ptr, e->name.len);
    if (e->ns.len != scope.len || memcmp(e->ns.ptr, scope.ptr, scope.len) != 0) {
        put_str(o, " xmlns=\"");
        put_escaped(o, e->ns.ptr, e->ns.len, true);
        put_str(o, "\"");
    }
    for (const struct xml_attr *a = e->attrs; a; a = a->next) {
        char pfx[4] = "a00";
        put_str(o, " ");
        if (xml_str_eq(a->ns, XML_NS_XML)) {
            put_str(o, "xml:");
        } else if (a->ns.len) {
            pfx[1] = (char)('0' + prefix / 10 % 10);
            pfx[2] = (char)('0' + prefix++ % 10);
            put_str(o, "xmlns:");
            put_str(o, pfx);
            put_str(o, "=\"");
            put_escaped(o, a->ns.ptr, a->ns.len, true);
            put_str(o, "\" ");
            put_str(o, pfx);
            put_str(o, ":");
        }
        put(o, a->name.ptr, a->name.len);
        put_str(o, "=\"");
        put_escaped(o, a->value.ptr, a->value.len, true);
        put_str(o, "\"");
    }
    put_str(o, e->first_child || e->text.len ? ">" : "/>");
}

static void put_end_tag(struct out *o, const struct xml_node *e)
{
    if (!e->first_child && !e->text.len)
        return; /* written as an empty-element tag */
    put_str(o, "</");
    put(o, e->name.ptr, e->name.len);
    put_str(o, ">");
}

/* The content of property p: its text, then its elements, depth first
 * without recursion. The default namespace in scope of p's content is
 * none: the property element itself is written with a prefix. */
static void put_content(struct out *o, const struct xml_node *p)
{
    static const struct xml_str none = {"", 0};
    const struct xml_node *e = p->first_child;
    put_escaped(o, p->text.ptr, p->text.len, false);
    while (e) {
        put_start_tag(o, e, e->parent == p ? none : e->parent->ns);
        put_escaped(o, e->text.ptr, e->text.len, false);
        if (e->first_child) {
            e = e->first_child;
            continue;
        }
        put_end_tag(o, e);
        while (e != p && !e->next_sibling) {
            e = e->parent;
            if (e != p)
                put_end_tag(o, e);
        }
        e = e == p ? NULL : e->next_sibling;
    }
}

/* xml:lang in scope of n (section 4.3), or none. */
static struct xml_str lang_of(const struct xml_node *n)
{
    static const struct xml_str none = {"", 0};
    for (; n; n = n->parent) {
        const struct xml_attr *a = xml_attr_find(n, XML_NS_XML, "lang");
        if (a)
            return a->value;
    }
    return none;
}

static void put_short(struct out *o, struct xml_str s)
{
    uint8_t n = (uint8_t)s.len;
    if (s.len > 255) {
        o->full = true;
        return;
    }
    put(o, &n, 1);
    put(o, s.ptr, s.len);
}

/* Append the entry of dead property p (set to its content) to
 * list[0..*len) of room cap: false when it does not fit. */
bool dav_props_add_dead(uint8_t *list, size_t *len, size_t cap, const struct xml_node *p)
{
    struct out o = {list, *len, cap, false};
    size_t vlen;
    put(&o, "\x80\0\0", STORE_PROP_HEAD);
    put_short(&o, p->ns);
    put_short(&o, p->name);
    put_short(&o, lang_of(p));
    put_content(&o, p);
    vlen = o.len - *len - STORE_PROP_HEAD;
    if (o.full || vlen > 0xFFFF)
        return false;
    list[*len] = STORE_PROP_DEAD;
    list[*len + 1] = (uint8_t)vlen;
    list[*len + 2] = (uint8_t)(vlen >> 8);
    *len = o.len;
    return true;
}

/* Append a live property kept in the list (key) with value v. */
bool dav_props_add_live(uint8_t *list, size_t *len, size_t cap, uint8_t key, struct xml_str v)
{
    if (v.len > 0xFFFF || STORE_PROP_HEAD + v.len > cap - *len)
        return false;
    list[*len] = key;
    list[*len + 1] = (uint8_t)v.len;
    list[*len + 2] = (uint8_t)(v.len >> 8);
    memcpy(list + *len + STORE_PROP_HEAD, v.ptr, v.len);
    *len += STORE_PROP_HEAD + v.len;
    return true;
}

/* ---- reading them ------------------------------------------------------- */

/* An object's name: the last segment of its path. */
static size_t object_name_off(const struct dav_resource *r)
{
    size_t i = r->path_len;
    while (i > 0 && r->path[i - 1] != '/')
        i--;
    return i;
}

int dav_props_load(struct dav_ctx *c, const struct dav_resource *r, const uint8_t **list, size_t *len)
{
    size_t off;
    *list = NULL;
    *len = 0;
    if (!r->exists)
        return STORE_ERR_NOT_FOUND;
    if (r->kind == DAV_RES_COLL)
        return store_coll_props(c->store, r->coll, list, len);
    if (r->kind != DAV_RES_OBJECT)
        return STORE_OK; /* the root and the homes keep none */
    off = object_name_off(r);
    return store_obj_props(c->store, r->coll, r->path + off, r->path_len - off, list, len);
}

void dav_write_attr_value(struct xml_writer *w, const char *s, size_t n)
{
    char buf[64];
    struct out o = {(uint8_t *)buf, 0, sizeof(buf), false};
    size_t i;
    for (i = 0; i < n; i++) {
        if (o.len + 8 > o.cap) {
            xml_write_raw(w, buf, o.len);
            o.len = 0;
        }
        put_escaped(&o, s + i, 1, true);
    }
    xml_write_raw(w, buf, o.len);
}

/* The property element: <X:name xmlns:X="ns" xml:lang="...">value</X:name>,
 * the value left out with names_only (PROPFIND propname). */
static void write_dead(struct xml_writer *w, const struct dead_prop *d, bool names_only)
{
    bool empty = names_only || !d->xml_len;
    xml_write_raw(w, d->ns_len ? "<X:" : "<", d->ns_len ? 3 : 1);
    xml_write_raw(w, (const char *)d->name, d->name_len);
    xml_write_raw(w, d->ns_len ? " xmlns:X=\"" : " xmlns=\"", d->ns_len ? 10 : 8);
    dav_write_attr_value(w, (const char *)d->ns, d->ns_len);
    xml_write_raw(w, "\"", 1);
    if (d->lang_len && !names_only) {
        xml_write_raw(w, " xml:lang=\"", 11);
        dav_write_attr_value(w, (const char *)d->lang, d->lang_len);
        xml_write_raw(w, "\"", 1);
    }
    xml_write_raw(w, empty ? "/>" : ">", empty ? 2 : 1);
    if (empty)
        return;
    xml_write_raw(w, (const char *)d->xml, d->xml_len);
    xml_write_raw(w, d->ns_len ? "</X:" : "</", d->ns_len ? 4 : 2);
    xml_write_raw(w, (const char *)d->name, d->name_len);
    xml_write_raw(w, ">", 1);
}

bool dav_dead_prop_get(struct dav_ctx *c, const struct dav_resource *r, const struct xml_node *n,
                       struct xml_writer *w)
{
    const uint8_t *list, *v;
    size_t len, at = 0, vlen;
    uint8_t key;
    struct dead_prop d;
    if (dav_props_load(c, r, &list, &len) != STORE_OK)
        return false;
    while (list_next(list, len, &at, &key, &v, &vlen)) {
        if (entry_is(key, v, vlen, n, 0) && dead_parse(v, vlen, &d)) {
            if (w)
                write_dead(w, &d, false);
            return true;
        }
    }
    return false;
}

unsigned dav_dead_props_write_all(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w,
                                  bool names_only)
{
    const uint8_t *list, *v;
    size_t len, at = 0, vlen;
    uint8_t key;
    struct dead_prop d;
    unsigned found = 0;
    if (dav_props_load(c, r, &list, &len) != STORE_OK)
        return 0;
    while (list_next(list, len, &at, &key, &v, &vlen)) {
        if (key == STORE_PROP_DEAD && dead_parse(v, vlen, &d)) {
            write_dead(w, &d, names_only);
            found++;
        }
    }
    return found;
}

bool dav_prop_may_be_dead(const struct xml_node *n)
{
    const struct dav_prop *d = dav_prop_find(n);
    return d ? d->stored != 0 : !xml_str_eq(n->ns, XML_NS_DAV);
}
