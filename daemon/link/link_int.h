/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * link_int: the link rooms' own header (nothing else includes it): struct
 * dlink, and what the link rooms share.  Everyone else knows a link
 * through link.h.  The rooms, lowest first; each calls only rooms listed
 * before it, so no two call each other in a loop:
 *
 *   link.c        the object: made into the list, marked, failed
 *                 (link_fail), its events delivered; what link.h shows
 *                 of it; ring memory
 *   link_timers.c its five timers, armed there only (link_timers.h)
 *   linkstat.c    what metrics reads of a link from another thread
 *   handshake.c   how a link authenticates
 *   connect.c     a client link's attempts
 *   resume.c      a failed link's suspended streams, and their resume
 *   link_life.c   a link's life: made, up, flushed once a turn, down
 *                 (where a link_fail ends), freed
 *   cm.c          the RDMA CM's events, the listeners and their gate
 */
#ifndef LINK_INT_H
#define LINK_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stdint.h>

#include "auth.h"
#include "conf.h"
#include "engine.h"
#include "ident.h"
#include "log.h"
#include "loop.h"
#include "noise.h"
#include "resolve.h"
#include "seal.h"

struct link_ops;
struct rsd;
struct verbs_link;
struct verbs_link_conf;

#define LINK_BACKOFF_MIN_MS	100
#define LINK_BACKOFF_MAX_MS	2000
/*
 * A daemon's client links connecting to one peer address at once, at
 * most: a peer's default max_pending_per_addr, so that many tunnels to
 * one peer never trip it.  The others wait for a slot, connecting as far
 * as their clients can tell; a link the peer still turns away for a
 * pending limit (WIRE_NOTE_BUSY: its limit is lower, or other daemons on
 * this host connect too) waits for the next slot the same way, and so
 * does not count as a failure.
 */
#define LINK_CONNECT_SLOTS	CONF_DEFAULT_MAX_PENDING_PER_ADDR

/*
 * What a link's loop publishes of its engine and ring memory for metrics,
 * which reads them from another thread (linkstat.h): engine_stats' and
 * verbs_mem_stats' figures of these names, the protocol version, and
 * its lanes with each one's queue depth and bytes in flight.
 */
enum link_pub {
	LP_STALL_RING, LP_STALL_MSG, LP_STALL_SQ,
	LP_RING_GROWS, LP_RING_SHRINKS, LP_RING_REFUSED,
	LP_SQ_DEPTH, LP_INFLIGHT, LP_WINDOW,
	LP_WAIT_CREDIT_NS, LP_WAIT_SQ_NS, LP_RTT_NS, LP_VERSION,
	LP_PINNED, LP_POOLED, LP_CONTROL, LP_REGISTERED, LP_REUSED,
	LP_LANES, LP_LANE0_DEPTH, LP_LANE0_INFLIGHT, LP_LANE1_DEPTH,
	LP_LANE1_INFLIGHT, LP_LANE0_FENCES, LP_LANE1_FENCES,
	LP_N
};

/*
 * D_AUTH: connected, proofs not yet exchanged; no stream may open.
 * D_SUSP: an incoming link that failed with streams suspended: it has no
 * verbs link, only the failed engine, until the peer resumes them on a
 * new link or resume_time passes.
 */
enum dstate { D_IDLE, D_CONNECTING, D_AUTH, D_UP, D_DEAD, D_SUSP };

/*
 * A link, in five parts: what every link has, then what only a client
 * link uses, what only an incoming link uses, its authentication, and
 * its resume.  Each field's label (owner, excl, atomic) says what guards
 * it: see Threads in loop.h.  Its loop runs a link shared only while
 * share() allows, and then writes only its owner and atomic fields.
 */
struct dlink {
	/* ---- Every link. */
	struct rsd *d;			/* excl: set at creation */
	struct loop *lp;		/* excl: set at creation; its worker's
					   (its streams' too) */
	const struct link_ops *ops;	/* excl: set at creation */
	void *arg;			/* excl: set at creation */
	struct verbs_link *vl;		/* excl */
	enum dstate state;		/* excl: the gate reads it */
	struct loop_fd *cqw;		/* excl */
	struct loop_job flush;		/* owner: post work, deliver events */
	int flushing;			/* owner */
	/* A part ended it (link_fail): why, until its flush job has taken
	 * it down. */
	int failing;			/* excl */
	char fail_why[256];		/* excl */
	/* An event a shared turn may not handle, for the next turn. */
	int stashed;			/* owner */
	struct engine_event stash;	/* owner */
	struct loop_timer ka;		/* owner: keepalive and liveness */
	struct loop_timer reap;		/* excl: incoming: free outside
					   callbacks */
	struct loop_timer deadline;	/* excl: handshake_timeout */
	int closing;			/* excl: link_free: do not reconnect */
	int listed;			/* excl: in d->links */
	/* Up with no stream since; 0: busy.  Its loop's shared turns write
	 * it, the gate reads it alongside them. */
	uint64_t idle_since;		/* atomic */
	uint64_t heard_recvs, heard_ms;	/* owner: receives seen, and when
					   last */
	struct log_burst open_log;	/* excl: the peer's OPENs refused */
	/* Its tunnel's priority (0: none yet) on device row prio_dev, and
	 * the share of its window it was last given (see prio.h). */
	unsigned prio;			/* excl */
	int prio_dev;			/* excl: set when up */
	uint32_t share;			/* atomic: its loop writes it,
					   rstreamctl reads it */
	uint64_t pub[LP_N];		/* atomic: its loop publishes them
					   after each flush, metrics reads
					   them (linkstat.h) */
	char peer[420];			/* excl */
	char name[520];			/* excl: "tunnel pg: link to X" /
					   "link from X", then " [node]" once
					   up with an identity */
	size_t name_len;		/* excl: name's length without
					   " [node]"; 0: not known yet */
	/* Why it last failed, kept until it is up again, and since when it
	 * has not been up (ms since the epoch, the wall clock then: what
	 * rstreamctl shows; 0: up, or an incoming link that has not
	 * ended). */
	char last_err[256];		/* excl */
	uint64_t down_since;		/* excl */
	TAILQ_ENTRY(dlink) entry;	/* excl */

	/* ---- A client link: NULL c for an incoming one. */
	const struct conf_tunnel *c;	/* excl: set at creation; its
					   tunnel's */
	/* Each attempt goes to the next peer entry and address; it went to
	 * entry att_pi's address att_ai, saying at most att_version (0: the
	 * newest).  A step-down the peer asked for (step_version) is one
	 * attempt to that same address. */
	unsigned next_peer;		/* excl */
	unsigned next_addr[CONF_PEERS_MAX];	/* excl: each entry's address
						   to try next */
	unsigned att_pi, att_ai;	/* excl */
	uint8_t att_version, step_version;	/* excl */
	int busy;			/* excl: said WIRE_NOTE_BUSY */
	int qos_warned;			/* excl: said what of the tunnel's
					   traffic_class and service_level
					   its device ignores */
	/* A connect slot to the peer address dst (see LINK_CONNECT_SLOTS),
	 * held from the connect until the link is up or down; or waiting in
	 * d->connq for one. */
	int slot, queued;		/* excl */
	struct sockaddr_storage dst;	/* excl */
	TAILQ_ENTRY(dlink) qentry;	/* excl */
	struct loop_timer retry;	/* excl: reconnect after back-off */
	uint32_t backoff;		/* excl: the next wait */
	uint32_t retry_wait;		/* excl: the wait armed in retry */
	int failures;			/* excl: in a row, since it was last
					   up */
	uint64_t failures_total;	/* excl */
	int auth_said;			/* excl: an auth failure was logged */
	int retired;			/* excl: its tunnel drains */
	struct rname *peer_rn[CONF_PEERS_MAX], *src_rn;	/* excl: set at
							   creation; peers,
							   source */
	struct rname_waiter rw;		/* excl: the peer's name resolves */

	/* ---- An incoming link. */
	struct sockaddr_storage peer_sa;	/* excl: set at creation; the
						   peer's address */
	int auth;			/* excl: set at creation; the peer
					   authenticates */

	/* ---- Authentication (handshake.c's). */
	struct engine_auth ea;		/* excl: callbacks for the engine */
	struct engine_seal es;		/* excl: sealing callbacks */
	/* The link's key: a client link's tunnel's, or what the peer of an
	 * incoming link proved (a copy: it outlives reloads).  An identity
	 * handshake's steps set it in the link's shared turns. */
	const struct conf_key *key;	/* owner */
	struct conf_key proved;		/* owner */
	/* Identities: the handshake under way; once it is done, the
	 * peer's identity (its name in the peers it matched, a copy), the
	 * handshake hash (the link's binding), the responder's
	 * confirmation (version 7) until it is sent or checked and, on a
	 * sealed link, a direction of seal each way.  The handshake's
	 * steps write them in the link's shared turns (handshake.c's
	 * step), each reading one configuration, dl->d->conf as a reload
	 * left it.  ident is set last, and nothing here changes again
	 * until handshake_init (exclusive) clears it: metrics, in a shared
	 * turn of the daemon's loop, reads peer_id, sealed and aead only
	 * once it loaded ident set (link_peer_id, link_sealing). */
	struct noise_hs *hs;		/* owner */
	int ident;			/* atomic: release after the rest */
	int sealed;			/* owner: metrics reads it as above */
	int revoked;			/* excl: a reload no longer trusts
					   this connection's peer
					   (link_revoke): no stream waits */
	int aead;			/* owner: enum seal_aead; as sealed */
	uint8_t peer_pub[IDENT_KEY_LEN];	/* owner */
	char peer_b64[IDENT_B64_LEN];	/* owner */
	char peer_id[WIRE_NAME_MAX + 1];	/* owner: "" without identity;
						   as sealed */
	char hs_why[256];		/* owner: why the handshake failed */
	uint8_t hh[NOISE_HASH_LEN];	/* owner */
	uint8_t confirm[NOISE_KEY_LEN];	/* owner */
	struct seal_pair seal;		/* owner */

	/* ---- Resume (resume.c's; a link settles any resume before it
	 * runs shared, see engine_resume_settled). */
	/* A failed link's engine with its suspended streams, until they
	 * move to a new link or resume_time passes.  The timer: when the
	 * next of them gives up, or until when a new client link waits for
	 * the peer's proof (engine_resume_proven). */
	struct engine *old;		/* excl */
	struct loop_timer resume_tmo;	/* excl */
	uint64_t susp_since;		/* excl: when they were suspended */
	uint32_t resume_s;		/* excl: how long they may wait */
	uint32_t nsusp;			/* excl: how many were suspended as
					   it failed, until link_down says
					   so */
	int resuming;			/* excl: a resume exchange runs */
	int moved;			/* excl: its streams moved to another
					   link */
	struct engine_resume er;	/* excl: set at creation */
	struct dlink *from;		/* excl: incoming: what it resumes */
	/* Its chain's links that ended on a sealed message that did not
	 * open, as this side saw (LINK_FORGED_MAX). */
	uint32_t forged;		/* excl */
	/*
	 * The resume identity (see auth.h): the token (the chain's first
	 * link's; from version 10 this link's own) and the secret, this
	 * link's own from version 5 (ratchet: the chain then never resumes
	 * on an older link).  An incoming link that took a chain over keeps
	 * the token and secret it replaced (prev) until the peer shows it
	 * has the new ones: a loss before the peer saw our proof leaves it
	 * with the old ones.
	 */
	int have_res, res_ratchet, has_prev;	/* excl */
	uint8_t res_id[WIRE_NONCE_LEN];	/* excl */
	uint8_t res_prev_id[WIRE_NONCE_LEN];	/* excl */
	uint8_t res_secret[AUTH_SECRET_LEN];	/* excl */
	uint8_t res_prev[AUTH_SECRET_LEN];	/* excl */
};

/* A message about link ${dl}: the journal gets TUNNEL= and PEER=. */
#define LABOUT(dl)							\
	(&(struct log_about){ (dl)->c ? (dl)->c->name : NULL, 0, (dl)->peer })
#define LLOG(level, dl, ...)	log_about(level, LABOUT(dl), __VA_ARGS__)

/* ---- link.c: the object, below the parts. */

/**
 * link_list_add(dl):
 * ${dl} joins the daemon's links (link_free takes it out).
 */
void link_list_add(struct dlink *dl);

/**
 * link_cur_engine(dl):
 * The engine of ${dl}'s current connection (not a failed one kept for
 * its suspended streams), or NULL.
 */
struct engine *link_cur_engine(const struct dlink *dl);

/**
 * link_stays_down(dl):
 * True when nothing will connect ${dl} again nor bring a new link for its
 * streams: the daemon stops or drains, or the link was closed or its
 * tunnel retired.
 */
int link_stays_down(const struct dlink *dl);

/**
 * link_deliver(dl, e, ev):
 * Hand event ${ev} of ${dl}'s engine ${e} to the link's owner (a client
 * link refuses the peer's OPENs itself).
 */
void link_deliver(struct dlink *dl, struct engine *e,
    const struct engine_event *ev);

/**
 * link_unstash(dl):
 * Deliver the stream event a shared turn left for an exclusive one, if
 * there is one: it goes before any other.
 */
void link_unstash(struct dlink *dl);

/**
 * link_adopt(arg, id, user, tx, rx):
 * The engine's adopt callback (see engine_resume) for link ${arg}: stream
 * ${user} moves to it, and its owner re-registers the rings.
 */
int link_adopt(void *arg, uint32_t id, void *user, struct engine_ring *tx,
    struct engine_ring *rx);

/**
 * link_hooks(dl, handshake, e, lc):
 * Where ${dl}'s engine calls back, for both kinds of link: with
 * ${handshake}, the handshake's (dl->ea, which handshake_init filled,
 * and dl->es when that handshake may seal); and resume.c's (dl->er).  An
 * incoming link's engine ${e} gets them all as it is accepted.  A client
 * link's engine is made as it connects, so the handshake's go to verbs
 * in ${lc} (${e} NULL), and it gets resume's only once it is up with
 * suspended streams to offer (${lc} NULL): an engine with them takes
 * resumes, which a client's must not.
 */
void link_hooks(struct dlink *dl, int handshake, struct engine *e,
    struct verbs_link_conf *lc);

/**
 * link_watch_cq(dl):
 * Watch ${dl}'s completion channel (once).  Returns 0, or -1.
 */
int link_watch_cq(struct dlink *dl);

/**
 * link_share(dl):
 * Let ${dl}'s completions, flush job and keepalive run in shared turns,
 * or not, as its state allows now (see Threads in loop.h).
 */
void link_share(struct dlink *dl);

/**
 * link_fail(dl, why):
 * ${dl} ends for ${why} (the first reason given stands), but not inside
 * the caller: its engine fails at once (the queue pair stopped first),
 * and the link's flush job, at the end of this turn (of the link's own
 * loop's next turn, when called from another loop), takes it down: its
 * streams are suspended or reset, the verbs side freed, and a client
 * link reconnects (an incoming one goes).  Until then the link is not up
 * (link_is_up) and does not come up.  The parts end links only so, as a
 * keepalive does, and never free anyone's caller.  Exclusive turns only.
 */
void link_fail(struct dlink *dl, const char *why);

/* ---- link_life.c: a link's life, above the parts. */

/**
 * link_alloc(d, ops, arg):
 * A new link of daemon ${d} reporting to ${ops} with ${arg}, on the next
 * worker's loop, in no list yet (see link_list_add).  NULL when out of
 * memory.
 */
struct dlink *link_alloc(struct rsd *d, const struct link_ops *ops,
    void *arg);

/**
 * link_up(dl):
 * ${dl} is connected: once the proofs are exchanged it is up (its
 * suspended streams are offered for a resume, its owner told).
 */
void link_up(struct dlink *dl);

#endif /* !LINK_INT_H */
