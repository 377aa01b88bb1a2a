/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <string.h>

#include "http.h"

static const struct {
	int code;
	const char *text;
} statuses[HTTP_STATUS_N] = {
	[HTTP_OK] = { 200, "OK" },
	[HTTP_BAD_REQUEST] = { 400, "Bad Request" },
	[HTTP_NOT_FOUND] = { 404, "Not Found" },
	[HTTP_BAD_METHOD] = { 405, "Method Not Allowed" },
	[HTTP_TOO_LARGE] = { 431, "Request Header Fields Too Large" },
	[HTTP_BAD_VERSION] = { 505, "HTTP Version Not Supported" },
};

int
http_status_code(enum http_status s)
{

	return ((unsigned)s < HTTP_STATUS_N ? statuses[s].code : 500);
}

const char *
http_status_text(enum http_status s)
{

	return ((unsigned)s < HTTP_STATUS_N ? statuses[s].text :
	    "Internal Server Error");
}

/* Empty lines before the request line: skipped (RFC 9112, 2.2). */
static size_t
skip_empty(const char *buf, size_t len)
{
	size_t i = 0;

	for (;;) {
		if (i + 1 < len && buf[i] == '\r' && buf[i + 1] == '\n')
			i += 2;
		else if (i < len && buf[i] == '\n')
			i++;
		else
			return (i);
	}
}

size_t
http_head_end(const char *buf, size_t len)
{
	size_t i, start = skip_empty(buf, len);

	/* An empty line: LF, then CRLF or LF. */
	for (i = start; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return (i + 2);
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return (i + 3);
	}
	return (0);
}

/* A token's characters (RFC 9110, 5.6.2). */
static int
tchar(char c)
{

	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", c) != NULL));
}

/* A line's end at ${p}: CRLF or LF; its length, or 0 if there is none. */
static size_t
eol(const char *p, const char *end)
{

	if (p < end && *p == '\n')
		return (1);
	if (p + 1 < end && p[0] == '\r' && p[1] == '\n')
		return (2);
	return (0);
}

/*
 * The header lines from ${p} to the empty line: each a field name, a
 * colon and a value of visible characters, spaces and tabs.  No line
 * folding (obsolete; RFC 9112, 5.2 lets a server reject it).
 */
static int
fields_ok(const char *p, const char *end)
{
	const char *q;
	size_t n;

	while ((n = eol(p, end)) == 0) {
		for (q = p; q < end && tchar(*q); q++)
			;
		if (q == p || q >= end || *q != ':')
			return (0);
		for (q++; q < end && *q != '\r' && *q != '\n'; q++)
			if ((unsigned char)*q < 0x20 && *q != '\t')
				return (0);
		if ((n = eol(q, end)) == 0)
			return (0);
		p = q + n;
	}
	return (1);
}

void
http_parse(const char *buf, size_t len, const char *path,
    struct http_req *req)
{
	const char *p = buf + skip_empty(buf, len), *end = buf + len;
	const char *m, *t, *v;
	size_t mlen, tlen, plen, n;

	req->status = HTTP_BAD_REQUEST;
	req->head = 0;
	/* request-line = method SP request-target SP HTTP-version */
	for (m = p; p < end && tchar(*p); p++)
		;
	if ((mlen = (size_t)(p - m)) == 0 || p >= end || *p++ != ' ')
		return;
	for (t = p; p < end && (unsigned char)*p > ' ' &&
	    (unsigned char)*p < 0x7f; p++)
		;
	if ((tlen = (size_t)(p - t)) == 0 || p >= end || *p++ != ' ')
		return;
	v = p;
	if (end - v < 8 || memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' ||
	    v[5] > '9' || v[6] != '.' || v[7] < '0' || v[7] > '9' ||
	    (n = eol(v + 8, end)) == 0 || !fields_ok(v + 8 + n, end))
		return;
	if (v[5] != '1') {
		req->status = HTTP_BAD_VERSION;
		return;
	}
	/* The path: the origin-form target up to its query. */
	for (plen = 0; plen < tlen && t[plen] != '?' && t[plen] != '#'; plen++)
		;
	if (t[0] != '/' || plen != strlen(path) ||
	    memcmp(t, path, plen) != 0) {
		req->status = HTTP_NOT_FOUND;
		return;
	}
	if (mlen == 3 && memcmp(m, "GET", 3) == 0) {
		req->status = HTTP_OK;
	} else if (mlen == 4 && memcmp(m, "HEAD", 4) == 0) {
		req->status = HTTP_OK;
		req->head = 1;
	} else {
		req->status = HTTP_BAD_METHOD;
	}
}
