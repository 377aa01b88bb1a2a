/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * bridge: one local socket joined to one stream.
 *
 * Bytes are read from the socket straight into the stream's registered
 * send ring and written to the socket straight from its receive ring: no
 * copy in between.  Reading stops while the send ring is full and writing
 * waits for the socket, so backpressure reaches both ends.  EOF from the
 * socket becomes the stream's shutdown (after every byte); the peer's
 * end-of-stream becomes shutdown(SHUT_WR) on the socket; a reset either
 * way becomes a reset the other way.  Connecting to a target (its
 * addresses, connect_timeout, the PROXY header) is dial.h's; ring memory
 * comes from the link (link_ring_new), never from verbs directly.
 *
 * A bridge is one of its tunnel's streams (rstreamctl lists them, limits
 * count them) from the moment its client is accepted, or its peer asks
 * for it, until it is freed; a draining tunnel's reap timer is armed when
 * its last one goes.  Bridges change engines and mark their link
 * (link_mark); they never free anything but themselves.
 */
#ifndef BRIDGE_H
#define BRIDGE_H

#include <stdint.h>

#include "engine.h"
#include "engine_stream.h"

struct bridge;
struct dlink;
struct tun;

/**
 * bridge_client(t, fd, dl):
 * A client connected to tunnel ${t} on ${fd}, for link ${dl}: a stream
 * that waits (unread) until bridge_open or bridge_refuse_client.  Takes
 * ${fd}; NULL when out of memory (${fd} is closed with a reset).
 */
struct bridge *bridge_client(struct tun *t, int fd, struct dlink *dl);

/**
 * bridge_open(b):
 * ${b}'s link is up: open its stream.  May free ${b}.
 */
void bridge_open(struct bridge *b);

/**
 * bridge_refuse_client(b, burst, why):
 * Close waiting client ${b} with a reset, saying ${why} at level warning
 * (once per burst of ${burst}, or every time if it is NULL), and free it.
 * The caller counts it.
 */
struct log_burst;
void bridge_refuse_client(struct bridge *b, struct log_burst *burst,
    const char *why);

/**
 * bridge_waiting(b):
 * True for a client still waiting for its link.
 */
int bridge_waiting(const struct bridge *b);

/**
 * bridge_incoming(dl, t, id):
 * The peer opened stream ${id} on link ${dl} for tunnel ${t} (admitted):
 * connect to the target, then accept (or refuse with a reason).
 */
void bridge_incoming(struct dlink *dl, struct tun *t, uint32_t id);

/**
 * bridge_event(b, ev):
 * Handle engine event ${ev} for ${b}'s stream; may free ${b} (RELEASED).
 */
void bridge_event(struct bridge *b, const struct engine_event *ev);

/**
 * bridge_adopt(b, dl, tx, rx):
 * ${b}'s stream, suspended, moves to link ${dl} (a resume): its rings are
 * registered there and described in ${tx} and ${rx}.  Returns 0, or -1
 * (logged): the stream must end.
 */
int bridge_adopt(struct bridge *b, struct dlink *dl, struct engine_ring *tx,
    struct engine_ring *rx);

/**
 * bridge_sweep(t, now_ms):
 * Reset ${t}'s streams that carried no byte for its idle_timeout.
 */
void bridge_sweep(struct tun *t, uint64_t now_ms);

/**
 * bridge_serving(b):
 * The link of ${b}'s stream if it serves a peer's stream (target side)
 * that has not ended, suspended ones too; else NULL.
 */
struct dlink *bridge_serving(const struct bridge *b);

/**
 * bridge_revoke(b, why):
 * A reload no longer lets ${b}'s peer use its tunnel: reset its stream
 * (refuse it, while its target is being connected), saying ${why} at
 * level warning.  May free ${b}.
 */
void bridge_revoke(struct bridge *b, const char *why);

/**
 * bridge_first(t) / bridge_next(b):
 * Tunnel ${t}'s streams, newest first.
 */
struct bridge *bridge_first(const struct tun *t);
struct bridge *bridge_next(const struct bridge *b);

/* A stream, as rstreamctl shows it. */
struct bridge_info {
	uint64_t serial;
	const char *side;		/* "client" or "target" */
	const char *who;		/* its address */
	const char *origin;		/* the client's, wherever it is */
	const char *peer;		/* the link's peer */
	const char *identity;		/* its identity's name ("": none) */
	const char *state;
	uint32_t id;			/* stream id on the link */
	uint64_t bytes_in, bytes_out;
	uint64_t age_ms;
	int have_send;			/* on a link now: send is set */
	struct engine_stream_stats send;
};

/**
 * bridge_info(b, bi):
 * Describe ${b} for rstreamctl.
 */
void bridge_info(const struct bridge *b, struct bridge_info *bi);

#endif /* !BRIDGE_H */
