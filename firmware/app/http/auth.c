#include "http/auth.h"

#include <string.h>

#include "util/sha256.h"

#define SECRET_SIZE (AUTH_SALT_SIZE + SHA256_DIGEST_SIZE)
/* user-id ":" password, decoded: RFC 7617 sets no limit, we do */
#define CREDENTIALS_MAX 192

struct provisioned_user {
    const char *name, *salt_hex, *hash_hex;
};

#define USER(name, salt, hash) {name, salt, hash},
static const struct provisioned_user provisioned_users[] = {
#include "../../users.conf"
};
#undef USER

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int hex_decode(const char *hex, uint8_t *out, size_t n)
{
    size_t i;
    if (strlen(hex) != 2 * n)
        return -1;
    for (i = 0; i < n; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static void password_hash(const uint8_t *salt, const char *password, size_t len,
                          uint8_t digest[SHA256_DIGEST_SIZE])
{
    struct sha256 h;
    sha256_init(&h);
    sha256_update(&h, salt, AUTH_SALT_SIZE);
    sha256_update(&h, password, len);
    sha256_final(&h, digest);
}

int auth_provision(struct store *s)
{
    size_t i, n = sizeof(provisioned_users) / sizeof(provisioned_users[0]);
    int written = 0;
    for (i = 0; i < n; i++) {
        const struct provisioned_user *u = &provisioned_users[i];
        uint8_t secret[SECRET_SIZE], current[STORE_SECRET_MAX];
        size_t len = 0;
        int rc;
        if (hex_decode(u->salt_hex, secret, AUTH_SALT_SIZE) ||
            hex_decode(u->hash_hex, secret + AUTH_SALT_SIZE, SHA256_DIGEST_SIZE))
            return STORE_ERR_INVALID;
        rc = store_user_get(s, u->name, current, sizeof(current), &len);
        if (rc == STORE_OK && len == SECRET_SIZE && memcmp(current, secret, SECRET_SIZE) == 0)
            continue;
        rc = store_user_set(s, u->name, secret, SECRET_SIZE);
        if (rc != STORE_OK)
            return rc;
        written++;
    }
    return written;
}

int auth_set_password(struct store *s, const char *name, const char *password,
                      const uint8_t salt[AUTH_SALT_SIZE])
{
    uint8_t secret[SECRET_SIZE];
    memcpy(secret, salt, AUTH_SALT_SIZE);
    password_hash(salt, password, strlen(password), secret + AUTH_SALT_SIZE);
    return store_user_set(s, name, secret, SECRET_SIZE);
}

static int base64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

long auth_base64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
    size_t i, n = 0, pad = 0;
    uint32_t acc = 0;
    unsigned bits = 0;

    if (len % 4)
        return -1;
    for (i = 0; i < len; i++) {
        int v;
        if (in[i] == '=') {
            /* only at the end, at most two (section 3.2) */
            if (i + 2 < len || pad >= 2)
                return -1;
            pad++;
            continue;
        }
        if (pad || (v = base64_value(in[i])) < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n >= cap)
                return -1;
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    return (long)n;
}

/* Compare without an early exit, so timing does not tell how much matched. */
static int equal_secret(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint8_t diff = 0;
    size_t i;
    for (i = 0; i < n; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

enum auth_result auth_check(struct store *s, const struct http_request *req, char *user)
{
    uint8_t creds[CREDENTIALS_MAX + 1], secret[STORE_SECRET_MAX], digest[SHA256_DIGEST_SIZE];
    size_t vlen, len = 0, i = 0;
    size_t pos = 0, other_len;
    const char *v = http_header_next(req, "Authorization", &pos, &vlen);
    const uint8_t *colon;
    long n;

    /* auth-scheme is case-insensitive (RFC 9110 section 11.1) */
    if (!v || vlen < 6 || !http_token_equals(v, 5, "Basic") || (v[5] != ' ' && v[5] != '\t'))
        return AUTH_MISSING;
    /* Authorization is a singleton field (RFC 9110 section 11.6.2): with two,
     * this server and a proxy in front of it could each believe another one */
    if (http_header_next(req, "Authorization", &pos, &other_len))
        return AUTH_BAD;
    v += 6;
    vlen -= 6;
    while (vlen && (*v == ' ' || *v == '\t')) {
        v++;
        vlen--;
    }
    n = auth_base64_decode(v, vlen, creds, CREDENTIALS_MAX);
    if (n < 0)
        return AUTH_BAD;
    /* user-id may not contain a colon (RFC 7617 section 2) */
    colon = memchr(creds, ':', (size_t)n);
    if (!colon || colon == creds || (size_t)(colon - creds) > AUTH_USER_MAX)
        return AUTH_BAD;
    /* no control bytes in the user-id (RFC 7617 section 2): a NUL would cut
     * "alice<NUL>x" down to "alice" */
    for (i = 0; creds + i < colon; i++)
        if (creds[i] < 0x20 || creds[i] == 0x7F)
            return AUTH_BAD;
    memcpy(user, creds, (size_t)(colon - creds));
    user[colon - creds] = '\0';
    if (store_user_get(s, user, secret, sizeof(secret), &len) != STORE_OK || len != SECRET_SIZE) {
        user[0] = '\0';
        return AUTH_BAD;
    }
    password_hash(secret, (const char *)colon + 1, (size_t)(creds + n - (colon + 1)), digest);
    if (!equal_secret(digest, secret + AUTH_SALT_SIZE, SHA256_DIGEST_SIZE)) {
        user[0] = '\0';
        return AUTH_BAD;
    }
    return AUTH_OK;
}
