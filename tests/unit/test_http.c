/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/http: where a request's head ends, and what the
 * metrics endpoint answers each request line (RFC 9112's grammar: the
 * ones it must take, and the ones it must refuse).
 */
#include <stdio.h>
#include <string.h>

#include "http.h"
#include "tap.h"

/* What ${req} (a whole head) gets on a server of /metrics. */
static enum http_status
answer(const char *req, int *head)
{
	struct http_req r;
	size_t end = http_head_end(req, strlen(req));

	if (end == 0)
		return (HTTP_STATUS_N);
	http_parse(req, end, "/metrics", &r);
	*head = r.head;
	return (r.status);
}

static const struct {
	const char *req;
	enum http_status status;
	int head;
} cases[] = {
	/* What Prometheus sends, and other clients. */
	{ "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9477\r\nUser-Agent: "
	    "Prometheus/2.42.0\r\nAccept: application/openmetrics-text;"
	    "version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n"
	    "Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: "
	    "10\r\n\r\n", HTTP_OK, 0 },
	{ "GET /metrics HTTP/1.0\r\n\r\n", HTTP_OK, 0 },
	{ "GET /metrics HTTP/1.1\n\n", HTTP_OK, 0 },
	{ "\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n", HTTP_OK, 0 },
	{ "GET /metrics?name[]=up HTTP/1.1\r\nHost: x\r\n\r\n", HTTP_OK, 0 },
	{ "HEAD /metrics HTTP/1.1\r\n\r\n", HTTP_OK, 1 },
	{ "GET /metrics HTTP/1.9\r\n\r\n", HTTP_OK, 0 },
	/* Other paths, other methods. */
	{ "GET / HTTP/1.1\r\n\r\n", HTTP_NOT_FOUND, 0 },
	{ "GET /metricsx HTTP/1.1\r\n\r\n", HTTP_NOT_FOUND, 0 },
	{ "GET /metric HTTP/1.1\r\n\r\n", HTTP_NOT_FOUND, 0 },
	{ "GET http://h/metrics HTTP/1.1\r\n\r\n", HTTP_NOT_FOUND, 0 },
	{ "GET * HTTP/1.1\r\n\r\n", HTTP_NOT_FOUND, 0 },
	{ "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
	    HTTP_BAD_METHOD, 0 },
	{ "get /metrics HTTP/1.1\r\n\r\n", HTTP_BAD_METHOD, 0 },
	{ "DELETE /other HTTP/1.1\r\n\r\n", HTTP_NOT_FOUND, 0 },
	/* Versions. */
	{ "GET /metrics HTTP/2.0\r\n\r\n", HTTP_BAD_VERSION, 0 },
	{ "GET /metrics HTTP/0.9\r\n\r\n", HTTP_BAD_VERSION, 0 },
	{ "GET /metrics HTTP/1\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "GET /metrics http/1.1\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "GET /metrics HTTP/1.1 \r\n\r\n", HTTP_BAD_REQUEST, 0 },
	/* Not a request line. */
	{ "GET /metrics\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "GET  /metrics HTTP/1.1\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "GET\t/metrics HTTP/1.1\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ " GET /metrics HTTP/1.1\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "G(T /metrics HTTP/1.1\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "GET /met\x01rics HTTP/1.1\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "nonsense\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	/* Header lines: a name and a colon; no folding, no controls. */
	{ "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "GET /metrics HTTP/1.1\r\n: x\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "GET /metrics HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
	    HTTP_BAD_REQUEST, 0 },
	{ "GET /metrics HTTP/1.1\r\nA: b\x01\r\n\r\n", HTTP_BAD_REQUEST, 0 },
	{ "GET /metrics HTTP/1.1\r\nA:\tb \r\n\r\n", HTTP_OK, 0 },
};

int
main(void)
{
	size_t i;
	int head;
	enum http_status s;
	const char *part = "GET /metrics HTTP/1.1\r\nHost: x\r\n";

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		head = -1;
		s = answer(cases[i].req, &head);
		ok(s == cases[i].status && (s == HTTP_STATUS_N ||
		    head == cases[i].head), "request %zu answered %d%s (%d)", i,
		    http_status_code(cases[i].status), cases[i].head ?
		    ", head only" : "", http_status_code(s));
	}

	/* The head ends at its empty line, and not before. */
	ok(http_head_end(part, strlen(part)) == 0, "no empty line: not yet");
	ok(http_head_end("GET / HTTP/1.1\r\n\r", 17) == 0,
	    "half an empty line: not yet");
	ok(http_head_end("", 0) == 0 && http_head_end("\r\n\r\n", 4) == 0,
	    "empty lines alone: not yet");
	ok(http_head_end("GET / HTTP/1.1\r\n\r\nbody", 22) == 18,
	    "the head ends before the body");
	ok(http_head_end("GET / HTTP/1.0\n\nx", 17) == 16,
	    "bare LFs end it too");
	ok(http_head_end("GET / HTTP/1.0\r\nA: b\n\r\n", 23) == 23,
	    "mixed line ends");

	ok(http_status_code(HTTP_OK) == 200 &&
	    strcmp(http_status_text(HTTP_OK), "OK") == 0, "200 OK");
	ok(http_status_code(HTTP_TOO_LARGE) == 431 &&
	    strcmp(http_status_text(HTTP_TOO_LARGE),
	    "Request Header Fields Too Large") == 0, "431");
	ok(http_status_code(HTTP_BAD_METHOD) == 405 &&
	    http_status_code(HTTP_NOT_FOUND) == 404 &&
	    http_status_code(HTTP_BAD_REQUEST) == 400 &&
	    http_status_code(HTTP_BAD_VERSION) == 505, "the other codes");
	return (tap_done());
}
