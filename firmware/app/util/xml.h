/* Small non-validating XML 1.0 parser with namespaces, and a streaming XML
 * writer, sized for WebDAV/CalDAV bodies (RFC 4918 section 8.2: request and
 * response bodies are namespace-qualified XML).
 *
 * Reader: xml_parse() reads a whole body (UTF-8, a few KiB) into an element
 * tree held in a caller-provided arena. Nothing is allocated, the input is not
 * modified, recursion is not used. Names and undecoded text point into the
 * input, which must outlive the tree; text that needed decoding (entity or
 * character references, CDATA joins, line-end normalisation) is copied into
 * the arena. Strings are counted (struct xml_str), not NUL-terminated.
 *
 * Writer: struct xml_writer escapes text and attribute values into a caller
 * buffer, either failing cleanly on overflow or handing full buffers to a
 * sink callback so a 207 Multi-Status can be streamed. */
#ifndef LITEDAV_XML_H
#define LITEDAV_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Namespaces a CalDAV server meets (RFC 4918, RFC 4791, and two vendor ones). */
#define XML_NS_DAV        "DAV:"
#define XML_NS_CALDAV     "urn:ietf:params:xml:ns:caldav"
#define XML_NS_CALSERVER  "http://calendarserver.org/ns/"
#define XML_NS_APPLE_ICAL "http://apple.com/ns/ical/"
#define XML_NS_XML        "http://www.w3.org/XML/1998/namespace"

/* XML 1.0 section 2.3 S */
static inline bool xml_is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

struct xml_str {
    const char *ptr;
    size_t len;
};

struct xml_attr {
    struct xml_str ns;     /* namespace URI; empty for unprefixed attributes */
    struct xml_str name;   /* local name */
    struct xml_str value;  /* decoded and normalised (XML 1.0 section 3.3.3) */
    struct xml_attr *next;
};

struct xml_node {
    struct xml_str ns;     /* namespace URI; empty when in no namespace */
    struct xml_str name;   /* local name */
    /* Character data directly inside this element, decoded. In an element
     * with child elements, whitespace-only runs (indentation) are dropped and
     * the other runs are concatenated. */
    struct xml_str text;
    struct xml_attr *attrs;          /* namespace declarations excluded */
    struct xml_node *parent, *first_child, *next_sibling;
    uint16_t prefix_len;             /* qualified name = prefix ':' name */
    uint16_t depth;                  /* root element is 1 */
};

enum xml_status {
    XML_OK = 0,
    XML_ERR_EMPTY,           /* no root element */
    XML_ERR_SYNTAX,          /* malformed markup */
    XML_ERR_MISMATCH,        /* end tag does not match start tag */
    XML_ERR_UNTERMINATED,    /* input ends inside a construct or element */
    XML_ERR_PREFIX,          /* undeclared or illegal namespace prefix */
    XML_ERR_ENTITY,          /* unknown entity or bad character reference */
    XML_ERR_CHAR,            /* character not allowed by XML 1.0 section 2.2, or bad UTF-8 */
    XML_ERR_DUPLICATE_ATTR,  /* same attribute twice (XML 1.0 3.1, Namespaces 6.3) */
    XML_ERR_DOCTYPE,         /* DOCTYPE refused: no DTDs, no entity expansion */
    XML_ERR_ENCODING,        /* declared encoding other than UTF-8 */
    XML_ERR_DEPTH,           /* elements nested deeper than the limit */
    XML_ERR_ARENA,           /* arena exhausted */
    XML_ERR_TOO_LARGE,       /* input longer than the limit */
};

struct xml_error {
    enum xml_status code;
    size_t offset;           /* byte offset in the input where it was found */
    const char *message;     /* static English text */
};

struct xml_limits {
    size_t max_input;        /* bytes; 0 = no limit */
    unsigned max_depth;      /* element nesting; 0 = XML_DEFAULT_MAX_DEPTH */
};

#define XML_DEFAULT_MAX_DEPTH 32

struct xml_doc {
    struct xml_node *root;
    size_t arena_used;       /* high-water mark, to size arenas */
};

/* Parse buf[0..len) into doc, using arena (any alignment) for the tree.
 * limits may be NULL for defaults. On error doc->root is NULL and err (if not
 * NULL) says what and where. */
enum xml_status xml_parse(struct xml_doc *doc, const char *buf, size_t len,
                          void *arena, size_t arena_size,
                          const struct xml_limits *limits, struct xml_error *err);

const char *xml_status_name(enum xml_status status);

/* ---- queries ----------------------------------------------------------- */

bool xml_str_eq(struct xml_str s, const char *lit);
/* ns or name NULL matches anything. */
bool xml_is(const struct xml_node *node, const char *ns, const char *name);
/* First child / next sibling with that namespace and local name. */
struct xml_node *xml_child(const struct xml_node *parent, const char *ns, const char *name);
struct xml_node *xml_next(const struct xml_node *node, const char *ns, const char *name);
/* Number of child elements matching (ns, name). */
size_t xml_count(const struct xml_node *parent, const char *ns, const char *name);
const struct xml_attr *xml_attr_find(const struct xml_node *node, const char *ns, const char *name);
/* Text with leading and trailing XML whitespace removed (e.g. DAV:href). */
struct xml_str xml_text_trimmed(const struct xml_node *node);

#define XML_FOR_EACH_CHILD(child, parent) \
    for (struct xml_node *child = (parent)->first_child; child; child = child->next_sibling)

/* ---- writer ------------------------------------------------------------ */

/* Sink for streamed output: returns false to abort (e.g. connection closed). */
typedef bool (*xml_sink_fn)(void *ctx, const char *data, size_t len);

#define XML_WRITER_MAX_DEPTH 16

enum xml_writer_status {
    XMLW_OK = 0,
    XMLW_ERR_OVERFLOW,       /* buffer full and no sink */
    XMLW_ERR_SINK,           /* the sink refused data */
    XMLW_ERR_NESTING,        /* end without start, or deeper than XML_WRITER_MAX_DEPTH */
    XMLW_ERR_CHAR,           /* text has a character XML 1.0 cannot carry */
};

struct xml_writer {
    char *buf;
    size_t cap, len;
    xml_sink_fn sink;
    void *sink_ctx;
    size_t flushed;          /* bytes handed to the sink so far */
    enum xml_writer_status status;   /* sticky: first error wins */
    bool in_start_tag;       /* "<name attrs" written, '>' still owed */
    unsigned depth;
    const char *open_prefix[XML_WRITER_MAX_DEPTH];
    const char *open_name[XML_WRITER_MAX_DEPTH];
};

/* Buffer only: output must fit in cap bytes. */
void xml_writer_init(struct xml_writer *w, char *buf, size_t cap);
/* Buffer as a staging area, flushed to sink when full and by xml_writer_finish. */
void xml_writer_init_sink(struct xml_writer *w, char *buf, size_t cap,
                          xml_sink_fn sink, void *ctx);

void xml_write_declaration(struct xml_writer *w);
/* <prefix:name ...; prefix may be NULL or "". Strings must live until the
 * matching xml_write_end. */
void xml_write_start(struct xml_writer *w, const char *prefix, const char *name);
/* Only between xml_write_start and the element's content. */
void xml_write_attr(struct xml_writer *w, const char *name, const char *value, size_t value_len);
void xml_write_xmlns(struct xml_writer *w, const char *prefix, const char *uri);
void xml_write_text(struct xml_writer *w, const char *text, size_t len);
/* Character data for content (XML 1.0 section 2.4), outside any writer:
 * '<', '>', '&' as entity references and CR as "&#13;" (section 2.11 would
 * turn a literal CR into LF); every other byte as is, unchecked. Writes at
 * most room bytes to out, never part of a reference; returns how many bytes
 * of s went out (all n unless room ran short), *written the bytes written.
 * Clean runs are found a word at a time and copied in bulk: calendar-data is
 * most of a multiget's body. */
size_t xml_escape_content(char *out, size_t room, const char *s, size_t n, size_t *written);
/* Already well-formed markup, copied as is. */
void xml_write_raw(struct xml_writer *w, const char *data, size_t len);
/* Closes the innermost open element ("/>" when it is empty). */
void xml_write_end(struct xml_writer *w);
/* <prefix:name>text</prefix:name> */
void xml_write_text_element(struct xml_writer *w, const char *prefix, const char *name,
                            const char *text, size_t len);
/* Checks that every element is closed and flushes to the sink. */
enum xml_writer_status xml_writer_finish(struct xml_writer *w);

#endif
