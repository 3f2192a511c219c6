/* Request paths: percent-decoding (RFC 3986), the store keys of
 * collections, and resolving a request's target in the /dav/ tree. */
#include "dav/dav_private.h"

#include <string.h>

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Well-formed UTF-8 (RFC 3629 section 4): no overlong forms (C0 AE for '.'),
 * no surrogates, nothing above U+10FFFF. */
static bool utf8_valid(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char b = p[i];
        size_t k, more = b < 0x80 ? 0 : b >= 0xC2 && b <= 0xDF ? 1 : b >= 0xE0 && b <= 0xEF ? 2 :
                         b >= 0xF0 && b <= 0xF4 ? 3 : 4;
        if (more == 4 || more >= n - i)
            return false;
        for (k = 1; k <= more; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
        if ((b == 0xE0 && p[i + 1] < 0xA0) || (b == 0xED && p[i + 1] > 0x9F) ||
            (b == 0xF0 && p[i + 1] < 0x90) || (b == 0xF4 && p[i + 1] > 0x8F))
            return false;
        i += more + 1;
    }
    return true;
}

/* RFC 3986 section 2.1. A path in absolute-form (a full URI, RFC 9112
 * section 3.2.2) is reduced to its path; query and fragment are dropped.
 * Encoded '/', control bytes (NUL...), backslashes (a separator to some
 * clients and file systems), malformed or overlong UTF-8, empty and "." /
 * ".." segments are refused, so one path has one spelling. */
int dav_decode_path(const char *in, size_t len, char *out, size_t cap, size_t *out_len)
{
    size_t i, n = 0;
    if (len > 7 && (memcmp(in, "http://", 7) == 0 || (len > 8 && memcmp(in, "https://", 8) == 0))) {
        const char *slash = memchr(in + 8, '/', len - 8);
        if (!slash)
            return 400;
        len -= (size_t)(slash - in);
        in = slash;
    }
    for (i = 0; i < len && in[i] != '?' && in[i] != '#'; i++) {
        char ch = in[i];
        if (ch == '%') {
            int hi, lo;
            if (i + 2 >= len + 0 || (hi = hex_digit(in[i + 1])) < 0 || (lo = hex_digit(in[i + 2])) < 0)
                return 400;
            ch = (char)(hi << 4 | lo);
            if (ch == '/')
                return 400;
            i += 2;
        }
        if ((unsigned char)ch < 0x20 || ch == 0x7F || ch == '\\')
            return 400;
        if (n + 1 >= cap)
            return 414;
        out[n++] = ch;
    }
    out[n] = '\0';
    if (n == 0 || out[0] != '/' || !utf8_valid((const unsigned char *)out, n))
        return 400;
    for (i = 0; i < n; i++) {
        if (out[i] != '/')
            continue;
        if (i + 1 < n && out[i + 1] == '/')
            return 400;
        if (i + 1 < n && out[i + 1] == '.' && (i + 2 == n || out[i + 2] == '/'))
            return 400;
        if (i + 2 < n && out[i + 1] == '.' && out[i + 2] == '.' && (i + 3 == n || out[i + 3] == '/'))
            return 400;
    }
    *out_len = n;
    return 0;
}

int dav_coll_key(const char *path, size_t len, char key, char *out)
{
    if (len + 1 > STORE_PATH_MAX)
        return -1;
    out[0] = key;
    memcpy(out + 1, path, len);
    out[len + 1] = '\0';
    return 0;
}

/* The registered types' keys first, then the plain one. */
int dav_find_collection(struct dav_ctx *c, const char *path, size_t len, uint32_t *id,
                        const struct dav_coll_type **type)
{
    char key[STORE_PATH_MAX + 1];
    const struct dav_extension *ext;
    unsigned i;
    if (dav_coll_key(path, len, DAV_PLAIN_KEY, key))
        return STORE_ERR_NOT_FOUND;
    for (i = 0; (ext = dav_extensions[i]) != NULL; i++) {
        if (!ext->coll_type)
            continue;
        key[0] = ext->coll_type->key;
        if (store_coll_find(c->store, key, len + 1, id) == STORE_OK) {
            *type = ext->coll_type;
            return STORE_OK;
        }
    }
    key[0] = DAV_PLAIN_KEY;
    if (store_coll_find(c->store, key, len + 1, id) == STORE_OK) {
        *type = NULL;
        return STORE_OK;
    }
    return STORE_ERR_NOT_FOUND;
}

static bool is_home(const char *path, size_t len)
{
    /* "/dav/<user>/" */
    const char *rest = path + sizeof(DAV_ROOT_PATH) - 1;
    size_t n = len - (sizeof(DAV_ROOT_PATH) - 1);
    const char *slash;
    if (len < sizeof(DAV_ROOT_PATH))
        return false; /* the root itself, or shorter */
    slash = memchr(rest, '/', n);
    return slash && slash == rest + n - 1 && n > 1;
}

size_t dav_parent_len(const char *path, size_t len)
{
    size_t i = len - 1; /* skip a trailing '/' */
    while (i > 0 && path[i - 1] != '/')
        i--;
    return i;
}

bool dav_coll_parent_exists(struct dav_ctx *c, const char *path, size_t len, uint32_t *parent,
                            const struct dav_coll_type **parent_type)
{
    size_t p = dav_parent_len(path, len);
    *parent = 0;
    *parent_type = NULL;
    if (is_home(path, p))
        return true;
    return p > sizeof(DAV_ROOT_PATH) && dav_find_collection(c, path, p, parent, parent_type) == STORE_OK;
}

const struct dav_coll_type *dav_fixed_type(const char *name, size_t n)
{
    const struct dav_coll_type *t;
    unsigned i;
    if (n && name[n - 1] == '/')
        n--;
    for (i = 0; (t = dav_fixed_type_at(i)) != NULL; i++)
        if (strlen(t->home_name) == n && memcmp(t->home_name, name, n) == 0)
            return t;
    return NULL;
}

int dav_resolve(struct dav_ctx *c)
{
    return dav_resolve_path(c, c->x->req->target, c->x->req->target_len);
}

/* Resolve the path in[0..in_len) into c->path and c->target. Returns 0 or an HTTP status. */
int dav_resolve_path(struct dav_ctx *c, const char *in, size_t in_len)
{
    struct dav_resource *t = &c->target;
    size_t root = sizeof(DAV_ROOT_PATH) - 1, len;
    const char *slash;
    int rc = dav_decode_path(in, in_len, c->path, sizeof(c->path) - 1, &len);
    if (rc)
        return rc;
    memset(t, 0, sizeof(*t));
    t->path = c->path;
    if (len == 1) {
        /* "/", where a route sends it: the DAV root seen from the server's root (RFC 6764
         * section 6: a client may start there), answering for itself */
        t->path_len = len;
        t->exists = true;
        t->kind = DAV_RES_ROOT;
        return 0;
    }
    if (len == root - 1 && memcmp(c->path, DAV_ROOT_PATH, root - 1) == 0) {
        c->path[len++] = '/';
        c->path[len] = '\0';
    }
    if (len < root || memcmp(c->path, DAV_ROOT_PATH, root) != 0)
        return 404;
    t->path_len = len;
    t->exists = true;
    if (len == root) {
        t->kind = DAV_RES_ROOT;
        return 0;
    }
    slash = memchr(c->path + root, '/', len - root);
    if (!slash) {
        /* "/dav/<user>": the home without its slash */
        c->path[len++] = '/';
        c->path[len] = '\0';
        slash = c->path + len - 1;
    }
    if ((size_t)(slash - (c->path + root)) > AUTH_USER_MAX)
        return 404;
    memcpy(c->owner, c->path + root, (size_t)(slash - (c->path + root)));
    c->owner[slash - (c->path + root)] = '\0';
    /* each user sees only their own tree */
    if (strcmp(c->owner, c->user) != 0)
        return 403;
    t->path_len = len;
    if (is_home(c->path, len)) {
        t->kind = DAV_RES_HOME;
        return 0;
    }
    if (DAV_FIXED_COLLECTIONS && (t->type = dav_fixed_type(slash + 1, (size_t)(c->path + len - (slash + 1)))) != NULL) {
        t->kind = DAV_RES_FIXED;
        if (c->path[len - 1] != '/') {
            c->path[len++] = '/';
            c->path[len] = '\0';
            t->path_len = len;
        }
        return 0;
    }
    if (c->path[len - 1] == '/') {
        t->kind = DAV_RES_COLL;
        if (dav_find_collection(c, c->path, len, &t->coll, &t->type) == STORE_OK)
            return store_coll_info(c->store, t->coll, &t->info) == STORE_OK ? 0 : 500;
        t->exists = false;
        c->parent_exists = dav_coll_parent_exists(c, c->path, len, &t->coll, &t->type);
        return 0;
    }
    /* no trailing slash: a collection if there is one, else an object */
    if (len + 1 < sizeof(c->path) - 1) {
        c->path[len] = '/';
        if (dav_find_collection(c, c->path, len + 1, &t->coll, &t->type) == STORE_OK) {
            c->path[++len] = '\0';
            t->path_len = len;
            t->kind = DAV_RES_COLL;
            return store_coll_info(c->store, t->coll, &t->info) == STORE_OK ? 0 : 500;
        }
        c->path[len] = '\0';
    }
    t->kind = DAV_RES_OBJECT;
    c->name_off = dav_parent_len(c->path, len);
    c->name_len = len - c->name_off;
    if (c->name_len > STORE_NAME_MAX)
        return 414;
    if (is_home(c->path, c->name_off) ||
        dav_find_collection(c, c->path, c->name_off, &t->coll, &t->type) != STORE_OK) {
        c->parent_exists = false;
        t->exists = false;
        return 0;
    }
    c->parent_exists = true;
    {
        uint32_t got;
        char dummy;
        rc = store_get_object(c->store, t->coll, c->path + c->name_off, c->name_len, 0, &dummy, 0,
                              &got, &t->obj);
    }
    t->exists = rc == STORE_OK;
    if (rc != STORE_OK && rc != STORE_ERR_NOT_FOUND)
        return dav_store_http_status(rc);
    return 0;
}
