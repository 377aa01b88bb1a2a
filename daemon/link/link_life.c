/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/socket.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "connect.h"
#include "engine.h"
#include "handshake.h"
#include "hca.h"
#include "link.h"
#include "link_int.h"
#include "link_timers.h"
#include "log.h"
#include "loop.h"
#include "prio.h"
#include "resolve.h"
#include "resume.h"
#include "rsd.h"
#include "secmem.h"
#include "verbs.h"

static void on_flush(void *);
static void on_retry(void *);
static void on_reap(void *);
static void link_down(struct dlink *, const char *);

/* ------------------------------------------------------------- made */

/*
 * The loop a new link runs on: the workers' in turn (a client link's
 * streams run with it), or the one loop when there are no workers.
 */
static struct loop *
pick_loop(struct rsd *d)
{

	if (d->nworkers == 0)
		return (d->lp);
	return (d->workers[d->next_worker++ % d->nworkers]);
}

/* A new link of daemon ${d}, in no list yet. */
struct dlink *
link_alloc(struct rsd *d, const struct link_ops *ops, void *arg)
{
	struct dlink *dl;

	loop_assert_exclusive();
	/* It holds a proved key and a resume secret (see secmem.h). */
	if ((dl = secmem_alloc(sizeof(*dl))) == NULL)
		return (NULL);
	dl->d = d;
	dl->lp = pick_loop(d);
	dl->ops = ops;
	dl->arg = arg;
	dl->key = &dl->proved;		/* unset until a peer proves one */
	loop_job_init(&dl->flush, dl->lp, on_flush, dl);
	link_timers_init(dl);
	loop_timer_init(&dl->retry, dl->lp, on_retry, dl);
	loop_timer_init(&dl->reap, dl->lp, on_reap, dl);
	resume_init(dl);
	return (dl);
}

/* ---------------------------------------------- flushed once a turn */

/* Stream events that change tunnels: exclusive only (Threads in loop.h). */
#define EV_EXCLUSIVE	(ENGINE_EV_INCOMING | ENGINE_EV_OPENED |	\
	ENGINE_EV_REFUSED | ENGINE_EV_RESET | ENGINE_EV_RELEASED |	\
	ENGINE_EV_SUSPENDED | ENGINE_EV_RESUMED)

/*
 * A link moving data (keepalives and credits do not count) says so to
 * its device's priority table, and
 * keeps the share of its window that tunnels of higher priority leave it
 * (prio.h).
 */
static void
yield(struct dlink *dl, struct engine *e)
{
	uint32_t share;

	if (dl->prio == 0)
		return;
	share = prio_share(&dl->d->prio, dl->prio_dev, dl->prio,
	    engine_data_busy(e), loop_now_ms());
	if (share != dl->share) {
		engine_window_share(e, share);
		__atomic_store_n(&dl->share, share, __ATOMIC_RELAXED);
	}
}

/*
 * What metrics reads of the link from another thread (link_pub): after
 * every flush, a few relaxed stores, so a scrape never touches the
 * engine nor stops this loop.
 */
static void
publish(struct dlink *dl, const struct engine *e)
{
	struct engine_stats st;
	struct verbs_mem_stats ms;

	_Static_assert(LP_N == 25, "publish stores every LP_ figure");
	engine_stats(e, &st);
	verbs_link_mem_stats(dl->vl, &ms);
#define PUB(k, x)	__atomic_store_n(&dl->pub[k], (x), __ATOMIC_RELAXED)
	PUB(LP_STALL_RING, st.stall_ring);
	PUB(LP_STALL_MSG, st.stall_msg);
	PUB(LP_STALL_SQ, st.stall_sq);
	PUB(LP_RING_GROWS, st.ring_grows);
	PUB(LP_RING_SHRINKS, st.ring_shrinks);
	PUB(LP_RING_REFUSED, st.ring_refused);
	PUB(LP_SQ_DEPTH, st.sq_depth);
	PUB(LP_INFLIGHT, st.inflight);
	PUB(LP_WINDOW, st.window);
	PUB(LP_WAIT_CREDIT_NS, st.wait_credit_ns);
	PUB(LP_WAIT_SQ_NS, st.wait_sq_ns);
	PUB(LP_RTT_NS, st.rtt_ns);
	PUB(LP_VERSION, engine_version(e));
	PUB(LP_PINNED, ms.pinned);
	PUB(LP_POOLED, ms.pooled);
	PUB(LP_CONTROL, ms.control);
	PUB(LP_REGISTERED, ms.registered);
	PUB(LP_REUSED, ms.reused);
	PUB(LP_LANES, st.lanes);
	PUB(LP_LANE0_DEPTH, st.lane[0].depth);
	PUB(LP_LANE0_INFLIGHT, st.lane[0].inflight);
	PUB(LP_LANE1_DEPTH, st.lane[1].depth);
	PUB(LP_LANE1_INFLIGHT, st.lane[1].inflight);
	PUB(LP_LANE0_FENCES, st.lane[0].fences);
	PUB(LP_LANE1_FENCES, st.lane[1].fences);
#undef PUB
}

/*
 * Deliver the engine's events, then post the work they and everyone else
 * queued this turn, with one doorbell; repeat while posting made more
 * events.  A shared turn stops at the first event that changes more than
 * its stream: it waits in the stash for the next turn, an exclusive one.
 */
static void
pump(struct dlink *dl, struct engine *e, int shared)
{
	struct engine_event ev;
	int flushed = 0;

	dl->flushing = 1;
	engine_clock(e, loop_now_ns());
	yield(dl, e);
	if (!shared)
		link_unstash(dl);
	while (engine_error(e) == NULL) {
		if (engine_next_event(e, &ev)) {
			flushed = 0;
			if (shared && (ev.flags & EV_EXCLUSIVE)) {
				dl->stash = ev;
				dl->stashed = 1;
				break;
			}
			link_deliver(dl, e, &ev);
			continue;
		}
		if (flushed)
			break;
		(void)verbs_link_flush(dl->vl);
		flushed = 1;
	}
	dl->flushing = 0;
	/* Posted what the engine will wait on, with its CQ armed for less. */
	if (dl->cqw != NULL && verbs_link_wants_poll(dl->vl))
		loop_fd_kick(dl->cqw);
	publish(dl, e);
	/* Idle since when: the link may give its slot up (see admit.h). */
	if (engine_active(e) > 0)
		__atomic_store_n(&dl->idle_since, 0, __ATOMIC_RELAXED);
	else if (dl->idle_since == 0 && dl->state == D_UP)
		__atomic_store_n(&dl->idle_since, loop_now_ms(),
		    __ATOMIC_RELAXED);
}

/*
 * The job: move the data (pump), then act on what the engine says.  In
 * a shared turn only the data, and the handshake's messages; a stashed
 * event, a failed engine or a peer just authenticated (link_up) waits
 * for the next turn (Threads in loop.h).
 */
static void
on_flush(void *arg)
{
	struct dlink *dl = arg;
	struct engine_event ev;
	struct engine *e;

	if (!loop_exclusive()) {
		if ((e = link_cur_engine(dl)) == NULL)
			return;
		pump(dl, e, 1);
		if (dl->stashed || engine_error(e) != NULL ||
		    (dl->state != D_UP && engine_authenticated(e))) {
			link_share(dl);
			loop_job_defer(&dl->flush);
		}
		return;
	}
	/* A part ended it: it goes down here, outside anyone's call. */
	if (dl->failing) {
		link_down(dl, dl->fail_why);
		return;
	}
	/* A failed engine's streams still drain, fill and close. */
	while (dl->old != NULL && engine_next_event(dl->old, &ev))
		link_deliver(dl, dl->old, &ev);
	if ((e = link_cur_engine(dl)) == NULL)
		return;
	pump(dl, e, 0);
	if (engine_error(e) != NULL && dl->state != D_DEAD &&
	    dl->state != D_IDLE)
		link_down(dl, engine_error(e));
	else if (dl->state == D_AUTH && engine_authenticated(e))
		link_up(dl);
	else if (dl->resuming && engine_resume_pending(e) == 0)
		resume_done(dl, e);
	link_share(dl);
}

static void
on_retry(void *arg)
{

	connect_next(arg);
}

static void
on_reap(void *arg)
{

	link_free(arg);
}

/* ------------------------------------------------------- going down */

/*
 * The wall clock in ms since the epoch: when a link went down, as people
 * read it (rstreamctl), read only then.
 */
static uint64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/* What link_down found out about the end of a link, for its steps. */
struct down {
	char why[256];		/* a copy: it may be the engine's own */
	char susp[160];		/* "; N streams suspended for up to T s" */
	unsigned nsusp;		/* streams suspended */
	enum engine_err kind;	/* the engine's error */
	enum verbs_wc_error wce;	/* the error completion that ended it */
	int was_up;
	int auth_failed;	/* ended before the proofs checked out */
	unsigned forged_reset;	/* streams reset: too many forged ends */
};

/*
 * Why ${dl} (engine ${e}) ended, into ${dn}.  Ending before the proofs
 * checked out is an authentication failure: counted here.
 */
static void
down_classify(struct dlink *dl, struct engine *e, const char *why,
    struct down *dn)
{

	snprintf(dn->why, sizeof(dn->why), "%s", why);
	dn->susp[0] = '\0';
	dn->nsusp = 0;
	dn->forged_reset = 0;
	dn->was_up = dl->state == D_UP;
	dn->kind = e != NULL ? engine_error_kind(e) : ENGINE_ERR_NONE;
	dn->wce = dl->vl != NULL ? verbs_link_wc_error(dl->vl) : VERBS_WC_NONE;
	dn->auth_failed = dl->state == D_AUTH || dn->kind == ENGINE_ERR_AUTH ||
	    (dl->c == NULL && dl->ea.verify != NULL && e != NULL &&
	    !engine_authenticated(e));
	if (dn->auth_failed)
		dl->d->auth_failures++;
}

/*
 * A sealed message did not open: someone on the fabric forged or changed
 * it, and the streams wait for a new link as after any loss; but not
 * after the chain's LINK_FORGED_MAX-th such end (resume_time): how many
 * are reset for it instead, for the log.
 */
static void
down_forged(struct dlink *dl, struct engine *e, struct down *dn)
{

	if (dn->kind != ENGINE_ERR_FORGED)
		return;
	dl->d->forged++;
	if (++dl->forged > LINK_FORGED_MAX && e != NULL)
		dn->forged_reset = engine_suspended(e);
}

/* How many streams wait for a new link (resume_suspend), for the log. */
static void
down_waiting(struct dlink *dl, struct down *dn)
{

	dn->nsusp = dl->nsusp;
	dl->nsusp = 0;
	if (dn->nsusp > 0 && dn->kind == ENGINE_ERR_FORGED)
		snprintf(dn->susp, sizeof(dn->susp), "; %u stream%s suspended "
		    "for up to %u s (%u of %u forged messages their chain of "
		    "links survives)", dn->nsusp, dn->nsusp == 1 ? "" : "s",
		    (unsigned)dl->resume_s, (unsigned)dl->forged,
		    LINK_FORGED_MAX);
	else if (dn->nsusp > 0)
		snprintf(dn->susp, sizeof(dn->susp), "; %u stream%s suspended "
		    "for up to %u s", dn->nsusp, dn->nsusp == 1 ? "" : "s",
		    (unsigned)dl->resume_s);
	else if (dn->forged_reset > 0)
		snprintf(dn->susp, sizeof(dn->susp), "; %u stream%s reset, "
		    "not suspended: their chain of links survives %u forged "
		    "messages, not %u", dn->forged_reset, dn->forged_reset ==
		    1 ? "" : "s", LINK_FORGED_MAX, (unsigned)dl->forged);
}

/* Teardown: the completions, the keepalive and the verbs link go. */
static void
down_teardown(struct dlink *dl)
{

	loop_fd_del(dl->cqw);
	dl->cqw = NULL;
	verbs_link_free(dl->vl);
	dl->vl = NULL;
	link_share(dl);
}

/*
 * An incoming link ended: it is said, and it goes, or waits suspended
 * for its peer to resume its streams on a new link.
 */
static void
down_incoming(struct dlink *dl, const struct down *dn)
{

	if (dn->wce != VERBS_WC_NONE)
		dl->d->completion_errors_in[dn->wce]++;
	if (dn->auth_failed) {
		/* Counted every time; said once per burst (a flood?). */
		log_burst_about(&dl->d->auth_log, loop_now_ms(), LOG_WARNING,
		    LABOUT(dl), "%s failed authentication: %s", dl->name,
		    dn->why);
	} else {
		/* A peer breaking the protocol is news, and so is one
		 * revoked; leaving not. */
		LLOG(dn->kind == ENGINE_ERR_PROTOCOL ||
		    dn->kind == ENGINE_ERR_FORGED || dn->nsusp > 0 ||
		    dl->revoked ? LOG_WARNING : LOG_INFO, dl, "%s ended: %s%s",
		    dl->name, dn->why, dn->susp);
	}
	if (dl->old != NULL) {
		dl->state = D_SUSP;
		return;
	}
	dl->state = D_DEAD;
	link_timers_ended(dl);
}

/*
 * A client link failed: its owner is told, and unless nothing will use
 * it again it reconnects after the back-off.
 */
static void
down_client(struct dlink *dl, const struct down *dn)
{
	int failed;

	dl->failures++;
	dl->failures_total++;
	dl->ops->down(dl->arg, dl, dn->why, dn->wce);
	/* Nothing more will use a stopping daemon's or old tunnel's link. */
	if (link_stays_down(dl)) {
		/* A retired tunnel's link a reload revoked, or that failed
		 * under its last streams: say why. */
		failed = dl->revoked || (!dl->d->stop && !dl->d->draining &&
		    !dl->closing && dn->kind != ENGINE_ERR_NONE &&
		    dn->kind != ENGINE_ERR_LOCAL);
		LLOG(failed ? LOG_WARNING : LOG_INFO, dl, "%s closed%s%s%s",
		    dl->name, failed ? ": " : "", failed ? dn->why : "",
		    failed ? dn->susp : "");
		return;
	}
	if (dn->was_up) {
		LLOG(LOG_WARNING, dl, "%s went down: %s%s; reconnecting",
		    dl->name, dn->why, dn->susp);
	} else if (dl->failures == 1 || log_level() >= LOG_DEBUG ||
	    (dn->auth_failed && !dl->auth_said)) {
		/* Once per run of failures, and once when auth is why. */
		dl->auth_said |= dn->auth_failed;
		LLOG(LOG_WARNING, dl, "%s failed: %s; retrying every %.1f "
		    "s at most", dl->name, dn->why,
		    LINK_BACKOFF_MAX_MS / 1000.0);
	}
	link_timers_attempt_later(dl);
}

/*
 * The link ended: reset its streams (the engine already did; delivering
 * the events closes their sockets and frees their rings), free the verbs
 * side, and reconnect (client link) or go away (incoming link).
 */
static void
link_down(struct dlink *dl, const char *why)
{
	struct engine *e = link_cur_engine(dl);
	struct down dn;

	loop_assert_exclusive();
	down_classify(dl, e, why, &dn);
	/* Down now: a failure that waited for the flush job is done with. */
	dl->failing = 0;
	dl->fail_why[0] = '\0';
	/* A refusal that is no failure (a step-down, a busy peer) is still
	 * why the link is not up. */
	snprintf(dl->last_err, sizeof(dl->last_err), "%s", dn.why);
	if (dn.was_up || dl->down_since == 0)
		dl->down_since = wall_ms();
	link_timers_down(dl);
	loop_job_cancel(&dl->flush);
	connect_slot_release(dl);
	down_forged(dl, e, &dn);
	resume_suspend(dl, dn.why);
	down_waiting(dl, &dn);
	down_teardown(dl);
	if (dl->c == NULL) {
		down_incoming(dl, &dn);
		return;
	}
	dl->state = D_IDLE;
	/* Step down, or a busy peer: not a failure, the link asks again. */
	if (connect_again(dl))
		return;
	down_client(dl, &dn);
}

/* --------------------------------------------------------------- up */

struct dlink *
link_client_new(struct rsd *d, const struct conf_tunnel *c,
    const struct conf *nc, const struct link_ops *ops, void *arg)
{
	struct dlink *dl;
	unsigned i;

	if ((dl = link_alloc(d, ops, arg)) == NULL)
		return (NULL);
	dl->c = c;
	dl->key = &c->key;
	connect_naming(dl, &c->peers[0]);
	for (i = 0; i < c->npeers; i++)
		if ((dl->peer_rn[i] = rname_new(d->res, c->peers[i].host,
		    c->peers[i].port, 0)) == NULL) {
			link_free(dl);
			return (NULL);
		}
	if (nc->has_source && (dl->src_rn = rname_new(d->res,
	    nc->source.host, "0", 1)) == NULL) {
		link_free(dl);
		return (NULL);
	}
	return (dl);
}

void
link_client_start(struct dlink *dl)
{

	link_list_add(dl);
	/* Not up from the start: since then, until it is. */
	dl->down_since = wall_ms();
	connect_next(dl);
}

void
link_client_retire(struct dlink *dl)
{

	dl->retired = 1;
	connect_slot_unqueue(dl);
	/* It will not connect again: its suspended streams end now. */
	(void)resume_drop(dl, WIRE_REASON_SHUTTING_DOWN);
	link_timers_retired(dl);
	rname_unwait(&dl->rw);
}

/* How the link authenticated, for its "is up" line. */
static const char *
auth_text(const struct dlink *dl, char *buf, size_t len)
{

	if (dl->ident)
		snprintf(buf, len, "authenticated as %s%s, %s%s", dl->peer_id,
		    dl->key->set ? " with its key" : "", dl->sealed ?
		    "sealed with " : "not sealed", dl->sealed ?
		    seal_aead_name(dl->aead) : "");
	else
		snprintf(buf, len, "%s", dl->key->set ? "authenticated" :
		    "not authenticated");
	return (buf);
}

/*
 * Where on the fabric a link runs, for its "is up" line: "port 1, RoCEv2,
 * GID 1 fe80::1, path MTU 1024, QP 17 to 18" (and LIDs on IB).  iWARP
 * runs over TCP between the addresses the line names already: it has no
 * GID, and a queue pair does not learn its peer's number.
 */
static void
hca_text(const struct dlink *dl, char *buf, size_t len)
{
	const struct hca_info *h = verbs_link_hca(dl->vl);
	char lids[40] = "", lane[40] = "";

	if (h == NULL) {
		snprintf(buf, len, "fabric details unknown");
		return;
	}
	if (h->lid != 0)
		snprintf(lids, sizeof(lids), ", LID %u to %u",
		    (unsigned)h->lid, (unsigned)h->peer_lid);
	if (h->iwarp) {
		if (h->lane1_qpn != 0)
			snprintf(lane, sizeof(lane), ", lane 1 QP %u",
			    (unsigned)h->lane1_qpn);
		snprintf(buf, len, "port %u, iWARP, path MTU %u, QP %u%s",
		    h->port, h->path_mtu, (unsigned)h->qpn, lane);
		return;
	}
	if (h->lane1_qpn != 0)
		snprintf(lane, sizeof(lane), ", lane 1 QP %u to %u",
		    (unsigned)h->lane1_qpn, (unsigned)h->lane1_peer_qpn);
	snprintf(buf, len, "port %u, %s, GID %d %s to %s, path MTU %u, QP %u "
	    "to %u%s%s", h->port, h->transport, h->gid_index, h->gid,
	    h->peer_gid, h->path_mtu, (unsigned)h->qpn, (unsigned)h->peer_qpn,
	    lane, lids);
}

void
link_up(struct dlink *dl)
{
	const struct conf_sizes *sz;
	char where[200], why[160], how[200], inl_note[80] = "";
	const struct hca_info *h = verbs_link_hca(dl->vl);
	size_t n;
	uint32_t inl;
	unsigned version = engine_version(link_cur_engine(dl));
	unsigned lanes = engine_lanes(link_cur_engine(dl));
	/* iWARP's: every WRITE's notice comes as a SEND. */
	const char *notify = engine_notify(link_cur_engine(dl)) ?
	    ", no immediates" : "";

	loop_assert_exclusive();
	/* Failed meanwhile: its flush job takes it down instead. */
	if (dl->failing)
		return;
	if (link_watch_cq(dl)) {
		link_down(dl, "cannot watch the completion channel");
		return;
	}
	/* The answer's version, not only a refusal's, is held to it. */
	if (dl->c != NULL && connect_too_old(dl, version, why, sizeof(why))) {
		link_down(dl, why);
		return;
	}
	/* Connected: no stream until the peer has proved its key. */
	if (!engine_authenticated(link_cur_engine(dl))) {
		dl->state = D_AUTH;
		/* Ours: connecting and the proofs get this long together. */
		link_mark(dl);
		/* Its handshake steps run in shared turns (link_share). */
		link_share(dl);
		return;
	}
	link_timers_up(dl);
	dl->state = D_UP;
	dl->prio_dev = prio_dev(&dl->d->prio, verbs_link_device(dl->vl));
	__atomic_store_n(&dl->share, 1000, __ATOMIC_RELAXED);
	if (dl->c != NULL)
		dl->prio = dl->c->sz.priority;
	connect_slot_release(dl);
	dl->heard_ms = loop_now_ms();
	__atomic_store_n(&dl->idle_since, dl->heard_ms, __ATOMIC_RELAXED);
	/* Before any new stream: the suspended ones keep their ids. */
	if (dl->old != NULL)
		resume_offer(dl, link_cur_engine(dl));
	else if (!dl->resuming)
		resume_identity(dl);
	dl->failures = 0;
	dl->last_err[0] = '\0';
	dl->down_since = 0;
	dl->auth_said = 0;
	hca_text(dl, where, sizeof(where));
	if (dl->c != NULL) {
		sz = &dl->c->sz;
		/* What its device took, when less than the tunnel asked. */
		inl = h != NULL ? h->inline_size : sz->inline_size;
		if (inl < sz->inline_size)
			snprintf(inl_note, sizeof(inl_note), " (the most %s "
			    "takes; %u asked)", verbs_link_device(dl->vl),
			    (unsigned)sz->inline_size);
		LLOG(version < WIRE_VERSION ? LOG_NOTICE : LOG_INFO, dl,
		    "%s is up (device %s, protocol version %u, %u %s%s, "
		    "sq_size %u, rq_size %u, inline_size %u%s, %s; %s)",
		    dl->name, verbs_link_device(dl->vl), version, lanes,
		    lanes == 1 ? "lane" : "lanes", notify,
		    (unsigned)sz->sq_size, (unsigned)sz->rq_size,
		    (unsigned)inl, inl_note,
		    auth_text(dl, how, sizeof(how)), where);
	} else {
		LLOG(LOG_INFO, dl, "%s %s (%s; protocol version %u, %u %s%s)",
		    dl->name, dl->ident ? auth_text(dl, how, sizeof(how)) :
		    dl->key->set ? "authenticated" : "is up", where, version,
		    lanes, lanes == 1 ? "lane" : "lanes", notify);
	}
	/* Every line about the link from now on names its peer. */
	if (dl->ident) {
		/* Once: a link that comes up again names its peer anew. */
		if (dl->name_len == 0 || dl->name_len >= sizeof(dl->name))
			dl->name_len = strlen(dl->name);
		n = dl->name_len;
		snprintf(dl->name + n, sizeof(dl->name) - n, " [%s]",
		    dl->peer_id);
	}
	if (dl->c != NULL)
		dl->ops->up(dl->arg, dl);
	link_mark(dl);
	link_share(dl);
}

/* ------------------------------------------------------------ freed */

void
link_free(struct dlink *dl)
{
	struct dlink *o;
	unsigned i;

	loop_assert_exclusive();
	if (dl == NULL)
		return;
	/* A failure its flush job has not taken down yet is why it ended. */
	if (dl->failing)
		link_down(dl, dl->fail_why);
	dl->closing = 1;
	if (dl->vl != NULL)
		link_down(dl, "shutting down");
	(void)resume_drop(dl, WIRE_REASON_LINK_LOST);
	loop_job_cancel(&dl->flush);
	link_timers_stop(dl);
	rname_unwait(&dl->rw);
	connect_slot_unqueue(dl);
	connect_slot_release(dl);
	for (i = 0; i < CONF_PEERS_MAX; i++)
		rname_free(dl->peer_rn[i]);
	rname_free(dl->src_rn);
	/* An incoming link whose streams this one was taking over. */
	TAILQ_FOREACH(o, &dl->d->links, entry)
		if (o->from == dl)
			o->from = NULL;
	if (dl->listed)
		TAILQ_REMOVE(&dl->d->links, dl, entry);
	/* The proved key and the resume secrets are wiped with it; the
	 * sealing keys' OpenSSL contexts are freed here. */
	handshake_wipe(dl);
	secmem_free(dl);
}

void
link_revoke(struct rsd *d)
{
	struct dlink *dl;
	const char *why;
	char msg[300];
	uint32_t n;

	loop_assert_exclusive();
	TAILQ_FOREACH(dl, &d->links, entry) {
		if ((dl->vl == NULL && dl->old == NULL) || dl->failing ||
		    (why = handshake_revoked(dl)) == NULL)
			continue;
		snprintf(msg, sizeof(msg), "revoked by a reload: %s", why);
		d->links_revoked++;
		n = dl->old != NULL ? engine_suspended(dl->old) : 0;
		if (dl->vl != NULL) {
			/* Its streams, and those waiting to resume on it. */
			d->streams_revoked += n + engine_active(
			    link_cur_engine(dl));
			dl->revoked = 1;
			link_fail(dl, msg);
			continue;
		}
		/* Streams suspended for a resume the peer may not make. */
		d->streams_revoked += n;
		resume_end(dl, WIRE_REASON_DENIED);
		LLOG(LOG_WARNING, dl, "%s: %u suspended stream%s reset: %s",
		    dl->name, (unsigned)n, n == 1 ? "" : "s", msg);
	}
}

void
link_goaway_all(struct rsd *d)
{
	struct dlink *dl;
	struct engine *e;

	TAILQ_FOREACH(dl, &d->links, entry) {
		/* No new link will come for suspended streams now. */
		resume_end(dl, WIRE_REASON_SHUTTING_DOWN);
		if (dl->c != NULL)
			dl->ops->down(dl->arg, dl, "shutting down",
			    VERBS_WC_NONE);
		if (dl->state == D_UP && (e = link_cur_engine(dl)) != NULL) {
			engine_goaway(e, WIRE_REASON_SHUTTING_DOWN);
			link_mark(dl);
		}
	}
}
