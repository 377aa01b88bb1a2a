/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * link: the daemon's RDMA links to peers: their states, authentication,
 * keepalives and liveness.  A client link's attempts to connect are
 * connect.h's; the RDMA CM channel and the RDMA listeners with their
 * admission gate, cm.h's; a failed link's suspended streams and their
 * resume, resume.h's.  Of what is declared here, link.c has the link
 * object and what it shows, link_life.c a link's life: made, freed,
 * kept up (link_int.h lists the rooms).
 *
 * A client tunnel owns one link to its peer, brought up at start and kept
 * up: when it drops, its streams are reset and it reconnects with back-off
 * (LINK_BACKOFF_MIN_MS doubling to LINK_BACKOFF_MAX_MS), each attempt to
 * the next of the peer's addresses (connect.h's).  Links that peers open
 * to the RDMA listeners serve every target tunnel and end when the peer
 * goes.  Every link sends a keepalive every LINK_KEEPALIVE_MS, so a peer
 * that vanished is noticed within that plus the transport's retry time
 * (see verbs.h); and a link that heard nothing from its peer for
 * LINK_SILENCE_MS ends, even if it cannot send.
 *
 * A link reports to its owner through struct link_ops, and never calls
 * anything above it.  Work is driven once per loop turn: whoever changes a
 * link's engine calls link_mark, and the loop then posts the link's work
 * requests and delivers its stream events, once, at the end of the turn;
 * so no call into a link can free its caller.
 */
#ifndef LINK_H
#define LINK_H

#include <stdint.h>

#include "conf.h"
#include "engine.h"
#include "verbs.h"

#define LINK_KEEPALIVE_MS	2000
#define LINK_SILENCE_MS		(5 * LINK_KEEPALIVE_MS)

/*
 * Links of one chain (a resume's: link_int.h) that may end because a
 * sealed message failed authentication with their streams suspended:
 * the next such end resets them, so that an injector on the fabric
 * cannot keep streams suspended for ever (rstreamd(8), SECURITY).
 */
#define LINK_FORGED_MAX		3

struct conf;
struct conf_key;
struct conf_tunnel;
struct dlink;
struct loop;
struct rsd;
struct verbs_link;
struct verbs_listener;

/* What a link tells its owner; called from the loop, never re-entered. */
struct link_ops {
	/*
	 * The peer opens stream ${id} on tunnel ${tunnel}: the owner
	 * accepts it (setting its user pointer with engine_set_user, then
	 * engine_accept when ready) or refuses it (engine_refuse).
	 */
	void (*incoming)(void *arg, struct dlink *dl, uint32_t id,
	    const char *tunnel);
	/* An event for a stream whose user pointer (ev->user) is set. */
	void (*event)(void *arg, struct dlink *dl,
	    const struct engine_event *ev);
	/* A client link is up (and authenticated): streams may open. */
	void (*up)(void *arg, struct dlink *dl);
	/*
	 * A client link's attempt failed, or it went down or closed; ${wce}
	 * says which error completion ended it (verbs_link_wc_error;
	 * VERBS_WC_NONE: none did).
	 */
	void (*down)(void *arg, struct dlink *dl, const char *why,
	    enum verbs_wc_error wce);
	/*
	 * Stream ${user}, suspended when its link failed, moves to link
	 * ${dl} (a resume): re-register its rings there and describe them
	 * in ${tx} and ${rx} (same sizes).  Returns 0, or -1 to reset it.
	 */
	int (*adopt)(void *arg, struct dlink *dl, void *user,
	    struct engine_ring *tx, struct engine_ring *rx);
};

/* A link's state, as rstreamctl shows it. */
enum link_state {
	LINK_DOWN = 0,		/* not connected, not trying */
	LINK_RETRYING,		/* waiting for the next attempt */
	LINK_CONNECTING,	/* resolving, connecting, or being accepted */
	LINK_AUTHENTICATING,	/* connected, proofs not yet exchanged */
	LINK_UP,
	LINK_ENDED,		/* an incoming link that ended, about to go */
	LINK_SUSPENDED,		/* failed; its streams wait for a resume */
	LINK_STATE_N
};

/* A link, as rstreamctl shows it. */
struct link_info {
	const char *name;		/* "tunnel pg: link to X" / "link from X" */
	const char *peer;
	const char *identity;		/* the peer's identity's name, "" */
	const char *sealing;		/* its AEAD, NULL: in clear */
	const char *dir;		/* "out" (a client tunnel's) or "in" */
	const char *tunnel;		/* out: its tunnel */
	enum link_state state;
	const char *device;
	const struct hca_info *hca;	/* NULL: not up, or unknown */
	int goaway;			/* the peer said GOAWAY */
	unsigned version;		/* the protocol version it speaks; 0:
					   not connected */
	uint32_t suspended;		/* streams waiting for a resume */
	/* The token a resume of this link's streams names (hex; "": none).
	 * The responder's hello nonce: public on the fabric, no secret. */
	char resume_id[2 * WIRE_NONCE_LEN + 1];
	unsigned worker;		/* the worker it runs on, from 1 */
	unsigned priority;		/* its tunnel's (0: no stream yet) */
	uint32_t share;			/* per mille of its window it keeps */
	/* While it is not up: why it last failed ("": it has not yet) and
	 * since when (ms since the epoch; 0: up, or an incoming link being
	 * accepted).  A client link's failures: in a
	 * row since it was last up, and in all (have_failures: 0 for an
	 * incoming link, which has one life). */
	const char *last_error;
	uint64_t down_since_ms;
	/* The back-off it waits before its next attempt, in ms (0: none
	 * waits, or it comes at once). */
	uint32_t retry_wait_ms;
	int have_failures;
	uint64_t failures, failures_total;
	int have_stats;
	struct engine_stats st;
	struct verbs_mem_stats mem;	/* with have_stats */
	struct verbs_arm_stats arms;	/* with have_stats */
};

/**
 * link_pinned(d):
 * Bytes of memory counted against max_memory now, over every link:
 * streams' rings (suspended ones' too), the pools, and control buffers.
 */
uint64_t link_pinned(const struct rsd *d);

/**
 * link_mem(d, cmm):
 * The same, with its parts (see verbs_cm_mem), into ${*cmm}.
 */
void link_mem(const struct rsd *d, struct verbs_cm_mem *cmm);

/**
 * link_tick(d):
 * Call once a second: links freed while being accepted get their turn to
 * go (see verbs_cm_tick).
 */
void link_tick(struct rsd *d);

/**
 * link_tick_due(d):
 * Whether link_tick has anything to do now (see verbs_cm_tick_due): it
 * needs an exclusive turn, this does not.
 */
int link_tick_due(struct rsd *d);

/**
 * link_client_new(d, c, nc, ops, arg):
 * A link for client tunnel ${c} (from configuration ${nc}, for its source
 * address), reporting to ${ops} with ${arg}.  Nothing happens until
 * link_client_start.  NULL when out of memory.
 */
struct dlink *link_client_new(struct rsd *d, const struct conf_tunnel *c,
    const struct conf *nc, const struct link_ops *ops, void *arg);

/**
 * link_client_start(dl):
 * Start connecting client link ${dl}, and keep it connected.
 */
void link_client_start(struct dlink *dl);

/**
 * link_client_retire(dl):
 * ${dl}'s tunnel drains: the link carries its streams on, but is not
 * connected again once it goes down.
 */
void link_client_retire(struct dlink *dl);

/**
 * link_free(dl):
 * Tear down and free a link; its streams are reset.  NULL is a no-op.
 */
void link_free(struct dlink *dl);

/**
 * link_mark(dl):
 * ${dl}'s engine has work: post it and deliver its events at the end of
 * this loop turn.  NULL is a no-op.
 */
void link_mark(struct dlink *dl);

/**
 * link_revoke(d):
 * A reload made d->conf: every link whose peer proved an identity that
 * d->conf no longer trusts (not among the peers, or not among its
 * tunnel's) ends, said with the peer's name and why; its streams end
 * with it rather than wait for a resume the handshake would refuse, and
 * so do streams such a link left suspended; d->links_revoked and
 * d->streams_revoked count them.  A client link then connects again, and
 * its handshake refuses the peer until a reload lists it again.
 * Exclusive turns only.
 */
void link_revoke(struct rsd *d);

/**
 * link_goaway_all(d):
 * Tell every peer this daemon opens and accepts no new streams.
 */
void link_goaway_all(struct rsd *d);

/**
 * link_count(d, up):
 * How many links there are; ${*up} is set to how many of them are up.
 */
unsigned link_count(const struct rsd *d, unsigned *up);

/**
 * link_first(d) / link_next(dl):
 * Every link, for rstreamctl.
 */
const struct dlink *link_first(const struct rsd *d);
const struct dlink *link_next(const struct dlink *dl);

/**
 * link_info(dl, li):
 * Describe ${dl} for rstreamctl.
 */
void link_info(const struct dlink *dl, struct link_info *li);

/**
 * link_hca(dl):
 * Where up link ${dl} runs on the fabric (link_info's hca), or NULL.
 * Read once when the link came up and never written after: unlike the
 * rest of link_info, it may be read in any turn of the daemon's loop.
 */
const struct hca_info *link_hca(const struct dlink *dl);

/**
 * link_state_name(s):
 * "down", "retrying", "connecting", "authenticating", "up", "ended".
 */
const char *link_state_name(enum link_state s);

/**
 * link_is_up(dl) / link_is_connecting(dl):
 * Whether streams may open now, or will once the link comes up (it is
 * resolving, connecting or authenticating).  NULL is neither.
 */
int link_is_up(const struct dlink *dl);
int link_is_connecting(const struct dlink *dl);

/**
 * link_engine(dl) / link_peer(dl) / link_name(dl):
 * The link's engine (NULL while it has none), its peer's address and its
 * name, for logs.
 */
struct engine *link_engine(const struct dlink *dl);
const char *link_peer(const struct dlink *dl);
const char *link_name(const struct dlink *dl);

/**
 * link_loop(dl):
 * The loop ${dl} runs on (a worker's): its streams' sockets and timers
 * go there too.
 */
struct loop *link_loop(const struct dlink *dl);

/**
 * link_workers(d):
 * How many threads carry links: the workers, or 1 (the daemon's one
 * thread) when there are none.
 */
size_t link_workers(const struct rsd *d);

/**
 * link_key(dl):
 * The key the link's peer proved (an incoming link), or its tunnel's (a
 * client link); an unset key when it is not authenticated.
 */
const struct conf_key *link_key(const struct dlink *dl);

/**
 * link_peer_id(dl):
 * The name, among the configured peers, of the identity the link's peer
 * proved; "" when the link has no identity handshake (yet).
 */
const char *link_peer_id(const struct dlink *dl);

/**
 * link_peer_key(dl):
 * The public key of the identity the link's peer proved, or NULL.
 */
const uint8_t *link_peer_key(const struct dlink *dl);

/**
 * link_sealing(dl):
 * The AEAD that seals the link's records ("aes-256-gcm",
 * "chacha20-poly1305"), or NULL when its records travel in clear.
 */
const char *link_sealing(const struct dlink *dl);

/*
 * Ring memory: a stream's rings, registered on its link's device.  The
 * only way to RDMA memory above link (verbs stays below it, as a
 * connection type keeps ibv_* out of its callers): bridge moves bytes
 * through rings it holds as link_rings, and knows nothing of verbs.  A
 * ring may outlive its link (see verbs_mem_new and verbs_mem_free).
 */
struct link_ring;

/* link_ring_new flags. */
#define LINK_RING_RX	0x01	/* a receive ring: the peer writes into it */

/**
 * link_ring_new(dl, size, flags, err, errlen):
 * A ring of ${size} bytes on ${dl}'s device (see verbs_mem_new): a send
 * ring, or with LINK_RING_RX a receive ring.  Outside an exclusive turn
 * only ${dl}'s own pool of freed rings is drawn on (other links' are
 * other workers').  NULL with the reason in ${err}: errno ENOBUFS when
 * the daemon's max_memory has no room.
 */
struct link_ring *link_ring_new(struct dlink *dl, uint32_t size, int flags,
    char *err, size_t errlen);

/**
 * link_ring_free(r):
 * Give ring ${r} up (see verbs_mem_free).  NULL is a no-op.
 */
void link_ring_free(struct link_ring *r);

/**
 * link_ring_size(r):
 * ${r}'s size in bytes; 0 for NULL.
 */
uint32_t link_ring_size(const struct link_ring *r);

/**
 * link_ring_describe(r, ring):
 * Describe ${r} as an engine ring (its mem is ${r}).
 */
void link_ring_describe(const struct link_ring *r, struct engine_ring *ring);

/**
 * link_ring_detach(r):
 * ${r} leaves its failed link's registration, its bytes kept (a suspended
 * stream's; see verbs_mem_detach).  NULL is a no-op.
 */
void link_ring_detach(struct link_ring *r);

/**
 * link_ring_move(r, dl, err, errlen):
 * Register ${r} on ${dl} (a resumed stream's; see verbs_mem_move).
 * Returns 0, or -1 with the reason in ${err} ("no link" when ${dl} has
 * none): then the stream must end.
 */
int link_ring_move(struct link_ring *r, struct dlink *dl, char *err,
    size_t errlen);

/**
 * link_set_priority(dl, prio):
 * ${dl} carries a tunnel of priority ${prio} (PRIO_LOWEST to PRIO_HIGHEST, see
 * prio.h): from its next turn it yields its window to busier tunnels of
 * higher priority on its device.  A client link takes its tunnel's when
 * it is made; an incoming link, that of the tunnel of each stream it
 * accepts.  Exclusive turns only.
 */
void link_set_priority(struct dlink *dl, unsigned prio);

#endif /* !LINK_H */
