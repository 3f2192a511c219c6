/* WebDAV (RFC 4918) for the /dav/ tree: the per-request context, the URL
 * layout, multistatus rendering, store enumeration in stable order, and the
 * tables through which the layers above add to it (dav_register).
 *
 * URL layout (one principal per user, which is also its home collection):
 *   /dav/                     root collection
 *   /dav/<user>/              principal and home
 *   /dav/<user>/<c>/[...]/    collections (MKCOL, or a method a layer above
 *                             registers), nested as clients like
 *   /dav/<user>/<c>/<name>    resources
 *   /dav/<user>/<f>/          collections every home has, of types a layer
 *                             above registers (dav_extension.fixed), which
 *                             the store does not keep (DAV_RES_FIXED)
 *
 * Store keys: a collection's store path is its decoded URL path prefixed by
 * a key, 'w' for a plain WebDAV collection or the key of a collection type a
 * layer above registered (the store keeps no resource type of its own).
 * Object names are decoded path segments.
 *
 * Memory: a fixed pool of DAV_CTX_MAX request contexts (a request that finds
 * none waits for one, in a queue of DAV_CTX_WAIT_MAX, at most DAV_CTX_WAIT_MS;
 * beyond either it gets 503 with Retry-After), one upload buffer of DAV_MAX_RESOURCE_SIZE
 * shared by PUT bodies, and one work buffer used inside a single callback.
 * Nothing is allocated. */
#ifndef LITEDAV_DAV_H
#define LITEDAV_DAV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "http/auth.h"
#include "platform/flash.h"
#include "http/httpd.h"
#include "store/store.h"
#include "util/xml.h"

/* DAV_CTX_MAX, DAV_XML_MAX, DAV_XML_ARENA, DAV_OUT_MAX, DAV_MAX_RESOURCE_SIZE
 * and the arena/index sizes: app_config.h (per-port overrides) */
#include "platform/app_config.h"
#define DAV_PATH_MAX 255              /* decoded URL path (store key is one more) */
#ifndef DAV_BATCH
#define DAV_BATCH 8                   /* members fetched per store enumeration (a walk of the */
#endif                                /* collection's member list in RAM, reads of DAV_BATCH members) */
typedef char dav_batch_fits_order[DAV_BATCH <= 256 ? 1 : -1];
#define DAV_OBJECTS_PER_COLLECTION 4096
#define DAV_EXT_STATE 48              /* bytes of a context's ext, for the layers above */
#define DAV_EXTENSIONS_MAX 4          /* dav_register() calls */

#define DAV_ROOT_PATH "/dav/"

/* DAV_RES_FIXED: a collection every home has (its type's home_name), kept
 * by no store: it has no members and no properties of its own, and cannot
 * be written, copied or deleted; what it does beyond PROPFIND is a method
 * its layer registers. */
enum dav_kind { DAV_RES_ROOT, DAV_RES_HOME, DAV_RES_COLL, DAV_RES_OBJECT, DAV_RES_FIXED };

struct dav_coll_type;

/* A resource being described in a multistatus. */
struct dav_resource {
    enum dav_kind kind;
    const char *path;          /* decoded; collections end in '/' */
    size_t path_len;
    uint32_t coll;             /* DAV_RES_COLL: itself; DAV_RES_OBJECT: its collection */
    const struct dav_coll_type *type;   /* the type of (or of the collection of) the
                                           resource; NULL: a plain WebDAV collection */
    bool exists;
    struct store_object_info obj;   /* objects */
    struct store_collection info;   /* collections (owner/path not kept) */
};

/* One member fetched from the store by dav_enum_next. */
struct dav_member {
    char name[STORE_PATH_MAX + 1];  /* object name, or collection store path */
    size_t len;
    uint32_t etag, size, sync_seq, coll;
    uint32_t name_hash;             /* objects are listed in (name_hash, name) order */
    bool deleted;
};

enum dav_wait { DAV_WAIT_NONE, DAV_WAIT_BODY, DAV_WAIT_END };

enum dav_propfind_mode { DAV_PROP, DAV_ALLPROP, DAV_PROPNAME };

struct dav_ctx;
/* Renders the next piece of a streamed body into c->out; sets c->done after
 * the last. Returns 0, or -1 to abort the connection. */
typedef int (*dav_render_fn)(struct dav_ctx *c);

/* A kept response: one HTTP chunk (RFC 9112 section 7.1), its size line
 * (head_len bytes), the DAV:response element, CRLF. */
struct dav_kept {
    const uint8_t *chunk;
    uint32_t chunk_len;
    uint32_t etag;              /* the object's when it was rendered */
    uint8_t head_len;
    bool plain;                 /* its path is its own href: no '%', '?' or '#' to decode */
};
static inline const uint8_t *dav_kept_element(const struct dav_kept *k) { return k->chunk + k->head_len; }
static inline uint32_t dav_kept_element_len(const struct dav_kept *k) { return k->chunk_len - k->head_len - 2u; }

struct dav_ctx {
    bool in_use;
    struct http_exchange *x;
    struct store *store;                /* what the request reads and writes */
    char user[AUTH_USER_MAX + 1];       /* authenticated */

    /* the target (dav_resolve) */
    struct dav_resource target;
    char path[DAV_PATH_MAX + 2];        /* decoded request path, for target.path */
    size_t name_off, name_len;          /* object name inside path */
    char owner[AUTH_USER_MAX + 1];      /* <user> segment of the path, "" for the root */
    bool parent_exists;                 /* objects: the collection above exists */
    int depth;                          /* 0, 1, or -1 for infinity */

    /* the request body */
    char body[DAV_XML_MAX];
    size_t body_len;
    bool body_too_large;
    struct xml_doc doc;
    enum dav_wait waiting;
    uint32_t stash_len;                 /* body bytes kept in x->scratch while waiting */
    bool holds_writer;
    bool streaming_put;                 /* store_put_begin done, writes go to the store */
    bool put_existed;
    bool put_started;

    /* the streamed response: pieces rendered into out (out_buf, or a kept
     * response's place in the cache while it is rendered there) */
    char *out;
    size_t out_cap, out_len, out_off;
    char out_buf[DAV_OUT_MAX];
    bool done;
    bool producing;                     /* a producer owns the context and frees it */
    dav_render_fn render;
    int phase;
    uint32_t offset;                    /* object bytes already sent */

    /* what is being reported */
    enum dav_propfind_mode mode;
    const struct xml_node *props;       /* DAV:prop of the request, or NULL */
    /* What a registered REPORT or method keeps across the pieces of its
     * response, in a layout of its own (it checks that it fits); zeroed with
     * the context. */
    union { uint64_t align; void *ptr; unsigned char bytes[DAV_EXT_STATE]; } ext;

    /* stable-order enumeration */
    int source;
    uint32_t sync_from;                 /* DAV_SRC_CHANGES: changes after this sync sequence */
    char cursor[STORE_PATH_MAX + 1];
    size_t cursor_len;
    uint32_t cursor_seq, cursor_hash;
    bool cursor_set, exhausted;
    struct dav_member batch[DAV_BATCH];
    uint8_t batch_order[DAV_BATCH];     /* batch[] indices, smallest member first */
    unsigned batch_n, batch_i;
    struct dav_member member;           /* the one being rendered */

    /* a member a REPORT describes (its path, its name inside it) */
    struct dav_resource obj;
    char obj_path[DAV_PATH_MAX + 2];
    size_t obj_name_off;
    int obj_phase;
    bool obj_cut;                       /* the store could not give obj whole (sent as far as read) */

    /* the next piece by reference: a kept response (dav_fragments.c), as a
     * whole chunk (ref_framed) when the response is chunked */
    const uint8_t *ref;
    uint32_t ref_len;
    bool ref_framed;
    bool render_failed;                 /* after the pieces already produced, abort */
    /* obj's kept response, found current before the store was read */
    struct dav_kept obj_kept;
    bool obj_kept_current;
    uint32_t fragment_variant;          /* dav_fragment_variant() of the request, once known */
    bool fragment_variant_known;
};

/* Mount the store on f (an empty flash becomes an empty store), provision
 * the users of firmware/users.conf. Returns a store status. */
int dav_mount(const struct flash *f, struct store_mount_stats *stats);
/* The store dav_mount() mounted, NULL before: for what checks or adds users
 * beside /dav/ (.well-known, /bulk, a port's --user). Requests under /dav/
 * reach it through their context (c->store). */
struct store *dav_mounted_store(void);
/* store_check() of the store as dav_mount() found it (problems == 0: consistent) */
const struct store_check *dav_mount_check(void);
/* Main-loop hook: hands free contexts and the store to requests waiting for
 * them, and answers 503 to those that waited the longest wait. */
void dav_poll(void);

/* The longest wait for a context, in sys_now() ms: DAV_CTX_WAIT_MS unless
 * set (the host build's --dav-wait-ms). */
void dav_set_ctx_wait_ms(uint32_t ms);

struct dav_stats {
    uint32_t ctx_used;          /* request contexts taken now */
    uint32_t waiting;           /* requests waiting for a context now */
    uint64_t waited;            /* requests that waited for one, since boot */
    uint64_t refused;           /* 503: the wait queue was full, or the wait too long */
};
const struct dav_stats *dav_get_stats(void);

/* The route handler for /dav/ (appliance/routes.c). */
extern const struct http_handler dav_handler;

/* ---- what the layers above register ----------------------------------- */

/* An element name with the prefix its namespace is declared with on the
 * root of the response (dav_extension.xmlns). */
struct dav_name {
    const char *prefix, *name;
};

/* Writes property of r into w; with w NULL, says whether r has it. */
typedef bool (*dav_prop_fn)(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w);

#define DAV_PROP_ALLPROP 1            /* listed by allprop (RFC 4918 section 14.2) */
#define DAV_PROP_VERBATIM 2           /* PROPPATCH stores the value as sent, white space too */
#define DAV_PROP_OF_CONTENT 4         /* of an object, its value (or its absence) is a function of
                                         its bytes and ETag alone: a response naming only such
                                         properties is kept rendered (dav_fragments.c) */
#define DAV_PROP_AT_CREATION 8        /* set only by the request that creates its collection
                                         (dav_apply_props), where the extension stores it itself;
                                         PROPPATCH answers 403, it is protected */

/* A live property (RFC 4918 section 15 and the like). */
struct dav_prop {
    const char *ns, *prefix, *name;
    dav_prop_fn get;                  /* NULL: the value the collection keeps in `stored` */
    uint8_t stored;                   /* enum store_prop PROPPATCH sets; 0: not settable */
    uint8_t flags;                    /* DAV_PROP_* */
    const struct dav_coll_type *type; /* a property of collections of this type only (read and
                                         set there, nowhere else); NULL: of any resource */
};

/* A REPORT (RFC 3253 section 3.6), chosen by the root element of its body. */
struct dav_report {
    const char *ns, *prefix, *name;
    void (*run)(struct dav_ctx *c);   /* answers it; the parsed body is c->doc */
    const struct dav_coll_type *type; /* DAV:supported-report-set lists it on collections of
                                         this type, before those of every collection (NULL) */
};

#define DAV_METHOD_WRITES 1           /* runs with the writer lock held */
#define DAV_METHOD_XML 2              /* its body is XML: at most DAV_XML_MAX bytes, parsed into
                                         c->doc before run (400 when it is not well-formed) */

/* A method besides WebDAV's own. */
struct dav_method {
    enum http_method method;
    void (*run)(struct dav_ctx *c);   /* answers the request */
    uint8_t flags;                    /* DAV_METHOD_* */
};

/* A type of collection: the resources in its collections are its members.
 * WebDAV's plain collections have no type (the key 'w'). */
struct dav_coll_type {
    char key;                         /* first byte of its collections' store paths */
    struct dav_name resourcetype;     /* added to DAV:resourcetype */
    const char *content_type;         /* of its members (GET, DAV:getcontenttype) */
    /* A PUT of a member: put_begin checks the request head, put_check the
     * whole body (with one, bodies are collected, not streamed); 0 or the
     * status they answered. Either may be NULL. */
    int (*put_begin)(struct dav_ctx *c);
    int (*put_check)(struct dav_ctx *c, const char *body, size_t len);
    struct dav_name too_large;        /* 403 precondition of a member over DAV_MAX_RESOURCE_SIZE
                                         (no name: 413) */
    struct dav_name location;         /* 403 precondition when one is asked for where it cannot
                                         be (no name: 403 with a text) */
    const char *no_collections;       /* not NULL: holds no collections; the 403's text */
    const char *home_name;            /* a fixed type (dav_extension.fixed): the name of the
                                         collection every home has (key, content_type, the PUT
                                         checks and preconditions unused) */
};

/* A property principals can be searched by (RFC 3744 section 9.5). */
struct dav_search_prop {
    const char *ns, *prefix, *name;
    const char *description;          /* for people, in English */
};

/* What one layer above adds. Properties are listed after WebDAV's own, in
 * the order registered; xmlns declares the prefixes its elements use on the
 * root of every multistatus (" xmlns:P=\"...\"..."), error_xmlns those its
 * preconditions use on the root of DAV:error bodies. */
struct dav_extension {
    const struct dav_prop *props;
    unsigned n_props;
    const struct dav_report *reports;
    unsigned n_reports;
    const struct dav_method *methods;
    unsigned n_methods;
    const struct dav_coll_type *coll_type;
    const char *xmlns, *error_xmlns;
    const struct dav_coll_type *fixed;         /* types of the collections every home has */
    unsigned n_fixed;
    const struct dav_search_prop *searchable;  /* principal properties a search may match */
    unsigned n_searchable;
};

/* WebDAV ACL's principal search (RFC 3744 sections 5.8, 9.4, 9.5), for
 * dav_register() like a layer above's (dav_principals.c). */
extern const struct dav_extension dav_principals_extension;

/* Adds ext (a static table, not copied) to what /dav/ serves, before it
 * serves (appliance/app.c). Returns 0, or -1 when DAV_EXTENSIONS_MAX are in. */
int dav_register(const struct dav_extension *ext);

/* ---- for the layers above ------------------------------------------------ */

/* Pieces of a streamed body into c->out: raw text (left out if it does not
 * fit), XML through a writer, escaped character data. */
void dav_out_raw(struct dav_ctx *c, const char *s);

/* An XML writer on the free part of c->out; dav_writer_done keeps what it
 * wrote, unless it overflowed. */
static inline void dav_writer(struct dav_ctx *c, struct xml_writer *w)
{
    xml_writer_init(w, c->out + c->out_len, c->out_cap - c->out_len);
}

static inline void dav_writer_done(struct dav_ctx *c, struct xml_writer *w)
{
    if (w->status == XMLW_OK)
        c->out_len += w->len;
}

/* DAV:href of a decoded path, percent-encoded again (RFC 3986 section 2). */
void dav_write_href(struct xml_writer *w, const char *path, size_t len);
/* DAV:status: "HTTP/1.1 <status> <reason>". */
void dav_write_status(struct xml_writer *w, int status);
/* Escaped character data straight into c->out (a member's data in a REPORT);
 * returns how many bytes of s fitted. */
static inline size_t dav_out_escaped(struct dav_ctx *c, const char *s, size_t n)
{
    size_t written, taken = xml_escape_content(c->out + c->out_len, c->out_cap - c->out_len, s, n, &written);
    c->out_len += written;
    return taken;
}
/* The XML declaration and the root element (a prefixed name, "D:multistatus"),
 * with the namespaces of every extension declared (dav_extension.xmlns). */
void dav_body_open(struct dav_ctx *c, const char *name);
void dav_multistatus_open(struct dav_ctx *c);
void dav_multistatus_close(struct dav_ctx *c);

/* Start a streamed response whose pieces come from render. */
void dav_respond_stream(struct dav_ctx *c, int status, const char *type, dav_render_fn render);
/* Start a streamed 207 whose pieces come from render. */
void dav_respond_multistatus(struct dav_ctx *c, dav_render_fn render);
/* An error with a precondition element (RFC 4918 section 16):
 * <D:error><prefix:name/></D:error>, prefix "D" or one an extension declares
 * in its error_xmlns. */
void dav_respond_precondition(struct dav_ctx *c, int status, const char *prefix, const char *name);
/* A plain-text error response, with the fields 401 and 405 need. */
void dav_respond_status(struct dav_ctx *c, int status, const char *detail);
/* A response without a body (header lines: NULL or "Name: value\r\n"...). */
void dav_respond_empty(struct dav_ctx *c, int status, const char *headers);

/* Property rendering (RFC 4918 section 9.1): the propstat elements of one
 * resource for c->mode/c->props. A streamed property (the caller writes it
 * after the others) counts as found and is left out: the 200 propstat stays
 * open for it, and dav_write_propstats_tail closes it and adds the 404 one.
 * Returns the number of requested properties found. */
unsigned dav_write_propstats(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                             const struct dav_prop *streamed);
void dav_write_propstats_tail(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                              const struct dav_prop *streamed);
/* PROPPATCH-style set/remove list applied to a collection, all or none. */
int dav_apply_props(struct dav_ctx *c, uint32_t coll, const struct xml_node *update, bool check_only);
/* A new collection of the type (NULL: plain) at the target: 0, or the status answered. */
int dav_create_collection(struct dav_ctx *c, const struct dav_coll_type *type, uint32_t *id);
/* Is the property among those the request's DAV:prop names? */
bool dav_prop_requested(const struct dav_ctx *c, const char *ns, const char *name);

/* Resources */
/* The resource of member m of the target collection, its path in pathbuf. */
void dav_object_resource(struct dav_ctx *c, const struct dav_member *m, char *pathbuf,
                         struct dav_resource *r);
/* The collection at path[0..len) (ending in '/'): STORE_OK with its id and type. */
int dav_find_collection(struct dav_ctx *c, const char *path, size_t len, uint32_t *id,
                        const struct dav_coll_type **type);

/* Responses of objects kept rendered in RAM and sent by reference
 * (dav_fragments.c). The memory is the port's (appliance/app.c gives it). */
void dav_fragments_init(void *mem, size_t size);
bool dav_fragments_enabled(void);
struct dav_fragment_stats {
    uint64_t hits, misses;      /* lookups */
    uint64_t rendered;          /* responses rendered into the cache */
    uint64_t not_kept;          /* no room (the oldest still in flight, or too large) */
    uint64_t refused_in_flight; /* reclaims that found TCP still sending from the oldest */
    uint64_t evicted;
    uint32_t bytes, capacity;
};
const struct dav_fragment_stats *dav_fragments_stats(void);
/* The number naming the request's property list, for kept responses; 0 when
 * they cannot be kept (see DAV_PROP_OF_CONTENT). streamed: the property the
 * layer above writes itself after the others. */
uint32_t dav_fragment_variant(const struct dav_ctx *c, const struct dav_prop *streamed);
/* The same, worked out once per request (c->fragment_variant). */
uint32_t dav_request_variant(struct dav_ctx *c, const struct dav_prop *streamed);
/* Renders the next piece of c->obj's DAV:response into c->out: 1 after the last. */
typedef int (*dav_object_render_fn)(struct dav_ctx *c);
/* c->obj's whole response as the next piece, by reference (c->ref): the kept
 * one, or rendered now with render and kept. False: nothing was done (the
 * caller renders it piece by piece, the copying path). */
bool dav_send_object_fragment(struct dav_ctx *c, dav_object_render_fn render, uint32_t variant);
/* Before the store is read for c->obj (its path set, in collection coll,
 * its name at name_off): is a response kept for it current? Then true, with
 * c->obj's ETag, and dav_send_object_fragment sends that response. */
bool dav_find_current_kept(struct dav_ctx *c, uint32_t coll, size_t name_off, uint32_t variant);
/* The same with a response already found (by its path, k): true when it is current. */
bool dav_use_kept_if_current(struct dav_ctx *c, uint32_t coll, size_t name_off, const struct dav_kept *k);
/* A listing member's response kept rendered and current: the next piece, by
 * reference (true; c->out must be empty), or false when it is not kept (the
 * caller renders it into c->out, then dav_keep_response keeps what it wrote
 * from offset `from` and, when that is all of c->out, sends it by reference). */
bool dav_send_kept_response(struct dav_ctx *c, const struct dav_resource *r, uint32_t variant);
void dav_keep_response(struct dav_ctx *c, const struct dav_resource *r, uint32_t variant, size_t from);
/* The cache's own: the newest response kept for a path and property list,
 * and a record written in place (reserve: where the element goes, at most
 * max_data bytes, about `expected`). */
bool dav_fragment_find(uint32_t variant, const char *path, size_t path_len, struct dav_kept *k);
uint8_t *dav_fragment_reserve(size_t path_len, size_t max_data, size_t expected);
void dav_fragment_cancel(void);
void dav_fragment_commit(uint32_t etag, uint32_t variant, const char *path, size_t path_len,
                         uint32_t data_len, bool keep, struct dav_kept *k);
/* Chunks a reference being put together holds: not reclaimed until unpinned. */
void dav_fragments_pin(const void *start, uint32_t len);
void dav_fragments_unpin(void);

/* Stable-order enumeration of a collection's members in batches. */
enum dav_source { DAV_SRC_OBJECTS, DAV_SRC_CHANGES, DAV_SRC_COLLECTIONS };
void dav_enum_start(struct dav_ctx *c, int source);
/* Next member into c->member: 1, or 0 at the end, or a negative store status. */
int dav_enum_next(struct dav_ctx *c, uint32_t coll);

/* Read the object whole into the work buffer, one for every context, *data
 * pointing at it until the callback returns. Returns its length or a
 * negative store status. */
long dav_read_object(struct dav_ctx *c, uint32_t coll, const char *name, size_t len, const char **data);

/* Store status to HTTP status (docs/store.md "Limits and errors"). */
int dav_store_http_status(int rc);
/* A failed store operation answered: that status, the store's text. */
void dav_respond_store_error(struct dav_ctx *c, int rc);

/* Percent-decode a request path into out; 0 or an HTTP status. */
int dav_decode_path(const char *in, size_t len, char *out, size_t cap, size_t *out_len);

#endif
