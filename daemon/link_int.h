/*
 * link_int: the link rooms' own header, for link.c, resume.c and cm.c
 * only (nothing else includes it): struct dlink, and the parts of the
 * link state machine (link.c) that resuming and the RDMA CM's events
 * drive.  Everyone else knows a link through link.h.
 */
#ifndef LINK_INT_H
#define LINK_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stdint.h>

#include "auth.h"
#include "conf.h"
#include "engine.h"
#include "log.h"
#include "loop.h"
#include "resolve.h"

struct link_ops;
struct rsd;
struct verbs_link;

/*
 * D_AUTH: connected, proofs not yet exchanged; no stream may open.
 * D_SUSP: an incoming link that failed with streams suspended: it has no
 * verbs link, only the failed engine, until the peer resumes them on a
 * new link or resume_time passes.
 */
enum dstate { D_IDLE, D_CONNECTING, D_AUTH, D_UP, D_DEAD, D_SUSP };

struct dlink {
	struct rsd *d;
	struct loop *lp;		/* its worker's (its streams' too) */
	const struct conf_tunnel *c;	/* client link: its tunnel's */
	const struct link_ops *ops;
	void *arg;
	struct verbs_link *vl;
	enum dstate state;
	struct loop_fd *cqw;
	struct loop_job flush;		/* post work, deliver events */
	int flushing;
	/* An event a shared turn may not handle, for the next turn. */
	int stashed;
	struct engine_event stash;
	struct loop_timer ka;		/* keepalive and liveness */
	struct loop_timer retry;	/* reconnect after back-off */
	struct loop_timer reap;		/* incoming: free outside callbacks */
	struct loop_timer deadline;	/* handshake_timeout */
	/* Resume: a failed link's engine with its suspended streams, until
	 * they move to a new link or resume_time passes.  The timer: when
	 * the next of them gives up, or until when a new client link waits
	 * for the peer's proof (engine_resume_proven). */
	struct engine *old;
	struct loop_timer resume_tmo;
	uint64_t susp_since;		/* when they were suspended */
	uint32_t resume_s;		/* how long they may wait */
	int resuming;			/* a resume exchange is under way */
	int moved;			/* its streams moved to another link */
	struct engine_resume er;
	struct dlink *from;		/* incoming: the link it resumes */
	/*
	 * The resume identity (see auth.h): the chain's token (its first
	 * link's) and secret, this link's own from version 5 (ratchet: the
	 * chain then never resumes on an older link).  An incoming link that
	 * took a chain over keeps the secret it replaced (prev) until the
	 * peer shows it has the new one: a loss before the peer saw our
	 * proof leaves it with the old one.
	 */
	int have_res, res_ratchet, has_prev;
	uint8_t res_id[WIRE_NONCE_LEN];
	uint8_t res_secret[AUTH_SECRET_LEN], res_prev[AUTH_SECRET_LEN];
	/* Client: each attempt goes to the next peer entry and address; it
	 * went to entry att_pi's address att_ai, saying at most att_version
	 * (0: the newest).  A step-down the peer asked for (step_version) is
	 * one attempt to that same address. */
	unsigned next_peer;
	unsigned att_pi, att_ai;
	uint8_t att_version, step_version;
	int busy;			/* the peer said WIRE_NOTE_BUSY */
	/* Client: a connect slot to the peer address dst (see
	 * LINK_CONNECT_SLOTS), held from the connect until the link is up
	 * or down; or waiting in d->connq for one. */
	int slot, queued;
	struct sockaddr_storage dst;
	TAILQ_ENTRY(dlink) qentry;
	/* Authentication: callbacks for the engine, and the link's key. */
	struct engine_auth ea;
	/* The link's key: a client link's tunnel's, or what the peer of an
	 * incoming link proved (a copy: it outlives reloads). */
	const struct conf_key *key;
	struct conf_key proved;
	uint32_t backoff;
	int failures;
	int auth_said;			/* client: an auth failure was logged */
	int retired;			/* client: its tunnel drains */
	struct rname *peer_rn[CONF_PEERS_MAX], *src_rn;	/* client: peers, source */
	struct rname_waiter rw;		/* the peer's name is looked up */
	unsigned next_addr;		/* the peer address to try next */
	int closing;			/* link_free: do not reconnect */
	int listed;			/* in d->links */
	struct sockaddr_storage peer_sa;	/* incoming: the peer's address */
	int auth;			/* incoming: the peer authenticates */
	/* Up with no stream since; 0: busy.  Atomic: its loop's shared
	 * turns write it, the gate reads it alongside them. */
	uint64_t idle_since;
	uint64_t heard_recvs, heard_ms;	/* receives seen, and when last */
	struct log_burst open_log;	/* refusals of the peer's OPENs */
	char peer[420];
	char name[520];			/* "tunnel pg: link to X" / "link from X" */
	TAILQ_ENTRY(dlink) entry;
};

/* A message about link ${dl}: the journal gets TUNNEL= and PEER=. */
#define LABOUT(dl)							\
	(&(struct log_about){ (dl)->c ? (dl)->c->name : NULL, 0, (dl)->peer })
#define LLOG(level, dl, ...)	log_about(level, LABOUT(dl), __VA_ARGS__)

/**
 * link_alloc(d, ops, arg):
 * A new link of daemon ${d} reporting to ${ops} with ${arg}, on the next
 * worker's loop, in no list yet (see link_list_add).  NULL when out of
 * memory.
 */
struct dlink *link_alloc(struct rsd *d, const struct link_ops *ops,
    void *arg);

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
 * link_deliver(dl, e, ev):
 * Hand event ${ev} of ${dl}'s engine ${e} to the link's owner (a client
 * link refuses the peer's OPENs itself).
 */
void link_deliver(struct dlink *dl, struct engine *e,
    const struct engine_event *ev);

/**
 * link_adopt(arg, id, user, tx, rx):
 * The engine's adopt callback (see engine_resume) for link ${arg}: stream
 * ${user} moves to it, and its owner re-registers the rings.
 */
int link_adopt(void *arg, uint32_t id, void *user, struct engine_ring *tx,
    struct engine_ring *rx);

/**
 * link_auth_init(dl, initiator):
 * Fill ${dl->ea}, the engine's authentication callbacks for ${dl}: it
 * proves its key, and checks the peer's proof (see auth.h).
 */
void link_auth_init(struct dlink *dl, int initiator);

/**
 * link_watch_cq(dl):
 * Watch ${dl}'s completion channel (once).  Returns 0, or -1.
 */
int link_watch_cq(struct dlink *dl);

/**
 * link_deadline_start(dl):
 * Connecting and authenticating ${dl} get handshake_timeout from now.
 */
void link_deadline_start(struct dlink *dl);

/**
 * link_up(dl):
 * ${dl} is connected: once the proofs are exchanged it is up (its
 * suspended streams are offered for a resume, its owner told).
 */
void link_up(struct dlink *dl);

/**
 * link_down(dl, why):
 * ${dl} ended for ${why}: its streams are suspended or reset, the verbs
 * side freed, and a client link reconnects (an incoming one goes).
 */
void link_down(struct dlink *dl, const char *why);

#endif /* !LINK_INT_H */
