/* Unit tests of the XML reader and writer (firmware/app/util/xml_*.c).
 *
 * Table of documents with the status and error offset expected, then
 * structural checks on real request bodies from CalDAV clients (Apple
 * Calendar, Thunderbird, DAVx5), then the writer. Every input is parsed from
 * a malloc'd copy of exactly its length so ASan catches any over-read. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/xml.h"

static unsigned char arena[16384];

static enum xml_status parse_n(struct xml_doc *doc, const char *text, size_t len,
                               size_t arena_size, struct xml_error *err)
{
    static char *copy;
    free(copy);
    copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    return xml_parse(doc, copy, len, arena, arena_size, NULL, err);
}

static enum xml_status parse(struct xml_doc *doc, const char *text, struct xml_error *err)
{
    return parse_n(doc, text, strlen(text), sizeof(arena), err);
}

static bool text_is(const struct xml_node *n, const char *lit)
{
    return n && xml_str_eq(n->text, lit);
}

/* ---- status table ------------------------------------------------------ */

struct status_case {
    const char *doc;
    enum xml_status status;
    long offset;          /* expected error offset, -1 = not checked */
};

static const struct status_case status_cases[] = {
    { "<a/>", XML_OK, -1 },
    { "<a></a>", XML_OK, -1 },
    { "  <a/>  ", XML_OK, -1 },
    { "<?xml version=\"1.0\"?><a/>", XML_OK, -1 },
    { "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a/>", XML_OK, -1 },
    { "<?xml version='1.0' encoding='utf-8' standalone='yes' ?><a/>", XML_OK, -1 },
    { "\xEF\xBB\xBF<?xml version=\"1.0\"?><a/>", XML_OK, -1 },
    { "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a/>", XML_ERR_ENCODING, 30 },
    { "<?xml version=\"1.0\" encoding=\"UTF-16\"?><a/>", XML_ERR_ENCODING, -1 },
    { "<?xml version=\"2.0\"?><a/>", XML_ERR_SYNTAX, -1 },
    { "<?xml encoding=\"utf-8\"?><a/>", XML_ERR_SYNTAX, -1 },
    { "<?xml version=\"1.0\" foo=\"x\"?><a/>", XML_ERR_SYNTAX, -1 },
    { "<?xml version=\"1.0\"", XML_ERR_UNTERMINATED, -1 },
    { " <?xml version=\"1.0\"?><a/>", XML_ERR_SYNTAX, 1 },
    { "<a/><?xml version=\"1.0\"?>", XML_ERR_SYNTAX, 4 },
    { "<!-- c --><a/><!-- d -->", XML_OK, -1 },
    { "<?pi data?><a><?other x y z?></a><?end?>", XML_OK, -1 },
    { "<a><!-- x -- y --></a>", XML_ERR_SYNTAX, 10 },
    { "<a><!-- x ---></a>", XML_ERR_SYNTAX, -1 },
    { "<a><!-- open", XML_ERR_UNTERMINATED, 3 },
    { "<a><?pi open", XML_ERR_UNTERMINATED, 3 },
    { "<a><?", XML_ERR_SYNTAX, 3 },
    { "", XML_ERR_EMPTY, 0 },
    { "   \n", XML_ERR_EMPTY, 4 },
    { "<!-- only -->", XML_ERR_EMPTY, -1 },
    { "text", XML_ERR_SYNTAX, 0 },
    { "<a/>text", XML_ERR_SYNTAX, 4 },
    { "<a/><b/>", XML_ERR_SYNTAX, 4 },
    { "<a>", XML_ERR_UNTERMINATED, 3 },
    { "<a><b></b>", XML_ERR_UNTERMINATED, -1 },
    { "<a", XML_ERR_UNTERMINATED, 0 },
    { "<a b=\"1\"", XML_ERR_UNTERMINATED, -1 },
    { "<a b=\"1", XML_ERR_UNTERMINATED, -1 },
    { "<a></a", XML_ERR_UNTERMINATED, 3 },
    { "<a></b>", XML_ERR_MISMATCH, 3 },
    { "<a><b></a></b>", XML_ERR_MISMATCH, 6 },
    { "<a></a >", XML_OK, -1 },
    { "<a></ a>", XML_ERR_SYNTAX, 3 },
    { "< a/>", XML_ERR_SYNTAX, 0 },
    { "<1a/>", XML_ERR_SYNTAX, 0 },
    { "<a b/>", XML_ERR_SYNTAX, -1 },
    { "<a b=1/>", XML_ERR_SYNTAX, -1 },
    { "<a b=\"1\"c=\"2\"/>", XML_ERR_SYNTAX, 8 },
    { "<a b=\"1\" b=\"2\"/>", XML_ERR_DUPLICATE_ATTR, 9 },
    { "<a b='x<y'/>", XML_ERR_SYNTAX, 6 },
    { "<a b='x&lt;y'/>", XML_OK, -1 },
    { "<a>&lt;&gt;&amp;&quot;&apos;</a>", XML_OK, -1 },
    { "<a>&nbsp;</a>", XML_ERR_ENTITY, 3 },
    { "<a>&amp</a>", XML_ERR_ENTITY, 3 },
    { "<a>&#0;</a>", XML_ERR_ENTITY, 3 },
    { "<a>&#x1;</a>", XML_ERR_ENTITY, -1 },
    { "<a>&#xD800;</a>", XML_ERR_ENTITY, -1 },
    { "<a>&#x110000;</a>", XML_ERR_ENTITY, -1 },
    { "<a>&#99999999999999999999;</a>", XML_ERR_ENTITY, -1 },
    { "<a>&#;</a>", XML_ERR_ENTITY, -1 },
    { "<a>&#x;</a>", XML_ERR_ENTITY, -1 },
    { "<a>&#12a;</a>", XML_ERR_ENTITY, -1 },
    { "<a>&#x10FFFF;</a>", XML_OK, -1 },
    { "<a>x]]>y</a>", XML_ERR_SYNTAX, 4 },
    { "<a><![CDATA[<x>&amp;]]></a>", XML_OK, -1 },
    { "<a><![CDATA[open</a>", XML_ERR_UNTERMINATED, 3 },
    { "<!DOCTYPE a><a/>", XML_ERR_DOCTYPE, 0 },
    { "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">]><lolz>&lol;</lolz>", XML_ERR_DOCTYPE, 22 },
    { "<a><!DOCTYPE a></a>", XML_ERR_SYNTAX, 3 },
    { "<a><!ELEMENT a ANY></a>", XML_ERR_SYNTAX, 3 },
    { "<a>\x01</a>", XML_ERR_CHAR, 3 },
    { "<a>\xC3\xA9</a>", XML_OK, -1 },
    { "<a>\xE2\x82\xAC \xF0\x9F\x93\x85</a>", XML_OK, -1 },
    { "<a>\xC3</a>", XML_ERR_CHAR, 3 },
    { "<a>\xC0\xAF</a>", XML_ERR_CHAR, 3 },
    { "<a>\xED\xA0\x80</a>", XML_ERR_CHAR, 3 },
    { "<a>\xEF\xBF\xBF</a>", XML_ERR_CHAR, 3 },
    { "<a>\xF4\x90\x80\x80</a>", XML_ERR_CHAR, 3 },
    { "<a>\xFF</a>", XML_ERR_CHAR, 3 },
    { "<\xC3\xA9t\xC3\xA9/>", XML_OK, -1 },
    /* namespaces */
    { "<D:a xmlns:D=\"DAV:\"/>", XML_OK, -1 },
    { "<D:a/>", XML_ERR_PREFIX, 1 },
    { "<a xmlns:D=\"DAV:\"><D:b/></a><!-- -->", XML_OK, -1 },
    { "<a><b xmlns:D=\"DAV:\"/><D:c/></a>", XML_ERR_PREFIX, 23 },
    { "<a xmlns:D=\"DAV:\" D:x=\"1\"/>", XML_OK, -1 },
    { "<a D:x=\"1\"/>", XML_ERR_PREFIX, 3 },
    { "<a xmlns:D=\"DAV:\" xmlns:E=\"DAV:\" D:x=\"1\" E:x=\"2\"/>", XML_ERR_DUPLICATE_ATTR, -1 },
    { "<a xmlns:D=\"DAV:\" D:x=\"1\" x=\"2\"/>", XML_OK, -1 },
    { "<a xmlns:D=\"DAV:\" xmlns:D=\"x:\"/>", XML_ERR_DUPLICATE_ATTR, -1 },
    { "<a xmlns=\"DAV:\" xmlns=\"x:\"/>", XML_ERR_DUPLICATE_ATTR, -1 },
    { "<a xmlns:D=\"\"/>", XML_ERR_PREFIX, -1 },
    { "<a xmlns=\"\"/>", XML_OK, -1 },
    { "<a:b:c xmlns:a=\"x:\"/>", XML_ERR_PREFIX, -1 },
    { "<:a/>", XML_ERR_PREFIX, -1 },
    { "<a: xmlns:a=\"x:\"/>", XML_ERR_PREFIX, -1 },
    { "<xmlns:a/>", XML_ERR_PREFIX, -1 },
    { "<a xml:lang=\"en\"/>", XML_OK, -1 },
    { "<a xmlns:xml=\"http://www.w3.org/XML/1998/namespace\"/>", XML_OK, -1 },
    { "<a xmlns:xml=\"urn:other\"/>", XML_ERR_PREFIX, -1 },
    { "<a xmlns:x=\"http://www.w3.org/XML/1998/namespace\"/>", XML_ERR_PREFIX, -1 },
    { "<a xmlns:xmlns=\"urn:x\"/>", XML_ERR_PREFIX, -1 },
    { "<a xmlns:D=\"DAV:\"></D:a>", XML_ERR_MISMATCH, -1 },
    { "<D:a xmlns:D=\"DAV:\"></D:a>", XML_OK, -1 },
    { "<D:a xmlns:D=\"DAV:\"></E:a>", XML_ERR_MISMATCH, -1 },
};

static void test_status_table(void)
{
    for (size_t i = 0; i < sizeof(status_cases) / sizeof(status_cases[0]); i++) {
        const struct status_case *c = &status_cases[i];
        struct xml_doc doc;
        struct xml_error err;
        enum xml_status got = parse(&doc, c->doc, &err);
        CHECKF(got == c->status, "case %zu %s: got %s (%s at %zu), want %s", i, c->doc,
               xml_status_name(got), err.message, err.offset, xml_status_name(c->status));
        CHECKF(err.code == got, "case %zu: err.code", i);
        CHECKF((got == XML_OK) == (doc.root != NULL), "case %zu: root iff ok", i);
        if (c->offset >= 0)
            CHECKF(err.offset == (size_t)c->offset, "case %zu %s: offset %zu, want %ld (%s)",
                   i, c->doc, err.offset, c->offset, err.message);
        CHECKF(err.message && *err.message, "case %zu: message", i);
        /* a good document cut before its root element ends is an error:
         * the root ends at its last "/>" or "</" (none of the cases has
         * such text in a trailing comment) */
        if (got == XML_OK) {
            size_t n = strlen(c->doc), root_end = 0;
            for (size_t j = 0; j + 1 < n; j++)
                if ((c->doc[j] == '/' && c->doc[j + 1] == '>') || (c->doc[j] == '<' && c->doc[j + 1] == '/'))
                    root_end = j + 1;
            for (size_t k = 0; k <= root_end; k++) {
                enum xml_status sub = parse_n(&doc, c->doc, k, sizeof(arena), &err);
                CHECKF(sub != XML_OK, "case %zu prefix %zu parsed", i, k);
            }
        }
    }
}

/* ---- decoding and tree shape -------------------------------------------- */

static void test_text_and_entities(void)
{
    struct xml_doc doc;
    struct xml_error err;

    CHECK(parse(&doc, "<a>&lt;&gt;&amp;&quot;&apos;</a>", &err) == XML_OK);
    CHECK(text_is(doc.root, "<>&\"'"));

    CHECK(parse(&doc, "<a>caf&#233; &#x20AC;&#128197;&#x41;</a>", &err) == XML_OK);
    CHECK(text_is(doc.root, "caf\xC3\xA9 \xE2\x82\xAC\xF0\x9F\x93\x85" "A"));

    CHECK(parse(&doc, "<a>plain text</a>", &err) == XML_OK);
    CHECK(text_is(doc.root, "plain text"));

    CHECK(parse(&doc, "<a>one\r\ntwo\rthree\n</a>", &err) == XML_OK);
    CHECKF(text_is(doc.root, "one\ntwo\nthree\n"), "got %.*s", (int)doc.root->text.len, doc.root->text.ptr);

    CHECK(parse(&doc, "<a>x<![CDATA[<b>&amp;</b>]]>y<!-- c -->z&#13;</a>", &err) == XML_OK);
    CHECK(text_is(doc.root, "x<b>&amp;</b>yz\r"));

    CHECK(parse(&doc, "<a><![CDATA[]]></a>", &err) == XML_OK);
    CHECK(text_is(doc.root, ""));

    CHECK(parse(&doc, "<a> </a>", &err) == XML_OK);
    CHECK(text_is(doc.root, " "));

    /* indentation around children is dropped, real text is kept */
    CHECK(parse(&doc, "<a>\n  <b>x</b>\n  <c/>\n</a>", &err) == XML_OK);
    CHECK(text_is(doc.root, ""));
    CHECK(parse(&doc, "<a>head<b/>tail</a>", &err) == XML_OK);
    CHECK(text_is(doc.root, "headtail"));
    CHECK(parse(&doc, "<a>  <b/>tail &amp; more<c/>!</a>", &err) == XML_OK);
    CHECK(text_is(doc.root, "tail & more!"));

    /* attribute value normalisation, XML 1.0 3.3.3 */
    CHECK(parse(&doc, "<a v=\"x\ty\r\nz&#10;w&amp;\" w='\"'/>", &err) == XML_OK);
    const struct xml_attr *v = xml_attr_find(doc.root, NULL, "v");
    CHECK(v && xml_str_eq(v->value, "x y z\nw&"));
    const struct xml_attr *w = xml_attr_find(doc.root, "", "w");
    CHECK(w && xml_str_eq(w->value, "\""));
    CHECK(xml_attr_find(doc.root, NULL, "zz") == NULL);

    /* trimmed text for hrefs */
    CHECK(parse(&doc, "<href>\n   /cal/a.ics \t</href>", &err) == XML_OK);
    CHECK(xml_str_eq(xml_text_trimmed(doc.root), "/cal/a.ics"));
    CHECK(parse(&doc, "<href>   </href>", &err) == XML_OK);
    CHECK(xml_text_trimmed(doc.root).len == 0);
}

static void test_namespaces(void)
{
    struct xml_doc doc;
    struct xml_error err;
    const char *body =
        "<x:root xmlns:x=\"urn:x\" xmlns=\"urn:default\" xmlns:y=\"urn:y\">"
        "<plain a=\"1\" y:b=\"2\"/>"
        "<y:inner xmlns:y=\"urn:y2\"><y:deep/></y:inner>"
        "<y:after/>"
        "<none xmlns=\"\"><z xmlns=\"urn:z\"/><n/></none>"
        "<x:plain/>"
        "<q xmlns:u=\"urn:amp&amp;\"><u:r/></q>"
        "</x:root>";
    CHECK(parse(&doc, body, &err) == XML_OK);
    struct xml_node *root = doc.root;
    CHECK(xml_is(root, "urn:x", "root") && root->prefix_len == 1 && root->depth == 1);
    struct xml_node *plain = xml_child(root, "urn:default", "plain");
    CHECK(plain != NULL);
    CHECK(xml_attr_find(plain, NULL, "a") && xml_attr_find(plain, "urn:y", "b"));
    CHECK(xml_attr_find(plain, "urn:default", "a") == NULL);
    struct xml_node *inner = xml_child(root, "urn:y2", "inner");
    CHECK(inner && xml_child(inner, "urn:y2", "deep") && inner->first_child->depth == 3);
    CHECK(xml_child(root, "urn:y", "after") != NULL);
    struct xml_node *none = xml_child(root, "", "none");
    CHECK(none && xml_child(none, "urn:z", "z") && xml_child(none, "", "n"));
    CHECK(xml_child(root, "urn:x", "plain") != NULL);
    CHECK(xml_count(root, "urn:default", "plain") == 1);
    CHECK(xml_count(root, NULL, "plain") == 2);
    CHECK(xml_count(root, NULL, NULL) == 6);
    struct xml_node *q = xml_child(root, NULL, "q");
    CHECK(q && xml_child(q, "urn:amp&", "r"));
    /* sibling order is document order, parents point back */
    const char *order[] = { "plain", "inner", "after", "none", "plain", "q" };
    size_t k = 0;
    XML_FOR_EACH_CHILD(c, root) {
        CHECK(k < 6 && xml_str_eq(c->name, order[k]));
        CHECK(c->parent == root);
        k++;
    }
    CHECK(k == 6);
    /* xml: prefix is predefined (Namespaces 3) */
    CHECK(parse(&doc, "<a xml:lang=\"de\"/>", &err) == XML_OK);
    CHECK(xml_attr_find(doc.root, XML_NS_XML, "lang") != NULL);
    /* attribute order kept */
    CHECK(parse(&doc, "<a z=\"1\" y=\"2\" x=\"3\"/>", &err) == XML_OK);
    CHECK(xml_str_eq(doc.root->attrs->name, "z") && xml_str_eq(doc.root->attrs->next->next->name, "x"));
}

static void test_limits(void)
{
    struct xml_doc doc;
    struct xml_error err;
    char deep[2048];
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)sprintf(deep + n, "<e>");
    for (int i = 0; i < 40; i++)
        n += (size_t)sprintf(deep + n, "</e>");
    CHECK(parse_n(&doc, deep, n, sizeof(arena), &err) == XML_ERR_DEPTH);
    CHECK(err.offset == 32 * 3);
    struct xml_limits lim = { 0, 64 };
    CHECK(xml_parse(&doc, deep, n, arena, sizeof(arena), &lim, &err) == XML_OK);
    lim.max_depth = 40;
    CHECK(xml_parse(&doc, deep, n, arena, sizeof(arena), &lim, &err) == XML_OK);
    lim.max_depth = 39;
    CHECK(xml_parse(&doc, deep, n, arena, sizeof(arena), &lim, &err) == XML_ERR_DEPTH);
    lim.max_depth = 0;
    lim.max_input = 10;
    CHECK(xml_parse(&doc, deep, n, arena, sizeof(arena), &lim, &err) == XML_ERR_TOO_LARGE);
    lim.max_input = n;
    lim.max_depth = 64;
    CHECK(xml_parse(&doc, deep, n, arena, sizeof(arena), &lim, &err) == XML_OK);

    /* arena: find the smallest that works; every smaller one fails cleanly */
    const char *body = "<D:propfind xmlns:D=\"DAV:\"><D:prop><D:getetag/>"
                       "<D:displayname a=\"x&amp;y\">t&amp;t</D:displayname></D:prop></D:propfind>";
    CHECK(parse(&doc, body, &err) == XML_OK);
    size_t need = doc.arena_used;
    CHECK(need > 0 && need < 1024);
    for (size_t size = 0; size < need; size++) {
        enum xml_status st = parse_n(&doc, body, strlen(body), size, &err);
        CHECKF(st == XML_ERR_ARENA, "arena %zu of %zu: %s", size, need, xml_status_name(st));
    }
    CHECK(parse_n(&doc, body, strlen(body), need, &err) == XML_OK);
    /* an unaligned arena works too */
    CHECK(xml_parse(&doc, body, strlen(body), arena + 1, need + 16, NULL, &err) == XML_OK);
    CHECK(xml_is(xml_child(xml_child(doc.root, XML_NS_DAV, "prop"), XML_NS_DAV, "displayname"),
                 XML_NS_DAV, "displayname"));
}

/* ---- real client bodies ------------------------------------------------- */

/* Apple Calendar (macOS) PROPFIND on the calendar home. */
static const char apple_propfind[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<A:propfind xmlns:A=\"DAV:\">\n"
    "  <A:prop>\n"
    "    <A:add-member/>\n"
    "    <C:allowed-sharing-modes xmlns:C=\"http://calendarserver.org/ns/\"/>\n"
    "    <D:autoprovisioned xmlns:D=\"http://apple.com/ns/ical/\"/>\n"
    "    <E:bulk-requests xmlns:E=\"http://me.com/_namespace/\"/>\n"
    "    <D:calendar-color xmlns:D=\"http://apple.com/ns/ical/\"/>\n"
    "    <B:calendar-description xmlns:B=\"urn:ietf:params:xml:ns:caldav\"/>\n"
    "    <B:calendar-free-busy-set xmlns:B=\"urn:ietf:params:xml:ns:caldav\"/>\n"
    "    <D:calendar-order xmlns:D=\"http://apple.com/ns/ical/\"/>\n"
    "    <B:calendar-timezone xmlns:B=\"urn:ietf:params:xml:ns:caldav\"/>\n"
    "    <A:current-user-privilege-set/>\n"
    "    <B:default-alarm-vevent-date xmlns:B=\"urn:ietf:params:xml:ns:caldav\"/>\n"
    "    <C:getctag xmlns:C=\"http://calendarserver.org/ns/\"/>\n"
    "    <A:owner/>\n"
    "    <A:resourcetype/>\n"
    "    <B:supported-calendar-component-set xmlns:B=\"urn:ietf:params:xml:ns:caldav\"/>\n"
    "    <A:sync-token/>\n"
    "  </A:prop>\n"
    "</A:propfind>\n";

/* Thunderbird (Lightning) PROPFIND on a calendar collection. */
static const char thunderbird_propfind[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<D:propfind xmlns:D=\"DAV:\" xmlns:CS=\"http://calendarserver.org/ns/\" "
    "xmlns:C=\"urn:ietf:params:xml:ns:caldav\"><D:prop><D:resourcetype/><D:owner/>"
    "<D:current-user-principal/><D:current-user-privilege-set/>"
    "<D:supported-report-set/><C:supported-calendar-component-set/><CS:getctag/>"
    "</D:prop></D:propfind>";

/* DAVx5 (Android) PROPFIND, default namespace style. */
static const char davx5_propfind[] =
    "<?xml version='1.0' encoding='UTF-8' ?><propfind xmlns=\"DAV:\" "
    "xmlns:CAL=\"urn:ietf:params:xml:ns:caldav\" xmlns:CARD=\"urn:ietf:params:xml:ns:carddav\">"
    "<prop><current-user-principal /><CAL:calendar-home-set /><CARD:addressbook-home-set />"
    "<displayname /></prop></propfind>";

/* calendar-query REPORT with a time-range (RFC 4791 7.8). */
static const char calendar_query[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\" ?>\r\n"
    "<C:calendar-query xmlns:D=\"DAV:\"\r\n"
    "                  xmlns:C=\"urn:ietf:params:xml:ns:caldav\">\r\n"
    "  <D:prop>\r\n"
    "    <D:getetag/>\r\n"
    "    <C:calendar-data>\r\n"
    "      <C:comp name=\"VCALENDAR\">\r\n"
    "        <C:prop name=\"VERSION\"/>\r\n"
    "        <C:comp name=\"VEVENT\">\r\n"
    "          <C:prop name=\"SUMMARY\"/>\r\n"
    "          <C:prop name=\"UID\"/>\r\n"
    "        </C:comp>\r\n"
    "      </C:comp>\r\n"
    "    </C:calendar-data>\r\n"
    "  </D:prop>\r\n"
    "  <C:filter>\r\n"
    "    <C:comp-filter name=\"VCALENDAR\">\r\n"
    "      <C:comp-filter name=\"VEVENT\">\r\n"
    "        <C:time-range start=\"20060104T000000Z\"\r\n"
    "                      end=\"20060105T000000Z\"/>\r\n"
    "      </C:comp-filter>\r\n"
    "    </C:comp-filter>\r\n"
    "  </C:filter>\r\n"
    "</C:calendar-query>\r\n";

/* sync-collection REPORT (RFC 6578 3.2) as DAVx5 sends it. */
static const char sync_collection[] =
    "<?xml version='1.0' encoding='UTF-8' ?><sync-collection xmlns=\"DAV:\">"
    "<sync-token>http://litedav.local/sync/1234</sync-token><sync-level>1</sync-level>"
    "<prop><getcontenttype /><getetag /></prop></sync-collection>";

/* calendar-multiget with hrefs and a CDATA-wrapped timezone in MKCALENDAR style. */
static const char multiget[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n"
    "<C:calendar-multiget xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:caldav\">\n"
    "  <D:prop><D:getetag/><C:calendar-data/></D:prop>\n"
    "  <D:href>/bernard/work/abcd1.ics</D:href>\n"
    "  <D:href>/bernard/work/mtg%201.ics</D:href>\n"
    "  <D:href>/bernard/work/a&amp;b.ics</D:href>\n"
    "</C:calendar-multiget>\n";

static const char mkcalendar[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n"
    "<C:mkcalendar xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:caldav\">\n"
    " <D:set><D:prop>\n"
    "  <D:displayname>Lisa's Events</D:displayname>\n"
    "  <C:calendar-description xml:lang=\"en\">Calendar restricted to events.</C:calendar-description>\n"
    "  <C:supported-calendar-component-set><C:comp name=\"VEVENT\"/></C:supported-calendar-component-set>\n"
    "  <C:calendar-timezone><![CDATA[BEGIN:VCALENDAR\r\nPRODID:-//Example Corp.//CalDAV Client//EN\r\n"
    "VERSION:2.0\r\nEND:VCALENDAR\r\n]]></C:calendar-timezone>\n"
    " </D:prop></D:set>\n"
    "</C:mkcalendar>\n";

/* PROPPATCH from Apple Calendar with an apple colour and an encoded order. */
static const char proppatch[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<A:propertyupdate xmlns:A=\"DAV:\"><A:set><A:prop>"
    "<B:calendar-color xmlns:B=\"http://apple.com/ns/ical/\" symbolic-color=\"custom\">#FF2968FF</B:calendar-color>"
    "<B:calendar-order xmlns:B=\"http://apple.com/ns/ical/\">3</B:calendar-order>"
    "</A:prop></A:set><A:remove><A:prop><A:displayname/></A:prop></A:remove></A:propertyupdate>";

static void test_client_bodies(void)
{
    struct xml_doc doc;
    struct xml_error err;

    CHECK(parse(&doc, apple_propfind, &err) == XML_OK);
    CHECK(xml_is(doc.root, XML_NS_DAV, "propfind"));
    struct xml_node *prop = xml_child(doc.root, XML_NS_DAV, "prop");
    CHECK(prop && xml_count(prop, NULL, NULL) == 16);
    CHECK(xml_child(prop, XML_NS_CALSERVER, "getctag"));
    CHECK(xml_child(prop, XML_NS_APPLE_ICAL, "calendar-color"));
    CHECK(xml_count(prop, XML_NS_CALDAV, NULL) == 5);
    CHECK(xml_child(prop, "http://me.com/_namespace/", "bulk-requests"));
    CHECK(xml_child(prop, XML_NS_DAV, "sync-token"));
    CHECK(xml_child(prop, XML_NS_CALDAV, "sync-token") == NULL);
    CHECK(doc.arena_used < 2048);

    CHECK(parse(&doc, thunderbird_propfind, &err) == XML_OK);
    prop = xml_child(doc.root, XML_NS_DAV, "prop");
    CHECK(xml_count(prop, XML_NS_DAV, NULL) == 5 && xml_child(prop, XML_NS_CALSERVER, "getctag"));
    CHECK(xml_child(prop, XML_NS_CALDAV, "supported-calendar-component-set"));

    CHECK(parse(&doc, davx5_propfind, &err) == XML_OK);
    CHECK(xml_is(doc.root, XML_NS_DAV, "propfind"));
    prop = xml_child(doc.root, XML_NS_DAV, "prop");
    CHECK(xml_child(prop, XML_NS_DAV, "displayname") && xml_child(prop, XML_NS_CALDAV, "calendar-home-set"));
    CHECK(xml_child(prop, "urn:ietf:params:xml:ns:carddav", "addressbook-home-set"));

    CHECK(parse(&doc, calendar_query, &err) == XML_OK);
    CHECK(xml_is(doc.root, XML_NS_CALDAV, "calendar-query"));
    struct xml_node *f = xml_child(doc.root, XML_NS_CALDAV, "filter");
    struct xml_node *cf = xml_child(f, XML_NS_CALDAV, "comp-filter");
    CHECK(cf && xml_str_eq(xml_attr_find(cf, NULL, "name")->value, "VCALENDAR"));
    struct xml_node *ev = xml_child(cf, XML_NS_CALDAV, "comp-filter");
    CHECK(ev && xml_str_eq(xml_attr_find(ev, NULL, "name")->value, "VEVENT"));
    struct xml_node *tr = xml_child(ev, XML_NS_CALDAV, "time-range");
    CHECK(tr && xml_str_eq(xml_attr_find(tr, NULL, "start")->value, "20060104T000000Z"));
    CHECK(tr && xml_str_eq(xml_attr_find(tr, NULL, "end")->value, "20060105T000000Z"));
    struct xml_node *cd = xml_child(xml_child(doc.root, XML_NS_DAV, "prop"), XML_NS_CALDAV, "calendar-data");
    CHECK(cd && xml_count(xml_child(cd, XML_NS_CALDAV, "comp"), XML_NS_CALDAV, "prop") == 1);

    CHECK(parse(&doc, sync_collection, &err) == XML_OK);
    CHECK(xml_is(doc.root, XML_NS_DAV, "sync-collection"));
    CHECK(text_is(xml_child(doc.root, XML_NS_DAV, "sync-token"), "http://litedav.local/sync/1234"));
    CHECK(text_is(xml_child(doc.root, XML_NS_DAV, "sync-level"), "1"));
    CHECK(xml_count(xml_child(doc.root, XML_NS_DAV, "prop"), XML_NS_DAV, NULL) == 2);

    CHECK(parse(&doc, multiget, &err) == XML_OK);
    CHECK(xml_count(doc.root, XML_NS_DAV, "href") == 3);
    struct xml_node *href = xml_child(doc.root, XML_NS_DAV, "href");
    CHECK(text_is(href, "/bernard/work/abcd1.ics"));
    href = xml_next(xml_next(href, XML_NS_DAV, "href"), XML_NS_DAV, "href");
    CHECK(text_is(href, "/bernard/work/a&b.ics"));
    CHECK(xml_next(href, XML_NS_DAV, "href") == NULL);

    CHECK(parse(&doc, mkcalendar, &err) == XML_OK);
    prop = xml_child(xml_child(doc.root, XML_NS_DAV, "set"), XML_NS_DAV, "prop");
    CHECK(text_is(xml_child(prop, XML_NS_DAV, "displayname"), "Lisa's Events"));
    struct xml_node *desc = xml_child(prop, XML_NS_CALDAV, "calendar-description");
    CHECK(desc && xml_attr_find(desc, XML_NS_XML, "lang"));
    /* CDATA keeps CRLF only through XML 2.11 normalisation: CR LF -> LF */
    CHECK(text_is(xml_child(prop, XML_NS_CALDAV, "calendar-timezone"),
                  "BEGIN:VCALENDAR\nPRODID:-//Example Corp.//CalDAV Client//EN\nVERSION:2.0\nEND:VCALENDAR\n"));

    CHECK(parse(&doc, proppatch, &err) == XML_OK);
    struct xml_node *color = xml_child(xml_child(xml_child(doc.root, XML_NS_DAV, "set"), XML_NS_DAV, "prop"),
                                       XML_NS_APPLE_ICAL, "calendar-color");
    CHECK(text_is(color, "#FF2968FF") && xml_attr_find(color, NULL, "symbolic-color"));
    CHECK(xml_child(xml_child(xml_child(doc.root, XML_NS_DAV, "remove"), XML_NS_DAV, "prop"),
                    XML_NS_DAV, "displayname"));
}

/* ---- writer ------------------------------------------------------------ */

struct collect {
    char data[4096];
    size_t len;
    int calls;
    int fail_after;      /* refuse the call with this number (1-based); 0 never */
};

static bool collect_sink(void *ctx, const char *data, size_t len)
{
    struct collect *c = ctx;
    c->calls++;
    if (c->fail_after && c->calls >= c->fail_after)
        return false;
    if (len > sizeof(c->data) - c->len)
        return false;
    memcpy(c->data + c->len, data, len);
    c->len += len;
    return true;
}

static void write_multistatus(struct xml_writer *w)
{
    xml_write_declaration(w);
    xml_write_start(w, "D", "multistatus");
    xml_write_xmlns(w, "D", XML_NS_DAV);
    xml_write_xmlns(w, "C", XML_NS_CALDAV);
    xml_write_start(w, "D", "response");
    xml_write_text_element(w, "D", "href", "/cal/a&b <1>.ics", 16);
    xml_write_start(w, "D", "propstat");
    xml_write_start(w, "D", "prop");
    xml_write_text_element(w, "D", "getetag", "\"abc\"", 5);
    xml_write_text_element(w, "C", "calendar-data", "BEGIN:VCALENDAR\r\nX:]]>\r\n", 24);
    xml_write_start(w, "D", "resourcetype");
    xml_write_end(w);
    xml_write_end(w);
    xml_write_text_element(w, "D", "status", "HTTP/1.1 200 OK", 15);
    xml_write_end(w);
    xml_write_end(w);
    xml_write_start(w, NULL, "x");
    xml_write_attr(w, "v", "a\"b<c>&\td\ne\rf'", 14);
    xml_write_end(w);
    xml_write_end(w);
}

static const char expected_multistatus[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<D:multistatus xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:caldav\">"
    "<D:response><D:href>/cal/a&amp;b &lt;1&gt;.ics</D:href><D:propstat><D:prop>"
    "<D:getetag>\"abc\"</D:getetag>"
    "<C:calendar-data>BEGIN:VCALENDAR&#13;\nX:]]&gt;&#13;\n</C:calendar-data>"
    "<D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    "<x v=\"a&quot;b&lt;c&gt;&amp;&#9;d&#10;e&#13;f'\"/>"
    "</D:multistatus>";

static void test_writer(void)
{
    char out[2048];
    struct xml_writer w;
    xml_writer_init(&w, out, sizeof(out));
    write_multistatus(&w);
    CHECK(xml_writer_finish(&w) == XMLW_OK);
    CHECKF(w.len == strlen(expected_multistatus) && memcmp(out, expected_multistatus, w.len) == 0,
           "got %.*s", (int)w.len, out);

    /* what the writer writes, the reader reads back with the same text */
    struct xml_doc doc;
    struct xml_error err;
    CHECK(parse_n(&doc, out, w.len, sizeof(arena), &err) == XML_OK);
    struct xml_node *resp = xml_child(doc.root, XML_NS_DAV, "response");
    CHECK(text_is(xml_child(resp, XML_NS_DAV, "href"), "/cal/a&b <1>.ics"));
    struct xml_node *prop = xml_child(xml_child(resp, XML_NS_DAV, "propstat"), XML_NS_DAV, "prop");
    CHECK(text_is(xml_child(prop, XML_NS_CALDAV, "calendar-data"), "BEGIN:VCALENDAR\r\nX:]]>\r\n"));
    const struct xml_attr *v = xml_attr_find(xml_child(doc.root, "", "x"), NULL, "v");
    CHECK(v && xml_str_eq(v->value, "a\"b<c>&\td\ne\rf'"));

    /* overflow at every size: clean error, never past the buffer */
    size_t full = strlen(expected_multistatus);
    for (size_t cap = 0; cap < full; cap++) {
        char *small = malloc(cap ? cap : 1);
        xml_writer_init(&w, small, cap);
        write_multistatus(&w);
        CHECKF(xml_writer_finish(&w) == XMLW_ERR_OVERFLOW, "cap %zu", cap);
        CHECK(w.len <= cap && memcmp(small, expected_multistatus, w.len) == 0);
        free(small);
    }

    /* streaming through a sink with a tiny staging buffer gives the same bytes */
    for (size_t cap = 1; cap <= 64; cap *= 2) {
        struct collect c = { .len = 0 };
        char stage[64];
        xml_writer_init_sink(&w, stage, cap, collect_sink, &c);
        write_multistatus(&w);
        CHECK(xml_writer_finish(&w) == XMLW_OK);
        CHECK(c.len == full && memcmp(c.data, expected_multistatus, full) == 0);
        CHECK(w.flushed == full && c.calls >= (int)(full / cap));
    }
    /* a sink that gives up stops the writer */
    struct collect c = { .fail_after = 3 };
    char stage[16];
    xml_writer_init_sink(&w, stage, sizeof(stage), collect_sink, &c);
    write_multistatus(&w);
    CHECK(xml_writer_finish(&w) == XMLW_ERR_SINK);
    CHECK(c.calls == 3 && c.len == 32);

    /* nesting errors */
    xml_writer_init(&w, out, sizeof(out));
    xml_write_end(&w);
    CHECK(xml_writer_finish(&w) == XMLW_ERR_NESTING);
    xml_writer_init(&w, out, sizeof(out));
    xml_write_start(&w, "D", "a");
    CHECK(xml_writer_finish(&w) == XMLW_ERR_NESTING);
    xml_writer_init(&w, out, sizeof(out));
    xml_write_text(&w, "x", 1);
    CHECK(xml_writer_finish(&w) == XMLW_ERR_NESTING);
    xml_writer_init(&w, out, sizeof(out));
    xml_write_start(&w, NULL, "a");
    xml_write_text(&w, "x", 1);
    xml_write_attr(&w, "late", "1", 1);
    xml_write_end(&w);
    CHECK(xml_writer_finish(&w) == XMLW_ERR_NESTING);
    xml_writer_init(&w, out, sizeof(out));
    for (int i = 0; i <= XML_WRITER_MAX_DEPTH; i++)
        xml_write_start(&w, NULL, "a");
    CHECK(w.status == XMLW_ERR_NESTING);
    /* a control character cannot be carried by XML 1.0 */
    xml_writer_init(&w, out, sizeof(out));
    xml_write_text_element(&w, NULL, "a", "bell\a", 5);
    CHECK(xml_writer_finish(&w) == XMLW_ERR_CHAR);
    /* empty text still gives a start and end tag */
    xml_writer_init(&w, out, sizeof(out));
    xml_write_text_element(&w, "D", "a", "", 0);
    CHECK(xml_writer_finish(&w) == XMLW_OK && w.len == 11 && memcmp(out, "<D:a></D:a>", 11) == 0);
}

/* ---- content escaper (calendar-data) ---------------------------------- */

/* The rule, byte by byte: what xml_escape_content must produce. */
static size_t escape_reference(char *out, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *ref = NULL;
        switch (s[i]) {
        case '<': ref = "&lt;"; break;
        case '>': ref = "&gt;"; break;
        case '&': ref = "&amp;"; break;
        case '\r': ref = "&#13;"; break;
        }
        if (ref) {
            memcpy(out + o, ref, strlen(ref));
            o += strlen(ref);
        } else {
            out[o++] = s[i];
        }
    }
    return o;
}

/* s[0..n) escaped from a source at every offset within a word into an
 * output at every offset, compared with the reference; the buffers are
 * malloc'd to the byte so ASan sees any access past either end. */
static bool escapes_like_reference(const char *s, size_t n)
{
    char *want = malloc(5 * n + 1);
    size_t want_len = escape_reference(want, s, n);
    bool ok = true;
    for (size_t src_off = 0; src_off < 8 && ok; src_off++) {
        for (size_t dst_off = 0; dst_off < 4 && ok; dst_off++) {
            char *src = malloc(src_off + n + 1), *dst = malloc(dst_off + want_len + 1);
            size_t written = 99, taken;
            memcpy(src + src_off, s, n);
            taken = xml_escape_content(dst + dst_off, want_len, src + src_off, n, &written);
            ok = taken == n && written == want_len && memcmp(dst + dst_off, want, want_len) == 0;
            free(src);
            free(dst);
        }
    }
    free(want);
    return ok;
}

static void test_escape_content(void)
{
    static const char specials[] = "<>&\r";
    static const char neighbours[] = "=?;%\n\t\x0c\x2e\x3d\x3f\x25\xbc\xbe\xa6\x8d\x3c\x3e";
    char buf[64];
    size_t written;

    /* every special at every position of a 23-byte clean run (word
     * boundaries in every place), alone and twice in a row */
    for (size_t k = 0; k < 4; k++) {
        for (size_t pos = 0; pos < 23; pos++) {
            memset(buf, 'a', 23);
            buf[pos] = specials[k];
            CHECKF(escapes_like_reference(buf, 23), "special 0x%02x at %zu", specials[k], pos);
            if (pos + 1 < 23) {
                buf[pos + 1] = specials[(k + 1) % 4];
                CHECKF(escapes_like_reference(buf, 23), "pair at %zu", pos);
            }
        }
    }
    /* bytes one bit away from a special, and bytes with the high bit set,
     * are copied as they are: no false hit in the word test */
    for (size_t k = 0; k < sizeof(neighbours) - 1; k++) {
        for (size_t pos = 0; pos < 9; pos++) {
            memset(buf, 'Z', 9);
            buf[pos] = neighbours[k];
            CHECKF(escapes_like_reference(buf, 9), "neighbour 0x%02x at %zu",
                   (unsigned char)neighbours[k], pos);
        }
    }
    /* every length up to 40 of a line-shaped text, and all-specials runs */
    {
        const char *line = "SUMMARY:a<b & c>d\r\nDESCRIPTION:x\r\n\r\nEND:VEVENT\r\n";
        for (size_t len = 0; len <= 40; len++)
            CHECKF(escapes_like_reference(line, len), "line prefix %zu", len);
        CHECK(escapes_like_reference("<<<<>>>>&&&&\r\r\r\r<>&\r", 20));
    }
    /* CR becomes a reference (XML 1.0 section 2.11 would read it as LF); LF stays */
    CHECK(xml_escape_content(buf, sizeof(buf), "A\r\nB", 4, &written) == 4 && written == 8 &&
          memcmp(buf, "A&#13;\nB", 8) == 0);
    /* a short room cuts clean text anywhere, but never inside a reference */
    CHECK(xml_escape_content(buf, 3, "abcdef", 6, &written) == 3 && written == 3 &&
          memcmp(buf, "abc", 3) == 0);
    CHECK(xml_escape_content(buf, 6, "ab&cd", 5, &written) == 2 && written == 2);
    CHECK(xml_escape_content(buf, 7, "ab&cd", 5, &written) == 3 && written == 7 &&
          memcmp(buf, "ab&amp;", 7) == 0);
    CHECK(xml_escape_content(buf, 0, "x", 1, &written) == 0 && written == 0);
    CHECK(xml_escape_content(buf, 4, "", 0, &written) == 0 && written == 0);
}

int main(void)
{
    test_status_table();
    test_text_and_entities();
    test_namespaces();
    test_limits();
    test_client_bodies();
    test_writer();
    test_escape_content();
    return check_summary();
}
