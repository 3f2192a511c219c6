/* libFuzzer target for the XML reader and writer (firmware/app/util/xml_*.c).
 *
 * For each input:
 *   - parse it with a small and with a roomy arena (limits: 16 levels, the
 *     writer's maximum); an error must carry a known code, an offset inside
 *     the input and a message, and the small arena may only add XML_ERR_ARENA;
 *   - on success, check the tree: parent links, depths, every string inside
 *     the input or the arena, names non-empty;
 *   - write the tree back out with the writer (prefixes made up per element,
 *     streamed through a sink), parse that again and require the same tree:
 *     namespaces, names, attributes, text (escaping round-trips).
 * Built with clang -fsanitize=fuzzer,address,undefined; any failed invariant
 * aborts, which libFuzzer reports as a crash with the input saved. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xml.h"

#define REQUIRE(cond) \
    do { if (!(cond)) { fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

static unsigned char arena_small[512], arena_big[65536], arena_again[65536];

static bool inside(const char *p, size_t n, const void *lo, size_t size)
{
    const char *l = lo;
    return n == 0 || (p >= l && p + n <= l + size);
}

static void check_str(struct xml_str s, const char *in, size_t len)
{
    REQUIRE(s.ptr != NULL);
    REQUIRE(inside(s.ptr, s.len, in, len) || inside(s.ptr, s.len, arena_big, sizeof(arena_big)) ||
            inside(s.ptr, s.len, arena_again, sizeof(arena_again)) || s.len == 0 ||
            xml_str_eq(s, XML_NS_XML));
}

static size_t check_tree(const struct xml_node *n, const struct xml_node *parent, unsigned depth,
                         const char *in, size_t len)
{
    size_t count = 0;
    for (; n; n = n->next_sibling) {
        count++;
        REQUIRE(n->parent == parent && n->depth == depth && depth <= 16);
        REQUIRE(n->name.len > 0 && memchr(n->name.ptr, ':', n->name.len) == NULL);
        check_str(n->name, in, len);
        check_str(n->ns, in, len);
        check_str(n->text, in, len);
        for (const struct xml_attr *a = n->attrs; a; a = a->next) {
            REQUIRE(a->name.len > 0);
            check_str(a->name, in, len);
            check_str(a->ns, in, len);
            check_str(a->value, in, len);
        }
        count += check_tree(n->first_child, n, depth + 1, in, len);
    }
    return count;
}

/* ---- writing the tree back ---------------------------------------------- */

struct growbuf {
    char *data;
    size_t len, cap;
};

static bool grow_sink(void *ctx, const char *data, size_t n)
{
    struct growbuf *g = ctx;
    if (g->len + n > g->cap) {
        size_t cap = (g->len + n) * 2 + 256;
        char *d = realloc(g->data, cap);
        REQUIRE(d != NULL);
        g->data = d;
        g->cap = cap;
    }
    memcpy(g->data + g->len, data, n);
    g->len += n;
    return true;
}

/* C strings for the writer, alive until the element is closed. */
static char *dup_str(struct xml_str s)
{
    char *d = malloc(s.len + 1);
    REQUIRE(d != NULL);
    memcpy(d, s.ptr, s.len);
    d[s.len] = '\0';
    return d;
}

static void write_node(struct xml_writer *w, const struct xml_node *n)
{
    char prefix[16];
    char *name = dup_str(n->name);
    char *uri = dup_str(n->ns);
    bool xml_ns = xml_str_eq(n->ns, XML_NS_XML);
    snprintf(prefix, sizeof(prefix), "p%u", (unsigned)n->depth);
    xml_write_start(w, xml_ns ? "xml" : n->ns.len ? prefix : NULL, name);
    /* no default namespace is ever declared: unprefixed means no namespace */
    if (n->ns.len && !xml_ns)
        xml_write_xmlns(w, prefix, uri);
    unsigned k = 0;
    for (const struct xml_attr *a = n->attrs; a; a = a->next, k++) {
        char *aname = dup_str(a->name);
        size_t qcap = a->name.len + 16;
        char *qname = malloc(qcap);
        REQUIRE(qname != NULL);
        char apfx[16];
        snprintf(apfx, sizeof(apfx), "a%u", k);
        if (xml_str_eq(a->ns, XML_NS_XML)) {
            snprintf(qname, qcap, "xml:%s", aname);
        } else if (a->ns.len) {
            char *auri = dup_str(a->ns);
            xml_write_xmlns(w, apfx, auri);
            free(auri);
            snprintf(qname, qcap, "%s:%s", apfx, aname);
        } else {
            snprintf(qname, qcap, "%s", aname);
        }
        xml_write_attr(w, qname, a->value.ptr, a->value.len);
        free(aname);
        free(qname);
    }
    xml_write_text(w, n->text.ptr, n->text.len);
    for (const struct xml_node *c = n->first_child; c; c = c->next_sibling)
        write_node(w, c);
    xml_write_end(w);
    free(name);
    free(uri);
}

static bool all_space(struct xml_str s)
{
    for (size_t i = 0; i < s.len; i++)
        if (s.ptr[i] != ' ' && s.ptr[i] != '\t' && s.ptr[i] != '\n' && s.ptr[i] != '\r')
            return false;
    return true;
}

static bool same_str(struct xml_str a, struct xml_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static void same_tree(const struct xml_node *a, const struct xml_node *b)
{
    for (; a || b; a = a->next_sibling, b = b->next_sibling) {
        REQUIRE(a && b);
        REQUIRE(same_str(a->ns, b->ns) && same_str(a->name, b->name));
        /* text written before the children: whitespace-only text then reads
         * as indentation */
        if (a->first_child && all_space(a->text))
            REQUIRE(b->text.len == 0 || same_str(a->text, b->text));
        else
            REQUIRE(same_str(a->text, b->text));
        const struct xml_attr *x = a->attrs, *y = b->attrs;
        for (; x || y; x = x->next, y = y->next) {
            REQUIRE(x && y);
            REQUIRE(same_str(x->ns, y->ns) && same_str(x->name, y->name) && same_str(x->value, y->value));
        }
        same_tree(a->first_child, b->first_child);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    struct xml_limits limits = { 0, 16 };
    struct xml_doc doc;
    struct xml_error err;

    enum xml_status small = xml_parse(&doc, in, size, arena_small, sizeof(arena_small), &limits, &err);
    REQUIRE(err.code == small && err.message != NULL && err.offset <= size);

    enum xml_status st = xml_parse(&doc, in, size, arena_big, sizeof(arena_big), &limits, &err);
    REQUIRE(err.code == st && err.message != NULL && err.offset <= size);
    REQUIRE(xml_status_name(st)[0] != '?');
    REQUIRE((st == XML_OK) == (doc.root != NULL));
    REQUIRE(small == st || small == XML_ERR_ARENA);
    if (st != XML_OK)
        return 0;
    REQUIRE(doc.arena_used <= sizeof(arena_big));
    check_tree(doc.root, NULL, 1, in, size);

    struct growbuf out = { NULL, 0, 0 };
    char stage[61];
    struct xml_writer w;
    xml_writer_init_sink(&w, stage, sizeof(stage), grow_sink, &out);
    xml_write_declaration(&w);
    write_node(&w, doc.root);
    enum xml_writer_status ws = xml_writer_finish(&w);
    REQUIRE(ws == XMLW_OK);

    struct xml_doc again;
    enum xml_status st2 = xml_parse(&again, out.data, out.len, arena_again, sizeof(arena_again), &limits, &err);
    if (st2 != XML_OK)
        fprintf(stderr, "re-parse: %s at %zu: %s\n%.*s\n", xml_status_name(st2), err.offset, err.message,
                (int)out.len, out.data);
    REQUIRE(st2 == XML_OK);
    same_tree(doc.root, again.root);
    free(out.data);
    return 0;
}
