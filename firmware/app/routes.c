#include "routes.h"

#include <stdio.h>
#include <string.h>

#include "static_files.h"

void app_error(int status, struct http_response *resp, char *scratch, size_t scratch_size)
{
    int n = snprintf(scratch, scratch_size, "%d %s\n", status, http_reason(status));
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = (const uint8_t *)scratch;
    resp->body_len = n < 0 ? 0 : (uint32_t)n;
}

static int target_is(const struct http_request *req, const char *path)
{
    size_t n = strlen(path);
    /* the query string does not select the resource here */
    const char *q = memchr(req->target, '?', req->target_len);
    size_t len = q ? (size_t)(q - req->target) : req->target_len;
    return len == n && memcmp(req->target, path, n) == 0;
}

void app_route(const struct http_request *req, struct http_response *resp,
               char *scratch, size_t scratch_size)
{
    const struct static_file *f;
    const char *q = memchr(req->target, '?', req->target_len);
    size_t path_len = q ? (size_t)(q - req->target) : req->target_len;

    memset(resp, 0, sizeof(*resp));
    if (req->method != HTTP_GET && req->method != HTTP_HEAD) {
        app_error(req->method == HTTP_METHOD_OTHER ? 501 : 405, resp, scratch, scratch_size);
        resp->allow = "GET, HEAD";
        return;
    }
    if (target_is(req, "/")) {
        resp->status = 200;
        resp->content_type = "text/plain; charset=utf-8";
        resp->body = (const uint8_t *)scratch;
        resp->body_len = (uint32_t)status_render(scratch, scratch_size);
        return;
    }
    f = static_file_find(req->target, path_len);
    if (f) {
        resp->status = 200;
        resp->content_type = f->content_type;
        resp->body = f->data;
        resp->body_len = f->len;
        return;
    }
    app_error(404, resp, scratch, scratch_size);
}
