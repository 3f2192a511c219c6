/*
 * The RAM tables: collection and user slots, the object index (open
 * addressing, linear probing, backward-shift deletion) and the member lists
 * that link a collection's index slots in name hash order (docs/store.md,
 * "The RAM index").
 */
#include "store/store_internal.h"

#include <string.h>

/* ---- collection and user tables ---------------------------------------- */

/* Collection slot of an id. The last one found is tried first: replay and
 * requests meet long runs of one collection's records. */
int store_coll_slot_by_id(struct store *s, uint32_t id)
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

/* Parse a collection payload held in buf; 0 if malformed. */
int store_coll_parse(const uint8_t *buf, uint32_t len, struct coll_view *v)
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
int store_coll_load(struct store *s, uint32_t rec_addr, uint32_t *len, struct coll_view *v)
{
    uint32_t total;
    int rc = store_rec_len_at(s, rec_addr, &total);
    if (rc)
        return rc;
    *len = total - RHDR;
    if (*len > STORE_COLL_RECORD_MAX)
        return io_fail(s);
    if ((rc = store_lread(s, store_adv(s, rec_addr, RHDR), s->scratch, *len)) != STORE_OK)
        return rc;
    return store_coll_parse(s->scratch, *len, v) ? STORE_OK : io_fail(s);
}

int store_user_slot_by_name(struct store *s, const uint8_t *name, uint32_t len, uint32_t hash, int *found)
{
    uint32_t i;
    uint8_t l;
    *found = -1;
    for (i = 0; i < s->mem.user_slots; i++) {
        struct store_user_slot *u = &s->mem.users[i];
        if (!u->used || u->name_hash != hash)
            continue;
        if (store_lread(s, store_adv(s, u->addr, RHDR), &l, 1) ||
            store_lread(s, store_adv(s, u->addr, RHDR + 1), s->name_buf, l))
            return STORE_ERR_IO;
        if (l == len && memcmp(s->name_buf, name, len) == 0) {
            *found = (int)i;
            break;
        }
    }
    return STORE_OK;
}

/* ---- the object index: open addressing, linear probing ----------------- */

/* Slot of (coll, name), or -1; STORE_ERR_IO on read failure (< -1). */
int store_idx_lookup(struct store *s, uint32_t coll, const uint8_t *name, uint32_t len,
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
        if (store_read_obj_prefix(s, e->addr, &id, &sync, &l))
            return STORE_ERR_IO;
        if (l == len && memcmp(s->name_buf, name, len) == 0) {
            *found = (int)i;
            break;
        }
    }
    return STORE_OK;
}

int store_idx_find_addr(const struct store *s, uint32_t coll, uint32_t hash, uint32_t addr)
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

/* ---- member lists: a collection's slots linked in name hash order ------ */

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
void store_chains_build(struct store *s)
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

int store_idx_insert(struct store *s, uint32_t coll, uint32_t hash, uint32_t limit)
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
void store_idx_remove(struct store *s, uint32_t i)
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
            if (s->mem.index_etags)
                s->mem.index_etags[i] = s->mem.index_etags[j];
            i = j;
            break;
        }
    }
}

/* Forget index entries of a collection: all, or tombstones up to floor.
 * Walks the collection's list (from its start again after each removal:
 * removals move slots). */
int store_idx_drop(struct store *s, uint32_t coll, int tombs_only, uint32_t floor)
{
    uint16_t *l = &s->mem.colls[coll].head;
    uint32_t len;
    while (*l != LINK_NONE) {
        uint32_t i = *l;
        struct store_index_slot *e = &s->mem.index[i];
        if (!tombs_only || (e->state == SLOT_TOMB && e->sync_seq <= floor)) {
            if (store_rec_len_at(s, e->addr, &len))
                return STORE_ERR_IO;
            s->live_bytes -= len;
            store_idx_remove(s, i);
            l = &s->mem.colls[coll].head;
            continue;
        }
        l = &e->next;
    }
    return STORE_OK;
}
