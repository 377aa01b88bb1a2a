/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "engine.h"
#include "engine_stream.h"
#include "link.h"
#include "link_int.h"
#include "log.h"
#include "loop.h"
#include "prio.h"
#include "rsd.h"
#include "verbs.h"

/* ------------------------------------------------------- the object */

void
link_list_add(struct dlink *dl)
{

	loop_assert_exclusive();
	TAILQ_INSERT_TAIL(&dl->d->links, dl, entry);
	dl->listed = 1;
}

struct loop *
link_loop(const struct dlink *dl)
{

	return (dl->lp);
}

size_t
link_workers(const struct rsd *d)
{

	return (d->nworkers > 0 ? d->nworkers : 1);
}

struct engine *
link_engine(const struct dlink *dl)
{

	if (dl == NULL)
		return (NULL);
	/* Streams live in the failed engine until they move to a new one. */
	if (dl->old != NULL)
		return (dl->old);
	return (dl->vl != NULL ? verbs_link_engine(dl->vl) : NULL);
}

/* The engine of the link's current connection (not a failed one). */
struct engine *
link_cur_engine(const struct dlink *dl)
{

	return (dl->vl != NULL ? verbs_link_engine(dl->vl) : NULL);
}

void
link_mark(struct dlink *dl)
{

	/* A flush under way posts what its handlers queue. */
	if (dl != NULL && !dl->flushing)
		loop_job_defer(&dl->flush);
}

/*
 * Completions: the channel's event says the CQ has some; the loop then
 * drains it in each turn (cq_poll) and asks for the next event only
 * before it sleeps (cq_arm; see loop_fd_poll): a busy link costs no read
 * and no re-arm per turn.
 */
static void
on_cq(void *arg, uint32_t events)
{
	struct dlink *dl = arg;

	(void)events;
	if (verbs_link_engine(dl->vl) != NULL)
		engine_clock(verbs_link_engine(dl->vl), loop_now_ns());
	(void)verbs_link_poll(dl->vl);
	link_mark(dl);
}

static int
cq_poll(void *arg)
{
	struct dlink *dl = arg;
	int n;

	if (verbs_link_engine(dl->vl) != NULL)
		engine_clock(verbs_link_engine(dl->vl), loop_now_ns());
	if ((n = verbs_link_drain(dl->vl)) != 0)
		link_mark(dl);
	return (n);
}

static int
cq_arm(void *arg)
{
	struct dlink *dl = arg;

	return (verbs_link_arm(dl->vl));
}

int
link_watch_cq(struct dlink *dl)
{

	if (dl->cqw != NULL || verbs_link_fd(dl->vl) < 0)
		return (0);
	dl->cqw = loop_fd_add(dl->lp, verbs_link_fd(dl->vl), EPOLLIN,
	    on_cq, dl);
	if (dl->cqw == NULL)
		return (-1);
	loop_fd_poll(dl->cqw, cq_poll, cq_arm);
	return (0);
}

void
link_hooks(struct dlink *dl, int handshake, struct engine *e,
    struct verbs_link_conf *lc)
{
	const struct engine_auth *ea = handshake ? &dl->ea : NULL;
	const struct engine_seal *es = handshake && dl->ea.step != NULL ?
	    &dl->es : NULL;

	/* A client link's engine is made as it connects: verbs hooks it. */
	if (lc != NULL) {
		lc->auth = ea;
		lc->seal = es;
		return;
	}
	if (ea != NULL)
		engine_set_auth(e, ea);
	if (es != NULL)
		engine_set_seal(e, es);
	engine_set_resume(e, &dl->er);
}

/* A stream moves to this link: its owner re-registers the rings. */
int
link_adopt(void *arg, uint32_t id, void *user, struct engine_ring *tx,
    struct engine_ring *rx)
{
	struct dlink *dl = arg;

	(void)id;
	if (user == NULL)
		return (-1);
	return (dl->ops->adopt(dl->arg, dl, user, tx, rx));
}

/* A stream event: the owner's, but a client link takes no OPEN. */
void
link_deliver(struct dlink *dl, struct engine *e, const struct engine_event *ev)
{

	if ((ev->flags & ENGINE_EV_INCOMING) &&
	    !(ev->flags & ENGINE_EV_RELEASED)) {
		if (dl->c != NULL) {
			log_burst_about(&dl->open_log, loop_now_ms(),
			    LOG_WARNING, LABOUT(dl), "%s: the peer opened a "
			    "stream on it; refused", dl->name);
			engine_refuse(e, ev->stream, WIRE_REASON_NO_TUNNEL);
			return;
		}
		dl->ops->incoming(dl->arg, dl, ev->stream,
		    engine_tunnel(e, ev->stream));
		return;
	}
	if (ev->user != NULL)
		dl->ops->event(dl->arg, dl, ev);
}

/*
 * A link still running the identity handshake: its steps (X25519, which
 * anyone who can connect makes us do) run in shared turns until the
 * peer is authenticated; then link_up, exclusive, takes over.  A drain
 * ends at the completion that authenticates it (verbs_link_drain), so a
 * shared turn never reaches what authentication lets in.
 */
static int
handshaking(const struct dlink *dl, struct engine *e)
{

	return ((dl->state == D_CONNECTING || dl->state == D_AUTH) &&
	    dl->ea.step != NULL && !engine_authenticated(e));
}

/*
 * Whether the link's completions, job and keepalive may run in shared
 * turns (Threads in loop.h): while it runs the identity handshake
 * (handshaking), or is up with nothing but data to move, and no resume
 * (which takes another link's streams, on another worker) can come.  A
 * shared turn only ever turns it off (a stash, a failed engine, the
 * peer authenticated); the exclusive turn that follows turns it on
 * again.
 */
void
link_share(struct dlink *dl)
{
	struct engine *e = link_cur_engine(dl);
	int on = !dl->failing && dl->old == NULL && !dl->stashed &&
	    e != NULL && engine_error(e) == NULL && (handshaking(dl, e) ||
	    (dl->state == D_UP && !dl->resuming &&
	    engine_resume_settled(e)));

	if (dl->cqw != NULL)
		loop_fd_share(dl->cqw, on);
	loop_job_share(&dl->flush, on);
	loop_timer_share(&dl->ka, on);
}

/* An event a shared turn left for the next turn: it goes first. */
void
link_unstash(struct dlink *dl)
{

	if (!dl->stashed)
		return;
	dl->stashed = 0;
	link_deliver(dl, link_cur_engine(dl), &dl->stash);
}

int
link_stays_down(const struct dlink *dl)
{

	return (dl->d->stop || dl->d->draining || dl->closing || dl->retired);
}

void
link_fail(struct dlink *dl, const char *why)
{
	struct engine *e = link_cur_engine(dl);

	loop_assert_exclusive();
	if (dl->failing)
		return;
	dl->failing = 1;
	snprintf(dl->fail_why, sizeof(dl->fail_why), "%s", why);
	/* What a keepalive does: no WRITE runs on, no stream moves. */
	if (e != NULL) {
		verbs_link_stop(dl->vl);
		if (engine_error(e) == NULL)
			engine_fail(e, ENGINE_ERR_LOCAL, why);
	}
	/* The flush job that takes it down runs in an exclusive turn. */
	link_share(dl);
	loop_job_defer(&dl->flush);
}

/* ------------------------------------------------- memory and ticks */

uint64_t
link_pinned(const struct rsd *d)
{

	return (d->cm != NULL ? verbs_cm_pinned(d->cm) : 0);
}

int
link_tick_due(struct rsd *d)
{

	return (verbs_cm_tick_due(d->cm));
}

void
link_mem(const struct rsd *d, struct verbs_cm_mem *cmm)
{

	memset(cmm, 0, sizeof(*cmm));
	if (d->cm != NULL)
		verbs_cm_mem(d->cm, cmm);
}

void
link_tick(struct rsd *d)
{

	verbs_cm_tick(d->cm);
}

/* -------------------------------------------------------- accessors */

unsigned
link_count(const struct rsd *d, unsigned *up)
{
	const struct dlink *dl;
	unsigned n = 0;

	*up = 0;
	TAILQ_FOREACH(dl, &d->links, entry) {
		n++;
		*up += link_is_up(dl);
	}
	return (n);
}

const char *
link_state_name(enum link_state s)
{
	static const char *const names[LINK_STATE_N] = {
		[LINK_DOWN] = "down",
		[LINK_RETRYING] = "retrying",
		[LINK_CONNECTING] = "connecting",
		[LINK_AUTHENTICATING] = "authenticating",
		[LINK_UP] = "up",
		[LINK_ENDED] = "ended",
		[LINK_SUSPENDED] = "suspended",
	};

	return ((unsigned)s < LINK_STATE_N ? names[s] : "?");
}

void
link_info(const struct dlink *dl, struct link_info *li)
{
	static const enum link_state states[] = {
		[D_IDLE] = LINK_DOWN,
		[D_CONNECTING] = LINK_CONNECTING,
		[D_AUTH] = LINK_AUTHENTICATING,
		[D_UP] = LINK_UP,
		[D_DEAD] = LINK_ENDED,
		[D_SUSP] = LINK_SUSPENDED,
	};
	struct engine *e = link_engine(dl);
	size_t i;

	memset(li, 0, sizeof(*li));
	li->name = dl->name;
	li->peer = dl->peer;
	li->identity = link_peer_id(dl);
	li->sealing = link_sealing(dl);
	li->dir = dl->c != NULL ? "out" : "in";
	li->tunnel = dl->c != NULL ? dl->c->name : "";
	li->state = states[dl->state];
	li->worker = 1;
	li->priority = dl->prio;
	li->share = __atomic_load_n(&dl->share, __ATOMIC_RELAXED);
	for (i = 0; i < dl->d->nworkers; i++)
		if (dl->d->workers[i] == dl->lp)
			li->worker = (unsigned)i + 1;
	if (dl->state == D_IDLE && loop_timer_armed(&dl->retry))
		li->state = LINK_RETRYING;
	li->device = dl->vl != NULL && dl->state == D_UP ?
	    verbs_link_device(dl->vl) : "";
	li->hca = dl->vl != NULL && dl->state == D_UP ?
	    verbs_link_hca(dl->vl) : NULL;
	li->goaway = e != NULL && engine_peer_goaway(e);
	li->version = e != NULL ? engine_version(e) : 0;
	li->suspended = dl->old != NULL ? engine_suspended(dl->old) : 0;
	if (dl->have_res)
		for (i = 0; i < WIRE_NONCE_LEN; i++)
			snprintf(li->resume_id + 2 * i, 3, "%02x",
			    dl->res_id[i]);
	if (li->suspended > 0 && dl->state != D_UP)
		li->state = LINK_SUSPENDED;
	li->last_error = dl->state == D_UP ? "" : dl->last_err;
	li->down_since_ms = dl->state == D_UP ? 0 : dl->down_since;
	li->retry_wait_ms = loop_timer_armed(&dl->retry) ? dl->retry_wait : 0;
	li->have_failures = dl->c != NULL;
	li->failures = dl->c != NULL ? (uint64_t)dl->failures : 0;
	li->failures_total = dl->failures_total;
	if ((e = link_cur_engine(dl)) != NULL && dl->state == D_UP) {
		engine_stats(e, &li->st);
		verbs_link_mem_stats(dl->vl, &li->mem);
		verbs_link_arm_stats(dl->vl, &li->arms);
		li->have_stats = 1;
	}
}

const struct hca_info *
link_hca(const struct dlink *dl)
{

	return (dl->vl != NULL && dl->state == D_UP ?
	    verbs_link_hca(dl->vl) : NULL);
}

int
link_is_up(const struct dlink *dl)
{

	/* One that failed is down, though its flush job has yet to run. */
	return (dl != NULL && dl->state == D_UP && !dl->failing);
}

int
link_is_connecting(const struct dlink *dl)
{

	/* Authenticating is connecting too: the link is not usable yet. */
	return (dl != NULL && (dl->state == D_CONNECTING ||
	    dl->state == D_AUTH));
}

const struct dlink *
link_first(const struct rsd *d)
{

	return (TAILQ_FIRST(&d->links));
}

const struct dlink *
link_next(const struct dlink *dl)
{

	return (TAILQ_NEXT(dl, entry));
}

const char *
link_peer(const struct dlink *dl)
{

	return (dl->peer);
}

const char *
link_name(const struct dlink *dl)
{

	return (dl->name);
}

const struct conf_key *
link_key(const struct dlink *dl)
{

	return (dl->key);
}

const char *
link_peer_id(const struct dlink *dl)
{

	/* Metrics calls it in a shared turn (see ident in link_int.h). */
	return (__atomic_load_n(&dl->ident, __ATOMIC_ACQUIRE) ? dl->peer_id :
	    "");
}

const uint8_t *
link_peer_key(const struct dlink *dl)
{

	return (dl->ident ? dl->peer_pub : NULL);
}

const char *
link_sealing(const struct dlink *dl)
{

	return (__atomic_load_n(&dl->ident, __ATOMIC_ACQUIRE) && dl->sealed ?
	    seal_aead_name(dl->aead) : NULL);
}

/*
 * Ring memory (link.h): a link_ring is the verbs_mem itself under a name
 * above verbs, so the seam costs no allocation and an engine ring's mem
 * is the same pointer either way.
 */
static struct verbs_mem *
vmem(const struct link_ring *r)
{

	return ((struct verbs_mem *)(uintptr_t)r);
}

struct link_ring *
link_ring_new(struct dlink *dl, uint32_t size, int flags, char *err,
    size_t errlen)
{
	int vflags = (flags & LINK_RING_RX) ? VERBS_MEM_REMOTE : 0;

	/* Other links' pools are other workers' (Threads in loop.h). */
	if (!loop_exclusive())
		vflags |= VERBS_MEM_OWNPOOL;
	return ((struct link_ring *)verbs_mem_new(dl->vl, size, vflags, err,
	    errlen));
}

void
link_ring_free(struct link_ring *r)
{

	verbs_mem_free(vmem(r));
}

uint32_t
link_ring_size(const struct link_ring *r)
{

	return (verbs_mem_size(vmem(r)));
}

void
link_ring_describe(const struct link_ring *r, struct engine_ring *ring)
{

	verbs_mem_ring(vmem(r), ring);
}

void
link_ring_detach(struct link_ring *r)
{

	verbs_mem_detach(vmem(r));
}

int
link_ring_move(struct link_ring *r, struct dlink *dl, char *err,
    size_t errlen)
{

	if (dl->vl == NULL) {
		snprintf(err, errlen, "no link");
		return (-1);
	}
	return (verbs_mem_move(vmem(r), dl->vl, err, errlen));
}

void
link_set_priority(struct dlink *dl, unsigned prio)
{

	loop_assert_exclusive();
	if (prio >= PRIO_LOWEST && prio <= PRIO_HIGHEST)
		dl->prio = prio;
}
