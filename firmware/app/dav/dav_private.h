/* What the files of the WebDAV layer share among themselves. dav/dav.h is
 * the interface of the layer for the layers above. */
#ifndef LITEDAV_DAV_PRIVATE_H
#define LITEDAV_DAV_PRIVATE_H

#include "dav/dav.h"

/* ---- dav_context.c: contexts, the writer lock, request bodies ----------- */

/* A context for x's request: 0 with *out set, HTTPD_BEGIN_WAIT (queued), or
 * 503 (answered). */
int dav_ctx_acquire(struct http_exchange *x, struct dav_ctx **out);
void dav_ctx_free(struct dav_ctx *c);
/* x ended while it waited for a context. */
void dav_ctx_wait_remove(struct http_exchange *x);
/* Take the writer lock now, or return false (the caller queues itself with
 * dav_lock_wait; dav_poll() runs it once the lock is free). */
bool dav_lock_try(struct dav_ctx *c);
void dav_lock_wait(struct dav_ctx *c, enum dav_wait why);
/* The XML body into c->doc: 0 (an empty body leaves doc.root NULL) or 400. */
int dav_parse_body(struct dav_ctx *c);
/* The work buffer, one for every context: for use inside one callback. */
char *dav_work_buffer(size_t *size);
/* Give the store's index the RAM for its slots' ETags (store_memory's
 * index_etags), before the mount: the bytes used, 0 if too few or too late. */
size_t dav_keep_index_etags(void *mem, size_t size);
/* Does a request's next piece by reference (c->ref, not yet handed to httpd) lie in [start, end)? */
bool dav_pending_refs_hold(const void *start, const void *end);

/* ---- dav_extensions.c: what the layers above registered ----------------- */

/* What dav_register() took, in order, then NULL. */
extern const struct dav_extension *dav_extensions[DAV_EXTENSIONS_MAX + 1];
/* The REPORT whose body has this root element, or NULL. */
const struct dav_report *dav_report_find(const struct xml_node *root);
const struct dav_method *dav_method_find(enum http_method method);
/* The type whose collections' store paths start with key, or NULL. */
const struct dav_coll_type *dav_coll_type_of(char key);
/* The i'th fixed type (dav.h DAV_RES_FIXED) of all extensions, or NULL. */
const struct dav_coll_type *dav_fixed_type_at(unsigned i);

/* ---- dav_paths.c --------------------------------------------------------- */

/* The key of plain WebDAV collections (dav_coll_type.key for the others). */
#define DAV_PLAIN_KEY 'w'

/* A collection's store path: key, then its URL path. 0, or -1 when too long. */
int dav_coll_key(const char *path, size_t len, char key, char *out);

/* Resolve the request path into c->target: 0 or an HTTP status. */
int dav_resolve(struct dav_ctx *c);
/* The same for another path (a Destination, RFC 4918 section 10.3). */
int dav_resolve_path(struct dav_ctx *c, const char *in, size_t in_len);
/* The fixed type named name[0..n) in a home, with or without its slash, or NULL. */
const struct dav_coll_type *dav_fixed_type(const char *name, size_t n);
/* Length of the parent's path (with its '/'), for a path that is not the root. */
size_t dav_parent_len(const char *path, size_t len);
/* Can the collection at path[0..len) (ending in '/') be created there: is
 * its parent the user's home or an existing collection? */
bool dav_coll_parent_exists(struct dav_ctx *c, const char *path, size_t len, uint32_t *parent,
                            const struct dav_coll_type **parent_type);

/* ---- dav_response.c ------------------------------------------------------ */

/* 413 naming this build's limit: "<what> <limit> bytes." */
void dav_respond_too_large(struct http_exchange *x, const char *what, unsigned long limit);

/* ---- dav_props.c --------------------------------------------------------- */

/* An ETag as "0123abcd" (quotes included) into out. */
void dav_etag_format(uint32_t etag, char *out, size_t size);
/* The media type of an object: its collection type's, or application/octet-stream. */
const char *dav_content_type(const struct dav_resource *r);
/* The live property named like n (WebDAV's or an extension's), or NULL. */
const struct dav_prop *dav_prop_find(const struct xml_node *n);
/* Requested property n of r, live or dead, into w (w NULL: does r have it?). */
bool dav_prop_get_named(struct dav_ctx *c, const struct dav_resource *r, const struct xml_node *n,
                        struct xml_writer *w);
/* An empty element named like the requested property n, in its namespace. */
void dav_write_prop_name(struct xml_writer *w, const struct xml_node *n);
/* Raw markup: s as the characters of an attribute value in double quotes
 * (dav_deadprops.c). */
void dav_write_attr_value(struct xml_writer *w, const char *s, size_t n);

/* ---- dav_deadprops.c: dead properties (RFC 4918 section 4) ---------------- */

/* The resource's property list (store.h): a collection's live and dead
 * properties, an object's dead ones; the root and homes have none. It is in
 * the store's memory until the next store call. */
int dav_props_load(struct dav_ctx *c, const struct dav_resource *r, const uint8_t **list, size_t *len);
/* The dead property of r named like n into w (w NULL: does r have it?). */
bool dav_dead_prop_get(struct dav_ctx *c, const struct dav_resource *r, const struct xml_node *n,
                       struct xml_writer *w);
/* Every dead property of r into w, names_only for PROPFIND propname: how many. */
unsigned dav_dead_props_write_all(struct dav_ctx *c, const struct dav_resource *r, struct xml_writer *w,
                                  bool names_only);
/* Editing a property list of room cap: remove the entry of n (live: its
 * store key when it is a live property kept there, 0 for a dead one);
 * append a dead property with n's content, or a live one's value (false:
 * no room). */
void dav_props_remove(uint8_t *list, size_t *len, const struct xml_node *n, uint8_t live);
bool dav_props_add_dead(uint8_t *list, size_t *len, size_t cap, const struct xml_node *n);
bool dav_props_add_live(uint8_t *list, size_t *len, size_t cap, uint8_t key, struct xml_str v);
/* Can a property named like n be dead here: not a live property WebDAV
 * protects (every DAV: name this server does not keep is one). */
bool dav_prop_may_be_dead(const struct xml_node *n);

/* ---- the methods (dav_propfind.c, dav_proppatch.c, dav_collections.c,
 * dav_content.c): each answers the request ---------------------------------- */

void dav_do_propfind(struct dav_ctx *c);
/* PROPFIND's multistatus from c->phase 0: the target (left out when it does
 * not exist) and, below Depth 0, its members. */
int dav_propfind_render(struct dav_ctx *c);
void dav_do_proppatch(struct dav_ctx *c);
void dav_do_mkcol(struct dav_ctx *c);
void dav_do_delete(struct dav_ctx *c);
/* The collection at path[0..len) and every collection below it: a store status. */
int dav_delete_tree(struct dav_ctx *c, const char *path, size_t len);
/* COPY and MOVE (dav_copymove.c) */
void dav_do_copymove(struct dav_ctx *c);
/* The source object (c->obj) checked as a PUT of its body at the target
 * would be by the target's collection type: 0 or the status answered. */
int dav_copy_check(struct dav_ctx *c);
void dav_do_get(struct dav_ctx *c);
void dav_do_put(struct dav_ctx *c);
/* Body bytes of a PUT, with the writer lock held: HTTPD_BODY_OK or the
 * status answered. */
int dav_put_take(struct dav_ctx *c, const uint8_t *data, size_t len);
/* The PUT body is over the resource size limit: answers, returns the status. */
int dav_put_too_large(struct dav_ctx *c);

/* ---- dav_handler.c ------------------------------------------------------- */

/* Run the request; the response is started unless it waits for the lock. */
void dav_end_request(struct dav_ctx *c);

#endif
