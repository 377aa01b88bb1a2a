/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * resolve: host names looked up off the event loop.
 *
 * getaddrinfo() may wait seconds for a name server; the loop must not.  A
 * resolver runs lookups on one worker thread and hands results back
 * through a descriptor the loop watches.  A struct rname is one HOST:PORT
 * the daemon keeps resolved (a target, a peer): a numeric host is
 * resolved at once and for good; a name is looked up when first asked
 * for, then again in the background once its answer is RESOLVE_FRESH_MS
 * old, and its last good answer is used meanwhile.  Every answer keeps
 * getaddrinfo's order, so callers try the addresses in turn (a service on
 * 127.0.0.1 behind a name that resolves to ::1 first is still reached).
 */
#ifndef RESOLVE_H
#define RESOLVE_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

/* How long an answer is used before it is refreshed (in the background). */
#define RESOLVE_FRESH_MS	30000
/* After a failed lookup with no earlier answer, how long until the next. */
#define RESOLVE_RETRY_MS	1000
/* Addresses kept per name. */
#define RESOLVE_MAX		8

struct loop;
struct resolver;
struct rname;

struct resolve_addrs {
	size_t n;
	struct sockaddr_storage a[RESOLVE_MAX];
	socklen_t len[RESOLVE_MAX];
};

typedef void resolve_cb(void *arg);

/* One who waits for a lookup under way; lives inside its owner. */
struct rname_waiter {
	struct rname *n;		/* NULL when not waiting */
	resolve_cb *cb;
	void *arg;
	TAILQ_ENTRY(rname_waiter) entry;
};

/**
 * resolver_new(lp, err, errlen):
 * A resolver whose results arrive through loop ${lp}, or NULL with the
 * reason in ${err}.
 */
struct resolver *resolver_new(struct loop *lp, char *err, size_t errlen);

/**
 * resolver_free(r):
 * Stop the worker and free ${r}; every rname must be gone.  NULL is a
 * no-op.
 */
void resolver_free(struct resolver *r);

/**
 * rname_new(r, host, port, passive):
 * Keep ${host}:${port} resolved (TCP; ${passive}: for binding, "" or NULL
 * host meaning any address).  A numeric host is resolved here, without a
 * lookup.  Returns NULL when out of memory.
 */
struct rname *rname_new(struct resolver *r, const char *host,
    const char *port, int passive);

/**
 * rname_free(n):
 * Forget ${n}; its waiters are dropped without being called, and a lookup
 * under way is discarded when it ends.  NULL is a no-op.
 */
void rname_free(struct rname *n);

/**
 * rname_get(n, out, err):
 * ${n}'s addresses.  Returns 1 with ${*out} set when there are some (a
 * refresh may start in the background); 0 when a lookup is under way and
 * nothing is known yet (rname_wait to hear when it ends); -1 when the last
 * lookup failed and nothing is known, with the reason in ${*err} (the
 * next call after RESOLVE_RETRY_MS looks up again).
 */
int rname_get(struct rname *n, const struct resolve_addrs **out,
    const char **err);

/**
 * rname_wait(n, w, cb, arg):
 * Call ${cb}(${arg}) once, from the loop, when ${n}'s lookup under way
 * ends (whether it worked or not).  ${w} must not be waiting already.
 */
void rname_wait(struct rname *n, struct rname_waiter *w, resolve_cb *cb,
    void *arg);

/**
 * rname_unwait(w):
 * Stop waiting; a waiter that is not waiting is left alone.
 */
void rname_unwait(struct rname_waiter *w);

/**
 * resolve_now(host, port, passive, err, errlen):
 * Look ${host}:${port} up at once, as a struct rname would (this blocks,
 * for rstreamd -n): 0 if it has an address, else -1 with the reason in
 * ${err} ("Name or service not known").
 */
int resolve_now(const char *host, const char *port, int passive, char *err,
    size_t errlen);

/**
 * rname_text(n):
 * "HOST:PORT" ("[V6]:PORT"), for messages.
 */
const char *rname_text(const struct rname *n);

#endif /* !RESOLVE_H */
