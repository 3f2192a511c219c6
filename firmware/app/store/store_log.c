/*
 * The log on the flash: addresses along the ring of blocks, block headers
 * (reading, sealing), writing records (payload first, header last, then
 * sync() and the seal of the blocks left behind) and reading them back
 * (header checks, CRC).
 */
#include "store/store_internal.h"

#include "util/crc32.h"

/* ---- addresses: the ring of blocks ------------------------------------- */

/* n bytes further along the log; an address never rests on a block end */
uint32_t store_ring_mod(const struct store *s, uint32_t x)
{
    if (x < s->nblocks)
        return x;
    x -= s->nblocks;
    return x < s->nblocks ? x : x % s->nblocks;
}

int store_in_log(const struct store *s, uint32_t b)
{
    return s->nused && ring_dist(s, s->tail, b) < s->nused;
}

uint32_t store_adv(const struct store *s, uint32_t a, uint32_t n)
{
    uint32_t b = blk_of(s, a), off = a - data_start(s, b) + n;
    if (off < s->data_size)  /* within the block */
        return a + n;
    b = store_ring_mod(s, b + off / s->data_size);
    return data_start(s, b) + off % s->data_size;
}

/* position within the log, counting data bytes from the tail's data start */
uint32_t store_log_pos(const struct store *s, uint32_t a)
{
    uint32_t b = blk_of(s, a);
    return ring_dist(s, s->tail, b) * s->data_size + (a - data_start(s, b));
}

int store_lread(struct store *s, uint32_t a, void *buf, uint32_t len)
{
    uint8_t *p = buf;
    while (len) {
        uint32_t room = blk_end(s, blk_of(s, a)) - a, n = len < room ? len : room;
        if (flash_read(s->flash, a, p, n))
            return io_fail(s);
        p += n;
        len -= n;
        a = store_adv(s, a, n);
    }
    return STORE_OK;
}

int store_is_blank(struct store *s, uint32_t a, uint32_t len, uint32_t *programmed)
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

STORE_SCAN_CODE int store_read_bhdr(struct store *s, uint32_t b, struct bhdr *h)
{
    uint8_t raw[BHDR], all = 0xff;
    uint32_t i;
    if (flash_read(s->flash, b * s->block_size, raw, BHDR))
        return io_fail(s);
    for (i = 0; i < BHDR; i++)
        all &= raw[i];
    h->blank = all == 0xff;
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
int store_seal_block(struct store *s, uint32_t b)
{
    static const uint8_t zero[2] = {0, 0};
    if (flash_program(s->flash, b * s->block_size + BHDR_STATE, zero, 2))
        return io_fail(s);
    return STORE_OK;
}

int store_block_sealed(struct store *s, uint32_t b, int *sealed)
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
int store_seal_behind(struct store *s)
{
    uint32_t wb = s->write_addr / s->block_size;
    int rc;
    while (s->seal_next != wb && s->nused &&
           (s->seal_next + s->nblocks - s->tail) % s->nblocks < s->nused) {
        if ((rc = store_seal_block(s, s->seal_next)) != STORE_OK)
            return rc;
        s->seal_next = (s->seal_next + 1) % s->nblocks;
    }
    return STORE_OK;
}

/* blocks that must be opened for `bytes` more at write_addr */
uint32_t store_blocks_needed(const struct store *s, uint32_t bytes)
{
    uint32_t b = blk_of(s, s->write_addr);
    if (store_in_log(s, b)) {
        uint32_t room = blk_end(s, b) - s->write_addr;
        if (bytes <= room)
            return 0;
        bytes -= room;
    }
    return (bytes + s->data_size - 1) / s->data_size;
}

/* Start block b as the new head: erase unless blank, then its header. The
 * first_rec field points at the record start or end inside b, if any. */
int store_open_block(struct store *s, uint32_t b)
{
    uint8_t raw[BHDR];
    uint32_t first = FIRST_NONE;
    int blank;

    if (s->nused >= s->nblocks || b != (s->nused ? ring_next(s, head_blk(s)) : s->tail))
        return io_fail(s);  /* would overwrite the log: a bug, stop writing */
    blank = store_is_blank(s, b * s->block_size, s->block_size, NULL);
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
int store_prog(struct store *s, uint32_t a, const void *data, uint32_t len)
{
    const uint8_t *p = data;
    uint32_t page = s->flash->geo.page_size;
    while (len) {
        uint32_t b = blk_of(s, a), n = len;
        int rc;
        if (!store_in_log(s, b) && (rc = store_open_block(s, b)) != STORE_OK)
            return rc;
        if (n > blk_end(s, b) - a)
            n = blk_end(s, b) - a;
        if (n > page - a % page)
            n = page - a % page;
        if (flash_program(s->flash, a, p, n))
            return io_fail(s);
        p += n;
        len -= n;
        a = store_adv(s, a, n);
    }
    return STORE_OK;
}

void store_make_rhdr(uint8_t *raw, uint8_t type, uint32_t len, uint32_t seq)
{
    raw[0] = (uint8_t)REC_MAGIC;
    raw[1] = (uint8_t)(REC_MAGIC >> 8);
    raw[2] = type;
    raw[3] = REC_VERSION;
    put32(raw + 4, len);
    put32(raw + 8, seq);
}

void store_wr_begin(struct store *s, uint8_t type, uint32_t len)
{
    uint8_t raw[RHDR];
    s->wr_start = s->write_addr;
    s->wr_end = store_adv(s, s->wr_start, RHDR + len);
    s->wr_pos = store_adv(s, s->wr_start, RHDR);
    s->wr_len = len;
    s->wr_type = type;
    s->wr_seq = s->next_rec_seq++;
    store_make_rhdr(raw, type, len, s->wr_seq);
    s->wr_crc = crc32_update(0, raw, 12);
}

int store_wr_data(struct store *s, const void *data, uint32_t len)
{
    int rc = store_prog(s, s->wr_pos, data, len);
    if (rc)
        return rc;
    s->wr_crc = crc32_update(s->wr_crc, data, len);
    s->wr_pos = store_adv(s, s->wr_pos, len);
    return STORE_OK;
}

/* The header last: the record exists from the moment it is complete. */
int store_wr_commit(struct store *s, int sync)
{
    uint8_t raw[RHDR];
    int rc;
    if (s->wr_pos != s->wr_end)
        return io_fail(s);
    store_make_rhdr(raw, (uint8_t)s->wr_type, s->wr_len, s->wr_seq);
    put32(raw + 12, s->wr_crc);
    if ((rc = store_prog(s, s->wr_start, raw, RHDR)) != STORE_OK)
        return rc;
    s->write_addr = s->wr_end;
    s->max_record = s->max_record > RHDR + s->wr_len ? s->max_record : RHDR + s->wr_len;
    if (sync && flash_sync(s->flash))
        return io_fail(s);
    return sync ? store_seal_behind(s) : STORE_OK;
}

/* ---- reading records --------------------------------------------------- */

/* A record at a: REC_VALID, REC_BLANK (all ones) or REC_BAD. With crc 0 the
 * payload is not read: for records of sealed blocks, checked before. */
int store_rec_check_crc(struct store *s, uint32_t a, struct rhdr *h, int with_crc)
{
    uint32_t log_end = s->nused * s->data_size, pos = store_log_pos(s, a), i, crc;
    uint8_t buf[IO_CHUNK];
    int all_ones = 1;

    if (pos + RHDR > log_end)
        return REC_BLANK;
    if (store_lread(s, a, h->raw, RHDR))
        return STORE_ERR_IO;
    for (i = 0; i < RHDR; i++)
        all_ones &= h->raw[i] == 0xff;
    if (all_ones)
        return REC_BLANK;
    h->type = h->raw[2];
    h->len = get32(h->raw + 4);
    h->seq = get32(h->raw + 8);
    if (h->raw[0] != (uint8_t)REC_MAGIC || h->raw[1] != (uint8_t)(REC_MAGIC >> 8) ||
        h->raw[3] != REC_VERSION || h->type < REC_PAD || h->type > REC_TYPE_MAX ||
        h->len > log_end - pos - RHDR)
        return REC_BAD;
    if (!with_crc)
        return REC_VALID;
    crc = crc32_update(0, h->raw, 12);
    a = store_adv(s, a, RHDR);
    for (i = 0; i < h->len;) {
        uint32_t n = h->len - i < IO_CHUNK ? h->len - i : IO_CHUNK;
        if (store_lread(s, a, buf, n))
            return STORE_ERR_IO;
        crc = crc32_update(crc, buf, n);
        a = store_adv(s, a, n);
        i += n;
    }
    return crc == get32(h->raw + 12) ? REC_VALID : REC_BAD;
}

int store_rec_len_at(struct store *s, uint32_t a, uint32_t *len)
{
    uint8_t raw[RHDR];
    int rc = store_lread(s, a, raw, RHDR);
    *len = RHDR + get32(raw + 4);
    return rc;
}

/* Object record prefix: collection id, sync, name (into name_buf). */
int store_read_obj_prefix(struct store *s, uint32_t a, uint32_t *coll_id, uint32_t *sync,
                    uint32_t *name_len)
{
    uint8_t p[OBJ_PREFIX];
    int rc = store_lread(s, store_adv(s, a, RHDR), p, OBJ_PREFIX);
    if (rc)
        return rc;
    *coll_id = get32(p);
    *sync = get32(p + 4);
    *name_len = p[8];
    return store_lread(s, store_adv(s, a, RHDR + OBJ_PREFIX), s->name_buf, *name_len);
}
