/*
 * Log-structured store on NOR flash (the full description is docs/store.md).
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
 *    complete and the CRC matches, so a torn record is simply not there.
 *  - Replay reads records in log order; at a blank or invalid header it skips
 *    to the next block's first_rec (a torn record never has successors in its
 *    block: after a torn tail, mount starts writing in a fresh block).
 *  - Each change is one record; later records supersede earlier ones.
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
 *    are refused instead of missing a deletion (RFC 6578 section 3.2).
 */
#include "store/store.h"

#include <string.h>

#include "util/crc32.h"

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
};
#define OBJ_PREFIX 9   /* coll id, sync, name_len */
#define FLOOR_RECORD (RHDR + 8)

enum slot_state { SLOT_EMPTY = 0, SLOT_LIVE = 1, SLOT_TOMB = 2 };
#define SLOT_TAG_KNOWN 1u   /* flags: tag holds the object's tag */
#define LINK_NONE 0xFFFFu   /* end of a member list */
enum rec_check { REC_VALID, REC_BLANK, REC_BAD };

#define IO_CHUNK 128

struct rhdr {
    uint8_t type;
    uint32_t len, seq;
    uint8_t raw[RHDR];
};

/* ---- little helpers ---------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t fnv1a(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t h = 2166136261u;
    while (len--)
        h = (h ^ *p++) * 16777619u;
    return h;
}

static int io_fail(struct store *s)
{
    s->failed = 1;
    return STORE_ERR_IO;
}

/* ---- addresses: the ring of blocks ------------------------------------- */

/* These run several times per record at mount (boot time is proportional to the
 * records): a shift for power-of-two blocks, and a modulo only where the value
 * can be a ring length or more past the range (a division is tens of cycles on
 * a small CPU). Each returns what the plain division / modulo would. */
static uint32_t blk_of(const struct store *s, uint32_t a)
{
    return s->block_shift ? a >> s->block_shift : a / s->block_size;
}
static uint32_t data_start(const struct store *s, uint32_t b) { return b * s->block_size + BHDR; }
static uint32_t blk_end(const struct store *s, uint32_t b) { return (b + 1) * s->block_size; }
/* x % nblocks, for x usually below 2 * nblocks */
static uint32_t ring_mod(const struct store *s, uint32_t x)
{
    if (x < s->nblocks)
        return x;
    x -= s->nblocks;
    return x < s->nblocks ? x : x % s->nblocks;
}
static uint32_t ring_next(const struct store *s, uint32_t b) { return ring_mod(s, b + 1); }
static uint32_t ring_dist(const struct store *s, uint32_t from, uint32_t to)
{
    return ring_mod(s, to + s->nblocks - from);
}
static uint32_t head_blk(const struct store *s) { return ring_mod(s, s->tail + s->nused - 1); }
static int in_log(const struct store *s, uint32_t b)
{
    return s->nused && ring_dist(s, s->tail, b) < s->nused;
}

/* n bytes further along the log; an address never rests on a block end */
static uint32_t adv(const struct store *s, uint32_t a, uint32_t n)
{
    uint32_t b = blk_of(s, a), off = a - data_start(s, b) + n;
    if (off < s->data_size)  /* within the block */
        return a + n;
    b = ring_mod(s, b + off / s->data_size);
    return data_start(s, b) + off % s->data_size;
}

/* position within the log, counting data bytes from the tail's data start */
static uint32_t log_pos(const struct store *s, uint32_t a)
{
    uint32_t b = blk_of(s, a);
    return ring_dist(s, s->tail, b) * s->data_size + (a - data_start(s, b));
}

static int lread(struct store *s, uint32_t a, void *buf, uint32_t len)
{
    uint8_t *p = buf;
    while (len) {
        uint32_t room = blk_end(s, blk_of(s, a)) - a, n = len < room ? len : room;
        if (flash_read(s->flash, a, p, n))
            return io_fail(s);
        p += n;
        len -= n;
        a = adv(s, a, n);
    }
    return STORE_OK;
}

static int is_blank(struct store *s, uint32_t a, uint32_t len, uint32_t *programmed)
{
    uint8_t buf[IO_CHUNK];
    uint32_t i, count = 0;
    while (len) {
        uint32_t n = len < IO_CHUNK ? len : IO_CHUNK;
        if (flash_read(s->flash, a, buf, n))
            return io_fail(s);
        for (i = 0; i < n; i++)
            count += buf[i] != 0xff;
        a += n;
        len -= n;
    }
    if (programmed)
        *programmed = count;
    return count == 0;
}

/* ---- block headers ----------------------------------------------------- */

struct bhdr {
    uint32_t seq, rec_seq_base, first;
    int crc_ok, live, sealed;
};

static int read_bhdr(struct store *s, uint32_t b, struct bhdr *h)
{
    uint8_t raw[BHDR];
    if (flash_read(s->flash, b * s->block_size, raw, BHDR))
        return io_fail(s);
    h->crc_ok = get32(raw) == BLOCK_MAGIC && get32(raw + 16) == crc32_update(0, raw, 16);
    h->live = h->crc_ok && STATE_LIVE(get32(raw + BHDR_STATE));
    h->sealed = h->live && STATE_SEALED(get32(raw + BHDR_STATE));
    h->seq = get32(raw + 4);
    h->rec_seq_base = get32(raw + 8);
    h->first = get32(raw + 12);
    if (h->first != FIRST_NONE && h->first >= s->data_size)
        h->crc_ok = h->live = h->sealed = 0;
    return STORE_OK;
}

/* Seal block b: program the low half of its state word to zero. Only for a
 * block whose records are all complete and durable (or were checked by a
 * replay); a cut during the program leaves it unsealed, or sealed: both true. */
static int seal_block(struct store *s, uint32_t b)
{
    static const uint8_t zero[2] = {0, 0};
    if (flash_program(s->flash, b * s->block_size + BHDR_STATE, zero, 2))
        return io_fail(s);
    return STORE_OK;
}

static int block_sealed(struct store *s, uint32_t b, int *sealed)
{
    uint8_t raw[4];
    if (flash_read(s->flash, b * s->block_size + BHDR_STATE, raw, 4))
        return io_fail(s);
    *sealed = STATE_LIVE(get32(raw)) && STATE_SEALED(get32(raw));
    return STORE_OK;
}

/* ---- writing records --------------------------------------------------- */

/* After a sync: every record starting in a block behind the write position
 * is complete and durable, so those blocks are sealed. */
static int seal_behind(struct store *s)
{
    uint32_t wb = s->write_addr / s->block_size;
    int rc;
    while (s->seal_next != wb && s->nused &&
           (s->seal_next + s->nblocks - s->tail) % s->nblocks < s->nused) {
        if ((rc = seal_block(s, s->seal_next)) != STORE_OK)
            return rc;
        s->seal_next = (s->seal_next + 1) % s->nblocks;
    }
    return STORE_OK;
}

static uint32_t free_blocks(const struct store *s) { return s->nblocks - s->nused; }

/* blocks that must be opened for `bytes` more at write_addr */
static uint32_t blocks_needed(const struct store *s, uint32_t bytes)
{
    uint32_t b = blk_of(s, s->write_addr);
    if (in_log(s, b)) {
        uint32_t room = blk_end(s, b) - s->write_addr;
        if (bytes <= room)
            return 0;
        bytes -= room;
    }
    return (bytes + s->data_size - 1) / s->data_size;
}

/* Start block b as the new head: erase unless blank, then its header. The
 * first_rec field points at the record start or end inside b, if any. */
static int open_block(struct store *s, uint32_t b)
{
    uint8_t raw[BHDR];
    uint32_t first = FIRST_NONE;
    int blank;

    if (s->nused >= s->nblocks || b != (s->nused ? ring_next(s, head_blk(s)) : s->tail))
        return io_fail(s);  /* would overwrite the log: a bug, stop writing */
    blank = is_blank(s, b * s->block_size, s->block_size, NULL);
    if (blank < 0)
        return blank;
    if (!blank && flash_erase(s->flash, b))
        return io_fail(s);
    if (blk_of(s, s->wr_start) == b)
        first = s->wr_start - data_start(s, b);
    else if (blk_of(s, s->wr_end) == b)
        first = s->wr_end - data_start(s, b);
    put32(raw, BLOCK_MAGIC);
    put32(raw + 4, s->next_block_seq);
    put32(raw + 8, s->next_rec_seq);
    put32(raw + 12, first);
    put32(raw + 16, crc32_update(0, raw, 16));
    if (flash_program(s->flash, b * s->block_size, raw, 20))
        return io_fail(s);
    s->next_block_seq++;
    s->nused++;
    return STORE_OK;
}

/* Program at a log address, opening blocks and splitting at pages. */
static int prog(struct store *s, uint32_t a, const void *data, uint32_t len)
{
    const uint8_t *p = data;
    uint32_t page = s->flash->geo.page_size;
    while (len) {
        uint32_t b = blk_of(s, a), n = len;
        int rc;
        if (!in_log(s, b) && (rc = open_block(s, b)) != STORE_OK)
            return rc;
        if (n > blk_end(s, b) - a)
            n = blk_end(s, b) - a;
        if (n > page - a % page)
            n = page - a % page;
        if (flash_program(s->flash, a, p, n))
            return io_fail(s);
        p += n;
        len -= n;
        a = adv(s, a, n);
    }
    return STORE_OK;
}

static void make_rhdr(uint8_t *raw, uint8_t type, uint32_t len, uint32_t seq)
{
    raw[0] = (uint8_t)REC_MAGIC;
    raw[1] = (uint8_t)(REC_MAGIC >> 8);
    raw[2] = type;
    raw[3] = REC_VERSION;
    put32(raw + 4, len);
    put32(raw + 8, seq);
}

static void wr_begin(struct store *s, uint8_t type, uint32_t len)
{
    uint8_t raw[RHDR];
    s->wr_start = s->write_addr;
    s->wr_end = adv(s, s->wr_start, RHDR + len);
    s->wr_pos = adv(s, s->wr_start, RHDR);
    s->wr_len = len;
    s->wr_type = type;
    s->wr_seq = s->next_rec_seq++;
    make_rhdr(raw, type, len, s->wr_seq);
    s->wr_crc = crc32_update(0, raw, 12);
}

static int wr_data(struct store *s, const void *data, uint32_t len)
{
    int rc = prog(s, s->wr_pos, data, len);
    if (rc)
        return rc;
    s->wr_crc = crc32_update(s->wr_crc, data, len);
    s->wr_pos = adv(s, s->wr_pos, len);
    return STORE_OK;
}

/* The header last: the record exists from the moment it is complete. */
static int wr_commit(struct store *s, int sync)
{
    uint8_t raw[RHDR];
    int rc;
    if (s->wr_pos != s->wr_end)
        return io_fail(s);
    make_rhdr(raw, (uint8_t)s->wr_type, s->wr_len, s->wr_seq);
    put32(raw + 12, s->wr_crc);
    if ((rc = prog(s, s->wr_start, raw, RHDR)) != STORE_OK)
        return rc;
    s->write_addr = s->wr_end;
    s->max_record = s->max_record > RHDR + s->wr_len ? s->max_record : RHDR + s->wr_len;
    if (sync && flash_sync(s->flash))
        return io_fail(s);
    return sync ? seal_behind(s) : STORE_OK;
}

/* ---- reading records --------------------------------------------------- */

/* A record at a: REC_VALID, REC_BLANK (all ones) or REC_BAD. With crc 0 the
 * payload is not read: for records of sealed blocks, checked before. */
static int rec_check_crc(struct store *s, uint32_t a, struct rhdr *h, int with_crc)
{
    uint32_t log_end = s->nused * s->data_size, pos = log_pos(s, a), i, crc;
    uint8_t buf[IO_CHUNK];
    int all_ones = 1;

    if (pos + RHDR > log_end)
        return REC_BLANK;
    if (lread(s, a, h->raw, RHDR))
        return STORE_ERR_IO;
    for (i = 0; i < RHDR; i++)
        all_ones &= h->raw[i] == 0xff;
    if (all_ones)
        return REC_BLANK;
    h->type = h->raw[2];
    h->len = get32(h->raw + 4);
    h->seq = get32(h->raw + 8);
    if (h->raw[0] != (uint8_t)REC_MAGIC || h->raw[1] != (uint8_t)(REC_MAGIC >> 8) ||
        h->raw[3] != REC_VERSION || h->type < REC_PAD || h->type > REC_DEL ||
        h->len > log_end - pos - RHDR)
        return REC_BAD;
    if (!with_crc)
        return REC_VALID;
    crc = crc32_update(0, h->raw, 12);
    a = adv(s, a, RHDR);
    for (i = 0; i < h->len;) {
        uint32_t n = h->len - i < IO_CHUNK ? h->len - i : IO_CHUNK;
        if (lread(s, a, buf, n))
            return STORE_ERR_IO;
        crc = crc32_update(crc, buf, n);
        a = adv(s, a, n);
        i += n;
    }
    return crc == get32(h->raw + 12) ? REC_VALID : REC_BAD;
}

static int rec_check(struct store *s, uint32_t a, struct rhdr *h)
{
    return rec_check_crc(s, a, h, 1);
}

static int rec_len_at(struct store *s, uint32_t a, uint32_t *len)
{
    uint8_t raw[RHDR];
    int rc = lread(s, a, raw, RHDR);
    *len = RHDR + get32(raw + 4);
    return rc;
}

/* Object record prefix: collection id, sync, name (into name_buf). */
static int read_obj_prefix(struct store *s, uint32_t a, uint32_t *coll_id, uint32_t *sync,
                           uint32_t *name_len)
{
    uint8_t p[OBJ_PREFIX];
    int rc = lread(s, adv(s, a, RHDR), p, OBJ_PREFIX);
    if (rc)
        return rc;
    *coll_id = get32(p);
    *sync = get32(p + 4);
    *name_len = p[8];
    return lread(s, adv(s, a, RHDR + OBJ_PREFIX), s->name_buf, *name_len);
}

/* ---- collection and user tables ----------------------------------------- */

/* Collection slot of an id. The last one found is tried first: replay and
 * requests meet long runs of one collection's records. */
static int coll_slot_by_id(struct store *s, uint32_t id)
{
    uint32_t i = s->coll_hint;
    if (i < s->mem.coll_slots && s->mem.colls[i].used && s->mem.colls[i].id == id)
        return (int)i;
    for (i = 0; i < s->mem.coll_slots; i++) {
        if (s->mem.colls[i].used && s->mem.colls[i].id == id) {
            s->coll_hint = i;
            return (int)i;
        }
    }
    return -1;
}

struct coll_view {
    const uint8_t *owner, *path, *props;
    uint32_t owner_len, path_len, props_len, nprops;
};

/* Parse a collection payload held in buf; 0 if malformed. */
static int coll_parse(const uint8_t *buf, uint32_t len, struct coll_view *v)
{
    uint32_t at = 4, i;
    if (len < 7)
        return 0;
    v->owner_len = buf[at++];
    v->owner = buf + at;
    at += v->owner_len;
    if (at + 2 > len)
        return 0;
    v->path_len = buf[at++];
    v->path = buf + at;
    at += v->path_len;
    if (at + 1 > len)
        return 0;
    v->nprops = buf[at++];
    v->props = buf + at;
    v->props_len = len - at;
    for (i = 0; i < v->nprops; i++) {
        if (at + 3 > len)
            return 0;
        at += 3 + ((uint32_t)buf[at + 1] | (uint32_t)buf[at + 2] << 8);
        if (at > len)
            return 0;
    }
    return at == len;
}

/* Read a collection record's payload into scratch. */
static int coll_load(struct store *s, uint32_t rec_addr, uint32_t *len, struct coll_view *v)
{
    uint32_t total;
    int rc = rec_len_at(s, rec_addr, &total);
    if (rc)
        return rc;
    *len = total - RHDR;
    if (*len > STORE_COLL_RECORD_MAX)
        return io_fail(s);
    if ((rc = lread(s, adv(s, rec_addr, RHDR), s->scratch, *len)) != STORE_OK)
        return rc;
    return coll_parse(s->scratch, *len, v) ? STORE_OK : io_fail(s);
}

static int user_slot_by_name(struct store *s, const uint8_t *name, uint32_t len, uint32_t hash, int *found)
{
    uint32_t i;
    uint8_t l;
    *found = -1;
    for (i = 0; i < s->mem.user_slots; i++) {
        struct store_user_slot *u = &s->mem.users[i];
        if (!u->used || u->name_hash != hash)
            continue;
        if (lread(s, adv(s, u->addr, RHDR), &l, 1) ||
            lread(s, adv(s, u->addr, RHDR + 1), s->name_buf, l))
            return STORE_ERR_IO;
        if (l == len && memcmp(s->name_buf, name, len) == 0) {
            *found = (int)i;
            break;
        }
    }
    return STORE_OK;
}

/* ---- the object index: open addressing, linear probing ------------------ */

static uint32_t index_limit(const struct store *s)
{
    return s->mem.index_slots - s->mem.index_slots / 8;
}

static uint32_t index_home(const struct store *s, uint32_t coll, uint32_t hash)
{
    uint32_t h = hash ^ (coll * 0x9E3779B1u);
    h ^= h >> 16;
    return h % s->mem.index_slots;
}

/* Slot of (coll, name), or -1; STORE_ERR_IO on read failure (< -1). */
static int idx_lookup(struct store *s, uint32_t coll, const uint8_t *name, uint32_t len,
                      uint32_t hash, int *found)
{
    uint32_t i = index_home(s, coll, hash), n;
    *found = -1;
    for (n = 0; n < s->mem.index_slots; n++, i = (i + 1) % s->mem.index_slots) {
        struct store_index_slot *e = &s->mem.index[i];
        uint32_t id, sync, l;
        if (e->state == SLOT_EMPTY)
            break;
        if (e->coll != coll || e->name_hash != hash)
            continue;
        if (read_obj_prefix(s, e->addr, &id, &sync, &l))
            return STORE_ERR_IO;
        if (l == len && memcmp(s->name_buf, name, len) == 0) {
            *found = (int)i;
            break;
        }
    }
    return STORE_OK;
}

static int idx_find_addr(const struct store *s, uint32_t coll, uint32_t hash, uint32_t addr)
{
    uint32_t i = index_home(s, coll, hash), n;
    for (n = 0; n < s->mem.index_slots; n++, i = (i + 1) % s->mem.index_slots) {
        const struct store_index_slot *e = &s->mem.index[i];
        if (e->state == SLOT_EMPTY)
            return -1;
        if (e->coll == coll && e->addr == addr)
            return (int)i;
    }
    return -1;
}

/* ---- member lists: a collection's slots linked in name hash order ------- */

/* The link that points at slot i in its collection's list (or the list's
 * end when i is not in it). */
static uint16_t *link_to(struct store *s, uint32_t coll, uint32_t i)
{
    uint16_t *l = &s->mem.colls[coll].head;
    while (*l != LINK_NONE && *l != i)
        l = &s->mem.index[*l].next;
    return l;
}

static void chain_insert(struct store *s, uint32_t i)
{
    struct store_index_slot *e = &s->mem.index[i];
    uint16_t *l = &s->mem.colls[e->coll].head;
    while (*l != LINK_NONE && s->mem.index[*l].name_hash <= e->name_hash)
        l = &s->mem.index[*l].next;
    e->next = *l;
    *l = (uint16_t)i;
}

/* Sort a list by name hash: bottom-up merge sort, O(n log n), no memory. */
static uint16_t chain_sort(struct store *s, uint16_t head)
{
    struct store_index_slot *ix = s->mem.index;
    uint32_t width, merges;
    for (width = 1;; width *= 2) {
        uint16_t p = head, tail = LINK_NONE, q;
        uint32_t psize, qsize;
        head = LINK_NONE;
        merges = 0;
        while (p != LINK_NONE) {
            merges++;
            q = p;
            for (psize = 0; psize < width && q != LINK_NONE; psize++)
                q = ix[q].next;
            qsize = width;
            while (psize || (qsize && q != LINK_NONE)) {
                uint16_t take;
                if (!psize) {
                    take = q; q = ix[q].next; qsize--;
                } else if (!qsize || q == LINK_NONE || ix[p].name_hash <= ix[q].name_hash) {
                    take = p; p = ix[p].next; psize--;
                } else {
                    take = q; q = ix[q].next; qsize--;
                }
                if (tail == LINK_NONE)
                    head = take;
                else
                    ix[tail].next = take;
                tail = take;
            }
            p = q;
        }
        if (tail != LINK_NONE)
            ix[tail].next = LINK_NONE;
        if (merges <= 1)
            return head;
    }
}

/* After replay: link every slot into its collection's list. */
static void chains_build(struct store *s)
{
    uint32_t i;
    for (i = 0; i < s->mem.coll_slots; i++)
        s->mem.colls[i].head = LINK_NONE;
    for (i = s->mem.index_slots; i-- > 0;) {
        struct store_index_slot *e = &s->mem.index[i];
        if (e->state == SLOT_EMPTY)
            continue;
        e->next = s->mem.colls[e->coll].head;
        s->mem.colls[e->coll].head = (uint16_t)i;
    }
    for (i = 0; i < s->mem.coll_slots; i++)
        s->mem.colls[i].head = chain_sort(s, s->mem.colls[i].head);
    s->chains = 1;
}

static int idx_insert(struct store *s, uint32_t coll, uint32_t hash, uint32_t limit)
{
    uint32_t i = index_home(s, coll, hash);
    if (s->index_used >= limit)
        return -1;
    while (s->mem.index[i].state != SLOT_EMPTY)
        i = (i + 1) % s->mem.index_slots;
    s->mem.index[i].coll = (uint16_t)coll;
    s->mem.index[i].name_hash = hash;
    s->mem.index[i].flags = 0;
    s->mem.index[i].next = LINK_NONE;
    if (s->chains)
        chain_insert(s, i);
    s->index_used++;
    return (int)i;
}

/* Backward-shift deletion keeps every probe chain unbroken; a slot that
 * moves is relinked in its member list. */
static void idx_remove(struct store *s, uint32_t i)
{
    uint32_t cap = s->mem.index_slots, j = i;
    if (s->chains) {
        uint16_t *l = link_to(s, s->mem.index[i].coll, i);
        if (*l == i)
            *l = s->mem.index[i].next;
    }
    for (;;) {
        s->mem.index[i].state = SLOT_EMPTY;
        for (;;) {
            uint32_t k;
            j = (j + 1) % cap;
            if (s->mem.index[j].state == SLOT_EMPTY) {
                s->index_used--;
                return;
            }
            k = index_home(s, s->mem.index[j].coll, s->mem.index[j].name_hash);
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
                continue;
            if (s->chains)
                *link_to(s, s->mem.index[j].coll, j) = (uint16_t)i;
            s->mem.index[i] = s->mem.index[j];
            i = j;
            break;
        }
    }
}

/* Forget index entries of a collection: all, or tombstones up to floor.
 * Walks the collection's list (from its start again after each removal:
 * removals move slots). */
static int idx_drop(struct store *s, uint32_t coll, int tombs_only, uint32_t floor)
{
    uint16_t *l = &s->mem.colls[coll].head;
    uint32_t len;
    while (*l != LINK_NONE) {
        uint32_t i = *l;
        struct store_index_slot *e = &s->mem.index[i];
        if (!tombs_only || (e->state == SLOT_TOMB && e->sync_seq <= floor)) {
            if (rec_len_at(s, e->addr, &len))
                return STORE_ERR_IO;
            s->live_bytes -= len;
            idx_remove(s, i);
            l = &s->mem.colls[coll].head;
            continue;
        }
        l = &e->next;
    }
    return STORE_OK;
}

/* ---- space and compaction ---------------------------------------------- */

static void supersede(struct store *s, uint32_t old_addr)
{
    uint32_t len;
    if (rec_len_at(s, old_addr, &len) == STORE_OK)
        s->live_bytes -= len;
}

static int write_floor(struct store *s, uint32_t slot)
{
    struct store_coll_slot *c = &s->mem.colls[slot];
    uint8_t p[8];
    int rc;
    put32(p, c->id);
    put32(p + 4, c->floor);
    wr_begin(s, REC_FLOOR, 8);
    if ((rc = wr_data(s, p, 8)) || (rc = wr_commit(s, 0)))
        return rc;
    if (c->floor_addr != FIRST_NONE)
        supersede(s, c->floor_addr);
    c->floor_addr = s->wr_start;
    s->live_bytes += FLOOR_RECORD;
    return STORE_OK;
}

/* Copy a valid record byte for byte to the head; returns its new address. */
static int copy_record(struct store *s, uint32_t a, const struct rhdr *h, uint32_t *to)
{
    uint8_t buf[IO_CHUNK];
    uint32_t done, src = adv(s, a, RHDR), dst;
    int rc;
    if (blocks_needed(s, RHDR + h->len) > free_blocks(s))
        return STORE_ERR_NO_SPACE;
    s->wr_start = s->write_addr;
    s->wr_end = adv(s, s->wr_start, RHDR + h->len);
    dst = adv(s, s->wr_start, RHDR);
    for (done = 0; done < h->len;) {
        uint32_t n = h->len - done < IO_CHUNK ? h->len - done : IO_CHUNK;
        if ((rc = lread(s, src, buf, n)) || (rc = prog(s, dst, buf, n)))
            return rc;
        src = adv(s, src, n);
        dst = adv(s, dst, n);
        done += n;
    }
    if ((rc = prog(s, s->wr_start, h->raw, RHDR)) != STORE_OK)
        return rc;
    *to = s->wr_start;
    s->write_addr = s->wr_end;
    return STORE_OK;
}

/* Decide whether the record at a (in the tail) is live; copy or drop it. */
static int compact_record(struct store *s, uint32_t a, const struct rhdr *h)
{
    uint8_t p[8];
    uint32_t id, sync, len, to, i;
    int slot, e, rc;

    switch (h->type) {
    case REC_PUT:
    case REC_DEL:
        if ((rc = read_obj_prefix(s, a, &id, &sync, &len)) != STORE_OK)
            return rc;
        if ((slot = coll_slot_by_id(s, id)) < 0)
            return STORE_OK;
        e = idx_find_addr(s, (uint32_t)slot, fnv1a(s->name_buf, len), a);
        if (e < 0)
            return STORE_OK;
        if (h->type == REC_DEL) {
            /* RFC 6578 3.2: history before this change is forgotten */
            struct store_coll_slot *c = &s->mem.colls[slot];
            if (c->floor < s->mem.index[e].sync_seq)
                c->floor = s->mem.index[e].sync_seq;
            c->floor_pending = 1;
            s->live_bytes -= RHDR + h->len;
            idx_remove(s, (uint32_t)e);
            return STORE_OK;
        }
        if ((rc = copy_record(s, a, h, &to)) != STORE_OK)
            return rc;
        s->mem.index[e].addr = to;
        return STORE_OK;
    case REC_COLL:
    case REC_FLOOR:
        if ((rc = lread(s, adv(s, a, RHDR), p, 4)) != STORE_OK)
            return rc;
        if ((slot = coll_slot_by_id(s, get32(p))) < 0)
            return STORE_OK;
        if (h->type == REC_COLL && s->mem.colls[slot].rec_addr == a) {
            if ((rc = copy_record(s, a, h, &to)) != STORE_OK)
                return rc;
            s->mem.colls[slot].rec_addr = to;
        } else if (h->type == REC_FLOOR && s->mem.colls[slot].floor_addr == a) {
            if ((rc = copy_record(s, a, h, &to)) != STORE_OK)
                return rc;
            s->mem.colls[slot].floor_addr = to;
        }
        return STORE_OK;
    case REC_USER:
        for (i = 0; i < s->mem.user_slots; i++) {
            if (s->mem.users[i].used && s->mem.users[i].addr == a) {
                if ((rc = copy_record(s, a, h, &to)) != STORE_OK)
                    return rc;
                s->mem.users[i].addr = to;
            }
        }
        return STORE_OK;
    default:  /* PAD, COLL_DEL: nothing older than the tail is left to cancel */
        return STORE_OK;
    }
}

/* Reclaim the tail block. Needs two blocks in use, so the head block (whose
 * rec_seq_base keeps sequence numbers monotonic) always survives. */
static int compact_step(struct store *s)
{
    static const uint8_t obsolete[4] = {0, 0, 0, 0};
    uint32_t t = s->tail, pos, i;
    struct bhdr bh;
    struct rhdr h;
    int rc;

    if (s->nused < 2)
        return STORE_ERR_NO_SPACE;
    s->compactions++;
    if ((rc = read_bhdr(s, t, &bh)) != STORE_OK)
        return rc;
    if (bh.first != FIRST_NONE) {
        pos = data_start(s, t) + bh.first;
        while (blk_of(s, pos) == t) {
            rc = rec_check(s, pos, &h);
            if (rc < 0)
                return rc;
            if (rc != REC_VALID)
                break;
            if ((rc = compact_record(s, pos, &h)) != STORE_OK)
                return rc;
            pos = adv(s, pos, RHDR + h.len);
        }
    }
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used || !c->floor_pending)
            continue;
        if ((rc = write_floor(s, i)) || (rc = idx_drop(s, i, 1, c->floor)))
            return rc;
        c->floor_pending = 0;
    }
    /* copies durable, then the tail stops counting, then it is erased */
    if (flash_sync(s->flash))
        return io_fail(s);
    if ((rc = seal_behind(s)) != STORE_OK)
        return rc;
    if (flash_program(s->flash, t * s->block_size + BHDR_STATE, obsolete, 4) ||
        flash_sync(s->flash) || flash_erase(s->flash, t))
        return io_fail(s);
    s->tail = ring_next(s, t);
    s->nused--;
    if (s->seal_next == t)
        s->seal_next = s->tail;
    return STORE_OK;
}

/* Close the head block so that all of it can be compacted: the next
 * records go to a fresh block, which keeps the sequence numbers going. */
static int seal_head(struct store *s)
{
    uint32_t b = ring_next(s, head_blk(s));
    if (free_blocks(s) <= 1)
        return STORE_ERR_NO_SPACE;
    s->write_addr = s->wr_start = s->wr_end = data_start(s, b);
    return open_block(s, b);
}

/* Make room for `bytes` at the head (user writes keep the reserve free). */
static int ensure_space(struct store *s, uint32_t bytes)
{
    uint32_t steps = 0;
    uint32_t usable = (s->nblocks - s->reserve_blocks - 1) * s->data_size;
    if (bytes > usable || s->live_bytes > usable - bytes)
        return STORE_ERR_NO_SPACE;
    while (free_blocks(s) < blocks_needed(s, bytes) + s->reserve_blocks) {
        int rc;
        if (steps++ > s->nblocks)
            return STORE_ERR_NO_SPACE;
        if ((rc = compact_step(s)) != STORE_OK)
            return rc;
    }
    return STORE_OK;
}

static int writable(const struct store *s)
{
    if (s->failed)
        return STORE_ERR_IO;
    return s->put_active ? STORE_ERR_BUSY : STORE_OK;
}

int store_compact(struct store *s, uint32_t max_blocks, uint32_t *reclaimed)
{
    uint32_t done = 0, before;
    int rc = writable(s);
    if (reclaimed)
        *reclaimed = 0;
    if (rc)
        return rc;
    if (!max_blocks)
        max_blocks = s->nused;
    if (s->nused == 1 && s->write_addr != data_start(s, s->tail) &&
        (rc = seal_head(s)) != STORE_OK)
        return rc;
    while (done < max_blocks && s->nused >= 2) {
        before = s->nused;
        if ((rc = compact_step(s)) != STORE_OK)
            return rc;
        done++;
        if (reclaimed && s->nused < before)
            *reclaimed += before - s->nused;
    }
    return STORE_OK;
}

void store_space(const struct store *s, struct store_space *sp)
{
    uint32_t head_room = 0;
    uint32_t b = blk_of(s, s->write_addr);
    if (in_log(s, b))
        head_room = blk_end(s, b) - s->write_addr;
    sp->total = s->nblocks * s->data_size;
    sp->used = s->nused * s->data_size - head_room;
    sp->live = s->live_bytes;
    sp->reserve = s->reserve_blocks * s->data_size;
    sp->free = free_blocks(s) > s->reserve_blocks
                   ? (free_blocks(s) - s->reserve_blocks) * s->data_size + head_room : head_room;
    sp->index_used = s->index_used;
    sp->index_max = index_limit(s);
}

/* ---- mount: replay ----------------------------------------------------- */

/* FLOOR records: applied before the objects, so that tombstones the floor
 * has already forgotten never take an index slot. */
static int replay_floor(struct store *s, uint32_t a, const struct rhdr *h)
{
    uint8_t p[8];
    int slot;
    if (h->type != REC_FLOOR)
        return STORE_OK;
    if (h->len != 8 || lread(s, adv(s, a, RHDR), p, 8))
        return s->failed ? STORE_ERR_IO : STORE_OK;
    if ((slot = coll_slot_by_id(s, get32(p))) < 0) {
        s->replay_floor_pass = 1;  /* its collection record comes later */
        return STORE_OK;
    }
    if (get32(p + 4) >= s->mem.colls[slot].floor) {
        s->mem.colls[slot].floor = get32(p + 4);
        s->mem.colls[slot].floor_addr = a;
    }
    return STORE_OK;
}

static int replay_pass1(struct store *s, uint32_t a, const struct rhdr *h)
{
    uint8_t p[1 + STORE_OWNER_MAX];
    uint32_t id, len, hash, i;
    struct coll_view v;
    int slot, rc;

    switch (h->type) {
    case REC_USER:
        if (h->len < 2 || lread(s, adv(s, a, RHDR), p, 1) || p[0] > STORE_OWNER_MAX ||
            (uint32_t)p[0] + 2 > h->len)
            return s->failed ? STORE_ERR_IO : STORE_OK;
        len = p[0];
        if ((rc = lread(s, adv(s, a, RHDR + 1), p + 1, len)) != STORE_OK)
            return rc;
        hash = fnv1a(p + 1, len);
        if ((rc = user_slot_by_name(s, p + 1, len, hash, &slot)) != STORE_OK)
            return rc;
        if (slot < 0) {
            for (i = 0; i < s->mem.user_slots && s->mem.users[i].used; i++)
                ;
            if (i == s->mem.user_slots)
                return STORE_ERR_TOO_MANY_USERS;
            slot = (int)i;
            s->mem.users[i].used = 1;
            s->mem.users[i].name_hash = hash;
            s->mem.users[i].rec_seq = h->seq;
        }
        if (h->seq >= s->mem.users[slot].rec_seq) {
            s->mem.users[slot].addr = a;
            s->mem.users[slot].rec_seq = h->seq;
        }
        return STORE_OK;
    case REC_COLL:
        if (h->len > STORE_COLL_RECORD_MAX)
            return STORE_OK;
        if ((rc = lread(s, adv(s, a, RHDR), s->scratch, h->len)) != STORE_OK)
            return rc;
        if (!coll_parse(s->scratch, h->len, &v))
            return STORE_OK;
        id = get32(s->scratch);
        slot = coll_slot_by_id(s, id);
        if (slot < 0) {
            for (i = 0; i < s->mem.coll_slots && s->mem.colls[i].used; i++)
                ;
            if (i == s->mem.coll_slots)
                return STORE_ERR_TOO_MANY_COLLECTIONS;
            slot = (int)i;
            memset(&s->mem.colls[i], 0, sizeof(s->mem.colls[i]));
            s->mem.colls[i].used = 1;
            s->mem.colls[i].id = id;
            s->mem.colls[i].floor_addr = FIRST_NONE;
            s->mem.colls[i].rec_seq = h->seq;
        }
        if (h->seq >= s->mem.colls[slot].rec_seq) {
            s->mem.colls[slot].rec_addr = a;
            s->mem.colls[slot].rec_seq = h->seq;
            s->mem.colls[slot].path_hash = fnv1a(v.path, v.path_len);
        }
        return STORE_OK;
    case REC_FLOOR:
        return replay_floor(s, a, h);
    case REC_COLL_DEL:
        if (h->len != 4 || lread(s, adv(s, a, RHDR), p, 4))
            return s->failed ? STORE_ERR_IO : STORE_OK;
        if ((slot = coll_slot_by_id(s, get32(p))) >= 0)
            memset(&s->mem.colls[slot], 0, sizeof(s->mem.colls[slot]));
        return STORE_OK;
    default:
        return STORE_OK;
    }
}

static int replay_pass2(struct store *s, uint32_t a, const struct rhdr *h)
{
    uint32_t id, sync, len, hash;
    int slot, e, rc;

    if (h->type != REC_PUT && h->type != REC_DEL)
        return STORE_OK;
    if (h->len < OBJ_PREFIX + 1)
        return STORE_OK;
    if ((rc = read_obj_prefix(s, a, &id, &sync, &len)) != STORE_OK)
        return rc;
    if (len == 0 || OBJ_PREFIX + len > h->len || (h->type == REC_DEL && OBJ_PREFIX + len != h->len))
        return STORE_OK;
    if ((slot = coll_slot_by_id(s, id)) < 0)
        return STORE_OK;  /* collection deleted */
    hash = fnv1a(s->name_buf, len);
    memcpy(s->scratch, s->name_buf, len);
    if ((rc = idx_lookup(s, (uint32_t)slot, s->scratch, len, hash, &e)) != STORE_OK)
        return rc;
    if (e >= 0 && sync < s->mem.index[e].sync_seq)
        return STORE_OK;
    if (h->type == REC_DEL && sync <= s->mem.colls[slot].floor) {
        if (e >= 0)  /* deleted, and the deletion is beyond the history kept */
            idx_remove(s, (uint32_t)e);
        return STORE_OK;
    }
    /* a replay may briefly hold objects whose deletion comes later in the log */
    if (e < 0 && (e = idx_insert(s, (uint32_t)slot, hash, s->mem.index_slots - 1)) < 0)
        return STORE_ERR_INDEX_FULL;
    s->mem.index[e].addr = a;
    s->mem.index[e].sync_seq = sync;
    s->mem.index[e].state = h->type == REC_PUT ? SLOT_LIVE : SLOT_TOMB;
    if (sync > s->mem.colls[slot].sync_seq)
        s->mem.colls[slot].sync_seq = sync;
    return STORE_OK;
}

typedef int (*visit_fn)(struct store *s, uint32_t a, const struct rhdr *h);

/* Replay every valid record in log order; returns where the log ends.
 * Records of sealed blocks are taken on their header; the others are checked
 * with their CRC, and with `seal` a block whose records all passed, left by
 * the walk at a record's end (no blank or torn bytes in it), is sealed. */
static int walk(struct store *s, visit_fn visit, uint32_t *end, struct store_mount_stats *st,
                int seal)
{
    uint32_t b = s->tail, pos, n, torn, prev_pos, skip_from, cur = FIRST_NONE;
    struct bhdr bh;
    struct rhdr h;
    int rc, cur_sealed = 0;

    if (!s->nused) {
        *end = data_start(s, s->tail);
        return STORE_OK;
    }
    pos = FIRST_NONE;
    for (n = 0; n < s->nused; n++, b = ring_next(s, b)) {
        if ((rc = read_bhdr(s, b, &bh)) != STORE_OK)
            return rc;
        if (bh.first != FIRST_NONE) {
            pos = data_start(s, b) + bh.first;
            break;
        }
    }
    if (pos == FIRST_NONE) {
        *end = data_start(s, ring_next(s, head_blk(s)));
        return STORE_OK;
    }
    for (;;) {
        if (!in_log(s, blk_of(s, pos))) {
            *end = pos;
            return STORE_OK;
        }
        if (blk_of(s, pos) != cur) {
            cur = blk_of(s, pos);
            if ((rc = block_sealed(s, cur, &cur_sealed)) != STORE_OK)
                return rc;
        }
        prev_pos = log_pos(s, pos);
        rc = rec_check_crc(s, pos, &h, !cur_sealed);
        if (rc < 0)
            return rc;
        if (rc == REC_VALID) {
            if ((rc = visit(s, pos, &h)) != STORE_OK)
                return rc;
            if (st)
                st->records++;
            if (h.seq >= s->next_rec_seq)
                s->next_rec_seq = h.seq + 1;
            if (RHDR + h.len > s->max_record)
                s->max_record = RHDR + h.len;
            pos = adv(s, pos, RHDR + h.len);
            if (in_log(s, blk_of(s, pos)) && log_pos(s, pos) <= prev_pos) {
                *end = data_start(s, ring_next(s, head_blk(s)));  /* ring full */
                return STORE_OK;
            }
            if (seal && !cur_sealed && blk_of(s, pos) != cur && (rc = seal_block(s, cur)) != STORE_OK)
                return rc;
            continue;
        }
        /* blank or torn: nothing more starts in this block (left unsealed) */
        b = blk_of(s, pos);
        skip_from = pos;
        for (n = ring_dist(s, s->tail, b) + 1; n < s->nused; n++) {
            b = (s->tail + n) % s->nblocks;
            if ((rc = read_bhdr(s, b, &bh)) != STORE_OK)
                return rc;
            if (bh.first != FIRST_NONE)
                break;
        }
        if (st) {  /* count what is skipped: up to the next record or the log end */
            uint32_t to = n < s->nused ? log_pos(s, data_start(s, b) + bh.first) : s->nused * s->data_size;
            while (log_pos(s, skip_from) < to) {
                uint32_t room = blk_end(s, blk_of(s, skip_from)) - skip_from;
                if (room > to - log_pos(s, skip_from))
                    room = to - log_pos(s, skip_from);
                if ((rc = is_blank(s, skip_from, room, &torn)) < 0)
                    return rc;
                st->torn_bytes += torn;
                skip_from = adv(s, skip_from, room);
                if (!in_log(s, blk_of(s, skip_from)))
                    break;
            }
        }
        if (n >= s->nused) {
            *end = pos;
            return STORE_OK;
        }
        pos = data_start(s, b) + bh.first;
    }
}

/* Find the log: the chain of live blocks with consecutive sequence numbers
 * that ends in the highest one. */
static int find_log(struct store *s, struct store_mount_stats *st)
{
    struct bhdr bh, prev;
    uint32_t b, top = 0, top_seq = 0, max_seq = 0, count;
    int have = 0, rc;
    uint8_t first[BHDR];

    for (b = 0; b < s->nblocks; b++) {
        if ((rc = read_bhdr(s, b, &bh)) != STORE_OK)
            return rc;
        if (bh.crc_ok) {
            if (bh.seq >= max_seq)
                max_seq = bh.seq;
            if (bh.rec_seq_base > s->next_rec_seq)
                s->next_rec_seq = bh.rec_seq_base;
        }
        if (bh.live && (!have || bh.seq > top_seq)) {
            have = 1;
            top = b;
            top_seq = bh.seq;
        }
    }
    s->next_block_seq = max_seq + 1;
    s->tail = 0;
    s->nused = 0;
    if (have) {
        s->tail = top;
        count = 1;
        bh.seq = top_seq;
        while (count < s->nblocks) {
            b = (s->tail + s->nblocks - 1) % s->nblocks;
            if ((rc = read_bhdr(s, b, &prev)) != STORE_OK)
                return rc;
            if (!prev.live || prev.seq != bh.seq - 1)
                break;
            s->tail = b;
            bh = prev;
            count++;
        }
        s->nused = count;
    }
    for (b = 0; b < s->nblocks; b++) {
        if (in_log(s, b))
            continue;
        if (flash_read(s->flash, b * s->block_size, first, BHDR))
            return io_fail(s);
        for (count = 0; count < BHDR && first[count] == 0xff; count++)
            ;
        st->stale_blocks += count < BHDR;
    }
    return STORE_OK;
}

int store_mount(struct store *s, const struct flash *f, const struct store_config *cfg,
                const struct store_memory *mem, struct store_mount_stats *stats)
{
    struct store_mount_stats local;
    struct store_mount_stats *st = stats ? stats : &local;
    uint32_t end, i, len, programmed;
    int rc;

    memset(s, 0, sizeof(*s));
    memset(st, 0, sizeof(*st));
    s->failed = 1;  /* until the mount succeeds */
    s->flash = f;
    s->cfg = *cfg;
    s->mem = *mem;
    s->block_size = f->geo.block_size;
    if (!f->geo.block_size || f->geo.size % f->geo.block_size || f->geo.block_size < 4 * BHDR ||
        f->geo.page_size < 32 || f->geo.block_size % f->geo.page_size ||
        !cfg->max_object_size || cfg->max_object_size > f->geo.size ||
        mem->index_slots < 8 || mem->index_slots >= LINK_NONE || !mem->coll_slots ||
        mem->coll_slots > 0xFFFF || !mem->user_slots)
        return STORE_ERR_INVALID;
    s->nblocks = f->geo.size / f->geo.block_size;
    if ((s->block_size & (s->block_size - 1)) == 0)
        while ((1u << s->block_shift) < s->block_size)
            s->block_shift++;
    s->data_size = s->block_size - BHDR;
    s->max_record = RHDR + OBJ_PREFIX + STORE_NAME_MAX + cfg->max_object_size;
    if (s->max_record < RHDR + STORE_COLL_RECORD_MAX)
        s->max_record = RHDR + STORE_COLL_RECORD_MAX;
    memset(mem->index, 0, mem->index_slots * sizeof(*mem->index));
    memset(mem->colls, 0, mem->coll_slots * sizeof(*mem->colls));
    memset(mem->users, 0, mem->user_slots * sizeof(*mem->users));
    s->next_rec_seq = 1;

    /* pass 1 checks the CRC of every record outside sealed blocks and seals
     * the blocks that passed: the later passes read their headers only */
    if ((rc = find_log(s, st)) != STORE_OK || (rc = walk(s, replay_pass1, &end, NULL, 1)) != STORE_OK)
        goto out;
    if (s->replay_floor_pass && (rc = walk(s, replay_floor, &end, NULL, 0)) != STORE_OK)
        goto out;
    if ((rc = walk(s, replay_pass2, &end, st, 0)) != STORE_OK)
        goto out;

    /* where writing continues: never after torn bytes in the same block */
    s->write_addr = end;
    if (in_log(s, blk_of(s, end))) {
        rc = is_blank(s, end, blk_end(s, blk_of(s, end)) - end, &programmed);
        if (rc < 0)
            goto out;
        if (!rc || blk_of(s, end) != head_blk(s))
            s->write_addr = data_start(s, ring_next(s, head_blk(s)));
    }
    /* blocks the writer fills from here on are sealed once it has left them
     * and synced; those behind (torn bytes, an old head) stay as they are */
    s->seal_next = blk_of(s, s->write_addr);
    /* the reserve must hold the largest record plus one block of copies */
    s->reserve_blocks = (s->data_size + s->max_record + s->data_size - 1) / s->data_size + 1;
    if (s->nblocks < s->reserve_blocks + 3) {
        rc = STORE_ERR_INVALID;
        goto out;
    }

    chains_build(s);
    /* history floors, then live bytes and object counts */
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used)
            continue;
        if (c->sync_seq < c->floor)
            c->sync_seq = c->floor;
        if ((rc = idx_drop(s, i, 1, c->floor)) != STORE_OK)
            goto out;
    }
    s->live_bytes = 0;
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used)
            continue;
        if ((rc = rec_len_at(s, c->rec_addr, &len)) != STORE_OK)
            goto out;
        s->live_bytes += len;
        if (c->floor_addr != FIRST_NONE)
            s->live_bytes += FLOOR_RECORD;
        st->collections++;
    }
    for (i = 0; i < s->mem.index_slots; i++) {
        struct store_index_slot *e = &s->mem.index[i];
        if (e->state == SLOT_EMPTY)
            continue;
        if ((rc = rec_len_at(s, e->addr, &len)) != STORE_OK)
            goto out;
        s->live_bytes += len;
        if (e->state == SLOT_LIVE) {
            s->mem.colls[e->coll].objects++;
            st->objects++;
        } else {
            st->tombstones++;
        }
    }
    for (i = 0; i < s->mem.user_slots; i++) {
        if (!s->mem.users[i].used)
            continue;
        if ((rc = rec_len_at(s, s->mem.users[i].addr, &len)) != STORE_OK)
            goto out;
        s->live_bytes += len;
        st->users++;
    }
    st->blocks_used = s->nused;
    s->failed = 0;
    rc = STORE_OK;
out:
    return rc;
}

/* ---- users ------------------------------------------------------------- */

int store_user_set(struct store *s, const char *name, const uint8_t *secret, size_t secret_len)
{
    size_t len = name ? strlen(name) : 0;
    uint8_t l;
    uint32_t hash, i;
    int slot, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (!len || len > STORE_OWNER_MAX || secret_len > STORE_SECRET_MAX || (!secret && secret_len))
        return STORE_ERR_INVALID;
    if ((rc = ensure_space(s, (uint32_t)(RHDR + 2 + len + secret_len))) != STORE_OK)
        return rc;
    hash = fnv1a(name, len);
    if ((rc = user_slot_by_name(s, (const uint8_t *)name, (uint32_t)len, hash, &slot)) != STORE_OK)
        return rc;
    if (slot < 0) {
        for (i = 0; i < s->mem.user_slots && s->mem.users[i].used; i++)
            ;
        if (i == s->mem.user_slots)
            return STORE_ERR_TOO_MANY_USERS;
    } else {
        i = (uint32_t)slot;
    }
    wr_begin(s, REC_USER, (uint32_t)(2 + len + secret_len));
    l = (uint8_t)len;
    if ((rc = wr_data(s, &l, 1)) || (rc = wr_data(s, name, (uint32_t)len)))
        return rc;
    l = (uint8_t)secret_len;
    if ((rc = wr_data(s, &l, 1)) || (rc = wr_data(s, secret, (uint32_t)secret_len)) ||
        (rc = wr_commit(s, 1)))
        return rc;
    if (slot >= 0)
        supersede(s, s->mem.users[i].addr);
    s->mem.users[i].used = 1;
    s->mem.users[i].addr = s->wr_start;
    s->mem.users[i].rec_seq = s->wr_seq;
    s->mem.users[i].name_hash = hash;
    s->live_bytes += RHDR + s->wr_len;
    return STORE_OK;
}

int store_user_get(struct store *s, const char *name, uint8_t *secret, size_t cap, size_t *len)
{
    size_t nlen = name ? strlen(name) : 0;
    uint8_t l;
    int slot, rc;
    uint32_t a;

    if (s->failed)
        return STORE_ERR_IO;
    if (!nlen || nlen > STORE_OWNER_MAX)
        return STORE_ERR_NOT_FOUND;
    if ((rc = user_slot_by_name(s, (const uint8_t *)name, (uint32_t)nlen, fnv1a(name, nlen), &slot)))
        return rc;
    if (slot < 0)
        return STORE_ERR_NOT_FOUND;
    a = adv(s, s->mem.users[slot].addr, RHDR + 1 + (uint32_t)nlen);
    if ((rc = lread(s, a, &l, 1)) != STORE_OK)
        return rc;
    if (l > cap)
        return STORE_ERR_TOO_LARGE;
    *len = l;
    return lread(s, adv(s, a, 1), secret, l);
}

/* ---- collections ------------------------------------------------------- */

static int coll_find(struct store *s, const uint8_t *path, size_t len, int *found)
{
    uint32_t i, hash = fnv1a(path, len), plen;
    struct coll_view v;
    int rc;
    *found = -1;
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used || c->path_hash != hash)
            continue;
        if ((rc = coll_load(s, c->rec_addr, &plen, &v)) != STORE_OK)
            return rc;
        if (v.path_len == len && memcmp(v.path, path, len) == 0) {
            *found = (int)i;
            break;
        }
    }
    return STORE_OK;
}

/* Write the collection payload held in scratch as the slot's new record. */
static int coll_write(struct store *s, uint32_t slot, uint32_t len)
{
    struct store_coll_slot *c = &s->mem.colls[slot];
    int rc;
    wr_begin(s, REC_COLL, len);
    if ((rc = wr_data(s, s->scratch, len)) || (rc = wr_commit(s, 1)))
        return rc;
    if (c->used)
        supersede(s, c->rec_addr);
    c->rec_addr = s->wr_start;
    c->rec_seq = s->wr_seq;
    s->live_bytes += RHDR + len;
    return STORE_OK;
}

int store_coll_create(struct store *s, const char *owner, const char *path, uint32_t *id)
{
    size_t olen = owner ? strlen(owner) : 0, plen = path ? strlen(path) : 0;
    uint32_t i, len;
    int found, rc;
    struct store_coll_slot *c;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (!olen || olen > STORE_OWNER_MAX || !plen || plen > STORE_PATH_MAX)
        return STORE_ERR_INVALID;
    len = (uint32_t)(4 + 1 + olen + 1 + plen + 1);
    if ((rc = ensure_space(s, RHDR + len)) != STORE_OK ||
        (rc = coll_find(s, (const uint8_t *)path, plen, &found)) != STORE_OK)
        return rc;
    if (found >= 0)
        return STORE_ERR_EXISTS;
    for (i = 0; i < s->mem.coll_slots && s->mem.colls[i].used; i++)
        ;
    if (i == s->mem.coll_slots)
        return STORE_ERR_TOO_MANY_COLLECTIONS;
    /* the id is the sequence number the record is about to get */
    put32(s->scratch, s->next_rec_seq);
    s->scratch[4] = (uint8_t)olen;
    memcpy(s->scratch + 5, owner, olen);
    s->scratch[5 + olen] = (uint8_t)plen;
    memcpy(s->scratch + 6 + olen, path, plen);
    s->scratch[6 + olen + plen] = 0;
    c = &s->mem.colls[i];
    memset(c, 0, sizeof(*c));
    c->head = LINK_NONE;
    if ((rc = coll_write(s, i, len)) != STORE_OK)
        return rc;
    c->used = 1;
    c->id = s->wr_seq;
    c->floor_addr = FIRST_NONE;
    c->path_hash = fnv1a(path, plen);
    if (id)
        *id = c->id;
    return STORE_OK;
}

int store_coll_find(struct store *s, const char *path, size_t path_len, uint32_t *id)
{
    int found, rc;
    if (s->failed)
        return STORE_ERR_IO;
    if ((rc = coll_find(s, (const uint8_t *)path, path_len, &found)) != STORE_OK)
        return rc;
    if (found < 0)
        return STORE_ERR_NOT_FOUND;
    *id = s->mem.colls[found].id;
    return STORE_OK;
}

int store_coll_delete(struct store *s, uint32_t id)
{
    uint8_t p[4];
    int slot, rc;
    struct store_coll_slot *c;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if ((slot = coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    if ((rc = ensure_space(s, RHDR + 4)) != STORE_OK)
        return rc;
    slot = coll_slot_by_id(s, id);  /* compaction does not move slots; cheap to be sure */
    c = &s->mem.colls[slot];
    put32(p, id);
    wr_begin(s, REC_COLL_DEL, 4);
    if ((rc = wr_data(s, p, 4)) || (rc = wr_commit(s, 1)))
        return rc;
    /* the delete record itself is dead at once: nothing of the id is live */
    if ((rc = idx_drop(s, (uint32_t)slot, 0, 0)) != STORE_OK)
        return rc;
    supersede(s, c->rec_addr);
    if (c->floor_addr != FIRST_NONE)
        s->live_bytes -= FLOOR_RECORD;
    memset(c, 0, sizeof(*c));
    return STORE_OK;
}

int store_coll_info(struct store *s, uint32_t id, struct store_collection *info)
{
    uint32_t len;
    struct coll_view v;
    int slot, rc;
    if (s->failed)
        return STORE_ERR_IO;
    if ((slot = coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    if ((rc = coll_load(s, s->mem.colls[slot].rec_addr, &len, &v)) != STORE_OK)
        return rc;
    info->id = id;
    info->owner = (const char *)v.owner;
    info->owner_len = v.owner_len;
    info->path = (const char *)v.path;
    info->path_len = v.path_len;
    info->sync_seq = s->mem.colls[slot].sync_seq;
    info->history_floor = s->mem.colls[slot].floor;
    info->objects = s->mem.colls[slot].objects;
    return STORE_OK;
}

int store_coll_list(struct store *s, store_coll_cb cb, void *ctx)
{
    struct store_collection info;
    uint32_t i;
    int rc;
    for (i = 0; i < s->mem.coll_slots; i++) {
        if (!s->mem.colls[i].used)
            continue;
        if ((rc = store_coll_info(s, s->mem.colls[i].id, &info)) != STORE_OK)
            return rc;
        if (cb(ctx, &info))
            break;
    }
    return s->failed ? STORE_ERR_IO : STORE_OK;
}

/* Offset of prop inside scratch (after coll_load), or 0. */
static uint32_t prop_find(const struct store *s, const struct coll_view *v, uint8_t prop, uint32_t *vlen)
{
    uint32_t at = (uint32_t)(v->props - s->scratch), i;
    for (i = 0; i < v->nprops; i++) {
        uint32_t l = (uint32_t)s->scratch[at + 1] | (uint32_t)s->scratch[at + 2] << 8;
        if (s->scratch[at] == prop) {
            *vlen = l;
            return at;
        }
        at += 3 + l;
    }
    return 0;
}

int store_coll_set_prop(struct store *s, uint32_t id, enum store_prop prop, const void *value, size_t len)
{
    uint32_t plen, at, old_len = 0, nprops_at;
    struct coll_view v;
    int slot, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (prop < STORE_PROP_DISPLAYNAME || prop > STORE_PROP_TIMEZONE || (!value && len))
        return STORE_ERR_INVALID;
    if (len > STORE_COLL_RECORD_MAX)
        return STORE_ERR_TOO_LARGE;
    if ((slot = coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    if ((rc = ensure_space(s, RHDR + STORE_COLL_RECORD_MAX)) != STORE_OK ||
        (rc = coll_load(s, s->mem.colls[slot].rec_addr, &plen, &v)) != STORE_OK)
        return rc;
    nprops_at = (uint32_t)(v.props - s->scratch) - 1;
    at = prop_find(s, &v, (uint8_t)prop, &old_len);
    if (at) {
        memmove(s->scratch + at, s->scratch + at + 3 + old_len, plen - at - 3 - old_len);
        plen -= 3 + old_len;
        s->scratch[nprops_at]--;
    }
    if (len) {
        if (plen + 3 + len > STORE_COLL_RECORD_MAX)
            return STORE_ERR_TOO_LARGE;
        s->scratch[plen] = (uint8_t)prop;
        s->scratch[plen + 1] = (uint8_t)len;
        s->scratch[plen + 2] = (uint8_t)(len >> 8);
        memcpy(s->scratch + plen + 3, value, len);
        plen += 3 + (uint32_t)len;
        s->scratch[nprops_at]++;
    }
    return coll_write(s, (uint32_t)slot, plen);
}

int store_coll_get_prop(struct store *s, uint32_t id, enum store_prop prop, void *buf, size_t cap, size_t *len)
{
    uint32_t plen, at, vlen = 0;
    struct coll_view v;
    int slot, rc;
    if (s->failed)
        return STORE_ERR_IO;
    if ((slot = coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    if ((rc = coll_load(s, s->mem.colls[slot].rec_addr, &plen, &v)) != STORE_OK)
        return rc;
    if (!(at = prop_find(s, &v, (uint8_t)prop, &vlen)))
        return STORE_ERR_NOT_FOUND;
    if (vlen > cap)
        return STORE_ERR_TOO_LARGE;
    memcpy(buf, s->scratch + at + 3, vlen);
    *len = vlen;
    return STORE_OK;
}

/* ---- objects ----------------------------------------------------------- */

static int obj_lookup(struct store *s, uint32_t coll_id, const char *name, size_t len,
                      int *coll_slot, int *entry)
{
    *entry = -1;
    if (s->failed)
        return STORE_ERR_IO;
    if (!len || len > STORE_NAME_MAX || !name)
        return STORE_ERR_INVALID;
    if ((*coll_slot = coll_slot_by_id(s, coll_id)) < 0)
        return STORE_ERR_NOT_FOUND;
    return idx_lookup(s, (uint32_t)*coll_slot, (const uint8_t *)name, (uint32_t)len,
                      fnv1a(name, len), entry);
}

/* The index is full: compact until tombstones drop out of it (compaction
 * forgets tombstones of the tail block and raises the history floors). The
 * records stay consistent with the index, so a replay never needs more. */
static int evict_tombstones(struct store *s)
{
    uint32_t i, steps = 0, limit = s->nused + 1;
    int rc;
    for (i = 0; i < s->mem.index_slots && s->mem.index[i].state != SLOT_TOMB; i++)
        ;
    if (i == s->mem.index_slots)
        return STORE_ERR_INDEX_FULL;
    while (s->index_used >= index_limit(s)) {
        if (steps++ > limit || free_blocks(s) < s->reserve_blocks)
            return STORE_ERR_INDEX_FULL;
        if (s->nused < 2 && (rc = seal_head(s)) != STORE_OK)
            return rc == STORE_ERR_NO_SPACE ? STORE_ERR_INDEX_FULL : rc;
        if ((rc = compact_step(s)) != STORE_OK)
            return rc;
    }
    return STORE_OK;
}

int store_put_begin(struct store *s, uint32_t coll, const char *name, size_t name_len,
                    uint32_t body_len, const uint32_t *if_match, int if_none_match)
{
    uint8_t p[OBJ_PREFIX];
    uint32_t rec;
    int slot, e, live, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (!name || !name_len || name_len > STORE_NAME_MAX)
        return STORE_ERR_INVALID;
    if (coll_slot_by_id(s, coll) < 0)
        return STORE_ERR_NOT_FOUND;
    if (body_len > s->cfg.max_object_size)
        return STORE_ERR_TOO_LARGE;
    rec = RHDR + OBJ_PREFIX + (uint32_t)name_len + body_len;
    if ((rc = ensure_space(s, rec)) != STORE_OK)
        return rc;
    if ((rc = obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    live = e >= 0 && s->mem.index[e].state == SLOT_LIVE;
    /* RFC 9110 13.1.2: If-None-Match: * fails when a current representation exists */
    if (if_none_match && live)
        return STORE_ERR_PRECONDITION;
    /* RFC 9110 13.1.1: If-Match fails without a current representation or on
     * a different strong ETag */
    if (if_match) {
        uint8_t raw[RHDR];
        if (!live)
            return STORE_ERR_PRECONDITION;
        if ((rc = lread(s, s->mem.index[e].addr, raw, RHDR)) != STORE_OK)
            return rc;
        if (get32(raw + 8) != *if_match)
            return STORE_ERR_PRECONDITION;
    }
    if (!live && s->mem.colls[slot].objects >= s->cfg.max_objects_per_collection)
        return STORE_ERR_COLL_FULL;
    if (e < 0 && s->index_used >= index_limit(s) &&
        ((rc = evict_tombstones(s)) != STORE_OK || (rc = ensure_space(s, rec)) != STORE_OK))
        return rc;
    s->put_coll = (uint32_t)slot;
    s->put_sync = s->mem.colls[slot].sync_seq + 1;
    s->put_left = body_len;
    s->put_name_hash = fnv1a(name, name_len);
    s->put_name_len = (uint8_t)name_len;
    wr_begin(s, REC_PUT, rec - RHDR);
    put32(p, coll);
    put32(p + 4, s->put_sync);
    p[8] = (uint8_t)name_len;
    if ((rc = wr_data(s, p, OBJ_PREFIX)) || (rc = wr_data(s, name, (uint32_t)name_len)))
        return rc;
    s->put_active = 1;
    return STORE_OK;
}

int store_put_write(struct store *s, const void *data, uint32_t len)
{
    int rc;
    if (s->failed)
        return STORE_ERR_IO;
    if (!s->put_active)
        return STORE_ERR_INVALID;
    if (len > s->put_left)
        return STORE_ERR_TOO_LARGE;
    if ((rc = wr_data(s, data, len)) != STORE_OK)
        return rc;
    s->put_left -= len;
    return STORE_OK;
}

int store_put_commit(struct store *s, uint32_t *etag)
{
    uint32_t name_len = s->put_name_len;
    int e, rc;
    struct store_coll_slot *c;

    if (s->failed)
        return STORE_ERR_IO;
    if (!s->put_active || s->put_left)
        return STORE_ERR_INVALID;
    if ((rc = wr_commit(s, 1)) != STORE_OK)
        return rc;
    s->put_active = 0;
    c = &s->mem.colls[s->put_coll];
    /* the name as written, to find the index entry again */
    if ((rc = lread(s, adv(s, s->wr_start, RHDR + OBJ_PREFIX), s->scratch, name_len)) != STORE_OK ||
        (rc = idx_lookup(s, s->put_coll, s->scratch, name_len, s->put_name_hash, &e)) != STORE_OK)
        return rc;
    if (e < 0) {
        if ((e = idx_insert(s, s->put_coll, s->put_name_hash, index_limit(s))) < 0)
            return io_fail(s);  /* put_begin made room; cannot happen */
        c->objects++;
    } else {
        if (s->mem.index[e].state != SLOT_LIVE)
            c->objects++;
        supersede(s, s->mem.index[e].addr);
    }
    s->mem.index[e].addr = s->wr_start;
    s->mem.index[e].sync_seq = s->put_sync;
    s->mem.index[e].state = SLOT_LIVE;
    s->mem.index[e].flags &= (uint8_t)~SLOT_TAG_KNOWN;  /* new content */
    c->sync_seq = s->put_sync;
    s->live_bytes += RHDR + s->wr_len;
    if (etag)
        *etag = s->wr_seq;
    return STORE_OK;
}

/* Turn the half-written record into padding so replay steps over it. */
int store_put_abort(struct store *s)
{
    uint8_t raw[RHDR], buf[IO_CHUNK];
    uint32_t crc, a, i;
    int rc;
    if (!s->put_active)
        return STORE_OK;
    s->put_active = 0;
    if (s->failed)
        return STORE_ERR_IO;
    /* programming 0xFF changes no bit but opens every block the record was
     * to cover, so their headers point past it and its CRC is stable */
    memset(buf, 0xff, sizeof(buf));
    while (s->wr_pos != s->wr_end) {
        uint32_t left = log_pos(s, s->wr_end) - log_pos(s, s->wr_pos);
        uint32_t n = left < IO_CHUNK ? left : IO_CHUNK;
        if ((rc = prog(s, s->wr_pos, buf, n)) != STORE_OK)
            return rc;
        s->wr_pos = adv(s, s->wr_pos, n);
    }
    make_rhdr(raw, REC_PAD, s->wr_len, s->wr_seq);
    crc = crc32_update(0, raw, 12);
    a = adv(s, s->wr_start, RHDR);
    for (i = 0; i < s->wr_len;) {
        uint32_t n = s->wr_len - i < IO_CHUNK ? s->wr_len - i : IO_CHUNK;
        if ((rc = lread(s, a, buf, n)) != STORE_OK)
            return rc;
        crc = crc32_update(crc, buf, n);
        a = adv(s, a, n);
        i += n;
    }
    put32(raw + 12, crc);
    s->wr_type = REC_PAD;
    if ((rc = prog(s, s->wr_start, raw, RHDR)) != STORE_OK)
        return rc;
    s->write_addr = s->wr_end;
    return STORE_OK;
}

int store_put_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                     const void *body, uint32_t body_len, const uint32_t *if_match,
                     int if_none_match, uint32_t *etag)
{
    int rc = store_put_begin(s, coll, name, name_len, body_len, if_match, if_none_match);
    if (rc != STORE_OK)
        return rc;
    if ((rc = store_put_write(s, body, body_len)) != STORE_OK) {
        store_put_abort(s);
        return rc;
    }
    return store_put_commit(s, etag);
}

static int obj_info(struct store *s, uint32_t addr, uint32_t *name_len, struct store_object_info *info)
{
    uint8_t raw[RHDR];
    uint32_t id;
    int rc;
    if ((rc = lread(s, addr, raw, RHDR)) ||
        (rc = read_obj_prefix(s, addr, &id, &info->sync_seq, name_len)))
        return rc;
    info->etag = get32(raw + 8);
    info->size = raw[2] == REC_PUT ? get32(raw + 4) - OBJ_PREFIX - *name_len : 0;
    return STORE_OK;
}

int store_get_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                     uint32_t offset, void *buf, uint32_t cap, uint32_t *got,
                     struct store_object_info *info)
{
    struct store_object_info local;
    uint32_t nlen, n = 0;
    int slot, e, rc;

    if (!info)
        info = &local;
    if (got)
        *got = 0;
    if ((rc = obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    if (e < 0 || s->mem.index[e].state != SLOT_LIVE)
        return STORE_ERR_NOT_FOUND;
    if ((rc = obj_info(s, s->mem.index[e].addr, &nlen, info)) != STORE_OK)
        return rc;
    if (offset < info->size && cap) {
        n = info->size - offset < cap ? info->size - offset : cap;
        rc = lread(s, adv(s, s->mem.index[e].addr, RHDR + OBJ_PREFIX + nlen + offset), buf, n);
        if (rc)
            return rc;
    }
    if (got)
        *got = n;
    return STORE_OK;
}

int store_delete_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                        const uint32_t *if_match)
{
    uint8_t p[OBJ_PREFIX];
    struct store_object_info info;
    uint32_t nlen, sync;
    int slot, e, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (name_len && name_len <= STORE_NAME_MAX &&
        (rc = ensure_space(s, (uint32_t)(RHDR + OBJ_PREFIX + name_len))) != STORE_OK)
        return rc;
    if ((rc = obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    if (e < 0 || s->mem.index[e].state != SLOT_LIVE)
        return STORE_ERR_NOT_FOUND;
    if (if_match) {
        if ((rc = obj_info(s, s->mem.index[e].addr, &nlen, &info)) != STORE_OK)
            return rc;
        if (info.etag != *if_match)
            return STORE_ERR_PRECONDITION;
    }
    sync = s->mem.colls[slot].sync_seq + 1;
    wr_begin(s, REC_DEL, OBJ_PREFIX + (uint32_t)name_len);
    put32(p, coll);
    put32(p + 4, sync);
    p[8] = (uint8_t)name_len;
    if ((rc = wr_data(s, p, OBJ_PREFIX)) || (rc = wr_data(s, name, (uint32_t)name_len)) ||
        (rc = wr_commit(s, 1)))
        return rc;
    supersede(s, s->mem.index[e].addr);
    s->mem.index[e].addr = s->wr_start;
    s->mem.index[e].sync_seq = sync;
    s->mem.index[e].state = SLOT_TOMB;
    s->mem.colls[slot].objects--;
    s->mem.colls[slot].sync_seq = sync;
    s->live_bytes += RHDR + s->wr_len;
    return STORE_OK;
}

/* The collection's list from from_hash on, filtered in RAM before any flash
 * read. */
static int enumerate(struct store *s, uint32_t slot, int tombs, uint32_t after, uint32_t from_hash,
                     store_entry_cb cb, void *ctx)
{
    struct store_object_info info;
    struct store_entry ent;
    uint32_t i, nlen;
    int rc;
    for (i = s->mem.colls[slot].head; i != LINK_NONE; i = s->mem.index[i].next) {
        const struct store_index_slot *e = &s->mem.index[i];
        if (e->name_hash < from_hash || e->sync_seq <= after || (e->state == SLOT_TOMB && !tombs))
            continue;
        if ((rc = obj_info(s, e->addr, &nlen, &info)) != STORE_OK)
            return rc;
        ent.name = (const char *)s->name_buf;
        ent.name_len = nlen;
        ent.etag = info.etag;
        ent.size = info.size;
        ent.sync_seq = e->sync_seq;
        ent.name_hash = e->name_hash;
        ent.deleted = e->state == SLOT_TOMB;
        if (cb(ctx, &ent))
            break;
    }
    return STORE_OK;
}

int store_list_from(struct store *s, uint32_t coll, uint32_t from_hash, store_entry_cb cb, void *ctx)
{
    int slot;
    if (s->failed)
        return STORE_ERR_IO;
    if ((slot = coll_slot_by_id(s, coll)) < 0)
        return STORE_ERR_NOT_FOUND;
    return enumerate(s, (uint32_t)slot, 0, 0, from_hash, cb, ctx);
}

int store_list(struct store *s, uint32_t coll, store_entry_cb cb, void *ctx)
{
    return store_list_from(s, coll, 0, cb, ctx);
}

int store_changes_after(struct store *s, uint32_t coll, uint32_t token, uint32_t after_seq,
                        store_entry_cb cb, void *ctx)
{
    int slot;
    if (s->failed)
        return STORE_ERR_IO;
    if ((slot = coll_slot_by_id(s, coll)) < 0)
        return STORE_ERR_NOT_FOUND;
    if (token == 0)  /* RFC 6578 3.4: initial synchronization */
        return enumerate(s, (uint32_t)slot, 0, after_seq, 0, cb, ctx);
    if (token < s->mem.colls[slot].floor || token > s->mem.colls[slot].sync_seq)
        return STORE_ERR_SYNC_TOKEN;
    return enumerate(s, (uint32_t)slot, 1, token > after_seq ? token : after_seq, 0, cb, ctx);
}

int store_changes_since(struct store *s, uint32_t coll, uint32_t token, store_entry_cb cb, void *ctx)
{
    return store_changes_after(s, coll, token, 0, cb, ctx);
}

/* ---- tags ---------------------------------------------------------------- */

static uint16_t tag16(uint32_t tag)
{
    return (uint16_t)(tag ^ tag >> 16);
}

int store_tag_next(struct store *s, uint32_t coll, uint32_t tag, uint32_t *pos, char *name,
                   size_t cap, size_t *name_len, int *known)
{
    uint32_t i, id, sync, len;
    int slot, rc;
    if (s->failed)
        return STORE_ERR_IO;
    if (cap <= STORE_NAME_MAX)
        return STORE_ERR_INVALID;
    if ((slot = coll_slot_by_id(s, coll)) < 0)
        return STORE_ERR_NOT_FOUND;
    if (*pos == STORE_TAG_START)
        i = s->mem.colls[slot].head;
    else if (*pos < s->mem.index_slots && s->mem.index[*pos].state != SLOT_EMPTY &&
             s->mem.index[*pos].coll == (uint32_t)slot)
        i = s->mem.index[*pos].next;
    else
        return STORE_ERR_INVALID;  /* the store changed under the walk */
    for (; i != LINK_NONE; i = s->mem.index[i].next) {
        const struct store_index_slot *e = &s->mem.index[i];
        if (e->state != SLOT_LIVE)
            continue;
        if ((e->flags & SLOT_TAG_KNOWN) && e->tag != tag16(tag))
            continue;
        if ((rc = read_obj_prefix(s, e->addr, &id, &sync, &len)) != STORE_OK)
            return rc;
        memcpy(name, s->name_buf, len);
        name[len] = '\0';
        *name_len = len;
        *known = (e->flags & SLOT_TAG_KNOWN) != 0;
        *pos = i;
        return 1;
    }
    return 0;
}

uint32_t store_name_hash(const void *data, size_t len)
{
    return fnv1a(data, len);
}

int store_tag_set(struct store *s, uint32_t coll, const char *name, size_t name_len, uint32_t tag)
{
    int slot, e, rc;
    if ((rc = obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    if (e < 0 || s->mem.index[e].state != SLOT_LIVE)
        return STORE_ERR_NOT_FOUND;
    s->mem.index[e].tag = tag16(tag);
    s->mem.index[e].flags |= SLOT_TAG_KNOWN;
    return STORE_OK;
}

/* ---- consistency check ------------------------------------------------- */

static void check_fail(struct store_check *r, const char *what, uint32_t addr)
{
    if (!r->problems++) {
        r->first_problem = what;
        r->first_problem_addr = addr;
    }
}

/* Everything the RAM state claims must be on the flash, and nothing may be
 * written where the next record will go. Reads only: safe at any time. */
static int check(struct store *s, struct store_check *r, int with_crc)
{
    struct bhdr bh;
    struct rhdr h;
    uint32_t b, n, i, j, id, sync, len, live = 0, used = 0, end_room, programmed, prev_seq = 0;
    uint32_t listed = 0;
    int rc, found;

    memset(r, 0, sizeof(*r));
    if (s->failed || s->put_active)
        return STORE_ERR_BUSY;
    /* 1. the log: live blocks with consecutive sequence numbers */
    for (n = 0, b = s->tail; n < s->nused; n++, b = ring_next(s, b)) {
        if ((rc = read_bhdr(s, b, &bh)) != STORE_OK)
            return rc;
        r->blocks++;
        r->sealed += bh.sealed != 0;
        if (!bh.live)
            check_fail(r, "log block header not live or bad CRC", b * s->block_size);
        else if (n && bh.seq != prev_seq + 1)
            check_fail(r, "log block sequence not consecutive", b * s->block_size);
        else if (bh.seq >= s->next_block_seq)
            check_fail(r, "log block sequence beyond the next one", b * s->block_size);
        prev_seq = bh.seq;
    }
    /* 2. where the next record goes is blank to the end of its block */
    if (in_log(s, blk_of(s, s->write_addr))) {
        if (blk_of(s, s->write_addr) != head_blk(s))
            check_fail(r, "write position outside the head block", s->write_addr);
        end_room = blk_end(s, blk_of(s, s->write_addr)) - s->write_addr;
        if ((rc = is_blank(s, s->write_addr, end_room, &programmed)) < 0)
            return rc;
        if (!rc)
            check_fail(r, "programmed bytes after the write position", s->write_addr);
    } else if (s->nused && blk_of(s, s->write_addr) != ring_next(s, head_blk(s))) {
        check_fail(r, "write position neither in the head nor after it", s->write_addr);
    }
    /* 3. every object in the index: a valid record of its collection, found by its name */
    for (i = 0; i < s->mem.index_slots; i++) {
        struct store_index_slot *e = &s->mem.index[i];
        if (e->state == SLOT_EMPTY)
            continue;
        used++;
        if (e->coll >= s->mem.coll_slots || !s->mem.colls[e->coll].used) {
            check_fail(r, "object of an unused collection slot", e->addr);
            continue;
        }
        if (!in_log(s, blk_of(s, e->addr))) {
            check_fail(r, "object record outside the log", e->addr);
            continue;
        }
        if ((rc = rec_check_crc(s, e->addr, &h, with_crc)) < 0)
            return rc;
        r->records++;
        if (rc != REC_VALID || h.type != (e->state == SLOT_LIVE ? REC_PUT : REC_DEL)) {
            check_fail(r, "object record invalid or of the wrong type", e->addr);
            continue;
        }
        if (h.seq >= s->next_rec_seq)
            check_fail(r, "record sequence beyond the next one", e->addr);
        if ((rc = read_obj_prefix(s, e->addr, &id, &sync, &len)) != STORE_OK)
            return rc;
        if (id != s->mem.colls[e->coll].id || sync != e->sync_seq ||
            sync > s->mem.colls[e->coll].sync_seq || fnv1a(s->name_buf, len) != e->name_hash) {
            check_fail(r, "object record disagrees with its index slot", e->addr);
            continue;
        }
        memcpy(s->scratch, s->name_buf, len);
        if ((rc = idx_lookup(s, e->coll, s->scratch, len, e->name_hash, &found)) != STORE_OK)
            return rc;
        if (found != (int)i)
            check_fail(r, "object not found by its name (probe chain or duplicate)", e->addr);
        live += RHDR + h.len;
        if (e->state == SLOT_LIVE)
            r->objects++;
        else
            r->tombstones++;
    }
    if (used != s->index_used)
        check_fail(r, "index count differs from the slots in use", 0);
    /* 4. collections: their record, floor and object count */
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used)
            continue;
        r->collections++;
        if ((rc = rec_check_crc(s, c->rec_addr, &h, with_crc)) < 0)
            return rc;
        r->records++;
        if (!in_log(s, blk_of(s, c->rec_addr)) || rc != REC_VALID || h.type != REC_COLL ||
            lread(s, adv(s, c->rec_addr, RHDR), s->scratch, 4) || get32(s->scratch) != c->id) {
            check_fail(r, "collection record invalid", c->rec_addr);
            continue;
        }
        live += RHDR + h.len;
        if (c->floor_addr != FIRST_NONE) {
            if ((rc = rec_check_crc(s, c->floor_addr, &h, with_crc)) < 0)
                return rc;
            r->records++;
            if (rc != REC_VALID || h.type != REC_FLOOR || h.len != 8 ||
                lread(s, adv(s, c->floor_addr, RHDR), s->scratch, 8) ||
                get32(s->scratch) != c->id || get32(s->scratch + 4) != c->floor)
                check_fail(r, "history floor record invalid", c->floor_addr);
            live += FLOOR_RECORD;
        }
        /* its member list: its own slots, in hash order, each once */
        for (j = c->head, n = 0, len = 0; j != LINK_NONE && len <= s->mem.index_slots;
             j = s->mem.index[j].next, len++) {
            const struct store_index_slot *e = &s->mem.index[j];
            if (j >= s->mem.index_slots || e->state == SLOT_EMPTY || e->coll != i) {
                check_fail(r, "member list holds a slot of another collection", c->rec_addr);
                break;
            }
            if (e->next != LINK_NONE && e->next < s->mem.index_slots &&
                s->mem.index[e->next].name_hash < e->name_hash)
                check_fail(r, "member list out of hash order", c->rec_addr);
            n += e->state == SLOT_LIVE;
        }
        listed += len;
        if (n != c->objects)
            check_fail(r, "collection object count wrong", c->rec_addr);
        if (c->sync_seq < c->floor)
            check_fail(r, "collection sync sequence below its history floor", c->rec_addr);
    }
    if (listed != used)
        check_fail(r, "member lists do not hold every index slot once", 0);
    /* 5. users */
    for (i = 0; i < s->mem.user_slots; i++) {
        if (!s->mem.users[i].used)
            continue;
        r->users++;
        if ((rc = rec_check_crc(s, s->mem.users[i].addr, &h, with_crc)) < 0)
            return rc;
        r->records++;
        if (rc != REC_VALID || h.type != REC_USER) {
            check_fail(r, "user record invalid", s->mem.users[i].addr);
            continue;
        }
        live += RHDR + h.len;
    }
    if (live != s->live_bytes)
        check_fail(r, "live byte count differs from the live records", live);
    return s->failed ? STORE_ERR_IO : STORE_OK;
}

int store_check(struct store *s, struct store_check *r)
{
    return check(s, r, 1);
}

int store_check_quick(struct store *s, struct store_check *r)
{
    return check(s, r, 0);
}

const char *store_strerror(int status)
{
    switch (status) {
    case STORE_OK: return "ok";
    case STORE_ERR_NOT_FOUND: return "not found";
    case STORE_ERR_PRECONDITION: return "precondition failed";
    case STORE_ERR_EXISTS: return "already exists";
    case STORE_ERR_TOO_LARGE: return "too large";
    case STORE_ERR_COLL_FULL: return "collection full";
    case STORE_ERR_INDEX_FULL: return "index full";
    case STORE_ERR_NO_SPACE: return "flash full";
    case STORE_ERR_TOO_MANY_COLLECTIONS: return "too many collections";
    case STORE_ERR_TOO_MANY_USERS: return "too many users";
    case STORE_ERR_SYNC_TOKEN: return "sync token too old or invalid";
    case STORE_ERR_INVALID: return "invalid argument";
    case STORE_ERR_BUSY: return "busy";
    case STORE_ERR_IO: return "flash I/O error";
    default: return "unknown error";
    }
}
