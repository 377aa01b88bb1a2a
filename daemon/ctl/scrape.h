/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * scrape: the HTTP metrics endpoint Prometheus scrapes (metrics_listen).
 *
 * GET /metrics (or HEAD) answers what rstreamctl metrics does, in the
 * Prometheus text format, version 0.0.4; another path is 404 Not Found,
 * another method on it 405.  HTTP/1.0 and 1.1, one request per
 * connection (Connection: close): the head of at most SCRAPE_REQ_MAX
 * bytes within SCRAPE_REQ_MS of connecting, and the answer read within
 * SCRAPE_ANSWER_MS of asking, or the connection is closed.  At most
 * SCRAPE_CONNS_MAX connections at once: a new one closes the oldest
 * still sending its request, or, when all are being answered, is closed
 * itself.  No authentication: whoever reaches the port reads the
 * metrics, so it listens only where configured, best on loopback or a
 * management network.
 *
 * Everything runs in shared turns of the daemon's loop, the answer's
 * rendering included (metrics.h): a scrape stops no worker and delays no
 * stream.
 */
#ifndef SCRAPE_H
#define SCRAPE_H

#include <stddef.h>

#define SCRAPE_REQ_MAX		8192
#define SCRAPE_REQ_MS		5000
#define SCRAPE_ANSWER_MS	10000
#define SCRAPE_CONNS_MAX	8

struct rsd;
struct scrape;

/**
 * scrape_new(d, err, errlen):
 * Listen on d->conf's metrics_listen (which must be set).  Returns the
 * endpoint, or NULL with the reason in ${err}.
 */
struct scrape *scrape_new(struct rsd *d, char *err, size_t errlen);

/**
 * scrape_bound(s):
 * Where ${s} listens, as tcp://ADDRESS:PORT.
 */
const char *scrape_bound(const struct scrape *s);

/**
 * scrape_free(s):
 * Close the endpoint and its connections.  NULL is a no-op.
 */
void scrape_free(struct scrape *s);

#endif /* !SCRAPE_H */
