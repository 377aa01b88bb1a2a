/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * http: the little of HTTP/1.0 and 1.1 (RFC 9112) the metrics endpoint
 * speaks, pure: where a request's head ends, and what to answer it when
 * the server has one resource, read with GET (or HEAD).  The server
 * answers one request per connection and closes it, so it reads no
 * body, keeps no connection alive and needs no header but the request
 * line's.
 */
#ifndef HTTP_H
#define HTTP_H

#include <stddef.h>

/* What a request gets; http_status_code and http_status_text say it. */
enum http_status {
	HTTP_OK,		/* 200: the resource */
	HTTP_BAD_REQUEST,	/* 400: not an HTTP/1.x request */
	HTTP_NOT_FOUND,		/* 404: another path */
	HTTP_BAD_METHOD,	/* 405: the resource, but not GET or HEAD */
	HTTP_TOO_LARGE,		/* 431: the head does not fit the buffer */
	HTTP_BAD_VERSION,	/* 505: HTTP/2 and later, or HTTP/0 */
	HTTP_STATUS_N
};

/* A request, as http_parse found it. */
struct http_req {
	enum http_status status;
	int head;			/* HEAD: the answer's head only */
};

/**
 * http_head_end(buf, len):
 * How long the request head is among the ${len} bytes at ${buf}, its
 * empty last line included (CRLF, or a bare LF as RFC 9112 lets a server
 * accept); 0 if it has not ended yet.  Empty lines before the request
 * line are part of it.
 */
size_t http_head_end(const char *buf, size_t len);

/**
 * http_parse(buf, len, path, req):
 * What to answer the request head of ${len} bytes at ${buf} (as
 * http_head_end measured it) on a server whose one resource is ${path}
 * (the target's path: a query string is ignored): into ${req}.
 */
void http_parse(const char *buf, size_t len, const char *path,
    struct http_req *req);

/**
 * http_status_code(s) / http_status_text(s):
 * 200, 400, ...; "OK", "Bad Request", ...
 */
int http_status_code(enum http_status s);
const char *http_status_text(enum http_status s);

#endif /* !HTTP_H */
