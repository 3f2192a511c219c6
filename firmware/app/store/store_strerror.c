/* Names of the store's status codes, for logs and the console. */
#include "store/store.h"

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
