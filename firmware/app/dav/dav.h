/* WebDAV (RFC 4918) for the /dav/ tree, and what the CalDAV (caldav.c) and
 * sync (sync.c) layers share with it: the per-request context, the URL
 * layout, multistatus rendering and store enumeration in stable order.
 *
 * URL layout (one principal per user, RFC 4791 section 6.2.1 lets the
 * principal be its calendar home):
 *   /dav/                     root collection
 *   /dav/<user>/              principal and calendar home
 *   /dav/<user>/<c>/[...]/    collections: calendars (MKCALENDAR) or plain
 *                             WebDAV collections (MKCOL), nested as clients like
 *   /dav/<user>/<c>/<name>    resources (calendar objects in calendars)
 *
 * Store keys: a collection's store path is its decoded URL path prefixed by
 * its kind, 'c' for a calendar and 'w' for a plain collection (the store
 * keeps no resource type of its own). Object names are decoded path segments.
 *
 * Memory: a fixed pool of DAV_CTX_MAX request contexts (a request that finds
 * none waits for one, in a queue of DAV_CTX_WAIT_MAX, at most dav_ctx_wait_ms;
 * beyond either it gets 503 with Retry-After), one upload buffer of DAV_MAX_RESOURCE_SIZE
 * shared by PUT bodies, and one work buffer + iCalendar arena used inside a
 * single callback (validation, filters). Nothing is allocated. */
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

#define DAV_ROOT_PATH "/dav/"

enum dav_kind { DAV_RES_ROOT, DAV_RES_HOME, DAV_RES_COLL, DAV_RES_OBJECT };

/* A resource being described in a multistatus. */
struct dav_resource {
    enum dav_kind kind;
    const char *path;          /* decoded; collections end in '/' */
    size_t path_len;
    uint32_t coll;             /* DAV_RES_COLL: itself; DAV_RES_OBJECT: its collection */
    bool calendar;             /* in (or is) a calendar collection */
    bool exists;
    struct store_object_info obj;   /* objects */
    struct store_collection info;   /* collections (owner/path not kept) */
};

/* One member fetched from the store by dav_batch_*. */
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

struct dav_ctx {
    bool in_use;
    struct http_exchange *x;
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

    /* the streamed response */
    char out[DAV_OUT_MAX];
    size_t out_len, out_off;
    bool done;
    bool producing;                     /* a producer owns the context and frees it */
    dav_render_fn render;
    int phase;
    uint32_t offset;                    /* object bytes already sent */

    /* what is being reported */
    enum dav_propfind_mode mode;
    const struct xml_node *props;       /* DAV:prop of the request, or NULL */
    bool want_data;                     /* CALDAV:calendar-data requested */
    const struct xml_node *filter;      /* CALDAV:filter of a calendar-query */
    const struct xml_node *next_href;   /* calendar-multiget */
    int64_t range_start, range_end;     /* free-busy-query */
    uint32_t sync_from, sync_to, limit, reported, sync_from_reported;
    bool truncated;

    /* stable-order enumeration */
    int source;
    char cursor[STORE_PATH_MAX + 1];
    size_t cursor_len;
    uint32_t cursor_seq, cursor_hash;
    bool cursor_set, exhausted;
    struct dav_member batch[DAV_BATCH];
    uint8_t batch_order[DAV_BATCH];     /* batch[] indices, smallest member first */
    unsigned batch_n, batch_i;
    struct dav_member member;           /* the one being rendered */
    struct dav_resource obj;            /* dav_render_object's resource */
    char obj_path[DAV_PATH_MAX + 2];
    size_t obj_name_off;
    int obj_phase;
};

extern struct store dav_store;

/* Mount the store on f (an empty flash becomes an empty store), provision
 * the users of firmware/users.conf. Returns a store status. */
int dav_mount(const struct flash *f, struct store_mount_stats *stats);
bool dav_mounted(void);
/* store_check() of the store as dav_mount() found it (problems == 0: consistent) */
const struct store_check *dav_mount_check(void);
/* Main-loop hook: hands free contexts and the store to requests waiting for
 * them, and answers 503 to those that waited dav_ctx_wait_ms. */
void dav_poll(void);

/* The longest wait for a context, in sys_now() ms (DAV_CTX_WAIT_MS; the host
 * build sets it from --dav-wait-ms). */
extern uint32_t dav_ctx_wait_ms;

struct dav_stats {
    uint32_t ctx_used;          /* request contexts taken now */
    uint32_t waiting;           /* requests waiting for a context now */
    uint64_t waited;            /* requests that waited for one, since boot */
    uint64_t refused;           /* 503: the wait queue was full, or the wait too long */
};
extern struct dav_stats dav_stats;

/* The route handler for /dav/ (routes.c). */
extern const struct http_handler dav_handler;

/* ---- shared with caldav.c and sync.c ----------------------------------- */

/* Multistatus framing and pieces. */
static inline void dav_out_raw(struct dav_ctx *c, const char *s)
{
    size_t n = strlen(s);
    if (c->out_len + n <= sizeof(c->out)) {
        memcpy(c->out + c->out_len, s, n);
        c->out_len += n;
    }
}

/* An XML writer on the free part of c->out; dav_writer_done keeps what it
 * wrote, unless it overflowed. */
static inline void dav_writer(struct dav_ctx *c, struct xml_writer *w)
{
    xml_writer_init(w, c->out + c->out_len, sizeof(c->out) - c->out_len);
}

static inline void dav_writer_done(struct dav_ctx *c, struct xml_writer *w)
{
    if (w->status == XMLW_OK)
        c->out_len += w->len;
}

void dav_write_href(struct xml_writer *w, const char *path, size_t len);
void dav_write_status(struct xml_writer *w, int status);
/* Escaped character data straight into c->out (calendar-data); returns how
 * many bytes of s fitted. */
static inline size_t dav_out_escaped(struct dav_ctx *c, const char *s, size_t n)
{
    size_t written, taken = xml_escape_content(c->out + c->out_len, sizeof(c->out) - c->out_len, s, n,
                                               &written);
    c->out_len += written;
    return taken;
}
void dav_multistatus_open(struct dav_ctx *c);
void dav_multistatus_close(struct dav_ctx *c);

/* Start a streamed response whose pieces come from render. */
void dav_respond_stream(struct dav_ctx *c, int status, const char *type, dav_render_fn render);
/* One object's response in a REPORT (c->obj, c->obj_name_off); 1 when complete. */
int dav_render_object(struct dav_ctx *c);
/* Start a streamed 207 whose pieces come from render. */
void dav_respond_multistatus(struct dav_ctx *c, dav_render_fn render);
/* An error with a precondition element (RFC 4918 section 16):
 * <D:error><prefix:name/></D:error>, prefix "D" or "C". */
void dav_respond_precondition(struct dav_ctx *c, int status, const char *prefix, const char *name);
void dav_respond_status(struct dav_ctx *c, int status, const char *detail);

/* Property rendering (RFC 4918 section 9.1): the propstat elements of one
 * resource for c->mode/c->props. With skip_data, CALDAV:calendar-data is left
 * out of the 200 propstat (the caller streams it). Returns the number of
 * requested properties found. */
unsigned dav_write_propstats(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r,
                             bool skip_data);
/* Closes the 200 propstat left open by a skip_data call, adds the 404 one. */
void dav_write_propstats_tail(struct dav_ctx *c, struct xml_writer *w, const struct dav_resource *r);
/* PROPPATCH-style set/remove list applied to a collection, all or none. */
int dav_apply_props(struct dav_ctx *c, uint32_t coll, const struct xml_node *update, bool check_only);
/* A new collection at the target (kind 'c' or 'w'): 0, or the status answered. */
int dav_create_collection(struct dav_ctx *c, char kind, uint32_t *id);
bool dav_prop_requested(const struct dav_ctx *c, const char *ns, const char *name);

/* Resources */
void dav_object_resource(struct dav_ctx *c, const struct dav_member *m, char *pathbuf,
                         struct dav_resource *r);
int dav_coll_key(const char *path, size_t len, char kind, char *key);
int dav_find_collection(const char *path, size_t len, uint32_t *id, bool *calendar);

/* Stable-order enumeration of a collection's members in batches. */
enum dav_source { DAV_SRC_OBJECTS, DAV_SRC_CHANGES, DAV_SRC_COLLECTIONS };
void dav_enum_start(struct dav_ctx *c, int source);
/* Next member into c->member: 1, or 0 at the end, or a negative store status. */
int dav_enum_next(struct dav_ctx *c, uint32_t coll);

/* The shared work buffer (a whole object) and iCalendar arena, for use inside
 * one callback only. */
extern char dav_work[DAV_MAX_RESOURCE_SIZE];
extern unsigned char dav_ical_arena[];
extern const size_t dav_ical_arena_size;
/* Read the object into dav_work; returns its length or a negative status. */
long dav_read_object(uint32_t coll, const char *name, size_t len);

/* Store status to HTTP status (docs/store.md "Limits and errors"). */
int dav_store_http_status(int rc);

/* Percent-decode a request path into out; 0 or an HTTP status. */
int dav_decode_path(const char *in, size_t len, char *out, size_t cap, size_t *out_len);

#endif
