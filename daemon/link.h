/*
 * link: the daemon's RDMA links to peers.
 *
 * A client tunnel owns one link to its peer, brought up at start and kept
 * up: when it drops, its streams are reset (their clients see the
 * connection end) and it reconnects with back-off (100 ms doubling to
 * 2 s).  Links that peers open to our RDMA listeners serve every target
 * tunnel and end when the peer goes.  Every link sends a keepalive every
 * LINK_KEEPALIVE_MS, so a peer that vanished is noticed within that plus
 * the transport's retry time (see verbs.h); and a link that heard nothing
 * from its peer for LINK_SILENCE_MS ends, even if it cannot send.
 */
#ifndef LINK_H
#define LINK_H

#include <stdint.h>

#include "engine.h"

#define LINK_KEEPALIVE_MS	2000
#define LINK_SILENCE_MS		(5 * LINK_KEEPALIVE_MS)
#define LINK_BACKOFF_MIN_MS	100
#define LINK_BACKOFF_MAX_MS	2000

/* Why an incoming link is turned away before it costs anything. */
enum link_refusal {
	LINK_NOT_ALLOWED,		/* allow */
	LINK_BAD_HELLO,			/* invalid connect data */
	LINK_MAX_PENDING,
	LINK_MAX_PENDING_PER_ADDR,
	LINK_MAX_UNAUTH_LINKS,
	LINK_MAX_LINKS,
	LINK_REFUSAL_N
};

struct rsd;
struct tun;
struct dlink;
struct bridge;
struct verbs_link;
struct verbs_ev;

/**
 * link_client_new(t, nc):
 * Create tunnel ${t}'s link to its peer, from configuration ${nc}'s source
 * address (nothing happens until link_client_start), or return NULL when
 * out of memory.
 */
struct conf;
struct dlink *link_client_new(struct tun *t, const struct conf *nc);

/**
 * link_client_start(dl):
 * Start connecting client link ${dl}, and keep it connected.
 */
void link_client_start(struct dlink *dl);

/**
 * link_gate(d, peer, peer_text, hello, invalid):
 * The RDMA listeners' gate (see verbs_gate_fn): reject a connect request
 * that allow, an invalid hello, the keys configured or a limit
 * (max_pending, max_pending_per_addr, max_unauth_links, max_links) turn
 * away, logging (once per burst) and counting it.  At max_links or
 * max_unauth_links, an incoming link idle for link_idle_timeout is closed
 * to make room.  ${d} is the daemon.
 */
struct sockaddr;
struct wire_hello;
int link_gate(void *d, const struct sockaddr *peer, const char *peer_text,
    const struct wire_hello *hello, const char *invalid);

/**
 * link_cm_event(d, ev):
 * Handle an RDMA CM outcome (incoming link, up, down, rejected).
 */
void link_cm_event(struct rsd *d, const struct verbs_ev *ev);

/**
 * link_free(dl):
 * Tear down and free a link (at exit).  NULL is a no-op.
 */
void link_free(struct dlink *dl);

/**
 * link_kick(dl):
 * Post what the engine has ready and dispatch its stream events.  Call
 * after any engine call; ${dl} (and the caller's bridge) may be gone when
 * it returns, so call it last.
 */
void link_kick(struct dlink *dl);

/**
 * link_count(d, up):
 * How many links there are; ${*up} is set to how many of them are up.
 */
unsigned link_count(const struct rsd *d, unsigned *up);

/**
 * link_kick_all(d):
 * link_kick every link (after work was queued on several).
 */
void link_kick_all(struct rsd *d);

/**
 * link_goaway_all(d):
 * Tell every peer this daemon opens and accepts no new streams, and close
 * the clients still waiting for a link.
 */
void link_goaway_all(struct rsd *d);

/* A link, as rstreamctl shows it. */
struct link_info {
	const char *name;		/* "tunnel pg: link to X" / "link from X" */
	const char *peer;
	const char *dir;		/* "out" (a client tunnel's) or "in" */
	const char *tunnel;		/* out: its tunnel */
	const char *state;		/* down, retrying, connecting, up, ended */
	const char *device;
	int goaway;			/* the peer said GOAWAY */
	int have_stats;
	struct engine_stats st;
};

/**
 * link_info(dl, li):
 * Describe ${dl} for rstreamctl.
 */
void link_info(const struct dlink *dl, struct link_info *li);

/**
 * link_is_up(dl) / link_is_connecting(dl):
 * Whether streams may open now, or will once the link comes up (it is
 * connecting or authenticating).
 */
int link_is_up(const struct dlink *dl);
int link_is_connecting(const struct dlink *dl);

/**
 * link_wait(dl, b):
 * Queue a client until the link is up (or failed).  Its socket is not
 * watched meanwhile, so nothing else can free it.
 */
void link_wait(struct dlink *dl, struct bridge *b);

/**
 * link_next(dl):
 * The next link in the daemon's list (for counting), or NULL.
 */
const struct dlink *link_next(const struct dlink *dl);

/**
 * link_engine(dl) / link_verbs(dl) / link_peer(dl):
 * The link's engine, verbs link and peer address (for logs).
 */
struct engine *link_engine(const struct dlink *dl);
struct verbs_link *link_verbs(const struct dlink *dl);
const char *link_peer(const struct dlink *dl);

/**
 * link_set_incoming(dl, id, b):
 * Remember the bridge for INCOMING stream ${id} until it is accepted (its
 * engine user pointer is set from then on); NULL forgets it.
 */
void link_set_incoming(struct dlink *dl, uint32_t id, struct bridge *b);

#endif /* !LINK_H */
