/*
 * bridge: one local socket joined to one stream.
 *
 * Bytes are read from the socket straight into the stream's registered
 * send ring and written to the socket straight from its receive ring: no
 * copy in between.  Reading stops while the send ring is full and writing
 * waits for the socket, so backpressure reaches both ends.  EOF from the
 * socket becomes the stream's shutdown (after every byte); the peer's
 * end-of-stream becomes shutdown(SHUT_WR) on the socket; a reset either
 * way becomes a reset the other way.
 */
#ifndef BRIDGE_H
#define BRIDGE_H

#include <stdint.h>

#include "engine.h"

struct bridge;
struct dlink;
struct tun;

/**
 * bridge_client(t, fd):
 * A client connected to tunnel ${t} on ${fd}: open a stream on the
 * tunnel's link (or wait for the link to come up).  Takes ${fd}.
 */
void bridge_client(struct tun *t, int fd);

/**
 * bridge_incoming(dl, t, id):
 * The peer opened stream ${id} on link ${dl} for tunnel ${t}: connect to
 * the target, then accept (or refuse with a reason).
 */
void bridge_incoming(struct dlink *dl, struct tun *t, uint32_t id);

/**
 * bridge_link_up(b):
 * The link a waiting client's stream goes on is up: open it.
 */
void bridge_link_up(struct bridge *b);

/**
 * bridge_link_failed(b, why):
 * The link a waiting client needed could not be brought up: close it.
 */
void bridge_link_failed(struct bridge *b, const char *why);

/**
 * bridge_event(b, ev):
 * Handle engine event ${ev} for ${b}'s stream; may free ${b} (RELEASED).
 */
void bridge_event(struct bridge *b, const struct engine_event *ev);

/**
 * bridge_next(b) / bridge_set_next(b, n):
 * The link's list of clients waiting for it.
 */
struct bridge *bridge_next(const struct bridge *b);
void bridge_set_next(struct bridge *b, struct bridge *n);

/* A stream, as rstreamctl shows it. */
struct bridge_info {
	uint64_t serial;
	const char *side;		/* "client" or "target" */
	const char *who;		/* its address */
	const char *peer;		/* the link's peer */
	const char *state;
	uint32_t id;			/* stream id on the link */
	uint64_t bytes_in, bytes_out;
	uint64_t age_ms;
};

/**
 * bridge_info(b, bi):
 * Describe ${b} for rstreamctl.
 */
void bridge_info(const struct bridge *b, struct bridge_info *bi);

/**
 * bridge_sweep(t, now_ms):
 * Reset ${t}'s streams that carried no byte for its idle_timeout.
 */
void bridge_sweep(struct tun *t, uint64_t now_ms);

/**
 * bridge_tnext(b):
 * The next stream of ${b}'s tunnel.
 */
struct bridge *bridge_tnext(const struct bridge *b);

#endif /* !BRIDGE_H */
