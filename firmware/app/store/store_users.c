/* Users (HTTP Basic): a USER record per name, the latest one counts. */
#include "store/store_internal.h"

#include <string.h>

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
    if ((rc = store_ensure_space(s, (uint32_t)(RHDR + 2 + len + secret_len))) != STORE_OK)
        return rc;
    hash = fnv1a(name, len);
    if ((rc = store_user_slot_by_name(s, (const uint8_t *)name, (uint32_t)len, hash, &slot)) != STORE_OK)
        return rc;
    if (slot < 0) {
        for (i = 0; i < s->mem.user_slots && s->mem.users[i].used; i++)
            ;
        if (i == s->mem.user_slots)
            return STORE_ERR_TOO_MANY_USERS;
    } else {
        i = (uint32_t)slot;
    }
    store_wr_begin(s, REC_USER, (uint32_t)(2 + len + secret_len));
    l = (uint8_t)len;
    if ((rc = store_wr_data(s, &l, 1)) || (rc = store_wr_data(s, name, (uint32_t)len)))
        return rc;
    l = (uint8_t)secret_len;
    if ((rc = store_wr_data(s, &l, 1)) || (rc = store_wr_data(s, secret, (uint32_t)secret_len)) ||
        (rc = store_wr_commit(s, 1)))
        return rc;
    if (slot >= 0)
        store_supersede(s, s->mem.users[i].addr);
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
    if ((rc = store_user_slot_by_name(s, (const uint8_t *)name, (uint32_t)nlen, fnv1a(name, nlen), &slot)))
        return rc;
    if (slot < 0)
        return STORE_ERR_NOT_FOUND;
    a = store_adv(s, s->mem.users[slot].addr, RHDR + 1 + (uint32_t)nlen);
    if ((rc = store_lread(s, a, &l, 1)) != STORE_OK)
        return rc;
    if (l > cap)
        return STORE_ERR_TOO_LARGE;
    *len = l;
    return store_lread(s, store_adv(s, a, 1), secret, l);
}
