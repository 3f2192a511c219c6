/*
 * What the files of the store share: the on-flash format, the RAM index's
 * slot states, the address arithmetic of the ring, and the functions one
 * file provides to the others. Private to firmware/app/store/: the rest of
 * the firmware sees store.h only. The full description is docs/store.md.
 *
 * Flash = a ring of erase blocks. The log is `nused` consecutive blocks from
 * `tail`; records are appended at `write_addr` and may span blocks.
 *
 * Block header (24 bytes, little-endian):
 *   0 magic "LDB1"   4 block_seq (+1 per opened block)   8 rec_seq_base
 *  12 first_rec: offset in the data area of the first record starting in this
 *     block (0xFFFFFFFF: none, a record covers the whole block)
 *  16 crc32 of bytes 0..15    20 state: upper half 0xFFFF live (lower half 0:
 *     sealed, its records checked), 0 obsolete
 * Record (16-byte header + payload):
 *   0 magic 0x4C52   2 type   3 version (1)   4 payload length   8 seq
 *  12 crc32 of header bytes 0..11 and the payload
 *
 * Why a power cut loses nothing acknowledged and shows nothing half-written:
 *  - A record's payload is programmed first, its header last, then sync();
 *    only then does the API return OK. A record counts only if its header is
 *    complete and the CRC matches, so a torn record is simply not there
 *    (store_log.c).
 *  - Replay reads records in log order; at a blank or invalid header it skips
 *    to the next block's first_rec (a torn record never has successors in its
 *    block: after a torn tail, mount starts writing in a fresh block)
 *    (store_mount.c).
 *  - Each change is one record (a MOVE: two, the first counting only with
 *    the second: REC_MPUT; a PROPPATCH: one, with all of its properties);
 *    later records store_supersede earlier ones.
 *    Compaction copies the live records of the tail block byte for byte to
 *    the head (same seq, same CRC), syncs, marks the tail obsolete, syncs,
 *    then erases it. Up to the obsolete mark the originals are intact; after
 *    it the copies are durable. A half-erased block is ignored because its
 *    obsolete mark (0 bits) cannot turn back into all ones without the
 *    header CRC failing as well. Sealed blocks (lower half of the state word
 *    programmed to zero) hold only complete records: replay reads their
 *    headers, not their payloads (docs/store.md, "Sealed blocks").
 *  - Compaction is FIFO (oldest block first), so a tombstone or collection
 *    delete in the tail supersedes nothing still on flash: it can be
 *    dropped. Dropping a tombstone first raises the collection's history
 *    floor with a FLOOR record, so sync tokens older than the lost history
 *    are refused instead of missing a deletion (RFC 6578 section 3.2)
 *    (store_compact.c).
 *
 * The state is the caller's struct store, passed to every function: the
 * store keeps no variables of its own.
 */
#ifndef LITEDAV_STORE_INTERNAL_H
#define LITEDAV_STORE_INTERNAL_H

#include "store/store.h"

/* ---- the format -------------------------------------------------------- */

#define BLOCK_MAGIC 0x3142444Cu  /* "LDB1" */
#define BHDR 24
#define BHDR_STATE 20
/* state word: the upper half all ones while the block is live; the lower
 * half programmed to zero seals it (every record starting in it is complete
 * and was checked: replay reads only their headers); obsolete is all zero */
#define STATE_LIVE(w) (((w) >> 16) == 0xFFFFu)
#define STATE_SEALED(w) (((w) & 0xFFFFu) == 0)
#define FIRST_NONE 0xFFFFFFFFu

#define REC_MAGIC 0x4C52u
#define REC_VERSION 1
#define RHDR 16

enum rec_type {
    REC_PAD = 1,       /* aborted write: skipped */
    REC_USER = 2,      /* name_len u8, name, secret_len u8, secret */
    REC_COLL = 3,      /* id u32, owner_len u8, owner, path_len u8, path, nprops u8,
                          nprops x (prop u8, len u16, value) */
    REC_COLL_DEL = 4,  /* id u32 */
    REC_FLOOR = 5,     /* id u32, history floor u32 */
    REC_PUT = 6,       /* coll id u32, sync u32, name_len u8, name, body */
    REC_DEL = 7,       /* coll id u32, sync u32, name_len u8, name */
    /* A MOVE (store_copy_object): MPUT is a PUT of the destination that counts
     * only when the record right after it is its MDEL, the DEL of the source;
     * a power cut between the two leaves neither. An MDEL is written nowhere
     * else, and compaction copies a live MPUT as a PUT (it drops tombstones),
     * so no later record can complete a MOVE that was cut. */
    REC_MPUT = 8,      /* as PUT */
    REC_MDEL = 9,      /* as DEL */
    /* An object with dead properties (RFC 4918 section 4): its property list
     * sits between the name and the body, and its ETag is kept in the record
     * (a PROPPATCH writes a new version with the same body and ETag). Objects
     * without dead properties keep the PUT and MPUT records above. */
    REC_PPUT = 10,     /* coll id u32, sync u32, name_len u8, name, etag u32,
                          props_len u16, props (store.h), body */
    REC_PMPUT = 11,    /* as PPUT: the destination of a MOVE, as MPUT */
};
#define REC_TYPE_MAX REC_PMPUT
#define OBJ_PREFIX 9   /* coll id, sync, name_len */
#define PROPS_PREFIX 6 /* etag, props_len: after the name of a PPUT or PMPUT */

/* the kinds of object record */
static inline int rec_is_put(uint8_t t) { return t == REC_PUT || t == REC_MPUT || t == REC_PPUT || t == REC_PMPUT; }
static inline int rec_is_del(uint8_t t) { return t == REC_DEL || t == REC_MDEL; }
static inline int rec_is_move_put(uint8_t t) { return t == REC_MPUT || t == REC_PMPUT; }
static inline int rec_has_props(uint8_t t) { return t == REC_PPUT || t == REC_PMPUT; }
/* the put record of an object: a MOVE's or not, with a property list or not */
static inline uint8_t rec_put_type(int move, int props)
{
    return props ? (move ? REC_PMPUT : REC_PPUT) : (move ? REC_MPUT : REC_PUT);
}
#define FLOOR_RECORD (RHDR + 8)
/* what store_rec_check_crc finds at an address */
enum rec_check { REC_VALID, REC_BLANK, REC_BAD };

/* the RAM index's slots */
enum slot_state { SLOT_EMPTY = 0, SLOT_LIVE = 1, SLOT_TOMB = 2 };
#define SLOT_TAG_KNOWN 1u   /* flags: tag holds the object's tag */
#define LINK_NONE 0xFFFFu   /* end of a member list */

/* bytes read or programmed at a time through a buffer on the stack */
#define IO_CHUNK 128

/* a record header as read (store_rec_check_crc) */
struct rhdr {
    uint8_t type;
    uint32_t len, seq;
    uint8_t raw[RHDR];
};

/* a block header as read (store_read_bhdr) */
struct bhdr {
    uint32_t seq, rec_seq_base, first;
    int crc_ok, live, sealed;
    int blank;  /* all BHDR bytes erased */
};

/* a collection payload, parsed in place (store_coll_parse) */
struct coll_view {
    const uint8_t *owner, *path, *props;
    uint32_t owner_len, path_len, props_len, nprops;
};

/* ---- little helpers ---------------------------------------------------- */

static inline void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t fnv1a(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t h = 2166136261u;
    while (len--)
        h = (h ^ *p++) * 16777619u;
    return h;
}

static inline int io_fail(struct store *s)
{
    s->failed = 1;
    return STORE_ERR_IO;
}

/* ---- addresses: the ring of blocks ------------------------------------- */

/* These run several times per record at mount (boot time is proportional to the
 * records): a shift for power-of-two blocks, and a modulo only where the value
 * can be a ring length or more past the range (a division is tens of cycles on
 * a small CPU). Each returns what the plain division / modulo would. */
static inline uint32_t blk_of(const struct store *s, uint32_t a)
{
    return s->block_shift ? a >> s->block_shift : a / s->block_size;
}

static inline uint32_t data_start(const struct store *s, uint32_t b) { return b * s->block_size + BHDR; }

static inline uint32_t blk_end(const struct store *s, uint32_t b) { return (b + 1) * s->block_size; }

/* x % nblocks, for x usually below 2 * nblocks (store_log.c) */
uint32_t store_ring_mod(const struct store *s, uint32_t x);

static inline uint32_t ring_next(const struct store *s, uint32_t b) { return store_ring_mod(s, b + 1); }

static inline uint32_t ring_dist(const struct store *s, uint32_t from, uint32_t to)
{
    return store_ring_mod(s, to + s->nblocks - from);
}

static inline uint32_t head_blk(const struct store *s) { return store_ring_mod(s, s->tail + s->nused - 1); }

/* Is block b one of the log's? (store_log.c) */
int store_in_log(const struct store *s, uint32_t b);

/* blocks outside the log */
static inline uint32_t free_blocks(const struct store *s) { return s->nblocks - s->nused; }

/* ---- the object index -------------------------------------------------- */

/* objects and tombstones the index holds: 7/8 of its slots */
static inline uint32_t index_limit(const struct store *s)
{
    return s->mem.index_slots - s->mem.index_slots / 8;
}

/* where a (collection slot, name hash) starts probing */
static inline uint32_t index_home(const struct store *s, uint32_t coll, uint32_t hash)
{
    uint32_t h = hash ^ (coll * 0x9E3779B1u);
    h ^= h >> 16;
    return h % s->mem.index_slots;
}

/* The largest object record: a body of max_object_size under the longest
 * name. An object's property list shares that bound with its body. */
static inline uint32_t obj_record_max(const struct store *s)
{
    return RHDR + OBJ_PREFIX + STORE_NAME_MAX + s->cfg.max_object_size;
}

/* Index slot e now holds the object version whose ETag is etag (its record's
 * sequence, or a PPUT's ETag field). */
static inline void slot_etag_set(struct store *s, uint32_t e, uint32_t etag)
{
    if (s->mem.index_etags)
        s->mem.index_etags[e] = etag;
}

/* STORE_OK when a write may start: not failed, no streamed put open */
static inline int writable(const struct store *s)
{
    if (s->failed)
        return STORE_ERR_IO;
    return s->put_active ? STORE_ERR_BUSY : STORE_OK;
}

/* Marks the code of the mount's scan of every block header (find_log(), store_read_bhdr(); the
 * flash driver's read path runs under them), once per block: 8,192 times on a 32 MiB chip. A
 * port whose CPU has a small direct-mapped instruction cache defines it to place these functions
 * side by side, so that the scan never evicts its own lines whatever the layout of the rest of
 * the code; by default it is nothing. */
#ifndef STORE_SCAN_CODE
#define STORE_SCAN_CODE
#endif

/* ---- store_log.c: ring, block headers, writing and reading records ----- */

uint32_t store_adv(const struct store *s, uint32_t a, uint32_t n);
uint32_t store_log_pos(const struct store *s, uint32_t a);
int store_lread(struct store *s, uint32_t a, void *buf, uint32_t len);
/* 1 if all 0xFF (*programmed: how many bytes are not), 0 if not, or < 0 */
int store_is_blank(struct store *s, uint32_t a, uint32_t len, uint32_t *programmed);
STORE_SCAN_CODE int store_read_bhdr(struct store *s, uint32_t b, struct bhdr *h);
/* seal block b (only when its records are complete and durable) */
int store_seal_block(struct store *s, uint32_t b);
int store_block_sealed(struct store *s, uint32_t b, int *sealed);
/* after a sync: seal the blocks behind the write position */
int store_seal_behind(struct store *s);
/* blocks that must be opened for `bytes` more at write_addr */
uint32_t store_blocks_needed(const struct store *s, uint32_t bytes);
/* start block b as the new head */
int store_open_block(struct store *s, uint32_t b);
/* program at a log address, opening blocks and splitting at pages */
int store_prog(struct store *s, uint32_t a, const void *data, uint32_t len);
void store_make_rhdr(uint8_t *raw, uint8_t type, uint32_t len, uint32_t seq);
/* a record is written by store_wr_begin, store_wr_data (its payload, in pieces) and
 * store_wr_commit (its header; with sync, then sync() and the seals behind) */
void store_wr_begin(struct store *s, uint8_t type, uint32_t len);
int store_wr_data(struct store *s, const void *data, uint32_t len);
int store_wr_commit(struct store *s, int sync);
/* REC_VALID, REC_BLANK, REC_BAD or < 0; with_crc 0 skips the payload */
int store_rec_check_crc(struct store *s, uint32_t a, struct rhdr *h, int with_crc);
int store_rec_len_at(struct store *s, uint32_t a, uint32_t *len);
/* an object record's collection id, sync and name (into name_buf) */
int store_read_obj_prefix(struct store *s, uint32_t a, uint32_t *coll_id, uint32_t *sync,
                    uint32_t *name_len);

/* ---- store_index.c: tables, object index, member lists ----------------- */

/* collection slot of an id, or -1 */
int store_coll_slot_by_id(struct store *s, uint32_t id);
int store_coll_parse(const uint8_t *buf, uint32_t len, struct coll_view *v);
/* a collection record's payload into scratch, parsed */
int store_coll_load(struct store *s, uint32_t rec_addr, uint32_t *len, struct coll_view *v);
/* *found: the user's slot, or -1 */
int store_user_slot_by_name(struct store *s, const uint8_t *name, uint32_t len, uint32_t hash, int *found);
/* *found: the index slot of (collection slot, name), or -1 */
int store_idx_lookup(struct store *s, uint32_t coll, const uint8_t *name, uint32_t len,
               uint32_t hash, int *found);
/* the index slot holding the record at addr, or -1 */
int store_idx_find_addr(const struct store *s, uint32_t coll, uint32_t hash, uint32_t addr);
/* after replay: build every member list */
void store_chains_build(struct store *s);
/* a new slot (linked into its list when the lists are on), or -1 at limit */
int store_idx_insert(struct store *s, uint32_t coll, uint32_t hash, uint32_t limit);
void store_idx_remove(struct store *s, uint32_t i);
/* forget a collection's slots: all, or tombstones up to floor */
int store_idx_drop(struct store *s, uint32_t coll, int tombs_only, uint32_t floor);

/* ---- store_compact.c: space and compaction ----------------------------- */

/* the record at old_addr is no longer live */
void store_supersede(struct store *s, uint32_t old_addr);
/* make room for `bytes` at the head, compacting as needed */
int store_ensure_space(struct store *s, uint32_t bytes);
/* the index is full: compact until tombstones drop out of it */
int store_evict_tombstones(struct store *s);

/* ---- store_collections.c ----------------------------------------------- */

/* the number of properties in a property list (store.h), or -1 when it is
 * malformed or holds more than 255 */
int store_props_count(const uint8_t *list, size_t len);

/* ---- store_objects.c --------------------------------------------------- */

/* the collection slot and index slot (or -1) of an object, arguments checked */
int store_obj_lookup(struct store *s, uint32_t coll_id, const char *name, size_t len,
               int *coll_slot, int *entry);

#endif
