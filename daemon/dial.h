/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * dial: connecting to a tunnel's target, for a stream its peer opened.
 *
 * A Unix target connects at once.  A TCP target's addresses (as resolved
 * when the stream came, or once a lookup under way ends) are tried in
 * turn, one that fails at once skipped, each getting an even share of the
 * time left of connect_timeout: a black hole must not eat the time the
 * others need.  Once connected, the PROXY header the tunnel asks for goes
 * out first, so no byte of the stream can reach the target before it;
 * connect_timeout bounds a target that does not take it.
 *
 * A dial runs on its stream's loop and ends once, through its ops' done:
 * connected (the socket is the caller's now) or failed (with what to
 * refuse the stream with).  It calls nothing above it but its ops.
 */
#ifndef DIAL_H
#define DIAL_H

#include <stdint.h>

struct conf_tunnel;
struct dial;
struct loop;
struct rname;
struct wire_origin;

/* How a dial ended. */
struct dial_end {
	int fd;			/* connected: the socket, the caller's; or -1 */
	uint16_t reason;	/* failed: refuse the stream so (WIRE_REASON_*) */
	const char *why;	/* failed: what the target did, to be said; NULL
				   when it was not the target (said already) */
};

/* What a dial tells its caller; never re-entered. */
struct dial_ops {
	/* Say ${what} about the stream at ${level} (an address that
	   failed, at LOG_DEBUG: the next is tried). */
	void (*say)(void *arg, int level, const char *what);
	/* The dial ended (see struct dial_end), and is freed already. */
	void (*done)(void *arg, const struct dial_end *end);
};

/**
 * dial_new(lp, c, rn, origin, ops, arg):
 * A dial on loop ${lp} to tunnel ${c}'s target (${rn}: its name, for a
 * TCP target), whose PROXY header (if ${c} asks for one) names the client
 * ${origin} says (copied; NULL: unknown), reporting to ${ops} with ${arg}.
 * Nothing happens until dial_start.  NULL when out of memory.
 */
struct dial *dial_new(struct loop *lp, const struct conf_tunnel *c,
    struct rname *rn, const struct wire_origin *origin,
    const struct dial_ops *ops, void *arg);

/**
 * dial_set_peer(d, peer):
 * Name the node the stream comes from, ${peer} (its identity's name; ""
 * or NULL: none), in a version 2 PROXY header's PROXY_TLV_RSTREAM_PEER.
 */
void dial_set_peer(struct dial *d, const char *peer);

/**
 * dial_start(d):
 * Start connecting; connect_timeout runs from now.  ${d}'s done may come
 * before this returns.
 */
void dial_start(struct dial *d);

/**
 * dial_free(d):
 * Give up: the socket is closed with a reset, and done never comes.  NULL
 * is a no-op.
 */
void dial_free(struct dial *d);

/**
 * dial_resolving(d):
 * Whether ${d} waits for its target's name to be looked up.
 */
int dial_resolving(const struct dial *d);

#endif /* !DIAL_H */
