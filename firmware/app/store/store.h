/* Power-fail-safe log-structured store for calendar collections, objects,
 * users and sync history, on a NOR flash (flash.h). Format and safety
 * argument: docs/store.md and the comment at the top of store_internal.h.
 *
 * Memory: no allocation. The caller provides the RAM tables (struct
 * store_memory, sized with STORE_MEMORY_DEFINE); RAM grows with the number of
 * objects (20 bytes per index slot), never with their size. Every write
 * returns STORE_OK only once its record is programmed and flash sync()
 * returned: the HTTP layer may answer 201/204 then.
 *
 * The store is single-threaded: call it from one context (the main loop). */
#ifndef LITEDAV_STORE_H
#define LITEDAV_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "platform/flash.h"

#define STORE_NAME_MAX 255          /* object resource name, bytes */
#define STORE_PATH_MAX 255          /* collection path */
#define STORE_OWNER_MAX 64          /* user name (collection owner, user table) */
#define STORE_SECRET_MAX 64         /* password hash bytes */
#define STORE_COLL_RECORD_MAX 1024  /* owner + path + all properties of a collection */

enum store_status {
    STORE_OK = 0,
    STORE_ERR_NOT_FOUND = -1,
    STORE_ERR_PRECONDITION = -2,  /* If-Match / If-None-Match failed: 412 */
    STORE_ERR_EXISTS = -3,        /* collection path already taken */
    STORE_ERR_TOO_LARGE = -4,     /* object > max_object_size: CalDAV max-resource-size */
    STORE_ERR_COLL_FULL = -5,     /* objects per collection: CalDAV max-instances / 507 */
    STORE_ERR_INDEX_FULL = -6,    /* RAM index full: 507 */
    STORE_ERR_NO_SPACE = -7,      /* flash full even after compaction: 507 */
    STORE_ERR_TOO_MANY_COLLECTIONS = -8,
    STORE_ERR_TOO_MANY_USERS = -9,
    STORE_ERR_SYNC_TOKEN = -10,   /* token older than the kept history, or from the
                                     future: DAV:valid-sync-token (RFC 6578 3.2) */
    STORE_ERR_INVALID = -11,      /* bad argument (name length, geometry, ...) */
    STORE_ERR_BUSY = -12,         /* a streamed put is in progress */
    STORE_ERR_IO = -13,           /* flash error or power loss: remount */
};

enum store_prop {
    STORE_PROP_DISPLAYNAME = 1,   /* DAV:displayname */
    STORE_PROP_DESCRIPTION = 2,   /* CALDAV:calendar-description */
    STORE_PROP_COLOR = 3,         /* Apple calendar-color */
    STORE_PROP_TIMEZONE = 4,      /* CALDAV:calendar-timezone */
    STORE_PROP_COMPONENTS = 5,    /* CALDAV:supported-calendar-component-set, as the layer
                                     above encodes it (a bit mask) */
    STORE_PROP_DEAD = 0x80,       /* a dead property (RFC 4918 section 4), any number of them:
                                     its name and value as the WebDAV layer encodes them */
};

/* A resource's property list, as the store keeps it with the resource: per
 * property its key (enum store_prop, u8), value length (u16, little-endian)
 * and value, one after the other. A collection's list holds its live
 * properties and its dead ones, an object's its dead ones only. */
#define STORE_PROPS_MAX 1024        /* an object's list, bytes; a collection's shares
                                       STORE_COLL_RECORD_MAX with its owner and path */
#define STORE_PROP_HEAD 3           /* key, value length */

struct store_config {
    uint32_t max_object_size;            /* body bytes, e.g. 65536 */
    uint32_t max_objects_per_collection;
};

/* RAM tables; the layouts are private to the store. An index slot is also a
 * link of its collection's member list (next: the following slot, in name
 * hash order), so a listing costs O(members), not O(slots); tag is the low
 * half of a caller's tag (store_tag_next), known once set. */
struct store_index_slot {
    uint32_t addr, name_hash, sync_seq;
    uint16_t coll, next, tag;
    uint8_t state, flags;
};
struct store_coll_slot {
    uint32_t id, rec_addr, rec_seq, floor_addr, floor, sync_seq, path_hash, objects;
    uint16_t head;           /* first index slot of the member list */
    uint8_t used, floor_pending;
};
struct store_user_slot { uint32_t addr, rec_seq, name_hash; uint8_t used; };

struct store_memory {
    struct store_index_slot *index;
    uint32_t index_slots;   /* objects + tombstones held: 7/8 of this; at most 65,535 */
    struct store_coll_slot *colls;
    uint32_t coll_slots;
    struct store_user_slot *users;
    uint32_t user_slots;
    /* Optional (NULL: not kept): index_slots ETags, each live slot's, so that
     * store_object_is_current answers from RAM without reading the flash. */
    uint32_t *index_etags;
};

/* Static RAM for a store: STORE_MEMORY_DEFINE(mem, 4096, 16, 8) defines
 * `struct store_memory mem` backed by static arrays. store_mount() clears
 * them, so a port may keep them out of .bss (LITEDAV_NOINIT, app_config.h). */
#ifndef LITEDAV_NOINIT
#define LITEDAV_NOINIT
#endif
#define STORE_MEMORY_DEFINE(name, nindex, ncoll, nusers)                              \
    static struct store_index_slot name##_index[nindex] LITEDAV_NOINIT;              \
    static struct store_coll_slot name##_colls[ncoll] LITEDAV_NOINIT;                \
    static struct store_user_slot name##_users[nusers] LITEDAV_NOINIT;               \
    static struct store_memory name = {name##_index, nindex, name##_colls, ncoll,   \
                                       name##_users, nusers, NULL}

struct store_mount_stats {
    uint32_t records;        /* valid records replayed */
    uint32_t torn_bytes;     /* programmed bytes dropped (torn tails, aborted writes) */
    uint32_t blocks_used;    /* blocks in the log */
    uint32_t stale_blocks;   /* blocks outside the log holding data (erased when reused) */
    uint32_t collections, objects, tombstones, users;
};

struct store_space {
    uint32_t total;          /* log capacity in bytes (block headers excluded) */
    uint32_t used;           /* bytes between tail and head of the log */
    uint32_t live;           /* bytes of records still needed */
    uint32_t free;           /* bytes a write may still take (reserve excluded) */
    uint32_t reserve;        /* bytes kept for compaction */
    uint32_t index_used, index_max;
};

struct store_object_info {
    uint32_t etag;           /* strong ETag: the sequence of the record that stored the body,
                                unique forever */
    uint32_t size;           /* body bytes */
    uint32_t sync_seq;       /* collection sync sequence of the last change */
    uint32_t props_len;      /* bytes of its property list (dead properties) */
};

struct store_entry {
    const char *name;        /* valid during the callback only */
    size_t name_len;
    uint32_t etag, size, sync_seq;
    uint32_t name_hash;      /* the listing order (store_list_from) */
    int deleted;             /* tombstone (changes_since only) */
};
/* Return nonzero to stop the enumeration. Must not modify the store. */
typedef int (*store_entry_cb)(void *ctx, const struct store_entry *e);

struct store_collection {
    uint32_t id;             /* never reused */
    const char *owner, *path;   /* valid during the callback only */
    size_t owner_len, path_len;
    uint32_t sync_seq;       /* current sync token / CTag */
    uint32_t history_floor;  /* oldest token changes_since still accepts */
    uint32_t objects;
};
typedef int (*store_coll_cb)(void *ctx, const struct store_collection *c);

struct store {
    const struct flash *flash;
    struct store_config cfg;
    struct store_memory mem;
    uint32_t nblocks, block_size, data_size;
    uint32_t block_shift;        /* log2(block_size) if a power of two, else 0 (a division) */
    uint32_t tail, nused;        /* log = nused blocks from tail, ring order */
    uint32_t write_addr;         /* where the next record starts */
    uint32_t next_block_seq, next_rec_seq;
    uint32_t reserve_blocks, max_record;
    uint32_t live_bytes, index_used;
    int failed;
    int chains;                  /* member lists maintained (off during replay) */
    int replay_floor_pass;       /* mount: a FLOOR came before its collection */
    uint32_t compactions;        /* blocks compacted since mount */
    uint32_t seal_next;          /* first block the writer has not sealed yet */
    uint32_t coll_hint;          /* collection slot found last (coll_slot_by_id) */
    /* the record being written */
    uint32_t wr_start, wr_end, wr_pos, wr_crc, wr_len, wr_type, wr_seq;
    /* streamed put */
    int put_active;
    uint32_t put_coll, put_sync, put_left, put_name_hash;
    uint8_t put_name_len;
    uint8_t name_buf[STORE_NAME_MAX + 1];
    uint8_t scratch[STORE_COLL_RECORD_MAX];
};

/* Replay the log (or start an empty store on a blank flash). */
int store_mount(struct store *s, const struct flash *f, const struct store_config *cfg,
                const struct store_memory *mem, struct store_mount_stats *stats);

/* Users (HTTP Basic): set (add or replace) and look up the password hash. */
int store_user_set(struct store *s, const char *name, const uint8_t *secret, size_t secret_len);
int store_user_get(struct store *s, const char *name, uint8_t *secret, size_t cap, size_t *len);

/* Collections. */
int store_coll_create(struct store *s, const char *owner, const char *path, uint32_t *id);
int store_coll_find(struct store *s, const char *path, size_t path_len, uint32_t *id);
int store_coll_delete(struct store *s, uint32_t id);
/* A collection with id's owner and properties at path: rename 1 moves id
 * there (members and sync history stay), 0 creates a new, empty one. */
int store_coll_copy(struct store *s, uint32_t id, const char *path, int rename, uint32_t *new_id);
int store_coll_info(struct store *s, uint32_t id, struct store_collection *info);
int store_coll_list(struct store *s, store_coll_cb cb, void *ctx);
/* len 0 removes the property. */
int store_coll_set_prop(struct store *s, uint32_t id, enum store_prop prop, const void *value, size_t len);
int store_coll_get_prop(struct store *s, uint32_t id, enum store_prop prop, void *buf, size_t cap, size_t *len);
/* The collection's whole property list: *list points into the store's
 * memory, valid until the next store call. */
int store_coll_props(struct store *s, uint32_t id, const uint8_t **list, size_t *len);
/* Replace the collection's property list by list (not the store's memory):
 * one record, so every property changes or none, across a power cut too.
 * STORE_ERR_TOO_LARGE when the record would pass STORE_COLL_RECORD_MAX. */
int store_coll_set_props(struct store *s, uint32_t id, const uint8_t *list, size_t len);

/* Objects. if_match: NULL or the ETag the client sent (RFC 9110 13.1.1);
 * if_none_match: 1 for "If-None-Match: *" (13.1.2). */
int store_put_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                     const void *body, uint32_t body_len, const uint32_t *if_match,
                     int if_none_match, uint32_t *etag);
/* The same, streamed: begin checks everything (limits, preconditions, space),
 * write appends body bytes, commit makes it durable. abort leaves no trace. */
int store_put_begin(struct store *s, uint32_t coll, const char *name, size_t name_len,
                    uint32_t body_len, const uint32_t *if_match, int if_none_match);
int store_put_write(struct store *s, const void *data, uint32_t len);
int store_put_commit(struct store *s, uint32_t *etag);
int store_put_abort(struct store *s);

/* Read up to cap body bytes from offset; *got is the count (0 at the end). */
int store_get_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                     uint32_t offset, void *buf, uint32_t cap, uint32_t *got,
                     struct store_object_info *info);
/* 1 when the live object (coll, name) is the version with this ETag, else 0
 * (or a store status < 0). An ETag is unique forever, so with index_etags
 * kept this is a RAM lookup: no flash read, not even of the name. */
int store_object_is_current(struct store *s, uint32_t coll, const char *name, size_t name_len,
                            uint32_t etag);
int store_delete_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                        const uint32_t *if_match);
/* The live object's property list (*len 0: none), as store_coll_props. */
int store_obj_props(struct store *s, uint32_t coll, const char *name, size_t name_len,
                    const uint8_t **list, size_t *len);
/* Replace it: a new version of the object with the same body and ETag and
 * the next sync sequence, one record. STORE_ERR_TOO_LARGE past
 * STORE_PROPS_MAX, or when list and body together would pass the largest
 * object record (max_object_size plus a 255-byte name). A PUT of a new body
 * keeps the list. */
int store_obj_set_props(struct store *s, uint32_t coll, const char *name, size_t name_len,
                        const uint8_t *list, size_t len);
/* COPY (move 0) or MOVE (move 1) of the live object src of src_coll to dst
 * of dst_coll with its property list, replacing a live dst (its new ETag in
 * *etag). A MOVE is atomic across a power cut: after a remount the object
 * is at one of the two names, never both or neither. STORE_ERR_INVALID when
 * src and dst are the same object. */
int store_copy_object(struct store *s, uint32_t src_coll, const char *src, size_t src_len,
                      uint32_t dst_coll, const char *dst, size_t dst_len, int move, uint32_t *etag);
/* Live members in the store's order: ascending name_hash (members of equal
 * hash in no particular order). Costs O(members of the collection). */
int store_list(struct store *s, uint32_t coll, store_entry_cb cb, void *ctx);
/* The same from the first member whose name_hash is >= from_hash: a caller
 * that lists in (name_hash, name) order resumes where it stopped without
 * reading the members before it. */
int store_list_from(struct store *s, uint32_t coll, uint32_t from_hash, store_entry_cb cb, void *ctx);
/* RFC 6578 section 3.8: members changed after token (0: initial sync, live
 * members only), with tombstones for deletions, in list order. */
int store_changes_since(struct store *s, uint32_t coll, uint32_t token, store_entry_cb cb, void *ctx);
/* The same, leaving out the changes at or below after_seq too (a caller
 * resuming a listing in sync order: only those are read from the flash). */
int store_changes_after(struct store *s, uint32_t coll, uint32_t token, uint32_t after_seq,
                        store_entry_cb cb, void *ctx);

/* Tags: a caller's 32-bit digest of an object's content (CalDAV: its UID),
 * kept in RAM only (16 bits of it) for the live objects. A put, a remount or
 * a new version forget it. store_tag_next walks the collection's live
 * members that may carry `tag`: those whose tag is unknown or matches, so a
 * caller looking for a duplicate reads only those (and sets the tags it
 * learns on the way with store_tag_set). *pos starts at STORE_TAG_START;
 * returns 1 with the next candidate's name in name (NUL-terminated, cap >
 * STORE_NAME_MAX) and *known (its tag was known and matched), 0 at the end,
 * or a store status. The store must not be written between calls (tags
 * excepted). */
#define STORE_TAG_START 0xFFFFFFFFu
int store_tag_next(struct store *s, uint32_t coll, uint32_t tag, uint32_t *pos, char *name,
                   size_t cap, size_t *name_len, int *known);
int store_tag_set(struct store *s, uint32_t coll, const char *name, size_t name_len, uint32_t tag);
/* A tag for any bytes (CalDAV: a UID): the FNV-1a hash the store keys names with. */
uint32_t store_name_hash(const void *data, size_t len);

/* Reclaim space: compact up to max_blocks log blocks (0: one pass over the
 * log as it is now). *reclaimed (may be NULL) gets the blocks freed. */
int store_compact(struct store *s, uint32_t max_blocks, uint32_t *reclaimed);
void store_space(const struct store *s, struct store_space *sp);

/* Consistency check: the log's blocks chain, every collection, user, floor and
 * object the RAM tables hold is a valid record (CRC) of the right kind and
 * collection, every object is found by its name, the counts and live bytes
 * add up, and the flash is blank where the next record goes. Read-only.
 * STORE_OK with problems == 0: consistent; first_problem says what failed. */
struct store_check {
    uint32_t problems;
    const char *first_problem;
    uint32_t first_problem_addr;
    uint32_t blocks, records, collections, objects, tombstones, users;
    uint32_t sealed;         /* log blocks sealed (replay reads their headers only) */
};
int store_check(struct store *s, struct store_check *r);
/* The same without reading payloads for their CRC (headers, prefixes, names,
 * lists and counts only): right after store_mount, whose replay checked the
 * CRC of every record outside sealed blocks (docs/store.md). */
int store_check_quick(struct store *s, struct store_check *r);

const char *store_strerror(int status);

#endif
