/* Users and HTTP Basic authentication (RFC 7617) against the store's user
 * table. A user's secret in the store is a 16-byte salt followed by
 * SHA-256(salt || password). Users are provisioned at boot from
 * firmware/users.conf (written by firmware/tools/users.py); ports may add
 * more (the host build's --user option). */
#ifndef LITEDAV_AUTH_H
#define LITEDAV_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "http/http_parse.h"
#include "store/store.h"

#define AUTH_SALT_SIZE 16
#define AUTH_USER_MAX STORE_OWNER_MAX

/* RFC 7617 section 2: the challenge sent with every 401. */
#define AUTH_CHALLENGE "WWW-Authenticate: Basic realm=\"LiteDAV\", charset=\"UTF-8\"\r\n"

enum auth_result {
    AUTH_OK = 0,
    AUTH_MISSING = 1,   /* no Authorization field, or another scheme */
    AUTH_BAD = 2,       /* malformed, unknown user or wrong password */
};

/* Add or update every user of firmware/users.conf whose secret in the store
 * differs. Returns the number written, or a negative store status. */
int auth_provision(struct store *s);

/* Set a user's password now (salt: AUTH_SALT_SIZE bytes chosen by the port). */
int auth_set_password(struct store *s, const char *name, const char *password,
                      const uint8_t salt[AUTH_SALT_SIZE]);

/* Check the request's credentials (RFC 7617 section 2). On AUTH_OK the user
 * name is copied, NUL-terminated, into user (AUTH_USER_MAX + 1 bytes). */
enum auth_result auth_check(struct store *s, const struct http_request *req, char *user);

/* RFC 4648 section 4 base64 decoding of in[0..len) into out (cap bytes).
 * Returns the decoded length, or -1 if malformed or too long. */
long auth_base64_decode(const char *in, size_t len, uint8_t *out, size_t cap);

#endif
